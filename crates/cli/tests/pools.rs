//! Workspace pools through the CLI, with real git and tmux: init, acquire by `agent start
//! --workspace pool`, release and reset when the agent ends, reuse of the same place; dirty
//! releases refused; branches with commits kept; ignored build output kept unless --pristine;
//! TASK.md never committed; `.worktreeinclude` and setup; many tasks on a small pool, first come
//! first served; a daemon killed while an agent holds a workspace.

mod support;

use std::path::PathBuf;

use bosun_core::Event;
use bosun_testkit::poll::wait_for;
use bosun_testkit::repo::git_in;
use support::*;

fn pools(bosun: &Bosun, repo: &TempRepo) -> serde_json::Value {
    serde_json::from_str(&bosun.ok(repo.path(), &["pool", "ls", "--json"])).expect("pool ls prints JSON")
}

/// The states of the pool's slots, by id, as `pool ls --json` gives them.
fn slot_states(bosun: &Bosun, repo: &TempRepo) -> Vec<(String, String)> {
    let v = pools(bosun, repo);
    let mut out = Vec::new();
    for pool in v["pools"].as_array().into_iter().flatten() {
        for slot in pool["slots"].as_array().into_iter().flatten() {
            out.push((slot["id"].as_str().unwrap().to_owned(), slot["state"]["state"].as_str().unwrap().to_owned()));
        }
    }
    out
}

/// Waits until every slot of the pool is available, and there are `n`.
fn all_available(bosun: &Bosun, repo: &TempRepo, n: usize) {
    wait_for(PATIENCE, || {
        let s = slot_states(bosun, repo);
        (s.len() == n && s.iter().all(|(_, st)| st == "available")).then_some(())
    })
    .unwrap_or_else(|| panic!("slots never all available: {:?}", slot_states(bosun, repo)));
}

fn start_pooled(bosun: &Bosun, repo: &TempRepo, args: &[&str]) -> (String, serde_json::Value) {
    let mut all = vec!["agent", "start", "--json", "--workspace", "pool"];
    all.extend_from_slice(args);
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &all)).expect("start prints JSON");
    (v["agent"].as_str().unwrap().to_owned(), v)
}

fn project_dir(repo: &TempRepo) -> String {
    repo.path().file_name().unwrap().to_string_lossy().into_owned()
}

/// Where agent `id`'s pool workspace is, once it is bound (a first task waits for its slot to
/// be made).
fn bound_path(bosun: &Bosun, id: &str) -> PathBuf {
    wait_for(PATIENCE, || bosun.show(id).workspace.map(|w| w.path).filter(|p| !p.as_os_str().is_empty()))
        .expect("the agent's workspace is bound")
}

#[test]
fn a_pool_hands_out_its_workspace_resets_it_after_the_agent_and_hands_out_the_same_place_again() {
    let bosun = bosun();
    let repo = TempRepo::new();
    bosun.ok(repo.path(), &["pool", "init", "--size", "2"]);
    all_available(&bosun, &repo, 2);
    let slot = format!("{}--1", project_dir(&repo));
    let path = bosun.state_dir().join("workspaces").join(&slot);
    assert_eq!(git_in(&path, &["rev-parse", "HEAD"]).trim(), repo.head(), "at the base");
    let listed = pools(&bosun, &repo);
    assert!(listed["pools"][0]["slots"][0]["disk_bytes"].as_u64() > Some(0), "its disk usage: {listed}");

    let (id, v) =
        start_pooled(&bosun, &repo, &["--branch", "task-one", "--", "sh", "-c", "echo hi > out.txt; rm out.txt"]);
    assert_eq!(v["path"].as_str().map(PathBuf::from), Some(path.clone()), "the first available place");
    assert_eq!(v["waiting"], false);
    bosun.wait_state(&id, "dead(completed)");
    all_available(&bosun, &repo, 2);
    assert!(!repo.git(&["branch", "--list"]).contains("task-one"), "a branch with no commit of its own goes");
    let head = git_in(&path, &["status", "--porcelain=v1", "--branch"]);
    assert!(head.contains("HEAD (no branch)"), "detached again: {head}");

    let (_, v) = start_pooled(&bosun, &repo, &["--", "true"]);
    assert_eq!(v["path"].as_str().map(PathBuf::from), Some(path), "the same place, warm");
}

