//! Bad input gets a one-line error that says what to do, a non-zero exit, and changes nothing.

mod support;

use std::path::Path;

use support::*;

/// Runs a start that must fail and checks that it left nothing behind.
fn refused(bosun: &Bosun, repo: &TempRepo, cwd: &Path, args: &[&str]) -> String {
    let branches = repo.git(&["branch", "--list"]);
    let worktrees = repo.git(&["worktree", "list"]);
    let mut all = vec!["agent", "start"];
    all.extend_from_slice(args);
    let err = bosun.fails(cwd, &all);
    assert_eq!(err.trim().lines().count(), 1, "a one-line error: {err}");
    assert_eq!(repo.git(&["branch", "--list"]), branches, "no branch created");
    assert_eq!(repo.git(&["worktree", "list"]), worktrees, "no worktree created");
    let workspaces = bosun.state_dir().join("workspaces");
    let left: Vec<_> = std::fs::read_dir(&workspaces).map(|d| d.flatten().collect()).unwrap_or_default();
    assert!(left.is_empty(), "no workspace directory: {left:?}");
    if bosun.daemon_pid().is_some() {
        let list = bosun.list();
        assert!(list.agents.is_empty() && list.workspaces.is_empty(), "nothing recorded");
    }
    err
}

#[test]
fn outside_a_git_repository() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let plain = tempfile::tempdir().unwrap();
    let err = refused(&bosun, &repo, plain.path(), &["--", "true"]);
    assert!(err.contains("not inside a git repository") && err.contains("--workspace folder"), "{err}");
}

#[test]
fn an_unknown_ref() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let err = refused(&bosun, &repo, repo.path(), &["--ref", "no-such-branch", "--", "true"]);
    assert!(err.contains("unknown ref \"no-such-branch\""), "{err}");
}

#[test]
fn a_branch_that_exists_or_is_invalid() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let err = refused(&bosun, &repo, repo.path(), &["--branch", "main", "--", "true"]);
    assert!(err.contains("already exists"), "{err}");
    let err = refused(&bosun, &repo, repo.path(), &["--branch", "bad..name", "--", "true"]);
    assert!(err.contains("not a valid branch name"), "{err}");
    let err = refused(&bosun, &repo, repo.path(), &["--branch", "HEAD", "--", "true"]);
    assert!(err.contains("not a valid branch name"), "{err}");
    // A branch `feature` keeps `feature/x` from being made.
    repo.git(&["branch", "feature"]);
    let err = refused(&bosun, &repo, repo.path(), &["--branch", "feature/x", "--", "true"]);
    assert!(err.contains("a branch \"feature\" exists"), "{err}");
    let code = bosun.run(repo.path(), &["agent", "start", "--branch", "feature/x", "--", "true"]).status.code();
    assert_eq!(code, Some(2), "bad input");
}

#[test]
fn names_with_slashes_dots_spaces_or_control_characters() {
    let bosun = bosun();
    let repo = TempRepo::new();
    for (name, says) in [("a/b", "'/'"), ("..", "'..'"), ("a b", "whitespace"), ("a\u{1b}b", "control character")] {
        let err = refused(&bosun, &repo, repo.path(), &["--name", name, "--", "true"]);
        assert!(err.contains(says), "{name:?}: {err}");
    }
}

#[test]
fn a_missing_repo_directory_or_a_branch_for_a_folder() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let err = refused(&bosun, &repo, repo.path(), &["--repo", "/no/such/dir", "--", "true"]);
    assert!(err.contains("no such directory"), "{err}");
    let err = refused(&bosun, &repo, repo.path(), &["--workspace", "folder", "--branch", "x", "--", "true"]);
    assert!(err.contains("only apply to --workspace worktree"), "{err}");
}

#[test]
fn tmux_missing() {
    // A PATH with git, a shell and the agent's program but no tmux, for the CLI and the daemon
    // it starts.
    let bin = tempfile::tempdir().unwrap();
    for tool in ["git", "sh", "true"] {
        let path = bosun_testkit::tools::which(tool);
        std::os::unix::fs::symlink(path, bin.path().join(tool)).unwrap();
    }
    let bosun = bosun().with_path(bin.path().display().to_string());
    let repo = TempRepo::new();
    let err = refused(&bosun, &repo, repo.path(), &["--", "true"]);
    assert!(err.contains("tmux is not installed") && err.contains("apt-get install tmux"), "{err}");
}

