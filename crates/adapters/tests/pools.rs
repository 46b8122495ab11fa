//! `Pools for LocalWorkspaces`, the workspaces bound to its slots, and `LocalGit` on them
//! against real git: repositories, remotes and slots in temp dirs.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use bosun_adapters::{AdapterError, Git, LocalGit, LocalWorkspaces, Pools, Workspaces};
use bosun_core::{PoolBase, SlotId, SlotProbe, SlotReset, WorkspaceKind, TASK_FILE};
use bosun_core::{PoolTask, WorkBranch};
use bosun_testkit::repo::{commit_file_in, git_in, TempRepo};
use tempfile::TempDir;

static WS: LazyLock<LocalWorkspaces> = LazyLock::new(LocalWorkspaces::new);
static GIT: LocalGit = LocalGit;

/// A state dir outside the repository, and a slot path two levels under it.
fn slot_dir() -> (TempDir, PathBuf) {
    let state = tempfile::tempdir().expect("temp dir");
    let path = state.path().join("workspaces").join("proj--1");
    (state, path)
}

fn local_base() -> PoolBase {
    PoolBase { base_ref: "main".to_owned(), remote: None }
}

/// A slot of `repo` at `main`, made with no setup.
fn made_slot(repo: &TempRepo) -> (TempDir, PathBuf, String) {
    let (state, path) = slot_dir();
    let head = WS.create_slot(repo.path(), &path, "main", None).expect("create_slot");
    (state, path, head)
}

fn pool_kind(repo: &TempRepo, branch: &str, base: &str, task: Option<&str>) -> WorkspaceKind {
    WorkspaceKind::Pool(PoolTask {
        git: WorkBranch {
            repo: repo.path().to_path_buf(),
            branch: branch.to_owned(),
            base: base.to_owned(),
            base_ref: String::new(),
        },
        slot: Some(SlotId::new("proj", 1)),
        task: task.map(str::to_owned),
    })
}

fn reset_of(repo: &TempRepo, path: &Path, base: PoolBase) -> SlotReset {
    SlotReset {
        repo: repo.path().to_path_buf(),
        path: path.to_path_buf(),
        base,
        pristine: false,
        force: false,
        delete_branch: None,
        setup: None,
    }
}

/// Where the slot's HEAD points: a branch (`refs/heads/x`), or None when detached.
fn symbolic_head(path: &Path) -> Option<String> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(path)
        .args(["symbolic-ref", "--quiet", "HEAD"])
        .output()
        .expect("run git");
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
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

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn write(path: &Path, content: &str) {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).expect("create the file's directory");
    }
    fs::write(path, content).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// A repository with a remote: `upstream` (where new commits are made) pushed to a bare
/// `origin`, and `clone` of origin, the pool's repository.
struct WithRemote {
    upstream: TempRepo,
    _origin: TempDir,
    origin: PathBuf,
    clone: TempRepo,
}

impl WithRemote {
    fn new() -> Self {
        let upstream = TempRepo::new();
        let origin_dir = upstream.bare_clone();
        let origin = origin_dir.path().to_path_buf();
        let clone = TempRepo::clone_of(&origin);
        Self { upstream, _origin: origin_dir, origin, clone }
    }

    /// A new commit on origin's `main`, not yet fetched by the clone.
    fn advance(&self, name: &str) -> String {
        let commit = self.upstream.commit_file(name, "upstream\n");
        self.upstream.git(&["push", "-q", self.origin.to_str().expect("UTF-8"), "main"]);
        commit
    }
}

#[test]
fn base_without_a_remote_is_the_checked_out_branch_or_the_detached_commit() {
    let repo = TempRepo::new();
    assert_eq!(WS.base(repo.path()).expect("base"), local_base());

    repo.git(&["checkout", "-q", "-b", "trunk"]);
    assert_eq!(WS.base(repo.path()).expect("base").base_ref, "trunk");

    let head = repo.head();
    repo.git(&["checkout", "-q", "--detach"]);
    assert_eq!(WS.base(repo.path()).expect("base"), PoolBase { base_ref: head, remote: None });
}

#[test]
fn base_is_the_main_worktrees_branch_when_asked_from_a_linked_worktree() {
    let repo = TempRepo::new();
    let (_state, path, _) = made_slot(&repo);
    assert_eq!(WS.base(&path).expect("base"), local_base(), "the slot's detached HEAD is not the base");
}

