//! Workspaces through the CLI: removal that never loses work, prune, and folders.

mod support;

use bosun_testkit::repo::commit_file_in;
use support::*;

fn finished(bosun: &Bosun, repo: &TempRepo, args: &[&str]) -> (String, std::path::PathBuf) {
    let id = bosun.start(repo.path(), args);
    bosun.wait_state(&id, "dead(completed)");
    let settled = bosun_testkit::poll::wait_for(PATIENCE, || {
        let ws = bosun.show(&id).workspace?;
        (!matches!(ws.state, bosun_core::WorkspaceState::InUse { .. })).then_some(ws)
    })
    .expect("workspace released");
    (settled.id.to_string(), settled.path)
}

#[test]
fn a_dirty_workspace_is_refused_without_force_and_removed_with_it() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (ws, path) = finished(&bosun, &repo, &["--", "sh", "-c", "echo work > result.txt"]);
    let out = bosun.run(repo.path(), &["workspace", "rm", &ws]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("uncommitted changes") && err.contains("--force"), "{err}");
    assert_eq!(out.status.code(), Some(5), "refused to protect work");
    assert!(path.join("result.txt").exists(), "nothing removed");

    let out = bosun.ok(repo.path(), &["workspace", "rm", &ws, "--force"]);
    assert!(out.contains(&format!("removed {ws}")), "{out}");
    assert!(!path.exists());
    assert!(bosun.list().workspaces.is_empty());
}

#[test]
fn a_branch_with_new_commits_is_kept_and_reported_and_a_clean_one_is_deleted() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (kept_ws, kept_path) = finished(&bosun, &repo, &["--branch", "keep-me", "--", "true"]);
    commit_file_in(&kept_path, "work.txt", "done\n");
    let (gone_ws, _) = finished(&bosun, &repo, &["--branch", "delete-me", "--", "true"]);

    let out = bosun.ok(repo.path(), &["workspace", "rm", &kept_ws]);
    assert!(out.contains("kept branch keep-me") && out.contains("1 commit"), "{out}");
    let out = bosun.ok(repo.path(), &["workspace", "rm", &gone_ws]);
    assert!(out.contains("deleted branch delete-me"), "{out}");
    let branches = repo.git(&["branch", "--list"]);
    assert!(branches.contains("keep-me") && !branches.contains("delete-me"), "{branches}");
    assert!(!kept_path.exists(), "the worktree itself is removed");
}

#[test]
fn a_workspace_in_use_is_refused() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = bosun.start(repo.path(), &["--", "sleep", "600"]);
    bosun.wait_state(&id, "running");
    let ws = bosun.show(&id).workspace.unwrap();
    let err = bosun.fails(repo.path(), &["workspace", "rm", ws.id.as_str(), "--force"]);
    assert!(err.contains("in use by agent") && err.contains(&format!("bosun kill {id}")), "{err}");
    assert!(ws.path.exists());
}

#[test]
fn prune_removes_clean_workspaces_and_keeps_dirty_and_busy_ones() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (clean, clean_path) = finished(&bosun, &repo, &["--", "true"]);
    let (dirty, dirty_path) = finished(&bosun, &repo, &["--", "sh", "-c", "touch x"]);
    let busy = bosun.start(repo.path(), &["--", "sleep", "600"]);
    bosun.wait_state(&busy, "running");

    let out = bosun.ok(repo.path(), &["workspace", "prune", "--dry-run"]);
    assert!(out.contains(&format!("would remove {clean}")), "{out}");
    assert!(clean_path.exists(), "dry run removes nothing");

    let out = bosun.ok(repo.path(), &["workspace", "prune"]);
    assert!(out.contains(&format!("removed {clean}")), "{out}");
    assert!(out.contains(&format!("kept {dirty}: dirty")), "{out}");
    assert!(!clean_path.exists() && dirty_path.exists());
    assert_eq!(bosun.list().workspaces.len(), 2);
}

#[test]
fn a_folder_workspace_is_an_empty_directory_outside_any_repository() {
    let bosun = bosun();
    let plain = tempfile::tempdir().unwrap();
    let id = bosun.start(plain.path(), &["--workspace", "folder", "--", "sh", "-c", "ls -A > listing.txt"]);
    bosun.wait_state(&id, "dead(completed)");
    let ws = bosun.show(&id).workspace.unwrap();
    assert_eq!(ws.kind, bosun_core::WorkspaceKind::Folder);
    assert_eq!(std::fs::read_to_string(ws.path.join("listing.txt")).unwrap(), "listing.txt\n");
    assert!(ws.path.starts_with(bosun.state_dir().join("workspaces")));
}