#[test]
fn task_md_holds_the_task_and_is_never_committed_and_a_branch_with_commits_is_kept() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let task = repo.path().join("../task-for-pool.md");
    std::fs::write(&task, "Fix the parser.\n").unwrap();
    let script = "cp TASK.md seen.txt && git add -A && git commit -qm work";
    let (id, _) = start_pooled(
        &bosun,
        &repo,
        &["--branch", "with-work", "--task-file", task.to_str().unwrap(), "--", "sh", "-c", script],
    );
    let path = bound_path(&bosun, &id);
    bosun.wait_state(&id, "dead(completed)");
    all_available(&bosun, &repo, 1);
    let files = repo.git(&["show", "--name-only", "--format=", "with-work"]);
    assert_eq!(files.trim(), "seen.txt", "TASK.md is not committed by `git add -A`");
    assert_eq!(repo.git(&["show", "with-work:seen.txt"]).trim_end(), "Fix the parser.");
    assert!(!path.join("TASK.md").exists(), "removed at release");
    let released = bosun.events().into_iter().find_map(|e| match e {
        Event::WorkspaceRemoved { branch_kept: Some(b), .. } => Some(b),
        _ => None,
    });
    assert_eq!(released.map(|b| (b.branch, b.commits)), Some(("with-work".to_owned(), 1)));
    let _ = std::fs::remove_file(task);
}

#[test]
fn a_release_is_refused_while_the_workspace_holds_work_and_forced_it_is_reset() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (id, _) = start_pooled(&bosun, &repo, &["--", "sh", "-c", "echo draft > notes.txt"]);
    let path = bound_path(&bosun, &id);
    bosun.wait_state(&id, "dead(completed)");
    let slot = format!("{}--1", project_dir(&repo));
    wait_for(PATIENCE, || slot_states(&bosun, &repo).iter().any(|(s, st)| s == &slot && st == "bound").then_some(()))
        .expect("kept bound");
    let out = bosun.run(repo.path(), &["pool", "release", &slot]);
    assert_eq!(out.status.code(), Some(5), "refused to protect work: {}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    assert!(path.join("notes.txt").exists(), "nothing touched");

    let out = bosun.ok(repo.path(), &["pool", "release", &slot, "--force"]);
    assert!(out.contains("deleted branch ws-") && out.contains("no commit of its own"), "{out}");
    all_available(&bosun, &repo, 1);
    assert!(!path.join("notes.txt").exists(), "reset and cleaned");
}

#[test]
fn ignored_build_output_is_kept_for_the_next_task_unless_pristine() {
    let bosun = bosun();
    let repo = TempRepo::new();
    repo.commit_file(".gitignore", "target/\n");
    let (id, _) = start_pooled(&bosun, &repo, &["--", "sh", "-c", "mkdir -p target && echo built > target/out"]);
    let path = bound_path(&bosun, &id);
    bosun.wait_state(&id, "dead(completed)");
    all_available(&bosun, &repo, 1);
    assert!(path.join("target/out").exists(), "warm for the next task");

    let slot = format!("{}--1", project_dir(&repo));
    bosun.ok(repo.path(), &["pool", "release", &slot, "--pristine"]);
    all_available(&bosun, &repo, 1);
    assert!(!path.join("target").exists(), "--pristine cleans ignored files too");
}

