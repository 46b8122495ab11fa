//! `Tail`: one followed file — where delivery stands in it, the bytes read past that point that
//! do not yet end a line, and which file (device and inode) those offsets belong to. It reads
//! from its offset into complete lines; it never waits and never looks for changes itself.

use std::fs::{self, File, Metadata};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::PathBuf;

/// How much one `read` asks for.
const CHUNK: usize = 64 * 1024;
/// One delivery holds lines up to about this many bytes; the rest follows in the next turn.
pub(super) const MAX_BATCH: usize = 1024 * 1024;
/// A line longer than this without its '\n' is delivered in pieces of this size, so one runaway
/// line cannot hold unbounded memory.
pub(super) const MAX_LINE: usize = 32 * 1024 * 1024;

/// Which file a path named: device and inode. Another one means the file was replaced.
type FileId = (u64, u64);

/// What one turn of reading found.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Batch {
    pub lines: Vec<String>,
    /// Byte offset just after the last line in `lines` (or the restart point).
    pub offset: u64,
    /// The file was truncated or replaced: the lines start again from its beginning.
    pub truncated: bool,
    /// The turn stopped at `MAX_BATCH` with more to read.
    pub more: bool,
    /// The bytes after the last complete line, when this turn read some of them.
    pub partial: Option<String>,
}

#[derive(Debug)]
pub(super) struct Tail {
    /// The path as the watcher keys it (absolute).
    pub path: PathBuf,
    /// The path as the caller gave it, reported back in each delivery.
    pub given: PathBuf,
    /// Just after the last complete line delivered.
    offset: u64,
    /// Bytes read after `offset` and not delivered yet.
    pending: Vec<u8>,
    /// `pending[..scanned]` holds no '\n'.
    scanned: usize,
    file: Option<FileId>,
}

impl Tail {
    pub fn new(path: PathBuf, given: PathBuf, offset: u64) -> Self {
        Self { path, given, offset, pending: Vec::new(), scanned: 0, file: None }
    }

    /// Where the next read starts.
    fn read_pos(&self) -> u64 {
        self.offset + self.pending.len() as u64
    }

    /// Reads what is new, up to about `MAX_BATCH` bytes of lines. `None` when there is nothing
    /// to deliver: the file is missing, or unchanged with no complete line pending.
    pub fn advance(&mut self) -> io::Result<Option<Batch>> {
        let meta = match fs::metadata(&self.path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        if self.is_unchanged(&meta) {
            return Ok(None);
        }
        let mut file = match File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        // The open file's own metadata: the path may have been replaced since the stat above.
        let meta = file.metadata()?;
        let id = file_id(&meta);
        let replaced = self.file.is_some_and(|known| Some(known) != id);
        let truncated = replaced || meta.len() < self.read_pos();
        if truncated {
            self.offset = 0;
            self.pending.clear();
            self.scanned = 0;
        }
        self.file = id;
        let before = self.read_pos();
        file.seek(SeekFrom::Start(before))?;
        let mut batch = self.read_lines(&mut file, truncated)?;
        let new_partial = self.read_pos() > before && !self.pending.is_empty() && !batch.more;
        if new_partial {
            batch.partial = Some(line_text(&self.pending));
        }
        Ok((truncated || !batch.lines.is_empty() || batch.partial.is_some()).then_some(batch))
    }

    /// Same file, same length as already read, and no complete line waiting in `pending`.
    fn is_unchanged(&self, meta: &Metadata) -> bool {
        self.file == file_id(meta) && meta.len() == self.read_pos() && !self.pending[self.scanned..].contains(&b'\n')
    }

    fn read_lines(&mut self, file: &mut File, truncated: bool) -> io::Result<Batch> {
        let mut batch = Batch { truncated, ..Batch::default() };
        let mut batch_bytes = 0;
        let mut buf = vec![0; CHUNK];
        loop {
            let consumed = self.take_lines(&mut batch.lines, &mut batch_bytes);
            self.pending.drain(..consumed);
            self.scanned -= consumed;
            if batch_bytes >= MAX_BATCH {
                batch.more = true;
                break;
            }
            let n = match file.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                break;
            }
            self.pending.extend_from_slice(&buf[..n]);
        }
        batch.offset = self.offset;
        Ok(batch)
    }

    /// Moves the complete lines at the front of `pending` into `lines` until `MAX_BATCH`, and
    /// returns how many bytes of `pending` they took. Advances `offset` past them.
    fn take_lines(&mut self, lines: &mut Vec<String>, batch_bytes: &mut usize) -> usize {
        let mut start = 0;
        while *batch_bytes < MAX_BATCH {
            let end = match self.pending[self.scanned..].iter().position(|&b| b == b'\n') {
                Some(at) => self.scanned + at + 1,
                None if self.pending.len() - start >= MAX_LINE => start + MAX_LINE,
                None => {
                    self.scanned = self.pending.len();
                    break;
                }
            };
            lines.push(line_text(&self.pending[start..end]));
            *batch_bytes += end - start;
            self.offset += (end - start) as u64;
            start = end;
            self.scanned = end;
        }
        start
    }
}

/// The line without its '\n' (and the '\r' before it, as terminals write), lossy UTF-8.
fn line_text(raw: &[u8]) -> String {
    let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    String::from_utf8_lossy(raw).into_owned()
}

#[cfg(unix)]
fn file_id(meta: &Metadata) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn file_id(_meta: &Metadata) -> Option<FileId> {
    None
}
