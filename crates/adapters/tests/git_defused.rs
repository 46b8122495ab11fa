//! bosun's own git commands run nothing a repository names: no `core.fsmonitor` program, no
//! hook, no filter of a repository nested in an agent's worktree (whose config its agent wrote),
//! whatever they do with the worktree (look, diff, snapshot, commit its work, merge its branch,
//! remove it). Each planted program would leave a mark file; none may appear.

use std::fs;
use std::path::{Path, PathBuf};

use bosun_adapters::{Git, LocalGit, LocalWorkspaces, Workspaces};
use bosun_core::WorkBranch;
use bosun_core::{MergeHow, Name, Nonce, Workspace, WorkspaceId, WorkspaceKind, WorkspaceState};
use bosun_testkit::repo::{commit_file_in, git_in, TempRepo};

/// Marks left by what the repository would run, one per kind.
struct Marks(tempfile::TempDir);

impl Marks {
    fn command(&self, what: &str) -> String {
        format!("touch {}", self.0.path().join(what).display())
    }

    fn left(&self) -> Vec<String> {
        let mut left: Vec<String> =
            fs::read_dir(self.0.path()).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into()).collect();
        left.sort();
        left
    }
}

/// In `repo`'s config a watcher and in its hooks directory every hook that bosun's calls could
/// reach (as an agent with the git directory writable planted them before); in the worktree at
/// `ws` a nested repository, committed as a gitlink, whose own config names a clean filter and a
/// watcher, its file's timestamps changed so git has to read it again.
fn plant(repo: &TempRepo, ws: &Path, marks: &Marks) {
    repo.git(&["config", "core.fsmonitor", &marks.command("fsmonitor")]);
    let hooks = repo.path().join(".git/hooks");
    for hook in
        ["pre-commit", "post-commit", "post-checkout", "post-merge", "pre-merge-commit", "reference-transaction"]
    {
        fs::write(hooks.join(hook), format!("#!/bin/sh\n{}\n", marks.command(hook))).unwrap();
        fs::set_permissions(hooks.join(hook), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let nested = ws.join("vendor/lib");
    fs::create_dir_all(&nested).unwrap();
    git_in(&nested, &["init", "-q"]);
    git_in(&nested, &["config", "filter.evil.clean", &format!("{}; cat", marks.command("nested-filter"))]);
    git_in(&nested, &["config", "core.fsmonitor", &marks.command("nested-fsmonitor")]);
    fs::write(nested.join(".gitattributes"), "* filter=evil\n").unwrap();
    commit_file_in(&nested, "lib.txt", "nested\n");
    git_in(ws, &["add", "vendor/lib"]);
    git_in(ws, &["-c", "core.hooksPath=/dev/null", "commit", "-qm", "vendor a library"]);
}

/// Makes the nested file's timestamps differ from its index's (each time another): a `git
/// status` there reads it (through its filter) again.
fn touch_nested(ws: &Path) {
    static TIMES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1_000_000);
    let at = format!("@{}", TIMES.fetch_add(1000, std::sync::atomic::Ordering::Relaxed));
    let stamp = std::process::Command::new("touch").args(["-d", &at]).arg(ws.join("vendor/lib/lib.txt")).status();
    assert!(stamp.unwrap().success());
}

/// The marks a plain `git status` in `ws` leaves (what the plants would run for a git not
/// defused), then none, the nested file to be read again.
fn plain_status_runs_them(ws: &Path, marks: &Marks) -> Vec<String> {
    touch_nested(ws);
    git_in(ws, &["status", "--porcelain"]);
    let left = marks.left();
    for mark in &left {
        fs::remove_file(marks.0.path().join(mark)).unwrap();
    }
    touch_nested(ws);
    left
}

#[test]
fn what_bosun_does_with_an_agents_worktree_runs_nothing_its_repository_names() {
    let repo = TempRepo::new();
    let state = tempfile::tempdir().unwrap();
    let path = state.path().join("workspaces/ws-hostile");
    let kind = WorkspaceKind::Worktree(WorkBranch {
        repo: repo.path().to_path_buf(),
        branch: "ws-hostile".into(),
        base_ref: "HEAD".into(),
        base: repo.head(),
    });
    let workspaces = LocalWorkspaces::new();
    workspaces.create(&path, &kind, None, false).expect("create");
    let marks = Marks(tempfile::tempdir().unwrap());
    plant(&repo, &path, &marks);
    assert_eq!(
        plain_status_runs_them(&path, &marks),
        ["fsmonitor", "nested-filter", "nested-fsmonitor"],
        "the plants work"
    );
    // The agent's work, not committed: a change, and a file of its own.
    fs::write(path.join("README.md"), "the agent's change\n").unwrap();
    fs::write(path.join("new.txt"), "new\n").unwrap();
    let owned: Vec<PathBuf> = Vec::new();

    assert!(workspaces.is_dirty(&path, &kind, &owned).expect("is_dirty"), "its work is seen");
    let (name, nonce): (Name, Nonce) = (Name::parse("hostile").unwrap(), Nonce::from_bits(1));
    let ws = Workspace {
        id: WorkspaceId::new(&name, &nonce),
        name,
        nonce,
        path: path.clone(),
        kind: kind.clone(),
        state: WorkspaceState::Ready,
        created_at: bosun_core::Timestamp::from_millis(0),
        settings_from: None,
        settings_folder: None,
        error: None,
    };
    let diff = LocalGit.diff(&ws, None, true, false).expect("diff");
    assert!(diff.files.iter().any(|f| f.path == "new.txt"), "the diff holds its work: {:?}", diff.files);
    workspaces.snapshot(&path, &kind, &owned, "snapshot").expect("snapshot");
    assert!(LocalGit.commit_all(&path, &owned, "the agent's work").expect("commit_all"), "its work is committed");
    assert_eq!(git_in(&path, &["log", "-1", "--format=%s"]), "the agent's work");
    let merged = LocalGit.merge_branch(repo.path(), "ws-hostile", "main", MergeHow::Merge, None).expect("merge");
    assert!(merged.fast_forward, "{merged:?}");
    assert!(repo.path().join("new.txt").is_file(), "the user's checkout has the merged work");
    workspaces.remove(&path, &kind, true, false, &owned).expect("remove");

    assert_eq!(marks.left(), Vec::<String>::new(), "what the repository named ran");
}
