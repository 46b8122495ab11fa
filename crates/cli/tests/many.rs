//! Twenty agents started at once.

mod support;

use std::collections::BTreeSet;

use support::*;

#[test]
fn twenty_agents_started_at_once_get_twenty_workspaces_and_sessions() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("chat"));
    bosun.ok(repo.path(), &["daemon", "start"]);
    let ids: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> =
            (0..20).map(|_| s.spawn(|| bosun.start(repo.path(), &["--", &cl, "--scenario", &sc]))).collect();
        handles.into_iter().map(|h| h.join().expect("start")).collect()
    });
    let distinct: BTreeSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len(), 20);
    for id in &ids {
        bosun.wait_up(id);
    }
    let list = bosun.list();
    let paths: BTreeSet<_> = list.workspaces.iter().map(|w| w.path.clone()).collect();
    assert_eq!(paths.len(), 20, "twenty distinct workspaces");
    assert!(paths.iter().all(|p| p.is_dir()));
    let branches: BTreeSet<_> = list.workspaces.iter().filter_map(|w| w.branch().map(str::to_owned)).collect();
    assert_eq!(branches.len(), 20, "twenty distinct branches");
    let sessions: BTreeSet<String> = bosun.sessions().into_iter().collect();
    let expected: BTreeSet<String> = ids.iter().map(|id| format!("bosun-{id}")).collect();
    assert_eq!(sessions, expected, "twenty sessions, one per agent");
}