#[test]
fn worktreeinclude_files_are_copied_and_setup_runs_once_per_workspace() {
    let bosun = bosun();
    let repo = TempRepo::new();
    repo.commit_file(".gitignore", ".env\ndeps/\n");
    repo.commit_file(".worktreeinclude", ".env\n");
    std::fs::write(repo.path().join(".env"), "TOKEN=local\n").unwrap();
    std::fs::write(repo.path().join("other.txt"), "not listed\n").unwrap();
    bosun.ok(repo.path(), &["pool", "init", "--size", "1", "--setup", "mkdir -p deps && echo ran >> deps/log"]);
    all_available(&bosun, &repo, 1);
    let path = bosun.state_dir().join("workspaces").join(format!("{}--1", project_dir(&repo)));
    assert_eq!(std::fs::read_to_string(path.join(".env")).unwrap(), "TOKEN=local\n");
    assert!(!path.join("other.txt").exists(), "only what .worktreeinclude lists");
    for _ in 0..2 {
        let (id, _) = start_pooled(&bosun, &repo, &["--", "true"]);
        bosun.wait_state(&id, "dead(completed)");
        all_available(&bosun, &repo, 1);
    }
    assert_eq!(std::fs::read_to_string(path.join("deps/log")).unwrap(), "ran\n", "once, not per task");
}

#[test]
fn twenty_starts_on_a_pool_of_three_all_run_first_come_first_served_never_two_in_one_workspace() {
    let bosun = bosun();
    let repo = TempRepo::new();
    bosun.ok(repo.path(), &["pool", "init", "--size", "3"]);
    all_available(&bosun, &repo, 3);
    let ids: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> =
            (0..20).map(|_| s.spawn(|| start_pooled(&bosun, &repo, &["--", "sh", "-c", "sleep 0.2"]).0)).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for id in &ids {
        bosun.wait_state(id, "dead(completed)");
    }
    all_available(&bosun, &repo, 3);

    let events = bosun.events();
    let mut holder: std::collections::BTreeMap<u32, bosun_core::WorkspaceId> = Default::default();
    let (mut lined, mut served) = (Vec::new(), Vec::new());
    for e in &events {
        match e {
            Event::TaskWaiting { workspace, .. } => lined.push(workspace.clone()),
            Event::SlotBound { n, workspace, .. } => {
                assert!(!holder.contains_key(n), "slot {n} bound while bound");
                holder.insert(*n, workspace.clone());
                served.push(workspace.clone());
            }
            Event::SlotResetting { n, .. } => {
                holder.remove(n);
            }
            _ => {}
        }
    }
    assert_eq!(served.len(), 20);
    assert_eq!(served, lined, "served in the order they came");
    let agents = bosun.list().agents;
    assert!(agents.iter().all(|a| a.state.is_dead()), "all ran to the end");
}

#[test]
fn a_start_that_may_not_wait_fails_at_once_when_the_pool_is_taken() {
    let bosun = bosun();
    let repo = TempRepo::new();
    bosun.ok(repo.path(), &["pool", "init", "--size", "1"]);
    let (id, _) = start_pooled(&bosun, &repo, &["--", "sleep", "600"]);
    bosun.wait_state(&id, "running");
    let out = bosun.run(repo.path(), &["agent", "start", "--workspace", "pool", "--no-wait", "--", "true"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("taken") && err.contains("pool resize"), "{err}");
    assert_eq!(bosun.list().agents.len(), 1, "nothing recorded");

    // Without --no-wait it waits in line, and `ls` says so.
    let (waiting, v) = start_pooled(&bosun, &repo, &["--", "true"]);
    assert_eq!(v["waiting"], true);
    let ls = bosun.ok(repo.path(), &["ls"]);
    assert!(ls.lines().any(|l| l.contains(&waiting) && l.contains("waiting")), "{ls}");
    // `ls --json` says so too, beside the agent's state, which is still `starting`.
    let listed: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["ls", "--json"])).unwrap();
    let agent = listed["agents"].as_array().unwrap().iter().find(|a| a["id"] == waiting.as_str()).unwrap();
    assert_eq!((agent["waiting"].as_bool(), agent["state"]["state"].as_str()), (Some(true), Some("starting")));
    bosun.ok(repo.path(), &["kill", &id]);
    bosun.wait_state(&waiting, "dead(completed)");
}

