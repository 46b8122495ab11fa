//! The crash-at-every-step harness of the sequences a command sets off: `bosun merge` (of a
//! worktree, and of a pool's workspace), `bosun fork` and `bosun pr`. For each crash point of
//! a sequence (each step the handler takes, each effect that follows, before it runs and once it
//! ran, and the answer), a fresh stage: the daemon started with that crash point, the command
//! run — its daemon kills itself there with SIGKILL, and the CLI sends the command again to the
//! daemon it starts — and then what a user sees is checked: the state the command promised,
//! nothing done twice, nothing left behind.

use std::path::Path;

use super::stage::{alive, cwd_of, gone, Stage, Worker};
use crate::repo::git_in;

/// A sequence a command sets off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sequence {
    /// `bosun merge --commit` of a worktree's branch into main, which moved on (a merge commit).
    Merge,
    /// `bosun merge` of a pool's workspace (a fast-forward): its slot released and reset.
    PoolMerge,
    /// `bosun fork` of an agent with work committed and not.
    Fork,
    /// `bosun pr` of an agent's branch, with a `gh` that logs what it is asked.
    Pr,
}

impl Sequence {
    /// Its crash points (`BOSUN_FAULT`), in the order it reaches them.
    pub fn points(self) -> &'static [&'static str] {
        match self {
            Self::Merge => &[
                "at:merge:committed",
                "at:merge:merged",
                "before:KillSession",
                "after:KillSession",
                "before:InspectWorkspace",
                "after:InspectWorkspace",
                "before:RemoveWorkspace",
                "after:RemoveWorkspace",
                "unanswered:1",
            ],
            Self::PoolMerge => &[
                "at:merge:merged",
                "before:KillSession",
                "after:KillSession",
                "before:InspectWorkspace",
                "after:InspectWorkspace",
                "before:ResetSlot",
                "after:ResetSlot",
                "unanswered:1",
            ],
            Self::Fork => &[
                "at:fork:snapshot",
                "before:CreateWorkspace",
                "after:CreateWorkspace",
                "before:SpawnSession",
                "after:SpawnSession",
                "unanswered:1",
            ],
            Self::Pr => &["at:pr:pushed", "at:pr:opened", "unanswered:1"],
        }
    }
}

/// Runs `seq` with its daemon killed at `point`; `Err` says which promise was broken.
pub fn crash_at(bin: &Path, seq: Sequence, point: &str) -> Result<(), String> {
    let stage = Stage::new(bin)?;
    let worker = stage.worker(seq == Sequence::PoolMerge)?;
    if seq == Sequence::Merge {
        stage.repo.commit_file("main.txt", "main moved on\n");
    }
    if seq == Sequence::Pr {
        let origin = stage.repo.bare_clone();
        stage.repo.git(&["remote", "add", "origin", origin.path().to_str().ok_or("origin's path")?]);
        stage.arm(point);
        let said = stage.command(&["pr", &worker.id]);
        return reached(&stage, point).and(said).and_then(|said| pr_opened(&stage, &worker, origin.path(), &said));
    }
    stage.arm(point);
    let said = match seq {
        Sequence::Merge => stage.command(&["merge", &worker.id, "--commit", "--message", "Take it"]),
        Sequence::PoolMerge => stage.command(&["merge", &worker.id, "--into", "main"]),
        _ => stage.command(&["fork", &worker.id, "--json", "--prompt", "status"]),
    };
    reached(&stage, point)?;
    let said = said?;
    match seq {
        Sequence::Merge => merged(&stage, &worker, &said),
        Sequence::PoolMerge => released(&stage, &worker, &said),
        _ => forked(&stage, &worker, &said),
    }
    .map_err(|e| format!("{e}\n{}", stage.bosun.log()))
}

/// The daemon crashed at `point` (a point the command's answer does not wait for, soon after
/// it): a point never reached would test nothing. The next command starts a daemon again.
fn reached(stage: &Stage, point: &str) -> Result<(), String> {
    if crate::poll::wait_until(super::GONE, || stage.crashed()) {
        return Ok(());
    }
    Err(format!("the daemon never reached crash point {point}\n{}", stage.bosun.log()))
}

/// Merged once into main, its agent's process gone, its worktree removed, its branch deleted,
/// the agent launched once.
fn merged(stage: &Stage, w: &Worker, said: &str) -> Result<(), String> {
    let repo = stage.repo.path();
    said_merged(said, &w.branch, " (merge)")?;
    in_main(repo, &w.commit)?;
    let merges = git_in(repo, &["rev-list", "--merges", "--count", "main"]);
    if merges != "1" || git_in(repo, &["log", "-1", "--format=%s", "main"]) != "Take it" {
        return Err(format!("main should have one merge commit, its own: {merges} merges"));
    }
    let work = git_in(repo, &["log", "--format=%s", "main"]);
    if work.lines().filter(|l| l.starts_with("Work of ")).count() != 1 || !repo.join("loose.txt").exists() {
        return Err(format!("the work not committed should be committed once, and merged: {work}"));
    }
    ended_once(stage, w)?;
    if w.path.exists() {
        return Err(format!("its worktree {} is still there", w.path.display()));
    }
    branch_gone(repo, &w.branch)
}

