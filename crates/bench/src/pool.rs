//! Issue 11's figures, on a generated repository of 50,000 files in 2,000 directories: a fresh
//! `git worktree add` for scale; `agent start --workspace pool` until it returns with its
//! workspace bound; the bind inside the daemon (slot bound to workspace ready, from the events'
//! times); release to available again (reset and clean); and 20 tasks on a pool of 3. Every
//! agent's real working directory is checked to be its slot (issue 24), and the repository's
//! own checkout, where the daemon starts, to be untouched.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bosun_core::{Event, SlotState, Timestamp, WorkspaceId};
use bosun_testkit::bosun::Bosun;
use bosun_testkit::repo::{git_in, TempRepo};

use crate::{wait_secs, Figure};

const DIRS: usize = 2_000;
const FILES_PER_DIR: usize = 25;
const ADDS: usize = 5;
const STARTS: usize = 20;
const TASKS: usize = 20;
const SIZE: u32 = 3;

pub fn figures(bin: &Path) -> Vec<Figure> {
    let repo = big_repo();
    let adds = fresh_worktrees(&repo);
    let head = repo.head();
    let bosun = Bosun::new(bin);
    bosun.ok(repo.path(), &["pool", "init", "--size", &SIZE.to_string()]);
    all_available(&bosun, &repo);
    let starts = pooled_starts(&bosun, &repo);
    let (bound, reset) = from_events(&bosun.events());
    let (all_done, doubled) = many_tasks(&bosun, &repo);
    untouched(&repo, &head);
    vec![
        Figure::new(
            format!("fresh `git worktree add`, {} files (n={ADDS})", DIRS * FILES_PER_DIR),
            adds,
            "measured",
            "-",
        ),
        Figure::new(format!("`agent start --workspace pool` returns, bound (n={STARTS})"), starts, "< 50 ms", "-"),
        Figure::new(format!("pooled bind in the daemon, bound to ready (n={})", bound.len()), bound, "< 20 ms", "-"),
        Figure::new(format!("release to available (reset + clean) (n={})", reset.len()), reset, "measured", "-"),
        Figure::value(
            format!("{TASKS} tasks on a pool of {SIZE}: all done, double bindings"),
            format!("{:.1} s, {doubled}", all_done.as_secs_f64()),
            "measured, 0",
            "-",
        ),
    ]
}

/// A repository of 2,000 directories of 25 small files each, committed.
fn big_repo() -> TempRepo {
    let repo = TempRepo::new();
    let t0 = Instant::now();
    for d in 0..DIRS {
        let dir = repo.path().join(format!("src/d{d:04}"));
        std::fs::create_dir_all(&dir).expect("make a directory");
        for f in 0..FILES_PER_DIR {
            std::fs::write(dir.join(format!("f{f:02}.txt")), format!("file {d}/{f}\n")).expect("write a file");
        }
    }
    git_in(repo.path(), &["add", "-A"]);
    git_in(repo.path(), &["commit", "-qm", "50,000 files"]);
    println!("generated a repository of {} files in {:.1} s", DIRS * FILES_PER_DIR, t0.elapsed().as_secs_f64());
    repo
}

/// `git worktree add -b` of a new branch, as bosun's worktree workspaces make them.
fn fresh_worktrees(repo: &TempRepo) -> Vec<Duration> {
    let dir = tempfile::tempdir().expect("temp dir");
    (0..ADDS)
        .map(|n| {
            let path = dir.path().join(format!("wt{n}"));
            let t0 = Instant::now();
            git_in(repo.path(), &["worktree", "add", "-q", "-b", &format!("bench-{n}"), path.to_str().expect("utf-8")]);
            let took = t0.elapsed();
            git_in(repo.path(), &["worktree", "remove", "--force", path.to_str().expect("utf-8")]);
            took
        })
        .collect()
}

/// Starts an agent in the pool, times the CLI until it returns with the workspace bound, kills
/// it, and waits until its slot is available again, `STARTS` times.
fn pooled_starts(bosun: &Bosun, repo: &TempRepo) -> Vec<Duration> {
    (0..STARTS)
        .map(|_| {
            let t0 = Instant::now();
            let out = bosun
                .command(repo.path(), &["agent", "start", "--json", "--workspace", "pool", "--", "sleep", "600"])
                .output()
                .expect("start");
            let took = t0.elapsed();
            assert!(out.status.success(), "start failed: {}", String::from_utf8_lossy(&out.stderr));
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("start --json");
            assert_eq!(v["waiting"], false, "a slot was available");
            let id = v["agent"].as_str().expect("id").to_owned();
            let pid = wait_secs(30, || bosun.wait_up(&id).pid);
            // The kernel's word for where it runs: its slot, never the daemon's directory.
            let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).expect("the agent's cwd");
            let slot = v["path"].as_str().map(Path::new).expect("its workspace's path");
            assert_eq!(cwd, slot, "agent {id} runs in its slot");
            bosun.ok(repo.path(), &["kill", &id]);
            all_available(bosun, repo);
            took
        })
        .collect()
}

