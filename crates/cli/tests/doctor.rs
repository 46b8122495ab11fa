//! `bosun doctor`: leftovers no record owns are found, and `--fix` removes them unless someone's
//! work may be in them.

mod support;

use std::path::Path;

use bosun_testkit::repo::{commit_file_in, git_in};
use support::*;

fn doctor(bosun: &Bosun, repo: &TempRepo, args: &[&str]) -> (bool, String) {
    let mut all = vec!["doctor"];
    all.extend(args);
    let out = bosun.run(repo.path(), &all);
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

fn branches(repo: &TempRepo) -> Vec<String> {
    repo.git(&["for-each-ref", "--format=%(refname:short)", "refs/heads/ws-*"]).lines().map(str::to_owned).collect()
}

#[test]
fn doctor_finds_every_kind_of_leftover_and_fix_removes_only_what_holds_no_work() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = bosun.start(repo.path(), &["--", "sleep", "600"]);
    let agent = bosun.wait_state(&id, "running");
    let (ok, out) = doctor(&bosun, &repo, &[]);
    assert!(ok, "an agent's own things are not leftovers: {out}");
    assert!(out.contains("nothing left over"), "{out}");

    // Leftovers of every kind, as a lost record would leave them.
    let root = bosun.state_dir().join("workspaces");
    let (clean, dirty, gone) = (root.join("ws-x-orphan01"), root.join("ws-x-orphan02"), root.join("ws-x-orphan05"));
    let add = |path: &Path, branch: &str| {
        repo.git(&["worktree", "add", "-q", "-b", branch, path.to_str().unwrap(), "HEAD"]);
    };
    add(&clean, "ws-orphan01");
    add(&dirty, "ws-orphan02");
    std::fs::write(dirty.join("work.txt"), "unsaved work").unwrap();
    add(&gone, "ws-orphan05");
    std::fs::remove_dir_all(&gone).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    git_in(repo.path(), &["worktree", "add", "-q", "-b", "ws-orphan03", elsewhere.path().join("w").to_str().unwrap()]);
    commit_file_in(&elsewhere.path().join("w"), "feature.txt", "committed, never pushed");
    git_in(repo.path(), &["worktree", "remove", elsewhere.path().join("w").to_str().unwrap()]);
    repo.git(&["branch", "ws-orphan04"]);
    // Two leftover branches share a commit no other branch has: each alone looks safe to delete.
    git_in(repo.path(), &["worktree", "add", "-q", "-b", "ws-orphan06", elsewhere.path().join("v").to_str().unwrap()]);
    let shared = commit_file_in(&elsewhere.path().join("v"), "shared.txt", "only on 06 and 07");
    git_in(repo.path(), &["worktree", "remove", elsewhere.path().join("v").to_str().unwrap()]);
    repo.git(&["branch", "ws-orphan07", "ws-orphan06"]);
    assert!(bosun.tmux(&["new-session", "-d", "-s", "bosun-stray", "sleep 600"]).status.success());
    let stray_dir = bosun.state_dir().join("agents/zzzzzzzz");
    std::fs::create_dir_all(&stray_dir).unwrap();
    std::fs::write(stray_dir.join("output.log"), "old").unwrap();

    let (ok, out) = doctor(&bosun, &repo, &[]);
    assert!(!ok, "leftovers make doctor fail: {out}");
    for what in [
        format!("worktree {}", clean.display()),
        format!("worktree {}", dirty.display()),
        format!("worktree record {}", gone.display()),
        "branch ws-orphan01".into(),
        "branch ws-orphan02".into(),
        "branch ws-orphan03".into(),
        "branch ws-orphan04".into(),
        "branch ws-orphan05".into(),
        "session bosun-stray".into(),
        format!("agent directory {}", stray_dir.display()),
    ] {
        assert!(out.contains(&what), "{what} not reported:\n{out}");
    }
    assert!(!out.contains(agent.session.as_str()) && !out.contains(&agent.cwd.display().to_string()), "{out}");
    assert!(clean.exists() && stray_dir.exists() && branches(&repo).len() == 8, "looking changes nothing");

    let (ok, out) = doctor(&bosun, &repo, &["--fix"]);
    assert!(!ok, "what is kept still remains: {out}");
    assert!(!clean.exists(), "{out}");
    assert_eq!(std::fs::read_to_string(dirty.join("work.txt")).unwrap(), "unsaved work", "a dirty worktree stays");
    assert!(!repo.git(&["worktree", "list"]).contains("ws-x-orphan05"), "the registration is pruned");
    let nonce = agent.cwd.file_name().unwrap().to_str().unwrap().rsplit('-').next().unwrap().to_owned();
    let mut expected = vec![format!("ws-{nonce}"), "ws-orphan02".into(), "ws-orphan03".into(), "ws-orphan07".into()];
    expected.sort();
    assert!(!repo.git(&["branch", "--contains", &shared]).is_empty(), "the shared commit is still on a branch:\n{out}");
    assert_eq!(
        branches(&repo),
        expected,
        "kept: the dirty worktree's branch, the one with unpushed commits, and the agent's own:\n{out}"
    );
    assert!(out.contains("kept    branch ws-orphan03") && out.contains("1 commit(s)"), "{out}");
    assert!(!bosun.sessions().contains(&"bosun-stray".to_owned()), "{:?}", bosun.sessions());
    assert!(!stray_dir.exists());

    let after = bosun.agent(&id);
    assert_eq!(after.state.label(), "running", "the agent is untouched");
    assert!(after.cwd.exists() && bosun.sessions().contains(&agent.session.to_string()));

    let out = bosun.run(repo.path(), &["doctor", "--json"]);
    let left: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let kinds: Vec<_> = left.iter().map(|f| (f["kind"].as_str().unwrap(), f["keep"].is_string())).collect();
    let expected = vec![("workspace", true), ("branch", true), ("branch", true), ("branch", true)];
    assert_eq!(kinds, expected, "{left:#?}");
}