#[test]
fn base_with_a_remote_is_its_default_branch() {
    let remote = WithRemote::new();
    let origin_main = PoolBase { base_ref: "origin/main".to_owned(), remote: Some("origin".to_owned()) };
    assert_eq!(WS.base(remote.clone.path()).expect("base"), origin_main);

    // Without `origin/HEAD`, `origin/main` is taken.
    remote.clone.git(&["remote", "set-head", "origin", "--delete"]);
    assert_eq!(WS.base(remote.clone.path()).expect("base"), origin_main);

    // Only `origin/master` there.
    remote.clone.git(&["update-ref", "refs/remotes/origin/master", "refs/remotes/origin/main"]);
    remote.clone.git(&["update-ref", "-d", "refs/remotes/origin/main"]);
    let master = WS.base(remote.clone.path()).expect("base");
    assert_eq!(master, PoolBase { base_ref: "origin/master".to_owned(), remote: Some("origin".to_owned()) });
}

#[test]
fn base_of_a_repository_without_a_commit_says_to_make_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    git_in(dir.path(), &["init", "-q", "-b", "main"]);
    let err = WS.base(dir.path());
    assert!(matches!(&err, Err(AdapterError::NoCommit(p)) if p == dir.path()), "got {err:?}");
    assert!(err.expect_err("no commit").to_string().contains("make a first commit"));
}

#[test]
fn create_slot_makes_a_detached_worktree_at_base_and_a_second_call_takes_it_as_made() {
    let repo = TempRepo::new();
    let base = repo.head();
    let (_state, path) = slot_dir();

    let head = WS.create_slot(repo.path(), &path, "main", None).expect("create_slot");

    assert_eq!(head, base);
    assert_eq!(git_in(&path, &["rev-parse", "HEAD"]), base);
    assert_eq!(symbolic_head(&path), None, "detached");
    assert!(is_registered(&repo, &path));
    assert!(path.join("README.md").is_file());

    write(&path.join("scratch.txt"), "left by a crash\n");
    let again = WS.create_slot(repo.path(), &path, "main", None).expect("second create_slot");
    assert_eq!(again, base);
    assert_eq!(read(&path.join("scratch.txt")), "left by a crash\n", "the slot was taken as made");
}

#[test]
fn create_slot_copies_the_untracked_files_worktreeinclude_names_and_no_others() {
    let repo = TempRepo::new();
    repo.commit_file(".gitignore", ".env\n*.local\ntarget/\n");
    repo.commit_file(".worktreeinclude", ".env\nconfig/**/*.local\n");
    write(&repo.path().join(".env"), "SECRET=1\n");
    write(&repo.path().join("config/dev/app.local"), "port = 1\n");
    write(&repo.path().join("other.local"), "not listed\n");
    write(&repo.path().join("notes.txt"), "untracked, not listed\n");
    write(&repo.path().join("target/out.bin"), "build output\n");
    let outside = tempfile::tempdir().expect("temp dir");
    write(&outside.path().join("secret"), "outside\n");
    std::os::unix::fs::symlink(outside.path().join("secret"), repo.path().join("config/evil.local")).expect("link");

    let (_state, path) = slot_dir();
    WS.create_slot(repo.path(), &path, "main", None).expect("create_slot");

    assert_eq!(read(&path.join(".env")), "SECRET=1\n");
    assert_eq!(read(&path.join("config/dev/app.local")), "port = 1\n");
    for absent in ["other.local", "notes.txt", "target", "config/evil.local"] {
        assert!(fs::symlink_metadata(path.join(absent)).is_err(), "{absent} was copied");
    }
    assert!(!WS.probe_slot(&path).expect("probe").dirty, "the copies are ignored files");
}

#[test]
fn setup_runs_once_in_the_slot_and_a_failing_setup_is_an_error_with_its_code_and_stderr() {
    let repo = TempRepo::new();
    let (_state, path) = slot_dir();
    WS.create_slot(repo.path(), &path, "main", Some("echo ran >> setup.log; pwd > where.txt")).expect("create_slot");
    assert_eq!(read(&path.join("setup.log")), "ran\n");
    assert_eq!(read(&path.join("where.txt")).trim(), path.to_str().expect("UTF-8"));

    let (_other_state, other) = slot_dir();
    let failing = "echo starting; printf 'x%.0s' $(seq 1 2000) >&2; echo npm broke >&2; exit 7";
    let err = WS.create_slot(repo.path(), &other, "main", Some(failing));
    let Err(AdapterError::Setup { code, stderr, .. }) = &err else { panic!("got {err:?}") };
    assert_eq!(*code, Some(7));
    assert!(stderr.ends_with("npm broke") && stderr.len() <= 300, "stderr {stderr:?}");
    assert!(err.expect_err("setup failed").to_string().contains("exit code 7"));
}

