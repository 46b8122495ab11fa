//! Queues and workers through the CLI: items pushed, a worker feeding them into jobs, each in
//! its own worktree, failures retried then dead-lettered.

mod support;

use bosun_testkit::poll::wait_for;
use support::*;

const RUNBOOK: &str = r#"
queue "bugs" {
  retry = 1
}

worker "fixer" {
  queue       = "bugs"
  job         = "fix"
  concurrency = 2
}

job "fix" {
  vars   = ["title"]
  source = "worktree"
  step "fix" {
    run = "test ${item.title} != broken && printf '%s' ${item.title} > fixed.txt"
  }
}
"#;

fn items(bosun: &Bosun, repo: &TempRepo) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["queue", "ls", "--json"])).unwrap();
    v.as_array().unwrap().clone()
}

#[test]
fn a_worker_fixes_every_item_in_its_own_worktree_and_dead_letters_what_keeps_failing() {
    let bosun = bosun();
    let repo = repo_with_runbook("fix.hcl", RUNBOOK);
    for t in ["login", "logout", "broken", "signup"] {
        bosun.ok(repo.path(), &["queue", "push", "bugs", &format!("title={t}")]);
    }
    assert!(items(&bosun, &repo).iter().all(|i| i["state"] == "pending"), "no worker yet");
    bosun.ok(repo.path(), &["worker", "start", "fixer"]);
    let settled = wait_for(PATIENCE, || {
        let all = items(&bosun, &repo);
        all.iter().all(|i| i["state"] == "done" || i["state"] == "dead").then_some(all)
    })
    .unwrap_or_else(|| panic!("items never settled: {:?}\n{}", items(&bosun, &repo), bosun.log()));
    for i in &settled {
        let title = i["data"]["title"].as_str().unwrap();
        if title == "broken" {
            assert_eq!(i["state"], "dead", "failed twice (retry = 1)");
            assert_eq!(i["failures"], 2);
        } else {
            assert_eq!(i["state"], "done", "{i}");
        }
    }
    let jobs: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["job", "ls", "--json"])).unwrap();
    assert_eq!(jobs.as_array().unwrap().len(), 5, "one job per try: three fixes, two tries of the broken one");
    let workspaces = bosun.list().workspaces;
    let fixed: Vec<String> =
        workspaces.iter().filter_map(|w| std::fs::read_to_string(w.path.join("fixed.txt")).ok()).collect();
    assert_eq!(fixed.len(), 3, "each fix in its own worktree: {fixed:?}");
    let dead = settled.iter().find(|i| i["state"] == "dead").unwrap()["id"].as_u64().unwrap();
    bosun.ok(repo.path(), &["worker", "stop", "fixer"]);
    bosun.ok(repo.path(), &["queue", "retry", &format!("i{dead}")]);
    assert!(items(&bosun, &repo).iter().any(|i| i["state"] == "pending"), "back, and no worker takes it");
    bosun.ok(repo.path(), &["queue", "drop", &format!("i{dead}")]);
    assert_eq!(items(&bosun, &repo).len(), 3);
}

#[test]
fn the_fix_example_runs_its_agent_per_bug() {
    let bosun = bosun();
    let repo = repo_with_example("fix.toml", 1);
    for t in ["one", "two"] {
        bosun.ok(repo.path(), &["queue", "push", "bugs", &format!("title=bug {t}")]);
    }
    bosun.ok(repo.path(), &["worker", "start", "fixer"]);
    let done = wait_for(PATIENCE, || items(&bosun, &repo).iter().all(|i| i["state"] == "done").then_some(()));
    assert!(done.is_some(), "{:?}\n{}", items(&bosun, &repo), bosun.log());
    let agents = bosun.list().agents;
    assert_eq!(agents.len(), 2, "one agent per bug");
    let spaces: std::collections::BTreeSet<_> = agents.iter().map(|a| a.workspace.clone()).collect();
    assert_eq!(spaces.len(), 2, "each in its own worktree");
}