#[test]
fn a_daemon_killed_while_an_agent_holds_a_workspace_releases_it_after_the_restart() {
    let bosun = bosun();
    let repo = TempRepo::new();
    // Untracked in the repository, outside the agent's workspace.
    let flag = repo.path().join("go");
    let script = format!("while [ ! -e '{}' ]; do sleep 0.05; done", flag.display());
    let (id, _) = start_pooled(&bosun, &repo, &["--", "sh", "-c", &script]);
    bosun.wait_state(&id, "running");
    bosun.kill_daemon_hard();
    std::fs::write(&flag, "").unwrap();
    // The agent ends while no daemon runs; the next command starts one, which finds it so.
    bosun.wait_state(&id, "dead(completed)");
    all_available(&bosun, &repo, 1);
}

#[test]
fn bad_pool_requests_say_what_is_wrong_and_change_nothing() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let not_repo = tempfile::tempdir().unwrap();
    let err = bosun.fails(not_repo.path(), &["pool", "init"]);
    assert!(err.contains("not inside a git repository"), "{err}");
    let err = bosun.fails(repo.path(), &["pool", "init", "--size", "0"]);
    assert!(err.contains("at least one"), "{err}");
    let err = bosun.fails(repo.path(), &["pool", "release", "nope--1"]);
    assert!(err.contains("nope--1"), "{err}");
    let err = bosun.fails(repo.path(), &["pool", "rm", "nope"]);
    assert!(err.contains("no pool"), "{err}");
    let err = bosun.fails(repo.path(), &["agent", "start", "--workspace", "pool", "--ref", "main", "--", "true"]);
    assert!(err.contains("--ref"), "{err}");
    let err = bosun.fails(repo.path(), &["agent", "start", "--workspace", "pool", "--branch", "a..b", "--", "true"]);
    assert!(err.contains("a..b"), "{err}");
    assert_eq!(pools(&bosun, &repo)["pools"].as_array().map(Vec::len), Some(0), "no pool made");
}

#[test]
fn hostile_pool_input_stays_data_and_is_bounded() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let dir = tempfile::tempdir().unwrap();
    let pwned = dir.path().join("pwned");
    let task = dir.path().join("task.md");
    let text = format!("$(touch {0}) `touch {0}` ; touch {0} \n# don't\n", pwned.display());
    std::fs::write(&task, &text).unwrap();
    let (id, _) = start_pooled(&bosun, &repo, &["--task-file", task.to_str().unwrap(), "--", "sleep", "600"]);
    let path = bound_path(&bosun, &id);
    bosun.wait_state(&id, "running");
    assert_eq!(std::fs::read_to_string(path.join("TASK.md")).unwrap(), text, "written as it is");
    assert!(!pwned.exists(), "never run");

    let big = dir.path().join("big.md");
    std::fs::write(&big, vec![b'x'; (1 << 20) + 1]).unwrap();
    let err = bosun.fails(repo.path(), &["pool", "acquire", "--task-file", big.to_str().unwrap()]);
    assert!(err.contains("over") && err.contains("bytes"), "{err}");
    let binary = dir.path().join("binary.md");
    std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
    let err = bosun.fails(repo.path(), &["pool", "acquire", "--task-file", binary.to_str().unwrap()]);
    assert!(err.contains("not UTF-8"), "{err}");
    for name in ["../../etc", "..", "/tmp", "x--1/../y", "x--99", "$(touch /tmp/y)"] {
        let out = bosun.run(repo.path(), &["pool", "release", name, "--force"]);
        assert!(!out.status.success(), "release {name:?} refused");
        let out = bosun.run(repo.path(), &["pool", "rm", name, "--force"]);
        assert!(!out.status.success(), "rm {name:?} refused");
    }
    let slots = slot_states(&bosun, &repo);
    assert_eq!(slots.len(), 1);
    assert_eq!(slots[0].1, "bound", "nothing changed");
    assert!(path.join("TASK.md").exists());
}