#[test]
fn binding_makes_the_branch_at_base_and_writes_a_task_file_git_does_not_see() {
    let repo = TempRepo::new();
    let (_state, path, base) = made_slot(&repo);
    let kind = pool_kind(&repo, "task-1", &base, Some("# Fix the bug\n"));

    WS.create(&path, &kind, None, false).expect("bind");

    assert_eq!(repo.git(&["rev-parse", "refs/heads/task-1"]), base);
    assert_eq!(symbolic_head(&path).as_deref(), Some("refs/heads/task-1"));
    assert_eq!(read(&path.join(TASK_FILE)), "# Fix the bug\n");
    assert_eq!(git_in(&path, &["status", "--porcelain", "--untracked-files=all"]), "");
    git_in(&path, &["add", "-A"]);
    assert_eq!(git_in(&path, &["diff", "--cached", "--name-only"]), "", "git add -A left the task file out");
    assert!(!WS.is_dirty(&path, &kind, &[]).expect("is_dirty"));

    // A second bind (after a reset) adds no second exclude line.
    WS.reset_slot(&SlotReset { delete_branch: Some("task-1".into()), ..reset_of(&repo, &path, local_base()) })
        .expect("reset");
    WS.create(&path, &pool_kind(&repo, "task-2", &base, Some("again\n")), None, false).expect("second bind");
    let common = PathBuf::from(repo.git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]));
    let exclude = read(&common.join("info/exclude"));
    assert_eq!(exclude.lines().filter(|l| *l == "/TASK.md").count(), 1, "info/exclude:\n{exclude}");
}

#[test]
fn a_resumed_bind_is_idempotent_and_a_fresh_one_takes_a_branch_left_at_base() {
    let repo = TempRepo::new();
    let (_state, path, base) = made_slot(&repo);
    let kind = pool_kind(&repo, "task-r", &base, None);
    // A crash after the branch was made, before HEAD was pointed at it.
    repo.git(&["branch", "task-r", &base]);
    WS.create(&path, &kind, None, false).expect("bind");
    assert_eq!(symbolic_head(&path).as_deref(), Some("refs/heads/task-r"));

    // The task has started committing: only a resumed bind finds it done.
    commit_file_in(&path, "work.txt", "work\n");
    assert!(matches!(WS.create(&path, &kind, None, false), Err(AdapterError::SlotMoved { .. })));
    WS.create(&path, &kind, None, true).expect("a resumed bind finds it done");
    assert_eq!(symbolic_head(&path).as_deref(), Some("refs/heads/task-r"));
    assert!(!path.join(TASK_FILE).exists(), "no task, no task file");
}

#[test]
fn binding_a_slot_that_moved_or_a_branch_elsewhere_is_an_error() {
    let repo = TempRepo::new();
    let (_state, path, base) = made_slot(&repo);
    let moved = commit_file_in(&path, "moved.txt", "moved\n");

    let err = WS.create(&path, &pool_kind(&repo, "task-m", &base, Some("t")), None, false);
    assert!(matches!(&err, Err(AdapterError::SlotMoved { head, .. }) if head == &moved), "got {err:?}");
    assert!(!branch_exists(&repo, "task-m"));
    assert!(!path.join(TASK_FILE).exists());

    let (_other_state, other, _) = made_slot(&repo);
    repo.git(&["branch", "taken", &moved]);
    let err = WS.create(&other, &pool_kind(&repo, "taken", &base, None), None, false);
    assert!(matches!(&err, Err(AdapterError::BranchExists { branch, .. }) if branch == "taken"), "got {err:?}");
    assert_eq!(symbolic_head(&other), None);
}

#[test]
fn reset_refuses_a_slot_holding_work_and_touches_nothing_and_resets_it_with_force() {
    let repo = TempRepo::new();
    let (_state, path, base) = made_slot(&repo);
    WS.create(&path, &pool_kind(&repo, "task-d", &base, Some("t")), None, false).expect("bind");
    let reset = SlotReset { delete_branch: Some("task-d".into()), ..reset_of(&repo, &path, local_base()) };

    write(&path.join("new.txt"), "untracked\n");
    let err = WS.reset_slot(&reset);
    assert!(matches!(&err, Err(AdapterError::Dirty(p)) if p == &path), "got {err:?}");
    assert!(path.join("new.txt").exists() && path.join(TASK_FILE).exists());
    assert_eq!(symbolic_head(&path).as_deref(), Some("refs/heads/task-d"));
    assert!(branch_exists(&repo, "task-d"));

    fs::remove_file(path.join("new.txt")).expect("remove");
    write(&path.join("README.md"), "modified\n");
    assert!(matches!(WS.reset_slot(&reset), Err(AdapterError::Dirty(_))));
    assert_eq!(read(&path.join("README.md")), "modified\n");

    let head = WS.reset_slot(&SlotReset { force: true, ..reset }).expect("forced reset");
    assert_eq!(head, base);
    assert_eq!(read(&path.join("README.md")), "# test repository\n");
    assert!(!path.join(TASK_FILE).exists());
    assert!(!WS.probe_slot(&path).expect("probe").dirty);
}

