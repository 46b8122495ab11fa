//! `bosun diff`: what an agent's or job's worktree changed against its base — a commit, a file
//! changed but not committed, a new file never added, a deleted and a renamed one — as files and
//! as a patch, without touching the agent's own index; refusals for what has nothing to compare.

mod support;

use bosun_testkit::poll::wait_for;
use support::*;

fn git_in(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git").args(args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_diff_shows_committed_uncommitted_untracked_deleted_and_renamed_work_and_touches_nothing() {
    let bosun = bosun();
    let repo = TempRepo::new();
    repo.commit_file("old.txt", "to be renamed\n");
    repo.commit_file("gone.txt", "to be deleted\n");
    let id = bosun.start(repo.path(), &["--", "sh", "-c", "sleep 600"]);
    // Its worktree is made and its session started before anything is done in it.
    bosun.wait_state(&id, "running");
    let ws = bosun.show(&id).workspace.expect("its workspace").path;
    git_in(&ws, &["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "empty"]);
    std::fs::write(ws.join("README.md"), "# changed, committed\n").unwrap();
    git_in(&ws, &["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qam", "work"]);
    std::fs::write(ws.join("README.md"), "# changed, committed\nand more, not committed\n").unwrap();
    std::fs::write(ws.join("new file\nwith a newline.txt"), "never added\n").unwrap();
    std::fs::remove_file(ws.join("gone.txt")).unwrap();
    git_in(&ws, &["mv", "old.txt", "renamed.txt"]);
    let status_before = git_in(&ws, &["status", "--porcelain=v1", "-z"]);

    let stat = bosun.ok(repo.path(), &["diff", &id, "--stat"]);
    assert!(stat.contains("M README.md  +2 -1"), "{stat}");
    assert!(stat.contains("D gone.txt  +0 -1"), "{stat}");
    assert!(stat.contains("R renamed.txt (from old.txt)  +0 -0"), "{stat}");
    assert!(stat.contains("2 commit(s), 4 file(s), +3 -2 on "), "{stat}");

    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["diff", &id, "--json"])).unwrap();
    let paths: Vec<&str> = v["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert!(paths.contains(&"new file\nwith a newline.txt"), "a name with a newline stays whole: {paths:?}");
    let added = v["files"].as_array().unwrap().iter().find(|f| f["path"] == "new file\nwith a newline.txt").unwrap();
    assert_eq!((added["change"]["kind"].as_str(), added["added"].as_u64()), (Some("added"), Some(1)));
    let patch = v["patch"].as_str().unwrap();
    assert!(patch.contains("+and more, not committed") && !patch.contains("\x1b["), "plain for scripts");

    let plain = bosun.ok(repo.path(), &["diff", &id, "--colors", "never"]);
    assert!(plain.contains("+never added") && plain.contains("rename from old.txt"), "{plain}");
    let coloured = bosun.ok(repo.path(), &["diff", &id, "--colors", "always"]);
    assert!(coloured.contains("\x1b["), "coloured when asked");
    assert_eq!(git_in(&ws, &["status", "--porcelain=v1", "-z"]), status_before, "its index and files as they were");
    let scratch = format!("bosun-diff-index-{}", bosun.daemon_pid().expect("its daemon"));
    let none_left = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .all(|e| !e.file_name().to_string_lossy().starts_with(&scratch));
    assert!(none_left, "no scratch index left behind");
}

#[test]
fn a_jobs_diff_is_its_worktrees_and_what_has_nothing_to_compare_is_refused() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let runbook = r#"
command "mark" {
  run = { job = "mark" }
}

job "mark" {
  source = "worktree"
  step "write" {
    run = "echo marked > mark.txt && git add -A && git commit -qm marked"
  }
}
"#;
    write_runbook(&repo, "mark.hcl", runbook);
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["run", "--json", "mark"])).unwrap();
    let job = v["job"].as_str().unwrap().to_owned();
    let done = wait_for(PATIENCE, || bosun.ok(repo.path(), &["job", "show", &job]).contains("done").then_some(()));
    assert!(done.is_some(), "{}", bosun.log());
    let stat = bosun.ok(repo.path(), &["diff", &job, "--stat"]);
    assert!(stat.contains("A mark.txt  +1 -0") && stat.contains("1 commit(s), 1 file(s)"), "{stat}");

    let err = bosun.fails(repo.path(), &["diff", "nope"]);
    assert!(err.contains("no agent or job nope"), "{err}");
    let folder = bosun.start(repo.path(), &["--workspace", "folder", "--", "sh", "-c", "sleep 600"]);
    let err = bosun.fails(repo.path(), &["diff", &folder]);
    assert!(err.contains("a folder workspace has no commit it started at"), "{err}");
}

#[test]
fn the_commits_ahead_of_each_workspace_are_counted_and_a_folder_has_no_count() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = bosun.start(repo.path(), &["--", "sh", "-c", "sleep 600"]);
    bosun.wait_state(&id, "running");
    let ws = bosun.show(&id).workspace.expect("its workspace");
    for n in ["one", "two"] {
        git_in(&ws.path, &["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", n]);
    }
    let folder = bosun.start(repo.path(), &["--workspace", "folder", "--", "sh", "-c", "sleep 600"]);
    let folder_ws = bosun.show(&folder).workspace.expect("its folder").id;
    let bosun_wire::Response::Ahead { ahead } = bosun.ask(bosun_wire::Request::Ahead) else { panic!("no count") };
    assert_eq!(ahead.get(&ws.id), Some(&2), "{ahead:?}");
    assert!(!ahead.contains_key(&folder_ws), "a folder has no branch to count: {ahead:?}");
}
