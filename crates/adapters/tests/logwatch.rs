//! `LogWatcher` against real files in temp dirs: appends, offsets, partial lines, truncation and
//! replacement, files that appear later, many files at once, unwatch, the sweep without events,
//! and large appends.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bosun_adapters::{LogLines, LogWatchOptions, LogWatcher, WatchId};
use bosun_testkit::poll::{wait_for, wait_until};
use tempfile::TempDir;

const TIMEOUT: Duration = Duration::from_secs(10);

/// Events only: the sweep is too slow to matter within a test.
const EVENTS_ONLY: LogWatchOptions = LogWatchOptions { events: true, sweep: Duration::from_secs(3600) };

/// The daemon shares one watcher between its tasks.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<LogWatcher>();
};

/// Records every delivery.
#[derive(Clone, Default)]
struct Got(Arc<Mutex<Vec<LogLines>>>);

impl Got {
    fn watcher(&self, options: LogWatchOptions) -> LogWatcher {
        let got = self.clone();
        LogWatcher::with_options(move |lines| got.0.lock().expect("lock").push(lines), options).expect("log watcher")
    }

    fn deliveries(&self, id: WatchId) -> Vec<LogLines> {
        self.0.lock().expect("lock").iter().filter(|d| d.id == id).cloned().collect()
    }

    fn lines(&self, id: WatchId) -> Vec<String> {
        self.deliveries(id).into_iter().flat_map(|d| d.lines).collect()
    }

    /// Waits until `id` has delivered `n` lines in all, and returns them.
    fn wait_lines(&self, id: WatchId, n: usize) -> Vec<String> {
        wait_for(TIMEOUT, || {
            let lines = self.lines(id);
            (lines.len() >= n).then_some(lines)
        })
        .unwrap_or_else(|| panic!("{id:?} delivered only {:?}", self.lines(id)))
    }
}

fn append(path: &Path, bytes: &[u8]) {
    let mut file = OpenOptions::new().create(true).append(true).open(path).expect("open for append");
    file.write_all(bytes).expect("append");
}

fn temp() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("session.jsonl");
    (dir, path)
}

/// Each delivery's offset is the byte just after its last line.
fn assert_offsets(deliveries: &[LogLines], start: u64) {
    let mut offset = start;
    for d in deliveries {
        if d.truncated {
            offset = 0;
        }
        offset += d.lines.iter().map(|l| l.len() as u64 + 1).sum::<u64>();
        assert_eq!(d.offset, offset, "{d:?}");
    }
}

#[test]
fn appended_lines_are_delivered_with_their_offsets() {
    let (_dir, path) = temp();
    File::create(&path).expect("create");
    let got = Got::default();
    let watcher = got.watcher(EVENTS_ONLY);
    let id = watcher.watch(path.clone(), 0);

    append(&path, b"one\n");
    assert_eq!(got.wait_lines(id, 1), ["one"]);
    append(&path, b"two\nthree\n");
    assert_eq!(got.wait_lines(id, 3), ["one", "two", "three"]);

    let deliveries = got.deliveries(id);
    assert_eq!(deliveries[0].offset, 4);
    assert_eq!(deliveries.last().map(|d| d.offset), Some(14));
    assert_offsets(&deliveries, 0);
    assert!(deliveries.iter().all(|d| d.path == path && !d.truncated));
}

#[test]
fn watching_from_an_offset_skips_earlier_lines() {
    let (_dir, path) = temp();
    append(&path, b"old\nmid\n");
    let got = Got::default();
    let watcher = got.watcher(EVENTS_ONLY);
    let id = watcher.watch(path.clone(), 4);

    assert_eq!(got.wait_lines(id, 1), ["mid"], "lines already complete past the offset come at once");
    append(&path, b"new\n");
    assert_eq!(got.wait_lines(id, 2), ["mid", "new"]);
    assert_offsets(&got.deliveries(id), 4);
}