#[test]
fn a_release_cut_short_by_a_killed_daemon_is_finished_after_the_restart() {
    let bosun = bosun();
    let origin = TempRepo::new();
    let bare = origin.bare_clone();
    let repo = TempRepo::clone_of(bare.path());
    // The reset's fetch waits for a flag, so the daemon can be killed in the middle of it.
    let held = tempfile::tempdir().unwrap();
    let (flag, script) = (held.path().join("go"), held.path().join("upload-pack"));
    let text =
        format!("#!/bin/sh\nwhile [ ! -e '{}' ]; do sleep 0.05; done\nexec git-upload-pack \"$@\"\n", flag.display());
    std::fs::write(&script, text).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    repo.git(&["config", "remote.origin.uploadpack", script.to_str().unwrap()]);

    let (id, _) = start_pooled(&bosun, &repo, &["--branch", "cut-short", "--", "true"]);
    bosun.wait_state(&id, "dead(completed)");
    wait_for(PATIENCE, || slot_states(&bosun, &repo).iter().any(|(_, st)| st == "resetting").then_some(()))
        .expect("the release's reset runs");
    bosun.kill_daemon_hard();
    std::fs::write(&flag, "").unwrap();

    // The next command starts a daemon, which resets the slot again and hands it out.
    all_available(&bosun, &repo, 1);
    let path = bosun.state_dir().join("workspaces").join(format!("{}--1", project_dir(&repo)));
    assert_eq!(git_in(&path, &["rev-parse", "HEAD"]).trim(), repo.git(&["rev-parse", "origin/main"]).trim());
    assert!(!repo.git(&["branch", "--list"]).contains("cut-short"), "its branch deleted");
    let (next, v) = start_pooled(&bosun, &repo, &["--", "true"]);
    assert_eq!(v["path"].as_str().map(PathBuf::from), Some(path));
    bosun.wait_state(&next, "dead(completed)");
}

#[test]
fn a_runbook_job_with_a_pool_source_works_in_a_pool_workspace_and_gives_it_back() {
    let bosun = bosun();
    let repo = repo_with_runbook(
        "build.hcl",
        r#"
command "build" {
  run = { job = "build" }
}
job "build" {
  source = { pool = true, branch = "built-${source.nonce}" }
  step "make" {
    run = "echo built > result.txt && git add result.txt && git commit -qm built"
  }
}
"#,
    );
    let job = bosun.run_job(repo.path(), &["build"]);
    bosun.ok(repo.path(), &["job", "wait", &job]);
    all_available(&bosun, &repo, 1);
    let path = bosun.state_dir().join("workspaces").join(format!("{}--1", project_dir(&repo)));
    let branches = repo.git(&["branch", "--list", "built-*"]);
    assert_eq!(branches.lines().count(), 1, "its branch, with its commit, kept: {branches}");
    let branch = branches.trim().trim_start_matches(['*', '+', ' ']).to_owned();
    assert_eq!(repo.git(&["show", &format!("{branch}:result.txt")]).trim(), "built");
    assert!(!path.join("result.txt").exists(), "the workspace is back at the base");
}

