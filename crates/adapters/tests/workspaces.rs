//! `LocalWorkspaces` and `LocalGit` against real git: repositories and workspaces in temp dirs.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use bosun_adapters::{AdapterError, Git, LocalGit, LocalWorkspaces, Workspaces};
use bosun_core::WorkBranch;
use bosun_core::WorkspaceKind;
use bosun_testkit::repo::{commit_file_in, git_in, TempRepo};
use tempfile::TempDir;

static WS: LazyLock<LocalWorkspaces> = LazyLock::new(LocalWorkspaces::new);
static GIT: LocalGit = LocalGit;

fn settings_owned() -> Vec<PathBuf> {
    vec![PathBuf::from(".claude/settings.local.json")]
}

fn worktree_kind(repo: &TempRepo, branch: &str) -> WorkspaceKind {
    WorkspaceKind::Worktree(WorkBranch {
        repo: repo.path().to_path_buf(),
        branch: branch.to_owned(),
        base_ref: "HEAD".to_owned(),
        base: repo.head(),
    })
}

/// A state dir outside the repository, and a workspace path two levels under it.
fn state_dir() -> (TempDir, PathBuf) {
    let state = tempfile::tempdir().expect("temp dir");
    let path = state.path().join("workspaces").join("ws-job-abc");
    (state, path)
}

fn branch_exists(repo: &TempRepo, branch: &str) -> bool {
    !repo.git(&["branch", "--list", branch]).is_empty()
}

fn is_registered(repo: &TempRepo, path: &Path) -> bool {
    let path = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    repo.git(&["worktree", "list", "--porcelain"])
        .lines()
        .any(|l| l.strip_prefix("worktree ").is_some_and(|p| Path::new(p) == path))
}

#[test]
fn worktree_create_puts_the_branch_at_base_and_the_files_in_path() {
    let repo = TempRepo::new();
    let base = repo.commit_file("src/lib.rs", "pub fn f() {}\n");
    repo.commit_file("later.txt", "after the base\n");
    let (_state, path) = state_dir();
    let kind = WorkspaceKind::Worktree(WorkBranch {
        repo: repo.path().to_path_buf(),
        branch: "ws-abc".to_owned(),
        base_ref: "HEAD~1".to_owned(),
        base: base.clone(),
    });

    WS.create(&path, &kind, None, false).expect("create");

    assert_eq!(repo.git(&["rev-parse", "refs/heads/ws-abc"]), base);
    assert_eq!(git_in(&path, &["rev-parse", "--abbrev-ref", "HEAD"]), "ws-abc");
    assert_eq!(fs::read_to_string(path.join("src/lib.rs")).expect("read"), "pub fn f() {}\n");
    assert!(path.join("README.md").is_file());
    assert!(!path.join("later.txt").exists(), "the worktree holds the base, not the repo's HEAD");
    assert!(is_registered(&repo, &path));
}

#[test]
fn settings_are_copied_to_settings_local_and_do_not_make_the_worktree_dirty() {
    let repo = TempRepo::new();
    repo.commit_file(".claude/settings.json", "{\"permissions\": {}}\n");
    let (_state, path) = state_dir();
    let kind = worktree_kind(&repo, "ws-settings");

    WS.create(&path, &kind, Some(&repo.path().join(".claude/settings.json")), false).expect("create");

    let copied = fs::read_to_string(path.join(".claude/settings.local.json")).expect("read the copy");
    assert_eq!(copied, "{\"permissions\": {}}\n");
    assert!(!WS.is_dirty(&path, &kind, &settings_owned()).expect("is_dirty"));
    assert!(WS.is_dirty(&path, &kind, &[]).expect("is_dirty"), "the copy is untracked when not owned");
}

