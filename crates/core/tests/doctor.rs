//! `leftovers`: what no record owns, and what of it must stay because someone's work is in it.

mod support;

use std::path::PathBuf;

use bosun_core::{leftovers, Found, FoundBranch, FoundDir, FoundPod, FoundWorktree, Leftover, Orphan, SessionName};
use support::Sim;

fn dir(path: &str, branch: &str, dirty: Option<bool>) -> FoundDir {
    FoundDir { path: path.into(), repo: Some("/repo".into()), branch: Some(branch.into()), dirty }
}

fn branch(name: &str, unique_commits: Option<u32>) -> FoundBranch {
    FoundBranch { repo: "/repo".into(), name: name.into(), unique_commits }
}

fn worktree(path: &str, branch: &str, missing: bool) -> FoundWorktree {
    FoundWorktree { repo: "/repo".into(), path: path.into(), branch: Some(branch.into()), missing }
}

fn kept(orphans: &[Orphan], leftover: &Leftover) -> Option<Option<String>> {
    orphans.iter().find(|o| &o.leftover == leftover).map(|o| o.keep.clone())
}

#[test]
fn what_a_record_owns_is_never_a_leftover() {
    let mut sim = Sim::new();
    let (a, w) = sim.running(1);
    let agent = sim.state.agents[&a].clone();
    let ws = sim.state.workspaces[&w].clone();
    let found = Found {
        workspace_dirs: vec![dir(ws.path.to_str().unwrap(), "ws-10000000", Some(true))],
        agent_dirs: vec![agent.dir.clone()],
        sessions: vec![agent.session.clone()],
        worktrees: vec![worktree(ws.path.to_str().unwrap(), "ws-10000000", false)],
        branches: vec![branch("ws-10000000", Some(3))],
        containers: vec![agent.session.clone()],
        volumes: vec![],
        pods: vec![FoundPod { namespace: "agents".into(), name: agent.session.to_string(), saved: None }],
        claims: vec![],
    };
    assert_eq!(leftovers(&sim.state, &found), Vec::new());
}

#[test]
fn unowned_things_are_leftovers_and_only_clean_ones_without_own_commits_may_go() {
    let mut sim = Sim::new();
    sim.running(1);
    let found = Found {
        workspace_dirs: vec![
            dir("/state/workspaces/ws-clean-aaaaaaaa", "ws-aaaaaaaa", Some(false)),
            dir("/state/workspaces/ws-dirty-bbbbbbbb", "ws-bbbbbbbb", Some(true)),
            dir("/state/workspaces/ws-odd-cccccccc", "ws-cccccccc", None),
        ],
        agent_dirs: vec!["/state/agents/zzzzzzzz".into()],
        sessions: vec![SessionName::from_reported("bosun-zzzzzzzz")],
        worktrees: vec![
            worktree("/state/workspaces/ws-clean-aaaaaaaa", "ws-aaaaaaaa", false),
            worktree("/state/workspaces/ws-dirty-bbbbbbbb", "ws-bbbbbbbb", false),
            worktree("/state/workspaces/ws-gone-dddddddd", "ws-dddddddd", true),
            worktree("/home/me/my-own-worktree", "ws-eeeeeeee", false),
        ],
        branches: vec![
            branch("ws-aaaaaaaa", Some(0)),
            branch("ws-bbbbbbbb", Some(0)),
            branch("ws-dddddddd", Some(2)),
            branch("ws-eeeeeeee", Some(0)),
            branch("ws-ffffffff", None),
        ],
        // One whose host serves (a session above), and one whose host is gone.
        containers: vec![SessionName::from_reported("bosun-zzzzzzzz"), SessionName::from_reported("bosun-yyyyyyyy")],
        // A volume no workspace has: it may hold work that never came back.
        volumes: vec!["bosun-ws-gone-gggggggg".into()],
        // Pods no agent has: one still running, one that ended unsaved, one whose work is safe.
        pods: vec![
            FoundPod { namespace: "agents".into(), name: "bosun-runs".into(), saved: None },
            FoundPod { namespace: "agents".into(), name: "bosun-unsaved".into(), saved: Some(false) },
            FoundPod { namespace: "agents".into(), name: "bosun-saved".into(), saved: Some(true) },
        ],
        // A claim no workspace has: it may hold work that never came back.
        claims: vec![bosun_core::PodClaim { namespace: "agents".into(), name: "bosun-gone-work".into() }],
    };
    let orphans = leftovers(&sim.state, &found);
    let ws = |p: &str| Leftover::Workspace { path: PathBuf::from(p), repo: Some("/repo".into()) };
    let br = |n: &str| Leftover::Branch { repo: "/repo".into(), name: n.into() };

    assert_eq!(kept(&orphans, &Leftover::Session { name: SessionName::from_reported("bosun-zzzzzzzz") }), Some(None));
    assert_eq!(kept(&orphans, &Leftover::AgentDir { path: "/state/agents/zzzzzzzz".into() }), Some(None));
    let container = |n: &str| Leftover::Container { name: SessionName::from_reported(n) };
    assert_eq!(kept(&orphans, &container("bosun-yyyyyyyy")), Some(None), "a container whose host is gone");
    assert_eq!(kept(&orphans, &container("bosun-zzzzzzzz")), None, "one whose host serves goes as its session");
    assert_eq!(kept(&orphans, &ws("/state/workspaces/ws-clean-aaaaaaaa")), Some(None));
    assert_eq!(kept(&orphans, &ws("/state/workspaces/ws-dirty-bbbbbbbb")), Some(Some("it holds changes".into())));
    assert!(kept(&orphans, &ws("/state/workspaces/ws-odd-cccccccc")).unwrap().is_some(), "unknown means keep");
    let gone = Leftover::Registration { repo: "/repo".into(), path: "/state/workspaces/ws-gone-dddddddd".into() };
    assert_eq!(kept(&orphans, &gone), Some(None));

    assert_eq!(kept(&orphans, &br("ws-aaaaaaaa")), Some(None), "its worktree goes, so it may go");
    assert_eq!(kept(&orphans, &br("ws-bbbbbbbb")), Some(Some("its worktree is kept".into())));
    let own_commits = kept(&orphans, &br("ws-dddddddd")).unwrap().unwrap();
    assert!(own_commits.contains("2 commit(s)"), "{own_commits}");
    assert_eq!(kept(&orphans, &br("ws-eeeeeeee")), None, "checked out in a worktree that stays");
    assert!(kept(&orphans, &br("ws-ffffffff")).unwrap().is_some(), "unknown means keep");
    let volume = Leftover::Volume { name: "bosun-ws-gone-gggggggg".into() };
    assert!(kept(&orphans, &volume).unwrap().is_some(), "a volume is kept: only a person may judge it");
    let pod = |n: &str| Leftover::Pod { namespace: "agents".into(), name: n.into() };
    assert!(kept(&orphans, &pod("bosun-runs")).unwrap().is_some(), "a running pod is kept");
    assert!(kept(&orphans, &pod("bosun-unsaved")).unwrap().is_some(), "an unsaved pod is kept");
    assert_eq!(kept(&orphans, &pod("bosun-saved")), Some(None), "a saved pod may go");
    let claim = Leftover::Claim { namespace: "agents".into(), name: "bosun-gone-work".into() };
    assert!(kept(&orphans, &claim).unwrap().is_some(), "a claim is kept: only a person may judge it");
    assert_eq!(orphans.len(), 16, "{orphans:#?}");
}