#[test]
fn reset_keeps_ignored_build_output_unless_pristine() {
    let repo = TempRepo::new();
    repo.commit_file(".gitignore", "target/\n");
    let (_state, path, _) = made_slot(&repo);
    write(&path.join("target/debug/out"), "built\n");

    WS.reset_slot(&reset_of(&repo, &path, local_base())).expect("reset");
    assert!(path.join("target/debug/out").exists(), "ignored files stay by default");

    WS.reset_slot(&SlotReset { pristine: true, ..reset_of(&repo, &path, local_base()) }).expect("pristine reset");
    assert!(!path.join("target").exists(), "a pristine reset cleans ignored files");
}

#[test]
fn a_pristine_reset_copies_the_included_files_again_and_runs_the_setup_again() {
    let repo = TempRepo::new();
    repo.commit_file(".gitignore", ".env\ndeps/\n");
    repo.commit_file(".worktreeinclude", ".env\n");
    write(&repo.path().join(".env"), "TOKEN=1\n");
    let (_state, path, _) = made_slot(&repo);
    assert!(path.join(".env").exists());
    let setup = Some("mkdir -p deps && echo ran >> deps/log".to_owned());
    WS.reset_slot(&SlotReset { pristine: true, setup, ..reset_of(&repo, &path, local_base()) }).expect("reset");
    assert_eq!(fs::read_to_string(path.join(".env")).unwrap(), "TOKEN=1\n", "copied again");
    assert_eq!(fs::read_to_string(path.join("deps/log")).unwrap(), "ran\n", "made again");
}

#[test]
fn reset_deletes_the_task_branch_and_leaves_head_detached_at_base_twice_over() {
    let repo = TempRepo::new();
    let (_state, path, base) = made_slot(&repo);
    WS.create(&path, &pool_kind(&repo, "task-b", &base, Some("t")), None, false).expect("bind");
    let reset = SlotReset { delete_branch: Some("task-b".into()), ..reset_of(&repo, &path, local_base()) };

    assert_eq!(WS.reset_slot(&reset).expect("reset"), base);
    assert!(!branch_exists(&repo, "task-b"));
    assert_eq!(symbolic_head(&path), None);
    assert_eq!(git_in(&path, &["rev-parse", "HEAD"]), base);
    assert!(!path.join(TASK_FILE).exists());

    assert_eq!(WS.reset_slot(&reset).expect("a reset run again"), base);
}

#[test]
fn reset_fetches_and_lands_on_the_remotes_new_commit_and_survives_a_failed_fetch() {
    let remote = WithRemote::new();
    let base = WS.base(remote.clone.path()).expect("base");
    let (_state, path) = slot_dir();
    let first = WS.create_slot(remote.clone.path(), &path, &base.base_ref, None).expect("create_slot");
    assert_eq!(first, remote.upstream.head());

    let newer = remote.advance("news.txt");
    let reset = SlotReset {
        repo: remote.clone.path().to_path_buf(),
        path: path.clone(),
        base: base.clone(),
        pristine: false,
        force: false,
        delete_branch: None,
        setup: None,
    };
    assert_eq!(WS.reset_slot(&reset).expect("reset"), newer);
    assert!(path.join("news.txt").is_file());

    remote.clone.git(&["remote", "set-url", "origin", "/nonexistent/bosun-origin"]);
    assert_eq!(WS.reset_slot(&reset).expect("a reset whose fetch fails"), newer);
}