#[test]
fn a_resumed_create_is_idempotent_and_recovers_a_branch_left_without_its_worktree() {
    let repo = TempRepo::new();
    let (_state, path) = state_dir();
    let kind = worktree_kind(&repo, "ws-again");

    WS.create(&path, &kind, None, false).expect("first create");
    fs::write(path.join("work.txt"), "in progress\n").expect("write");
    assert!(WS.create(&path, &kind, None, false).is_err(), "a fresh create never takes over");
    WS.create(&path, &kind, None, true).expect("a resumed create finds it done");
    assert_eq!(fs::read_to_string(path.join("work.txt")).expect("read"), "in progress\n");

    // A crash after the branch was made but before the worktree was.
    let (_other_state, other) = state_dir();
    repo.git(&["branch", "ws-crashed", &repo.head()]);
    let crashed = worktree_kind(&repo, "ws-crashed");
    assert!(WS.create(&other, &crashed, None, false).is_err(), "a fresh create never takes a branch over");
    WS.create(&other, &crashed, None, true).expect("a resumed create takes over the branch");
    assert_eq!(git_in(&other, &["rev-parse", "--abbrev-ref", "HEAD"]), "ws-crashed");
    assert!(is_registered(&repo, &other));
}

#[test]
fn is_dirty_sees_modified_and_untracked_files() {
    let repo = TempRepo::new();
    let (_state, path) = state_dir();
    let kind = worktree_kind(&repo, "ws-dirty");
    WS.create(&path, &kind, None, false).expect("create");
    assert!(!WS.is_dirty(&path, &kind, &[]).expect("is_dirty"), "fresh worktree");

    fs::write(path.join("README.md"), "changed\n").expect("write");
    assert!(WS.is_dirty(&path, &kind, &[]).expect("is_dirty"), "modified file");
    git_in(&path, &["checkout", "--", "README.md"]);
    assert!(!WS.is_dirty(&path, &kind, &[]).expect("is_dirty"), "restored");

    fs::create_dir_all(path.join("new/deep")).expect("mkdir");
    fs::write(path.join("new/deep/file.txt"), "untracked\n").expect("write");
    assert!(WS.is_dirty(&path, &kind, &[]).expect("is_dirty"), "untracked file");

    let (_gone_state, gone) = state_dir();
    assert!(!WS.is_dirty(&gone, &kind, &[]).expect("is_dirty"), "missing directory");
}

#[test]
fn commits_ahead_counts_commits_made_in_the_worktree() {
    let repo = TempRepo::new();
    let (_state, path) = state_dir();
    let kind = worktree_kind(&repo, "ws-ahead");
    WS.create(&path, &kind, None, false).expect("create");
    assert_eq!(GIT.commits_ahead(&kind).expect("commits_ahead"), 0);

    commit_file_in(&path, "one.txt", "1\n");
    commit_file_in(&path, "two.txt", "2\n");
    repo.commit_file("on-main.txt", "not on the branch\n");
    assert_eq!(GIT.commits_ahead(&kind).expect("commits_ahead"), 2);

    assert_eq!(GIT.commits_ahead(&worktree_kind(&repo, "ws-never-made")).expect("missing branch"), 0);
    assert_eq!(GIT.commits_ahead(&WorkspaceKind::Folder).expect("folder"), 0);
}

#[test]
fn remove_refuses_a_dirty_worktree_without_force_and_removes_it_with_force() {
    let repo = TempRepo::new();
    repo.commit_file(".claude/settings.json", "{}\n");
    let (_state, path) = state_dir();
    let kind = worktree_kind(&repo, "ws-remove");
    let owned = settings_owned();
    WS.create(&path, &kind, Some(&repo.path().join(".claude/settings.json")), false).expect("create");
    fs::write(path.join("README.md"), "agent's work\n").expect("write");
    fs::write(path.join("notes.txt"), "untracked work\n").expect("write");

    let refused = WS.remove(&path, &kind, false, false, &owned);
    assert!(matches!(&refused, Err(AdapterError::Dirty(p)) if p == &path), "got {refused:?}");
    assert_eq!(fs::read_to_string(path.join("README.md")).expect("read"), "agent's work\n");
    assert!(path.join("notes.txt").is_file());
    assert!(path.join(".claude/settings.local.json").is_file());
    assert!(is_registered(&repo, &path));

    WS.remove(&path, &kind, true, false, &owned).expect("forced remove");
    assert!(!path.exists());
    assert!(!is_registered(&repo, &path));
}