#[test]
fn each_clients_repository_settings_are_copied_into_its_own_agents_worktree_only() {
    let bosun = bosun();
    let repo = TempRepo::new();
    std::fs::create_dir_all(repo.path().join(".claude")).unwrap();
    std::fs::write(repo.path().join(".claude/settings.json"), "{\"model\":\"test\"}").unwrap();
    // A Claude agent (whose program ignores the driver's flags and exits).
    let (ws, path) = finished(&bosun, &repo, &["--driver", "claude", "--", "true"]);
    let copied = std::fs::read_to_string(path.join(".claude/settings.local.json")).unwrap();
    assert_eq!(copied, "{\"model\":\"test\"}");
    let out = bosun.ok(repo.path(), &["workspace", "rm", &ws]);
    assert!(out.contains("removed"), "bosun's own copy does not make it dirty: {out}");
    let (_, path) = finished(&bosun, &repo, &["--", "true"]);
    assert!(!path.join(".claude/settings.local.json").exists(), "a generic agent gets no Claude settings");
    // Gemini CLI's project settings (not committed, so not in a worktree by themselves) are
    // copied as they are, and a Gemini agent gets no Claude settings.
    std::fs::create_dir_all(repo.path().join(".gemini")).unwrap();
    std::fs::write(repo.path().join(".gemini/settings.json"), "{\"ui\":{\"theme\":\"x\"}}").unwrap();
    let (ws, path) = finished(&bosun, &repo, &["--driver", "gemini", "--", "true"]);
    assert!(!path.join(".claude/settings.local.json").exists(), "a Gemini CLI agent gets no Claude settings");
    let copied = std::fs::read_to_string(path.join(".gemini/settings.json")).unwrap();
    assert_eq!(copied, "{\"ui\":{\"theme\":\"x\"}}");
    let out = bosun.ok(repo.path(), &["workspace", "rm", &ws]);
    assert!(out.contains("removed"), "bosun's own copy does not make it dirty: {out}");
    let (_, path) = finished(&bosun, &repo, &["--driver", "claude", "--", "true"]);
    assert!(!path.join(".gemini/settings.json").exists(), "a Claude agent gets no Gemini settings");
    // pi's, as they are.
    std::fs::create_dir_all(repo.path().join(".pi")).unwrap();
    std::fs::write(repo.path().join(".pi/settings.json"), "{\"theme\":\"dark\"}").unwrap();
    let (_, path) = finished(&bosun, &repo, &["--driver", "pi", "--", "true"]);
    assert_eq!(std::fs::read_to_string(path.join(".pi/settings.json")).unwrap(), "{\"theme\":\"dark\"}");
    assert!(!path.join(".gemini/settings.json").exists(), "nor Gemini's");
    // opencode's, at the repository's root.
    std::fs::write(repo.path().join("opencode.json"), "{\"model\":\"x/y\"}").unwrap();
    let (_, path) = finished(&bosun, &repo, &["--driver", "opencode", "--", "true"]);
    assert_eq!(std::fs::read_to_string(path.join("opencode.json")).unwrap(), "{\"model\":\"x/y\"}");
}

