//! How the pools are printed: a table of their workspaces (state, disk usage, age), or JSON
//! with each workspace's bytes on disk, measured here by walking it.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use bosun_core::{SlotState, WorkspaceState};
use bosun_wire::Pools;

use crate::out::print_json;
use crate::render;

/// Prints `pools`: as JSON (with disk usage), or as a table.
pub fn print(pools: &Pools, json: bool) -> Result<ExitCode> {
    if json {
        print_json(&with_disk_usage(pools)?)?;
    } else {
        print!("{}", table(pools));
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