#[test]
fn unknown_and_ambiguous_ids() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let err = bosun.fails(repo.path(), &["kill", "nosuchagent"]);
    assert_eq!(err.trim(), "bosun: no agent matches \"nosuchagent\": see `bosun ls`");
    let err = bosun.fails(repo.path(), &["workspace", "rm", "ws-nope"]);
    assert!(err.contains("no workspace matches"), "{err}");
    let a = bosun.start(repo.path(), &["--name", "twin", "--", "sleep", "600"]);
    let b = bosun.start(repo.path(), &["--name", "twin", "--", "sleep", "600"]);
    let err = bosun.fails(repo.path(), &["show", "twin"]);
    assert!(err.contains("matches several agents") && err.contains(&a) && err.contains(&b), "{err}");
}

#[test]
fn a_reader_that_stops_reading_ends_the_command_quietly() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = bosun.command(repo.path(), &["ls"]).stdout(writer).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(101), "it panicked: {stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{stderr}");
}

#[test]
fn oversized_and_half_sent_frames_cost_the_daemon_nothing_lasting() {
    use std::io::{Read, Write};
    let bosun = bosun();
    let repo = TempRepo::new();
    bosun.ok(repo.path(), &["ls"]);
    let socket = bosun.state_dir().join("run/bosun.sock");
    // A length over the limit: the connection is closed, nothing is read or allocated.
    let mut big = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    big.write_all(&(48u32 * 1024 * 1024).to_be_bytes()).unwrap();
    let mut rest = Vec::new();
    assert_eq!(big.read_to_end(&mut rest).unwrap_or(0), 0, "closed without an answer");
    // Frames begun and never finished, held open: the daemon goes on answering everyone else.
    let half: Vec<_> = (0..20)
        .map(|_| {
            let mut s = std::os::unix::net::UnixStream::connect(&socket).unwrap();
            s.write_all(&(8u32 * 1024 * 1024).to_be_bytes()).unwrap();
            s.write_all(&[b'{'; 1024]).unwrap();
            s
        })
        .collect();
    let listed = bosun.list();
    assert!(listed.agents.is_empty());
    drop(half);
    bosun.ok(repo.path(), &["ls"]);
}

#[test]
fn what_would_fail_later_is_refused_at_the_door() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let long_branch = "b".repeat(10_000);
    let big = format!("K={}", "v".repeat(100 * 1024));
    for (args, says) in [
        (vec!["--", ""], "the command to run is empty"),
        (vec!["--", "/nonexistent/bin/x"], "is not an executable file"),
        (vec!["--", "no-such-program-anywhere"], "is not found on PATH"),
        (vec!["--env", "=v", "--", "true"], "is not a variable name"),
        (vec!["--env", "K V=x", "--", "true"], "is not a variable name"),
        (vec!["--env", &big, "--", "true"], "the most is 65536"),
        (vec!["--branch", &long_branch, "--", "true"], "longer than 200 bytes"),
    ] {
        let err = refused(&bosun, &repo, repo.path(), &args);
        assert!(err.contains(says), "{says}: {err}");
        assert!(err.len() < 400, "the error quotes only the start of a value: {} bytes", err.len());
    }
    let huge_name = "n".repeat(10_000);
    let err = refused(&bosun, &repo, repo.path(), &["--name", &huge_name, "--", "true"]);
    assert!(err.len() < 400, "{} bytes", err.len());
}

#[test]
fn a_name_that_is_another_agents_id_is_refused() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let first = bosun.start(repo.path(), &["--", "sleep", "600"]);
    let err = bosun.fails(repo.path(), &["agent", "start", "--name", &first, "--", "sleep", "600"]);
    assert!(err.contains("is the id of agent") && err.contains("choose another --name"), "{err}");
    assert_eq!(bosun.list().agents.len(), 1, "nothing recorded");
    let out = bosun.ok(repo.path(), &["kill", &first]);
    assert!(out.starts_with(&first), "the name still means the first agent: {out}");
}