/// opencode's `.opencode/` folder: what git does not track is copied into its agent's
/// worktree (what it tracks is there already, as committed), never its installed packages,
/// never through a link; the copies do not count as the agent's work, what the agent writes
/// there does; the user's checkout is as it was.
#[test]
fn opencodes_project_folder_is_copied_into_its_agents_worktree_and_no_link_is_followed() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.md"), "secret").unwrap();
    let oc = repo.path().join(".opencode");
    for dir in ["commands", "agents", "node_modules/pkg"] {
        std::fs::create_dir_all(oc.join(dir)).unwrap();
    }
    std::fs::write(oc.join("commands/committed.md"), "as committed").unwrap();
    repo.git(&["add", ".opencode"]);
    repo.git(&["commit", "-qm", "a command"]);
    std::fs::write(oc.join("commands/committed.md"), "changed, not committed").unwrap();
    std::fs::write(oc.join("agents/review.md"), "review agent").unwrap();
    std::fs::write(oc.join("opencode.jsonc"), "{ // a comment\n}").unwrap();
    std::fs::write(oc.join("node_modules/pkg/index.js"), "installed").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.md"), oc.join("agents/leak.md")).unwrap();
    std::os::unix::fs::symlink(outside.path(), oc.join("linked")).unwrap();
    let status = repo.git(&["status", "--porcelain", "--untracked-files=all"]);

    let (ws, path) = finished(&bosun, &repo, &["--driver", "opencode", "--", "true"]);
    let copy = path.join(".opencode");
    assert_eq!(std::fs::read_to_string(copy.join("agents/review.md")).unwrap(), "review agent");
    assert_eq!(std::fs::read_to_string(copy.join("opencode.jsonc")).unwrap(), "{ // a comment\n}");
    assert_eq!(std::fs::read_to_string(copy.join("commands/committed.md")).unwrap(), "as committed");
    for never in ["node_modules", "agents/leak.md", "linked"] {
        assert!(std::fs::symlink_metadata(copy.join(never)).is_err(), "{never} is not copied");
    }
    let out = bosun.ok(repo.path(), &["workspace", "rm", &ws]);
    assert!(out.contains("removed"), "bosun's own copies do not make it dirty: {out}");
    // What its agent writes there is its work.
    let write = "echo mine > .opencode/agents/mine.md";
    let (ws, path) = finished(&bosun, &repo, &["--driver", "opencode", "--", "sh", "-c", write]);
    assert!(path.join(".opencode/agents/review.md").exists());
    let out = bosun.run(repo.path(), &["workspace", "rm", &ws]);
    assert!(!out.status.success() && path.join(".opencode/agents/mine.md").exists(), "kept: its agent's file");
    // The user's checkout is as it was.
    assert_eq!(repo.git(&["status", "--porcelain", "--untracked-files=all"]), status);
    assert_eq!(std::fs::read_to_string(oc.join("commands/committed.md")).unwrap(), "changed, not committed");
    assert!(std::fs::symlink_metadata(oc.join("agents/leak.md")).unwrap().file_type().is_symlink());
    let (_, path) = finished(&bosun, &repo, &["--driver", "pi", "--", "true"]);
    assert!(!path.join(".opencode/agents/review.md").exists(), "a pi agent gets none of opencode's");
}

#[test]
fn a_workspace_whose_work_a_person_committed_is_removed_and_pruned_without_force() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (ws, path) = finished(&bosun, &repo, &["--branch", "by-hand", "--", "sh", "-c", "echo work > result.txt"]);
    let (pruned, pruned_path) = finished(&bosun, &repo, &["--", "sh", "-c", "echo more > more.txt"]);
    let dirty = |id: &str| bosun.list().workspaces.iter().any(|w| w.id.as_str() == id && w.state.label() == "dirty");
    assert!(dirty(&ws) && dirty(&pruned), "marked dirty when their agents ended");
    for p in [&path, &pruned_path] {
        bosun_testkit::repo::git_in(p, &["add", "-A"]);
        bosun_testkit::repo::git_in(p, &["commit", "-qm", "the work, committed by hand"]);
        assert_eq!(bosun_testkit::repo::git_in(p, &["status", "--porcelain"]), "", "clean now");
    }

    let out = bosun.run(repo.path(), &["workspace", "rm", &ws]);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "what the look finds now decides: {stderr}");
    assert!(stdout.contains("kept branch by-hand") && stdout.contains("commit(s)"), "{stdout}");
    assert!(!path.exists(), "removed");
    assert_eq!(repo.git(&["show", "by-hand:result.txt"]), "work", "the work is on its branch");

    let out = bosun.ok(repo.path(), &["workspace", "prune"]);
    assert!(out.contains(&format!("removed {pruned}")), "{out}");
    assert!(!pruned_path.exists());
    assert!(bosun.list().workspaces.is_empty());
}

#[test]
fn a_workspace_whose_branch_cannot_be_made_leaves_no_record_directory_or_branch() {
    let bosun = bosun();
    let repo = TempRepo::new();
    // `feature/x` is a valid name, but git keeps `feature`'s ref where its directory would be.
    repo.git(&["branch", "feature"]);
    let out = bosun.run(repo.path(), &["agent", "start", "--json", "--branch", "feature/x", "--", "true"]);
    if out.status.success() {
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let id = v["agent"].as_str().unwrap();
        bosun.wait_state(id, "dead(failed-to-start)");
        let error = bosun.agent(id).error.unwrap_or_default();
        assert!(error.contains("workspace could not be created") && error.contains("feature"), "{error}");
        assert!(
            bosun.events().iter().any(|e| matches!(e, bosun_core::Event::WorkspaceCreateFailed { .. })),
            "the failure is in the log"
        );
    } else {
        assert_eq!(out.status.code(), Some(2), "refused at the door: {}", String::from_utf8_lossy(&out.stderr));
    }
    let listed = bosun.list().workspaces;
    assert!(listed.is_empty(), "no record with nothing behind it: {listed:?}");
    let made = std::fs::read_dir(bosun.state_dir().join("workspaces")).map(|d| d.count()).unwrap_or(0);
    assert_eq!(made, 0, "no directory");
    assert_eq!(repo.git(&["branch", "--list", "feature/*"]), "", "no branch");
}