#[test]
fn a_partial_line_is_delivered_only_once_completed() {
    let (_dir, path) = temp();
    File::create(&path).expect("create");
    let got = Got::default();
    let watcher = got.watcher(EVENTS_ONLY);
    let id = watcher.watch(path.clone(), 0);

    append(&path, b"first\npart");
    assert_eq!(got.wait_lines(id, 1), ["first"]);
    assert_eq!(got.deliveries(id).last().map(|d| d.offset), Some(6), "the offset stops before the partial line");
    append(&path, b"ial\n");
    assert_eq!(got.wait_lines(id, 2), ["first", "partial"]);
    assert_eq!(got.deliveries(id).last().map(|d| d.offset), Some(14));
}

#[test]
fn truncation_restarts_from_zero() {
    let (_dir, path) = temp();
    append(&path, b"a long first line\nsecond\n");
    let got = Got::default();
    let watcher = got.watcher(EVENTS_ONLY);
    let id = watcher.watch(path.clone(), 0);
    assert_eq!(got.wait_lines(id, 2), ["a long first line", "second"]);

    let mut file = File::create(&path).expect("truncate");
    file.write_all(b"c\n").expect("write");
    assert!(wait_until(TIMEOUT, || got.lines(id).contains(&"c".to_owned())), "{:?}", got.deliveries(id));

    let deliveries = got.deliveries(id);
    let restart = deliveries.iter().position(|d| d.truncated).expect("a truncated delivery");
    let after: Vec<String> = deliveries[restart..].iter().flat_map(|d| d.lines.clone()).collect();
    assert_eq!(after, ["c"]);
    assert_eq!(deliveries.last().map(|d| d.offset), Some(2));
    assert_offsets(&deliveries, 0);
}

#[test]
fn a_replaced_file_restarts_from_zero() {
    let (dir, path) = temp();
    append(&path, b"old\n");
    let got = Got::default();
    let watcher = got.watcher(EVENTS_ONLY);
    let id = watcher.watch(path.clone(), 0);
    assert_eq!(got.wait_lines(id, 1), ["old"]);

    // Longer than what was read: only the new inode tells it is another file.
    let new = dir.path().join("new.jsonl");
    fs::write(&new, b"fresh one\nfresh two\n").expect("write");
    fs::rename(&new, &path).expect("rename over");

    assert_eq!(got.wait_lines(id, 3), ["old", "fresh one", "fresh two"]);
    let deliveries = got.deliveries(id);
    assert!(deliveries[1].truncated, "{deliveries:?}");
    assert_offsets(&deliveries, 0);
}

#[test]
fn a_file_created_after_watch_is_picked_up() {
    let (_dir, path) = temp();
    let got = Got::default();
    let watcher = got.watcher(EVENTS_ONLY);
    let id = watcher.watch(path.clone(), 0);

    append(&path, b"hello\n");
    assert_eq!(got.wait_lines(id, 1), ["hello"]);
    append(&path, b"again\n");
    assert_eq!(got.wait_lines(id, 2), ["hello", "again"]);
}

#[test]
fn a_file_whose_directory_appears_later_is_picked_up() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("projects").join("-tmp-ws").join("session.jsonl");
    let got = Got::default();
    let watcher = got.watcher(LogWatchOptions { events: true, sweep: Duration::from_millis(50) });
    let id = watcher.watch(path.clone(), 0);

    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    append(&path, b"{\"type\":\"user\"}\n");
    assert_eq!(got.wait_lines(id, 1), ["{\"type\":\"user\"}"]);
}

/// Without a sweep: the making of the missing directories (two levels of them, as Claude Code
/// makes its project's directory at its first write) is seen through their nearest ancestor.
#[test]
fn a_file_whose_directories_are_made_later_is_read_by_events_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("projects").join("-tmp-ws").join("session.jsonl");
    let got = Got::default();
    let watcher = got.watcher(EVENTS_ONLY);
    let id = watcher.watch(path.clone(), 0);

    fs::create_dir(dir.path().join("projects")).expect("mkdir");
    fs::create_dir(path.parent().expect("parent")).expect("mkdir");
    append(&path, b"{\"type\":\"assistant\"}\n");
    assert_eq!(got.wait_lines(id, 1), ["{\"type\":\"assistant\"}"]);
    append(&path, b"more\n");
    assert_eq!(got.wait_lines(id, 2), ["{\"type\":\"assistant\"}", "more"]);
}