const EXTERNAL: &str = r#"
queue "inbox" {
  list = "cat inbox.jsonl"
  take = "echo ${item.id} >> taken.log"
  poll = "200ms"
}

worker "sorter" {
  queue       = "inbox"
  job         = "sort"
  concurrency = 2
}

job "sort" {
  step "sort" {
    run = "printf '%s\n' ${item.title} >> sorted.log"
  }
}
"#;

#[test]
fn a_worker_on_an_external_queue_takes_each_listed_item_once_as_it_appears() {
    let bosun = bosun();
    let repo = repo_with_runbook("inbox.hcl", EXTERNAL);
    let inbox = repo.path().join("inbox.jsonl");
    std::fs::write(&inbox, "{\"id\":\"a\",\"title\":\"first\"}\n{\"id\":\"b\",\"title\":\"second; touch pwned\"}\n")
        .unwrap();
    let err = bosun.fails(repo.path(), &["queue", "push", "inbox", "title=x"]);
    assert!(err.contains("external"), "{err}");

    bosun.ok(repo.path(), &["worker", "start", "sorter"]);
    let done = |n: usize| {
        let items = items(&bosun, &repo);
        (items.len() == n && items.iter().all(|i| i["state"] == "done")).then_some(())
    };
    assert!(wait_for(PATIENCE, || done(2)).is_some(), "{:?}\n{}", items(&bosun, &repo), bosun.log());
    let mut more = std::fs::OpenOptions::new().append(true).open(&inbox).unwrap();
    std::io::Write::write_all(&mut more, b"{\"id\":\"c\",\"title\":\"third\"}\n").unwrap();
    assert!(wait_for(PATIENCE, || done(3)).is_some(), "{:?}", items(&bosun, &repo));

    let read = |f: &str| std::fs::read_to_string(repo.path().join(f)).unwrap();
    let mut taken: Vec<String> = read("taken.log").lines().map(str::to_owned).collect();
    taken.sort();
    assert_eq!(taken, ["a", "b", "c"], "each taken once, however often it was listed");
    let mut sorted: Vec<String> = read("sorted.log").lines().map(str::to_owned).collect();
    sorted.sort();
    assert_eq!(sorted, ["first", "second; touch pwned", "third"]);
    assert!(!repo.path().join("pwned").exists());
    let workers: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["worker", "ls", "--json"])).unwrap();
    assert_eq!(workers[0]["error"], serde_json::Value::Null);
}

/// A list command that floods its output is read no further than 4 MiB: the worker says so,
/// and the daemon keeps its memory.
#[test]
fn a_list_command_that_floods_its_output_is_an_error_not_a_daemon_full_of_it() {
    let bosun = bosun();
    let flood = EXTERNAL.replace("cat inbox.jsonl", "head -c 50000000 /dev/zero");
    let repo = repo_with_runbook("inbox.hcl", &flood);
    bosun.ok(repo.path(), &["worker", "start", "sorter"]);
    let said = wait_for(PATIENCE, || {
        let workers: serde_json::Value =
            serde_json::from_str(&bosun.ok(repo.path(), &["worker", "ls", "--json"])).unwrap();
        workers[0]["error"].as_str().map(str::to_owned)
    });
    let said = said.unwrap_or_else(|| panic!("no error said\n{}", bosun.log()));
    assert!(said.contains("printed more than 4 MiB"), "{said}");
    assert!(items(&bosun, &repo).is_empty(), "nothing taken from a cut list");
    // Its peak memory: a daemon that read the whole flood would hold 50 MB of it at least.
    let status = std::fs::read_to_string(format!("/proc/{}/status", bosun.daemon_pid().expect("the daemon")));
    let peak = status.ok().and_then(|s| {
        let line = s.lines().find(|l| l.starts_with("VmHWM:"))?.to_owned();
        line.split_whitespace().nth(1)?.parse::<u64>().ok()
    });
    assert!(peak.is_some_and(|kib| kib < 90 * 1024), "the daemon's peak memory: {peak:?} KiB");
}
