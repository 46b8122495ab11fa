//! Where Codex keeps its session log: a rollout log under `$CODEX_HOME/sessions`
//! (`YYYY/MM/DD/rollout-<time>-<session id>.jsonl`), named nowhere bosun can read, found by
//! searching for the newest one whose session started in the agent's folder.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bosun_core::Timestamp;

/// The most of a rollout log's first line (its `session_meta`) read to learn its cwd.
const META_MAX: u64 = 64 * 1024;

/// The newest Codex rollout log under `sessions` written since `since` whose session started in
/// `cwd` (its first line, `session_meta`, says where).
pub fn find(sessions: &Path, cwd: &Path, since: Timestamp) -> Option<PathBuf> {
    let since = std::time::UNIX_EPOCH + Duration::from_millis(since.as_millis());
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    let mut dirs = vec![sessions.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).ok()?.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                dirs.push(path);
            } else if path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
            {
                if let Ok(modified) = meta.modified() {
                    if modified >= since {
                        found.push((modified, path));
                    }
                }
            }
        }
    }
    found.sort();
    found.into_iter().rev().map(|(_, p)| p).find(|p| {
        let first = first_line(p, META_MAX);
        let meta: Option<serde_json::Value> = first.and_then(|l| serde_json::from_str(&l).ok());
        meta.and_then(|m| m["payload"]["cwd"].as_str().map(PathBuf::from)).is_some_and(|c| c == cwd)
    })
}

/// The first line of the regular file at `path`, if it ends within `max` bytes.
fn first_line(path: &Path, max: u64) -> Option<String> {
    use std::io::{BufRead, Read};
    let file = std::fs::File::open(path).ok().filter(|f| f.metadata().is_ok_and(|m| m.is_file()))?;
    let mut line = String::new();
    std::io::BufReader::new(file.take(max)).read_line(&mut line).ok()?;
    line.ends_with('\n').then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_rollout_of_the_agents_folder_is_found() {
        let home = tempfile::tempdir().unwrap();
        let day = home.path().join("2026/11/23");
        std::fs::create_dir_all(&day).unwrap();
        let meta = |cwd: &str| format!("{{\"type\":\"session_meta\",\"payload\":{{\"cwd\":\"{cwd}\"}}}}\n");
        let mine = day.join("rollout-2026-11-23T10-00-00-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl");
        std::fs::write(&mine, meta("/work/a")).unwrap();
        let other = day.join("rollout-2026-11-23T10-00-01-5973b6c0-94b8-487b-a530-2aeb6098ae0f.jsonl");
        std::fs::write(&other, meta("/work/b")).unwrap();
        std::fs::write(day.join("notes.txt"), meta("/work/a")).unwrap();
        let since = Timestamp::from_millis(0);
        assert_eq!(find(home.path(), Path::new("/work/a"), since), Some(mine));
        assert_eq!(find(home.path(), Path::new("/work/c"), since), None);
    }
}
