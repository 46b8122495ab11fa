//! A full disk (`BOSUN_FAULT=full:FILE`: while FILE exists the store's appends fail with
//! SQLITE_FULL): each write is refused with an error that says so and records nothing, reads are
//! answered all along by the same daemon (even when its log cannot be written), writes succeed
//! again once there is room, and the log of a refused write holds no value of the caller's
//! environment.

mod support;

use std::path::{Path, PathBuf};

use support::*;

const RUNBOOK: &str = r#"
queue "bugs" {
  retry = 1
}
"#;

/// A bosun whose daemon takes its disk as full while the returned file exists (not yet).
fn bosun_with_a_disk_to_fill(repo: &Path) -> (Bosun, tempfile::TempDir, PathBuf) {
    let bosun = bosun();
    let flags = tempfile::tempdir().unwrap();
    let full = flags.path().join("full");
    let started =
        bosun.command(repo, &["daemon", "start"]).env("BOSUN_FAULT", format!("full:{}", full.display())).output();
    assert!(started.unwrap().status.success(), "{}", bosun.log());
    (bosun, flags, full)
}

fn pushed(bosun: &Bosun, repo: &Path) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo, &["queue", "ls", "--json"])).unwrap();
    v.as_array().unwrap().iter().map(|i| i["data"]["title"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn a_full_disk_refuses_each_write_clearly_keeps_answering_reads_and_takes_writes_once_there_is_room() {
    let repo = repo_with_runbook("q.hcl", RUNBOOK);
    let (bosun, _flags, full) = bosun_with_a_disk_to_fill(repo.path());
    bosun.ok(repo.path(), &["queue", "push", "bugs", "title=before"]);
    let pid = bosun.daemon_pid().expect("a daemon");

    std::fs::write(&full, "").unwrap();
    for title in ["first", "second", "third"] {
        let err = bosun.fails(repo.path(), &["queue", "push", "bugs", &format!("title={title}")]);
        assert!(err.contains("is full: free some space; nothing was recorded"), "{err}\n{}", bosun.log());
        assert_eq!(pushed(&bosun, repo.path()), ["before"], "nothing of a refused write is seen");
        assert!(bosun.ok(repo.path(), &["daemon", "status"]).contains("running"));
    }
    assert_eq!(bosun.daemon_pid(), Some(pid), "the same daemon answered all along");

    std::fs::remove_file(&full).unwrap();
    bosun.ok(repo.path(), &["queue", "push", "bugs", "title=after"]);
    assert_eq!(pushed(&bosun, repo.path()), ["before", "after"]);
    assert_eq!(bosun.daemon_pid(), Some(pid));
    let recorded = bosun.events().len();
    bosun.ok(repo.path(), &["daemon", "stop"]);
    bosun.ok(repo.path(), &["queue", "ls"]);
    assert_eq!(bosun.events().len(), recorded, "a new daemon finds the log as the old one left it");
    assert_eq!(pushed(&bosun, repo.path()), ["before", "after"]);
}

#[test]
fn the_log_of_a_refused_start_holds_no_value_of_its_environment() {
    let repo = repo_with_runbook("q.hcl", RUNBOOK);
    let (bosun, _flags, full) = bosun_with_a_disk_to_fill(repo.path());
    std::fs::write(&full, "").unwrap();
    let (given, planted) = (format!("given-{}", std::process::id()), format!("planted-{}", std::process::id()));
    let out = bosun
        .command(repo.path(), &["agent", "start", "--env", &format!("GIVEN={given}"), "--", "sh", "-c", "sleep 600"])
        .env("PLANTED_SECRET", &planted)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("is full"), "{err}");

    let log = std::fs::read_to_string(bosun.state_dir().join("daemon.log")).unwrap();
    assert!(log.contains("input not recorded"), "the refused write is logged:\n{log}");
    assert!(log.contains("start_agent"), "by its kind:\n{log}");
    for secret in [&given, &planted] {
        assert!(!log.contains(secret.as_str()), "{secret} is in the log:\n{log}");
    }
}

#[test]
fn a_daemon_whose_log_cannot_be_written_keeps_running() {
    let repo = repo_with_runbook("q.hcl", RUNBOOK);
    let bosun = bosun();
    let flags = tempfile::tempdir().unwrap();
    let full = flags.path().join("full");
    std::fs::write(&full, "").unwrap();
    // Every write to /dev/full fails with ENOSPC, as a log on a full disk does.
    let log = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let mut daemon = bosun
        .command(repo.path(), &["daemon", "run"])
        .env("BOSUN_FAULT", format!("full:{}", full.display()))
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    let up = bosun_testkit::poll::wait_until(PATIENCE, || {
        assert!(daemon.try_wait().unwrap().is_none(), "the daemon exited");
        bosun.daemon_pid().is_some() && bosun.run(repo.path(), &["daemon", "status"]).status.success()
    });
    assert!(up, "the daemon never answered");
    for title in ["first", "second"] {
        let err = bosun.fails(repo.path(), &["queue", "push", "bugs", &format!("title={title}")]);
        assert!(err.contains("is full"), "{err}");
    }
    assert!(daemon.try_wait().unwrap().is_none(), "the daemon still runs");
    std::fs::remove_file(&full).unwrap();
    bosun.ok(repo.path(), &["queue", "push", "bugs", "title=after"]);
    assert_eq!(pushed(&bosun, repo.path()), ["after"]);
    bosun.ok(repo.path(), &["daemon", "stop"]);
    assert!(daemon.wait().unwrap().success());
}