#[test]
fn many_files_each_get_their_own_lines() {
    let dir = tempfile::tempdir().expect("temp dir");
    let got = Got::default();
    let watcher = got.watcher(EVENTS_ONLY);
    let files: Vec<(PathBuf, WatchId)> = (0..50)
        .map(|i| {
            // Half share one directory, half have one each.
            let sub = if i % 2 == 0 { dir.path().join("shared") } else { dir.path().join(format!("own-{i}")) };
            fs::create_dir_all(&sub).expect("mkdir");
            let path = sub.join(format!("{i}.log"));
            let id = watcher.watch(path.clone(), 0);
            (path, id)
        })
        .collect();

    for round in 0..3 {
        for (i, (path, _)) in files.iter().enumerate() {
            append(path, format!("file {i} line {round}\n").as_bytes());
        }
    }
    for (i, (path, id)) in files.iter().enumerate() {
        let expected: Vec<String> = (0..3).map(|round| format!("file {i} line {round}")).collect();
        assert_eq!(got.wait_lines(*id, 3), expected);
        assert!(got.deliveries(*id).iter().all(|d| &d.path == path));
    }
}

#[test]
fn unwatch_stops_delivery() {
    let (dir, path) = temp();
    let other = dir.path().join("other.log");
    let got = Got::default();
    let watcher = got.watcher(EVENTS_ONLY);
    let id = watcher.watch(path.clone(), 0);
    append(&path, b"before\n");
    assert_eq!(got.wait_lines(id, 1), ["before"]);

    watcher.unwatch(id);
    // The thread takes requests in order: once the later watch has delivered, the unwatch
    // was taken in, and the event for the earlier append was handled too.
    let later = watcher.watch(other.clone(), 0);
    append(&path, b"after\n");
    append(&other, b"marker\n");
    assert_eq!(got.wait_lines(later, 1), ["marker"]);
    assert_eq!(got.lines(id), ["before"]);
}

#[test]
fn the_sweep_delivers_without_events() {
    let (_dir, path) = temp();
    let got = Got::default();
    let watcher = got.watcher(LogWatchOptions { events: false, sweep: Duration::from_millis(50) });
    let id = watcher.watch(path.clone(), 0);

    append(&path, b"swept\npart");
    assert_eq!(got.wait_lines(id, 1), ["swept"]);
    append(&path, b"ial\n");
    assert_eq!(got.wait_lines(id, 2), ["swept", "partial"]);
    assert_offsets(&got.deliveries(id), 0);
}

#[test]
fn a_large_append_arrives_in_bounded_deliveries() {
    let (_dir, path) = temp();
    File::create(&path).expect("create");
    let got = Got::default();
    let watcher = got.watcher(EVENTS_ONLY);
    let id = watcher.watch(path.clone(), 0);

    let expected: Vec<String> = (0..40_000).map(|i| format!("{i:06} {}", "x".repeat(90))).collect();
    let text: String = expected.iter().map(|l| format!("{l}\n")).collect();
    append(&path, text.as_bytes());

    assert_eq!(got.wait_lines(id, expected.len()), expected);
    let deliveries = got.deliveries(id);
    assert!(deliveries.len() >= 4, "{} deliveries for {} bytes", deliveries.len(), text.len());
    for d in &deliveries {
        let bytes: usize = d.lines.iter().map(|l| l.len() + 1).sum();
        assert!(bytes <= 1024 * 1024 + 100, "one delivery held {bytes} bytes");
    }
    assert_eq!(deliveries.last().map(|d| d.offset), Some(text.len() as u64));
    assert_offsets(&deliveries, 0);
}