#[test]
fn a_script_acquires_a_workspace_that_prune_leaves_alone_and_release_gives_back() {
    let bosun = bosun();
    let repo = TempRepo::new();
    bosun.ok(repo.path(), &["pool", "init", "--size", "1"]);
    all_available(&bosun, &repo, 1);
    let out = bosun.ok(repo.path(), &["pool", "acquire", "--json", "--branch", "by-script"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let path = PathBuf::from(v["path"].as_str().unwrap());
    assert_eq!(git_in(&path, &["branch", "--show-current"]).trim(), "by-script");
    assert!(!path.join("TASK.md").exists(), "no task given");

    bosun.ok(repo.path(), &["workspace", "prune"]);
    assert_eq!(slot_states(&bosun, &repo)[0].1, "bound", "still the script's");
    let err = bosun.fails(repo.path(), &["pool", "acquire", "--no-wait"]);
    assert!(err.contains("taken"), "{err}");

    // Without --no-wait, a second acquire waits in line until the first gives it back.
    let second = std::thread::scope(|s| {
        let waiting = s.spawn(|| bosun.ok(repo.path(), &["pool", "acquire", "--json", "--branch", "second"]));
        wait_for(PATIENCE, || (pools(&bosun, &repo)["pools"][0]["waiting"].as_array()?.len() == 1).then_some(()))
            .expect("the second acquire waits in line");
        bosun.ok(repo.path(), &["pool", "release", v["workspace"].as_str().unwrap()]);
        waiting.join().unwrap()
    });
    assert!(!repo.git(&["branch", "--list"]).contains("by-script"), "released, its branch gone");
    let second: serde_json::Value = serde_json::from_str(&second).unwrap();
    assert_eq!(second["path"].as_str().map(PathBuf::from), Some(path.clone()), "the same place");
    assert_eq!(git_in(&path, &["branch", "--show-current"]).trim(), "second");
}

#[test]
fn after_a_restart_a_workspace_found_dirty_or_gone_is_marked_so_and_never_handed_out() {
    let bosun = bosun();
    let repo = TempRepo::new();
    bosun.ok(repo.path(), &["pool", "init", "--size", "2"]);
    all_available(&bosun, &repo, 2);
    bosun.ok(repo.path(), &["daemon", "stop"]);
    let root = bosun.state_dir().join("workspaces");
    let project = project_dir(&repo);
    std::fs::write(root.join(format!("{project}--1/left-behind.txt")), "someone's work\n").unwrap();
    std::fs::remove_dir_all(root.join(format!("{project}--2"))).unwrap();

    let states = slot_states(&bosun, &repo);
    assert_eq!(states, [(format!("{project}--1"), "dirty".into()), (format!("{project}--2"), "missing".into())]);
    let (id, v) = start_pooled(&bosun, &repo, &["--", "true"]);
    assert_eq!(v["waiting"], true, "neither is handed out");
    let out = bosun.ok(repo.path(), &["pool", "release", &format!("{project}--1"), "--force"]);
    assert!(out.contains("reset in the background"), "{out}");
    bosun.wait_state(&id, "dead(completed)");
    assert!(!root.join(format!("{project}--1/left-behind.txt")).exists());
}

#[test]
fn pool_ls_and_ls_agree_that_a_slot_holding_work_is_dirty_until_a_person_commits_it() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (id, _) = start_pooled(&bosun, &repo, &["--branch", "left-work", "--", "sh", "-c", "echo draft > notes.txt"]);
    let path = bound_path(&bosun, &id);
    bosun.wait_state(&id, "dead(completed)");
    let ws = wait_for(PATIENCE, || bosun.show(&id).workspace.filter(|w| w.state.label() == "dirty"))
        .expect("`ls` says dirty once its agent ended");
    let listed = bosun.ok(repo.path(), &["pool", "ls"]);
    let row = listed.lines().find(|l| l.starts_with(&format!("{}--1", project_dir(&repo)))).unwrap_or_default();
    assert!(row.contains(&format!("dirty: agent {id}")), "`pool ls` says so too: {listed}");
    assert_eq!(pools(&bosun, &repo)["workspaces"][ws.id.as_str()]["state"], "dirty", "and its JSON");

    // A person commits the work: the slot is given back without --force, its branch kept.
    bosun_testkit::repo::commit_file_in(&path, "notes.txt", "draft\n");
    let out = bosun.ok(repo.path(), &["pool", "release", &format!("{}--1", project_dir(&repo))]);
    assert!(out.contains("kept branch left-work"), "{out}");
    all_available(&bosun, &repo, 1);
    assert_eq!(repo.git(&["show", "left-work:notes.txt"]).trim(), "draft");
}

#[test]
fn pool_acquire_prints_the_path_alone_to_a_script() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let out = bosun.ok(repo.path(), &["pool", "acquire", "--branch", "scripted"]);
    let path = PathBuf::from(out.strip_suffix('\n').unwrap_or_else(|| panic!("one line: {out:?}")));
    assert!(!out.trim_end().contains('\n'), "one line, the path: {out:?}");
    assert!(path.is_absolute() && path.is_dir(), "{out:?}");
    assert_eq!(git_in(&path, &["branch", "--show-current"]).trim(), "scripted");
}