/// From the log: each bind (slot bound to workspace ready) and each reset (resetting to reset).
fn from_events(events: &[Event]) -> (Vec<Duration>, Vec<Duration>) {
    let mut bound_at: BTreeMap<WorkspaceId, Timestamp> = BTreeMap::new();
    let mut resetting_at: BTreeMap<u32, Timestamp> = BTreeMap::new();
    let (mut binds, mut resets) = (Vec::new(), Vec::new());
    let span = |from: Timestamp, to: Timestamp| Duration::from_millis(to.millis_since(from));
    for e in events {
        match e {
            Event::SlotBound { workspace, at, .. } => {
                bound_at.insert(workspace.clone(), *at);
            }
            Event::WorkspaceReady { id, at } => {
                if let Some(from) = bound_at.remove(id) {
                    binds.push(span(from, *at));
                }
            }
            Event::SlotResetting { n, at, .. } => {
                resetting_at.insert(*n, *at);
            }
            Event::SlotReset { n, at, .. } => {
                if let Some(from) = resetting_at.remove(n) {
                    resets.push(span(from, *at));
                }
            }
            _ => {}
        }
    }
    (binds, resets)
}

/// `TASKS` agents started at once on the pool, each working half a second: the time until all
/// are done and every slot is available again, and how often a slot was bound while bound.
fn many_tasks(bosun: &Bosun, repo: &TempRepo) -> (Duration, usize) {
    // Each says where it runs (`pwd -P`), in a file outside every workspace.
    let seen = tempfile::NamedTempFile::new().expect("a temp file");
    let said = seen.path().to_str().expect("utf-8").to_owned();
    let t0 = Instant::now();
    let ids: Vec<String> = std::thread::scope(|s| {
        let starts: Vec<_> = (0..TASKS)
            .map(|_| {
                s.spawn(|| {
                    let script = "pwd -P >> \"$0\"; sleep 0.5";
                    let args = ["--workspace", "pool", "--", "sh", "-c", script, &said];
                    bosun.start(repo.path(), &args)
                })
            })
            .collect();
        starts.into_iter().map(|h| h.join().expect("start")).collect()
    });
    for id in &ids {
        wait_secs(300, || bosun.agent(id).state.is_dead().then_some(()));
    }
    all_available(bosun, repo);
    let took = t0.elapsed();
    let workspaces = std::fs::canonicalize(bosun.state_dir().join("workspaces")).expect("the workspaces' directory");
    let slots: Vec<PathBuf> = (1..=SIZE).map(|n| workspaces.join(format!("{}--{n}", project(repo)))).collect();
    let cwds = std::fs::read_to_string(seen.path()).expect("where they ran");
    assert_eq!(cwds.lines().count(), TASKS, "every task said where it ran: {cwds}");
    for cwd in cwds.lines() {
        assert!(slots.iter().any(|s| Path::new(cwd) == s), "a task ran in {cwd}, not in a slot of {slots:?}");
    }
    let mut held: BTreeMap<u32, bool> = BTreeMap::new();
    let mut doubled = 0;
    for e in bosun.events() {
        match e {
            Event::SlotBound { n, .. } => doubled += usize::from(held.insert(n, true) == Some(true)),
            Event::SlotResetting { n, .. } => _ = held.insert(n, false),
            _ => {}
        }
    }
    (took, doubled)
}

/// The pool's project: the repository's directory name.
fn project(repo: &TempRepo) -> String {
    repo.path().file_name().expect("a named directory").to_string_lossy().into_owned()
}

/// The repository's own checkout, where the daemon was started, as it was: no file changed or
/// added, its branch where it was.
fn untouched(repo: &TempRepo, head: &str) {
    assert_eq!(repo.git(&["status", "--porcelain=v1", "--untracked-files=all"]), "", "the checkout is untouched");
    assert_eq!(repo.head(), head, "its branch did not move");
}

fn all_available(bosun: &Bosun, repo: &TempRepo) {
    wait_secs(300, || {
        let out = bosun.ok(repo.path(), &["pool", "ls", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out).ok()?;
        let slots: Vec<&serde_json::Value> =
            v["pools"].as_array()?.iter().flat_map(|p| p["slots"].as_array().into_iter().flatten()).collect();
        let available = slots.iter().filter(|s| s["state"]["state"] == SlotState::Available.label()).count();
        (slots.len() == SIZE as usize && available == slots.len()).then_some(())
    });
}