/// Merged into main, its agent's process gone, its slot released (available, reset: clean, on
/// no branch), its branch deleted, the agent launched once.
fn released(stage: &Stage, w: &Worker, said: &str) -> Result<(), String> {
    let repo = stage.repo.path();
    said_merged(said, &w.branch, "")?;
    in_main(repo, &w.commit)?;
    ended_once(stage, w)?;
    let available = crate::poll::wait_for(super::GONE, || {
        let out = stage.bosun.ok(repo, &["pool", "ls", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out).ok()?;
        (v["pools"][0]["slots"][0]["state"]["state"] == "available").then_some(())
    });
    available.ok_or("its pool slot is not available again")?;
    let status = git_in(&w.path, &["status", "--porcelain"]);
    let head = git_in(&w.path, &["rev-parse", "--abbrev-ref", "HEAD"]);
    if !status.is_empty() || head != "HEAD" {
        return Err(format!("its slot should be reset, clean and detached: {head}, {status:?}"));
    }
    branch_gone(repo, &w.branch)
}

/// One fork, launched once, with the conversation forked, running in a worktree of its own
/// that holds the work the agent forked had, committed or not; the agent forked goes on.
fn forked(stage: &Stage, w: &Worker, said: &str) -> Result<(), String> {
    let v: serde_json::Value = serde_json::from_str(said).map_err(|e| format!("{e}: {said}"))?;
    let fork = v["agent"].as_str().ok_or_else(|| format!("bosun fork gave no agent: {said}"))?.to_owned();
    let agent = stage.bosun.wait_state(&fork, "idle");
    let agents = stage.bosun.list().agents;
    if agents.len() != 2 {
        return Err(format!("two agents, the one forked and its fork, not {}", agents.len()));
    }
    let launches = stage.launches();
    let forks = launches.iter().filter(|l| l.contains("--fork-session")).count();
    if launches.len() != 2 || forks != 1 {
        return Err(format!("one launch of each, the fork's forking the conversation: {launches:#?}"));
    }
    let ws = stage.bosun.show(&fork).workspace.ok_or("the fork has no workspace")?;
    let cwd = agent.pid.and_then(cwd_of);
    if cwd.as_deref() != Some(ws.path.as_path()) || ws.path == w.path {
        return Err(format!("the fork runs in {cwd:?}, not in a worktree of its own ({})", ws.path.display()));
    }
    for file in ["work.txt", "loose.txt"] {
        if !ws.path.join(file).exists() {
            return Err(format!("the fork's worktree lacks {file}, which the agent forked had"));
        }
    }
    // Its program resumed the conversation forked, found where it looks: the first prompt of
    // the agent forked is in it.
    let source = stage.bosun.agent(&w.id).log.and_then(|l| Some(l.file_stem()?.to_string_lossy().into_owned()));
    let source = source.ok_or("the agent forked has no conversation")?;
    if !launches.iter().any(|l| l.contains(&format!("--resume {source} --fork-session"))) {
        return Err(format!("the fork does not fork conversation {source}: {launches:#?}"));
    }
    let project =
        stage.bosun.claude_config().join("projects").join(ws.path.display().to_string().replace(['/', '.'], "-"));
    let conversation = std::fs::read_to_string(project.join(format!("{source}.jsonl"))).unwrap_or_default();
    if !conversation.contains("ping") {
        return Err(format!("the fork's program does not have the conversation forked in {}", project.display()));
    }
    if stage.bosun.agent(&w.id).state.is_dead() || !alive(w.pid) {
        return Err("the agent forked should go on".into());
    }
    Ok(())
}

/// The branch pushed, one pull request created, recorded and shown.
fn pr_opened(stage: &Stage, w: &Worker, origin: &Path, said: &str) -> Result<(), String> {
    let url = "https://github.example/o/r/pull/7";
    if !said.contains(&format!("pull request {url}")) {
        return Err(format!("bosun pr said: {said}"));
    }
    if stage.prs_created() != 1 {
        return Err(format!("gh pr create ran {} times", stage.prs_created()));
    }
    if git_in(origin, &["rev-parse", &w.branch]) != w.commit {
        return Err("the branch is not on origin".into());
    }
    let shown = stage.bosun.ok(stage.repo.path(), &["show", &w.id]);
    if !shown.contains(url) {
        return Err(format!("the pull request is not recorded: {shown}"));
    }
    Ok(())
}

/// `bosun merge` said it merged `branch` into main (`how`); or, sent again by the CLI after its
/// daemon died between the merge in git and its record, that main holds it already.
fn said_merged(said: &str, branch: &str, how: &str) -> Result<(), String> {
    let merged = said.contains(&format!("merged {branch} into main{how}"));
    if merged || said.contains(&format!("main already holds {branch}")) {
        return Ok(());
    }
    Err(format!("bosun merge said: {said}"))
}

fn in_main(repo: &Path, commit: &str) -> Result<(), String> {
    let out = std::process::Command::new("git")
        .args(["merge-base", "--is-ancestor", commit, "main"])
        .current_dir(repo)
        .status()
        .map_err(|e| e.to_string())?;
    out.success().then_some(()).ok_or_else(|| format!("main does not hold the agent's commit {commit}"))
}

/// The agent is dead and its process gone, and it was launched once.
fn ended_once(stage: &Stage, w: &Worker) -> Result<(), String> {
    if !stage.bosun.agent(&w.id).state.is_dead() {
        return Err(format!("agent {} is not dead", w.id));
    }
    if !gone(w.pid) {
        return Err(format!("agent {}'s process {} still runs", w.id, w.pid));
    }
    let launches = stage.launches();
    if launches.len() != 1 {
        return Err(format!("the agent should have been launched once: {launches:#?}"));
    }
    Ok(())
}

fn branch_gone(repo: &Path, branch: &str) -> Result<(), String> {
    let left = crate::poll::wait_until(super::GONE, || git_in(repo, &["branch", "--list", branch]).is_empty());
    left.then_some(()).ok_or_else(|| format!("branch {branch}, all of it merged, is still there"))
}