#[test]
fn commits_ahead_of_a_pool_workspace_counts_commits_on_no_other_ref() {
    let repo = TempRepo::new();
    let (_state, path, base) = made_slot(&repo);
    let kind = pool_kind(&repo, "task-c", &base, None);
    WS.create(&path, &kind, None, false).expect("bind");
    assert_eq!(GIT.commits_ahead(&kind).expect("commits_ahead"), 0);

    commit_file_in(&path, "one.txt", "1\n");
    let two = commit_file_in(&path, "two.txt", "2\n");
    assert_eq!(GIT.commits_ahead(&kind).expect("commits_ahead"), 2);

    repo.git(&["tag", "kept", &format!("{two}~1")]);
    assert_eq!(GIT.commits_ahead(&kind).expect("commits_ahead"), 1, "a tagged commit is on another ref");
    repo.git(&["branch", "other", &two]);
    assert_eq!(GIT.commits_ahead(&kind).expect("commits_ahead"), 0);

    assert_eq!(GIT.commits_ahead(&pool_kind(&repo, "never-made", &base, None)).expect("gone"), 0);
}

#[test]
fn removing_a_pool_workspace_is_refused_and_leaves_it_as_it_was() {
    let repo = TempRepo::new();
    let (_state, path, base) = made_slot(&repo);
    let kind = pool_kind(&repo, "task-x", &base, Some("t"));
    WS.create(&path, &kind, None, false).expect("bind");

    let err = WS.remove(&path, &kind, true, true, &[PathBuf::from(TASK_FILE)]);
    assert!(matches!(&err, Err(AdapterError::PoolSlot(p)) if p == &path), "got {err:?}");
    assert!(path.join(TASK_FILE).exists() && branch_exists(&repo, "task-x"));
}

#[test]
fn remove_slot_removes_a_slot_with_ignored_files_and_is_fine_when_gone() {
    let repo = TempRepo::new();
    repo.commit_file(".gitignore", "node_modules/\n");
    let (_state, path, _) = made_slot(&repo);
    write(&path.join("node_modules/x/index.js"), "ignored\n");

    WS.remove_slot(repo.path(), &path).expect("remove_slot");
    assert!(!path.exists());
    assert!(!is_registered(&repo, &path));

    WS.remove_slot(repo.path(), &path).expect("gone already");

    // A slot whose directory was deleted by hand: its registration is pruned.
    let (_other_state, other, _) = made_slot(&repo);
    fs::remove_dir_all(&other).expect("remove by hand");
    WS.remove_slot(repo.path(), &other).expect("remove_slot of a deleted dir");
    assert!(!is_registered(&repo, &other));
}

#[test]
fn probe_slot_sees_missing_clean_and_dirty_slots() {
    let repo = TempRepo::new();
    let (_state, missing) = slot_dir();
    assert_eq!(WS.probe_slot(&missing).expect("probe"), SlotProbe::default());

    let (_slot_state, path, base) = made_slot(&repo);
    let clean = SlotProbe { exists: true, dirty: false, head: Some(base.clone()) };
    assert_eq!(WS.probe_slot(&path).expect("probe"), clean);

    WS.create(&path, &pool_kind(&repo, "task-p", &base, Some("t")), None, false).expect("bind");
    assert_eq!(WS.probe_slot(&path).expect("probe"), clean, "the task file is no work");

    write(&path.join("README.md"), "changed\n");
    assert_eq!(WS.probe_slot(&path).expect("probe"), SlotProbe { dirty: true, ..clean });
}

#[test]
fn a_forced_reset_recovers_a_slot_left_in_a_merge_conflict() {
    let repo = TempRepo::new();
    let (_state, path, base) = made_slot(&repo);
    WS.create(&path, &pool_kind(&repo, "task-k", &base, None), None, false).expect("bind");
    commit_file_in(&path, "README.md", "the task's\n");
    repo.git(&["branch", "theirs", &base]);
    let (_other_state, other, _) = made_slot(&repo);
    git_in(&other, &["checkout", "-q", "theirs"]);
    commit_file_in(&other, "README.md", "theirs\n");
    let merge = std::process::Command::new("git").arg("-C").arg(&path).args(["merge", "-q", "theirs"]).output();
    assert!(!merge.expect("run git merge").status.success(), "the merge conflicts");

    let reset = SlotReset { force: true, delete_branch: Some("task-k".into()), ..reset_of(&repo, &path, local_base()) };
    assert_eq!(WS.reset_slot(&reset).expect("forced reset"), base);
    assert_eq!(symbolic_head(&path), None);
    assert_eq!(git_in(&path, &["status", "--porcelain"]), "");
    let merging = std::process::Command::new("git")
        .arg("-C")
        .arg(&path)
        .args(["rev-parse", "-q", "--verify", "MERGE_HEAD"])
        .output();
    assert!(!merging.expect("run git").status.success(), "no merge in progress");
    assert!(!branch_exists(&repo, "task-k"));
}