#[test]
fn remove_of_a_clean_worktree_deletes_the_branch_only_when_asked() {
    let repo = TempRepo::new();
    let (_state, kept_path) = state_dir();
    let kept = worktree_kind(&repo, "ws-kept");
    WS.create(&kept_path, &kept, None, false).expect("create");
    WS.remove(&kept_path, &kept, false, false, &[]).expect("remove");
    assert!(!kept_path.exists());
    assert!(!is_registered(&repo, &kept_path));
    assert!(branch_exists(&repo, "ws-kept"));

    let (_state2, gone_path) = state_dir();
    let gone = worktree_kind(&repo, "ws-gone");
    WS.create(&gone_path, &gone, None, false).expect("create");
    WS.remove(&gone_path, &gone, false, true, &[]).expect("remove");
    assert!(!gone_path.exists());
    assert!(!branch_exists(&repo, "ws-gone"));

    // Already removed, branch already deleted: still fine.
    WS.remove(&gone_path, &gone, false, true, &[]).expect("remove again");
}

#[test]
fn folder_create_dirty_and_remove() {
    let settings_dir = tempfile::tempdir().expect("temp dir");
    let settings = settings_dir.path().join("settings.json");
    fs::write(&settings, "{}\n").expect("write");
    let (_state, path) = state_dir();
    let kind = WorkspaceKind::Folder;
    let owned = settings_owned();

    WS.create(&path, &kind, Some(&settings), false).expect("create");
    WS.create(&path, &kind, Some(&settings), false).expect("create again");
    assert_eq!(fs::read_to_string(path.join(".claude/settings.local.json")).expect("read"), "{}\n");
    assert!(!WS.is_dirty(&path, &kind, &owned).expect("is_dirty"), "only bosun's file");
    assert!(WS.is_dirty(&path, &kind, &[]).expect("is_dirty"), "the settings file when not owned");

    fs::create_dir(path.join("empty")).expect("mkdir");
    assert!(WS.is_dirty(&path, &kind, &owned).expect("is_dirty"), "an empty directory of its own");
    fs::remove_dir(path.join("empty")).expect("rmdir");
    fs::write(path.join(".claude/agent.json"), "{}\n").expect("write");
    assert!(WS.is_dirty(&path, &kind, &owned).expect("is_dirty"), "a file beside the owned one");

    let refused = WS.remove(&path, &kind, false, false, &owned);
    assert!(matches!(&refused, Err(AdapterError::Dirty(p)) if p == &path), "got {refused:?}");
    assert!(path.join(".claude/agent.json").is_file());
    assert!(path.join(".claude/settings.local.json").is_file());

    fs::remove_file(path.join(".claude/agent.json")).expect("rm");
    WS.remove(&path, &kind, false, false, &owned).expect("remove the clean folder");
    assert!(!path.exists());

    WS.create(&path, &kind, None, false).expect("create");
    fs::write(path.join("work.txt"), "work\n").expect("write");
    WS.remove(&path, &kind, true, false, &owned).expect("forced remove");
    assert!(!path.exists());
    WS.remove(&path, &kind, false, false, &owned).expect("a folder already gone");
}

#[test]
fn repo_root_finds_the_top_level_and_rejects_a_non_repo_dir() {
    let repo = TempRepo::new();
    repo.commit_file("sub/dir/file.txt", "x\n");
    assert_eq!(GIT.repo_root(&repo.path().join("sub/dir")).expect("repo_root"), repo.path());

    let plain = tempfile::tempdir().expect("temp dir");
    let err = GIT.repo_root(plain.path());
    assert!(matches!(&err, Err(AdapterError::NotARepo(p)) if p == plain.path()), "got {err:?}");
    let missing = plain.path().join("missing");
    assert!(matches!(GIT.repo_root(&missing), Err(AdapterError::NotARepo(_))));
}

#[test]
fn resolve_commit_gives_the_full_sha_or_unknown_ref() {
    let repo = TempRepo::new();
    let head = repo.head();
    repo.git(&["tag", "v1"]);
    assert_eq!(GIT.resolve_commit(repo.path(), "main").expect("branch"), head);
    assert_eq!(GIT.resolve_commit(repo.path(), "v1").expect("tag"), head);
    assert_eq!(GIT.resolve_commit(repo.path(), &head[..8]).expect("short sha"), head);

    let err = GIT.resolve_commit(repo.path(), "no-such-branch");
    assert!(matches!(&err, Err(AdapterError::UnknownRef { rev, .. }) if rev == "no-such-branch"), "got {err:?}");
}