#[test]
fn invalid_utf8_is_replaced_and_crlf_removed() {
    let (_dir, path) = temp();
    let got = Got::default();
    let watcher = got.watcher(EVENTS_ONLY);
    let id = watcher.watch(path.clone(), 0);

    append(&path, b"ok \xff\r\nplain\n");
    assert_eq!(got.wait_lines(id, 2), ["ok \u{fffd}", "plain"]);
    assert_eq!(got.deliveries(id).last().map(|d| d.offset), Some(12));
}

#[test]
fn dropping_the_watcher_stops_its_thread() {
    let (_dir, path) = temp();
    let got = Got::default();
    let watcher = got.watcher(EVENTS_ONLY);
    let id = watcher.watch(path.clone(), 0);
    append(&path, b"line\n");
    got.wait_lines(id, 1);

    // The thread owns the sink, which holds a clone of `got`: it is gone once the thread is.
    drop(watcher);
    assert_eq!(Arc::strong_count(&got.0), 1);
}

#[test]
fn text_that_ends_no_line_is_offered_as_partial_and_later_as_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.log");
    std::fs::write(&path, "").unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = seen.clone();
    let watcher = LogWatcher::new(move |l: LogLines| s.lock().unwrap().push((l.lines, l.partial))).unwrap();
    watcher.watch(path.clone(), 0);
    let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    std::io::Write::write_all(&mut f, b"Continue? [y/n] ").unwrap();
    let partial = wait_for(Duration::from_secs(10), || seen.lock().unwrap().iter().find_map(|(_, p)| p.clone()));
    assert_eq!(partial.as_deref(), Some("Continue? [y/n] "));
    std::io::Write::write_all(&mut f, b"y\n").unwrap();
    let line =
        wait_for(Duration::from_secs(10), || seen.lock().unwrap().iter().find_map(|(lines, _)| lines.first().cloned()));
    assert_eq!(line.as_deref(), Some("Continue? [y/n] y"));
}

#[test]
fn a_file_written_under_a_watched_directory_is_reported_but_not_inside_git() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::create_dir_all(a.path().join(".git/objects")).unwrap();
    std::fs::create_dir_all(a.path().join("src")).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let watcher = bosun_adapters::DirWatcher::new(move |root: &Path| s.lock().unwrap().push(root.to_owned())).unwrap();
    watcher.watch(a.path()).unwrap();
    watcher.watch(b.path()).unwrap();
    let (ra, rb) = (a.path().canonicalize().unwrap(), b.path().canonicalize().unwrap());
    // Git's own files are not the agent's work; a write in `b` afterwards proves events flowed.
    fs::write(a.path().join(".git/objects/x"), "git's own").unwrap();
    fs::write(b.path().join("marker"), "x").unwrap();
    assert!(wait_until(Duration::from_secs(10), || seen.lock().unwrap().contains(&rb)), "b reported");
    assert!(!seen.lock().unwrap().contains(&ra), "a write inside .git is not reported");
    fs::write(a.path().join("src/main.rs"), "fn main() {}").unwrap();
    assert!(wait_until(Duration::from_secs(10), || seen.lock().unwrap().contains(&ra)), "a reported");
    watcher.unwatch(a.path());
}

#[test]
fn a_link_in_a_watched_directory_is_not_followed_out_of_it() {
    let (a, b, outside) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::os::unix::fs::symlink(outside.path(), a.path().join("out")).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let watcher = bosun_adapters::DirWatcher::new(move |root: &Path| s.lock().unwrap().push(root.to_owned())).unwrap();
    watcher.watch(a.path()).unwrap();
    watcher.watch(b.path()).unwrap();
    let (ra, rb) = (a.path().canonicalize().unwrap(), b.path().canonicalize().unwrap());
    // A write where the link leads is not the workspace's; one in `b` afterwards proves events flowed.
    fs::write(outside.path().join("elsewhere.txt"), "not the agent's work").unwrap();
    fs::write(b.path().join("marker"), "x").unwrap();
    assert!(wait_until(Duration::from_secs(10), || seen.lock().unwrap().contains(&rb)), "b reported");
    assert!(!seen.lock().unwrap().contains(&ra), "the link was followed out of the watched directory");
}
