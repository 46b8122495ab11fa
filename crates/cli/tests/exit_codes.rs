//! Exit codes by kind of failure: 2 bad input, 3 not found, 4 no daemon (5, work protected, is
//! in workspaces.rs), listed by `--help`.

mod support;

use support::*;

fn code(bosun: &Bosun, cwd: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let out = bosun.run(cwd, args);
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn each_kind_of_failure_ends_with_its_exit_code() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (c, err) = code(&bosun, repo.path(), &["agent", "start", "--env", "1X=y", "--", "true"]);
    assert_eq!(c, Some(2), "bad input found here: {err}");
    let (c, err) = code(&bosun, repo.path(), &["agent", "start", "--", "/no/such/program"]);
    assert_eq!(c, Some(2), "bad input found by the daemon: {err}");
    let (c, err) = code(&bosun, repo.path(), &["kill", "nosuchagent"]);
    assert_eq!(c, Some(3), "{err}");
    assert!(err.contains("no agent matches"), "{err}");
    let (c, err) = code(&bosun, repo.path(), &["job", "show", "nosuchjob"]);
    assert_eq!(c, Some(3), "{err}");
    let (c, _) = code(&bosun, repo.path(), &["no-such-command"]);
    assert_eq!(c, Some(2), "usage");
    assert!(bosun.list().agents.is_empty(), "nothing started");
}

#[test]
fn a_daemon_that_cannot_be_started_is_exit_4() {
    let bosun = bosun();
    // Its log cannot be opened: a directory stands where the file goes.
    std::fs::create_dir_all(bosun.state_dir().join("daemon.log")).unwrap();
    let (c, err) = code(&bosun, bosun.state_dir(), &["ls"]);
    assert_eq!(c, Some(4), "{err}");
    assert!(err.contains("the daemon is not running and could not be started"), "{err}");
}

#[test]
fn help_lists_the_exit_codes() {
    let bosun = bosun();
    let out = bosun.ok(bosun.state_dir(), &["--help"]);
    for line in ["2  bad usage or input", "3  what was named does not exist", "5  refused to protect work"] {
        assert!(out.contains(line), "{line}: {out}");
    }
}