#[test]
fn check_new_branch_rejects_invalid_and_existing_names() {
    let repo = TempRepo::new();
    GIT.check_new_branch(repo.path(), "ws-fresh/one").expect("a valid new name");

    for bad in ["a..b", "-dash", "ends.lock", "has space", "@{-1}"] {
        let err = GIT.check_new_branch(repo.path(), bad);
        assert!(
            matches!(&err, Err(AdapterError::InvalidBranch { branch, reason }) if branch == bad && !reason.is_empty()),
            "{bad:?}: got {err:?}"
        );
    }

    let err = GIT.check_new_branch(repo.path(), "main");
    assert!(matches!(&err, Err(AdapterError::BranchExists { branch, .. }) if branch == "main"), "got {err:?}");

    // HEAD is refused in bosun's words, before git is asked.
    let err = GIT.check_new_branch(repo.path(), "HEAD");
    assert!(
        matches!(&err, Err(AdapterError::InvalidBranch { reason, .. }) if reason.contains("current commit")),
        "{err:?}"
    );
}

#[test]
fn a_branch_that_would_be_a_directory_of_another_or_have_one_as_its_directory_is_refused() {
    let repo = TempRepo::new();
    repo.git(&["branch", "feature"]);
    repo.git(&["branch", "topic/deep/one"]);
    for (branch, by) in [
        ("feature/x", "feature"),
        ("feature/x/y", "feature"),
        ("topic", "topic/deep/one"),
        ("topic/deep", "topic/deep/one"),
    ] {
        let err = GIT.check_new_branch(repo.path(), branch);
        assert!(
            matches!(&err, Err(AdapterError::BranchBlocked { branch: b, by: y, .. }) if b == branch && y == by),
            "{branch}: {err:?}"
        );
        let text = err.unwrap_err().to_string();
        assert!(text.contains(&format!("a branch {by:?} exists")) && text.len() < 400, "{text}");
        // What the check says git does: the branch cannot be made.
        let made =
            std::process::Command::new("git").arg("-C").arg(repo.path()).args(["branch", branch]).output().unwrap();
        assert!(!made.status.success(), "git made {branch}");
    }
    for free in ["feature-x", "topic-2", "topic/deeper", "feat/x"] {
        GIT.check_new_branch(repo.path(), free).unwrap_or_else(|e| panic!("{free}: {e}"));
    }
}

/// bosun's rules for branch names give git's verdicts (`git check-ref-format --branch`).
#[test]
fn branch_names_bosun_refuses_are_those_git_refuses() {
    let names = [
        "HEAD",
        "-x",
        "a b",
        "a~1",
        "a^",
        "a:b",
        "a?",
        "a*",
        "a[b",
        "a\\b",
        "a..b",
        "a@{1}",
        "x.",
        "/a",
        "a/",
        "a//b",
        ".a",
        "a/.b",
        "a.lock",
        "a/b.lock/c",
        "main",
        "feature/x",
        "a.b",
        "a@b",
        "HEAD/x",
        "x/HEAD",
        "v1.2",
        "a.locked",
        "a\tb",
        "a/-b",
        "x.lock.y",
        "a-",
        "_",
        "a/b.",
        ".",
        "a/.",
        "a_b-c.d/e",
    ];
    for name in names {
        let out = std::process::Command::new("git").args(["check-ref-format", "--branch", name]).output().unwrap();
        let git_ok = out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == name;
        assert_eq!(bosun_core::branch_problem(name).is_none(), git_ok, "{name:?}: git says ok = {git_ok}");
    }
}

/// A squash asked again (a `bosun merge --squash` sent again after its daemon died between the
/// merge and its record) finds the target holding it all already: no second commit.
#[test]
fn a_squash_asked_again_makes_no_second_commit() {
    let repo = TempRepo::new();
    repo.git(&["checkout", "-q", "-b", "work"]);
    repo.commit_file("work.txt", "work\n");
    repo.git(&["checkout", "-q", "main"]);
    repo.commit_file("main.txt", "main moved on\n");
    let how = bosun_core::MergeHow::Squash;
    let first = GIT.merge_branch(repo.path(), "work", "main", how, None).expect("squash");
    assert!(!first.already, "{first:?}");
    let squashed = repo.head();
    let again = GIT.merge_branch(repo.path(), "work", "main", how, None).expect("squash again");
    assert!(again.already && !again.branch_merged, "{again:?}");
    assert_eq!(repo.head(), squashed, "main did not move");
    assert_eq!(again.commit, squashed);
}
