//! The hook spools, read at a daemon's start: the shared one (`<state>/spool`), where hooks that
//! reach no daemon keep their reports, and each report channel's, where a confined agent's do
//! (told as that agent's, and read only as a regular file, never through a link, bounded: the
//! agent writes that directory). The channels of agents still alive are opened again first.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::channels::Channels;
use crate::handler::Context;
use crate::server::Speaker;

/// Opens again the report channel of each agent in a sandbox or a container still alive (their
/// sandboxes show the new socket), hands on the reports each spooled while no daemon ran, as its
/// own, and removes the channels of agents that ended.
pub(crate) async fn reopen_channels(ctx: &Arc<Context>, channels: &Channels) {
    let live = ctx
        .engine
        .query(|s, _| {
            let confined = |a: &&bosun_core::Agent| !a.state.is_dead() && a.runtime.confines();
            s.agents.values().filter(confined).map(|a| a.id.clone()).collect::<std::collections::BTreeSet<_>>()
        })
        .await
        .unwrap_or_default();
    for agent in &live {
        if let Err(e) = channels.open(agent) {
            tracing::warn!(%agent, "cannot open its report channel again: {e}");
        }
    }
    for agent in channels.found() {
        // Moved out of the spool the agent writes, into its channel's own directory first.
        let spool = ctx.dirs.channel(&agent).join("hooks.spool");
        if std::fs::rename(ctx.dirs.channel(&agent).join("spool").join("hooks.spool"), &spool).is_ok() {
            replay(ctx, &spool, &Speaker::Agent(agent.clone())).await;
        }
        if !live.contains(&agent) {
            channels.close(&agent);
        }
    }
}

/// The most of one spool read: a report is at most 1 MiB.
const SPOOL_MOST: u64 = 64 << 20;

/// The text of the spool file at `path`: a regular file, never read through a link, without
/// waiting on a FIFO, and no further than `SPOOL_MOST`.
fn read_spool(path: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| tracing::warn!("cannot read the spool {}: {e}", path.display()))
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        tracing::warn!("skipping the spool {}: not a regular file", path.display());
        return None;
    }
    let mut bytes = Vec::new();
    file.take(SPOOL_MOST).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Hands on the hook reports made while no daemon ran, in order, then drops the spool; those of
/// an agent's own spool as `speaker`'s (its reports only, as its own).
pub(crate) async fn replay(ctx: &Arc<Context>, spool: &Path, speaker: &Speaker) {
    // Moved aside first, under a name of its own: a report that races this start lands in a
    // fresh spool, and one a crash cut off mid-replay is replayed at the next start.
    let stamp = crate::engine::now().as_millis();
    let _ = std::fs::rename(spool, spool.with_extension(format!("replaying-{stamp:013}")));
    let Some(dir) = spool.parent() else { return };
    let prefix = spool.with_extension("replaying-");
    let mut taken: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    taken.retain(|p| p.to_string_lossy().starts_with(&*prefix.to_string_lossy()));
    taken.sort();
    taken.retain(|p| p.extension().is_none_or(|e| e != "told"));
    let mut replayed = 0;
    for file in taken {
        let Some(text) = read_spool(&file) else {
            let _ = std::fs::remove_file(&file);
            continue;
        };
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        // Where a replay a crash cut off stopped: the reports told, and how often the next one
        // was begun.
        let told_file = file.with_extension(format!("{}.told", file.extension().unwrap_or_default().to_string_lossy()));
        let (told, begun) = std::fs::read_to_string(&told_file).map(|t| progress(&t)).unwrap_or_default();
        for (i, line) in lines.iter().enumerate().skip(told) {
            // Told, then counted: a crash between the two tells the report again, which the core
            // takes as nothing new. One whose telling killed the daemon again and again is dropped.
            let begun = if i == told { begun + 1 } else { 1 };
            if begun > MAX_BEGUN {
                tracing::warn!("dropping a spooled hook report the daemon died telling {MAX_BEGUN} times");
                continue;
            }
            note_progress(&told_file, &format!("{i} {begun}"));
            let request = serde_json::from_str::<bosun_wire::HookEvent>(line)
                .map_err(|e| e.to_string())
                .and_then(|event| speaker.admit(bosun_wire::Request::Hook(event)).map_err(|e| e.message));
            match request {
                Ok(request) => {
                    crate::handler::handle(ctx, request, None).await;
                    replayed += 1;
                }
                Err(e) => tracing::warn!("skipping a spooled hook report: {e}"),
            }
            note_progress(&told_file, &(i + 1).to_string());
        }
        if let Err(e) = std::fs::remove_file(&file) {
            tracing::warn!("cannot remove {}: {e}", file.display());
        }
        // Absent when the file held no report.
        let _ = std::fs::remove_file(&told_file);
    }
    if replayed > 0 {
        tracing::info!(replayed, "hook reports made while bosun was down");
    }
}

/// How often the telling of one spooled report may be begun before it is dropped.
const MAX_BEGUN: u32 = 3;

/// How far the replay of one spool got: the reports told, and how often the next was begun.
fn progress(text: &str) -> (usize, u32) {
    let mut words = text.split_whitespace();
    let told = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
    (told, words.next().and_then(|w| w.parse().ok()).unwrap_or(0))
}

fn note_progress(file: &Path, text: &str) {
    if let Err(e) = std::fs::write(file, text) {
        tracing::warn!("cannot update {}: {e}", file.display());
    }
}
