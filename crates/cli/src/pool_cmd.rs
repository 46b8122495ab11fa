//! `bosun pool init | ls | resize | acquire | release | rm`: the repositories' pools of warm
//! workspaces, as the daemon keeps them; disk usage is measured here, by walking each one.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use bosun_core::{SlotState, WorkspaceState};
use bosun_wire::{PoolAsk, Pools};

use crate::args::PoolCommand;
use crate::client::Client;
use crate::commands::print_json;
use crate::error::usage;
use crate::render;

/// The longest task file taken.
const TASK_MAX: u64 = 1 << 20;

/// A task file's text (at most 1 MiB of UTF-8).
pub fn read_task(path: &Path) -> Result<String> {
    use std::io::Read;
    let mut text = String::new();
    let file = std::fs::File::open(path).with_context(|| format!("cannot read --task-file {}", path.display()))?;
    file.take(TASK_MAX + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("--task-file {} is not UTF-8 text", path.display()))?;
    if text.len() as u64 > TASK_MAX {
        return Err(usage(format!("--task-file {} is over {TASK_MAX} bytes", path.display())));
    }
    Ok(text)
}

fn repo(dir: Option<PathBuf>) -> Result<PathBuf> {
    match dir {
        Some(d) => std::fs::canonicalize(&d).map_err(|_| usage(format!("--repo {}: no such directory", d.display()))),
        None => std::env::current_dir().context("cannot read the current directory"),
    }
}

pub fn pool(client: &Client, cmd: PoolCommand) -> Result<ExitCode> {
    let (pools, json) = match cmd {
        PoolCommand::Init { size, repo: dir, setup, json } => {
            let ask = PoolAsk { repo: repo(dir)?, size, setup, branch: None, task: None, no_wait: false };
            (client.pool_init(Box::new(ask))?, json)
        }
        PoolCommand::Ls(flag) => (client.pool_list()?, flag.json),
        PoolCommand::Resize { project, size, json } => (client.pool_resize(project, size)?, json),
        PoolCommand::Acquire { repo: dir, branch, task_file, no_wait, json } => {
            let task = task_file.as_deref().map(read_task).transpose()?;
            let ask = PoolAsk { repo: repo(dir)?, size: None, setup: None, branch, task, no_wait };
            let a = client.pool_acquire(Box::new(ask))?;
            if json {
                print_json(&a)?;
            } else if !std::io::stdout().is_terminal() {
                // For `ws=$(bosun pool acquire)`: the path alone.
                println!("{}", a.path.display());
            } else {
                println!("workspace  {}", a.path.display());
                if let Some(b) = &a.branch {
                    println!("branch     {b}");
                }
                println!("release it with `bosun pool release {}`", a.workspace);
            }
            return Ok(ExitCode::SUCCESS);
        }
        PoolCommand::Release { workspace, force, pristine, json } => {
            let r = client.pool_release(workspace, force, pristine)?;
            if json {
                print_json(&r)?;
                return Ok(ExitCode::SUCCESS);
            }
            match &r.removed {
                Some(removed) => {
                    println!("released {} ({})", removed.workspace, r.slot);
                    if let Some(b) = &removed.branch_deleted {
                        println!("deleted branch {b}: it held no commit of its own");
                    }
                    if let Some(k) = &removed.branch_kept {
                        println!(
                            "kept branch {} : it holds {} commit(s) on no other branch, tag or remote",
                            k.branch, k.commits
                        );
                    }
                }
                None => println!("released {}", r.slot),
            }
            println!("{} is reset in the background (see `bosun pool ls`)", r.slot);
            return Ok(ExitCode::SUCCESS);
        }
        PoolCommand::Rm { project, workspace, force, json } => (client.pool_remove(project, workspace, force)?, json),
    };
    if json {
        print_json(&with_disk_usage(&pools)?)?;
    } else {
        print!("{}", table(&pools));
    }
    Ok(ExitCode::SUCCESS)
}

fn table(p: &Pools) -> String {
    if p.pools.is_empty() {
        return "no pools: make one with `bosun pool init`, or start an agent with --workspace pool\n".into();
    }
    let mut rows = Vec::new();
    for pool in &p.pools {
        for slot in pool.slots.values() {
            let state = match &slot.state {
                SlotState::Bound { workspace } => {
                    let who = p.holders.get(workspace).map_or(workspace.as_str(), String::as_str);
                    // Said as `bosun ls` says it when its workspace holds work or is gone.
                    match p.workspaces.get(workspace) {
                        Some(s @ (WorkspaceState::Dirty | WorkspaceState::Stale)) => format!("{}: {who}", s.label()),
                        _ => format!("bound: {who}"),
                    }
                }
                other => other.label().to_owned(),
            };
            let state = match &slot.error {
                Some(e) => format!("{state} ({e})"),
                None => state,
            };
            rows.push(vec![
                slot.id.to_string(),
                state,
                disk_usage(&slot.path).map_or("-".into(), human),
                render::age(p.now, slot.created_at.as_millis()),
                slot.path.display().to_string(),
            ]);
        }
        for ws in &pool.waiting {
            let who = p.holders.get(ws).map_or(ws.as_str(), String::as_str);
            rows.push(vec![
                format!("{}--?", pool.project),
                format!("waiting: {who}"),
                "-".into(),
                "-".into(),
                "-".into(),
            ]);
        }
    }
    let mut out = render::table(&["WORKSPACE", "STATE", "DISK", "AGE", "PATH"], &rows);
    out.push('\n');
    for pool in &p.pools {
        let kept = pool.slots.len();
        out.push_str(&format!(
            "{}: {kept} of {} kept, base {}, repository {}\n",
            pool.project,
            pool.size,
            pool.base.base_ref,
            pool.repo.display()
        ));
    }
    out
}

/// The pools as JSON, each slot with the bytes it takes on disk (`disk_bytes`, null when gone).
fn with_disk_usage(pools: &Pools) -> Result<serde_json::Value> {
    let mut v = serde_json::to_value(pools)?;
    let slots = v["pools"].as_array_mut().into_iter().flatten().filter_map(|p| p["slots"].as_array_mut()).flatten();
    for slot in slots {
        let bytes = slot["path"].as_str().and_then(|p| disk_usage(Path::new(p)));
        slot["disk_bytes"] = bytes.into();
    }
    Ok(v)
}

/// Bytes the files under `dir` take on disk (blocks, as `du` counts them); None when it is gone.
fn disk_usage(dir: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0u64;
    let mut todo = vec![dir.to_path_buf()];
    std::fs::symlink_metadata(dir).ok()?;
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            total = total.saturating_add(meta.blocks().saturating_mul(512));
            if meta.is_dir() {
                todo.push(entry.path());
            }
        }
    }
    Some(total)
}

fn human(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "K", "M", "G"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes}B")
    } else {
        format!("{value:.1}{}", UNITS[unit])
    }
}
