//! The workspace of a host that saves by bundle (in a pod, for a repository with no remote the
//! cluster could clone from): its branch comes from the daemon as a git bundle before the
//! program starts (`Seed`), and goes back to it as one once the program ended (`Bundle`),
//! less the commits the daemon says it has. Every git value is an argument; the bundles are
//! files in the clone's `.git`, bounded in size, removed once used.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use bosun_wire::{read_frame, write_frame};

use crate::conn::HostConn;
use crate::protocol::{HostRequest, HostResponse};
use crate::save::{is_dirty, run, GitError};

/// The largest bundle a host takes or gives.
pub const BUNDLE_MOST: u64 = 16 << 30;
/// The most commits a `Bundle` request may say the client has.
const HAVE_MOST: usize = 64;
/// Where a seed is written, and a bundle given, in the clone's git directory.
const SEED_FILE: &str = "bosun-seed.bundle";
const GIVE_FILE: &str = "bosun-give.bundle";

/// Why a seed was not taken, or a bundle not made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BundleError {
    #[error("a seed of {0} bytes is more than the {BUNDLE_MOST} a host takes")]
    SeedTooLarge(u64),
    #[error("its workspace holds a clone with work not committed, not on {0}: it is not seeded over")]
    Dirty(String),
    #[error("`have` must be at most {HAVE_MOST} full commit ids")]
    BadHave,
    #[error("its workspace has no branch {0} any more")]
    NoBranch(String),
    #[error("its bundle is {0} bytes, more than the {BUNDLE_MOST} a host gives")]
    TooLarge(u64),
    #[error("the seed ended after {0} of its {1} bytes")]
    SeedShort(u64, u64),
    #[error("reading the seed: {0}")]
    ReadSeed(std::io::Error),
    /// A file of its own it could not make, read or write: what it did, the error.
    #[error("{0}: {1}")]
    File(String, std::io::Error),
    #[error("cannot tell its workspace: {0}")]
    Workspace(std::io::Error),
    #[error(transparent)]
    Git(#[from] GitError),
}

/// Whether the clone in `dir` holds `branch` already (a claim kept it from an earlier pod).
pub(crate) fn seeded(dir: &Path, branch: &str) -> bool {
    let head = format!("refs/heads/{branch}");
    matches!(run(dir, &["rev-parse", "--verify", "--quiet", &head]), Ok((true, _)))
}

/// Reads a bundle of `len` bytes from `conn` and makes `dir` a clone on `branch` from it.
pub(crate) fn seed(conn: &mut HostConn, dir: &Path, branch: &str, len: u64) -> Result<(), BundleError> {
    if len > BUNDLE_MOST {
        return Err(BundleError::SeedTooLarge(len));
    }
    // A clone already here (a claim's, of another branch) with work in it is never written over.
    if git_dir(dir).exists() && !git(dir, &["status", "--porcelain"]).unwrap_or_default().is_empty() {
        return Err(BundleError::Dirty(branch.to_owned()));
    }
    git(dir, &["init", "--quiet"])?;
    let file = git_dir(dir).join(SEED_FILE);
    let taken = take(conn, &file, len);
    let head = format!("refs/heads/{branch}");
    let fetched = taken.and_then(|()| {
        // Its HEAD names the branch first: a fetch into it then fills the worktree by a reset.
        git(dir, &["symbolic-ref", "HEAD", &head])?;
        let path = file.display().to_string();
        let refspec = format!("{head}:{head}");
        git(
            dir,
            &[
                "-c",
                "transfer.fsckObjects=true",
                "fetch",
                "--quiet",
                "--no-tags",
                "--update-head-ok",
                "--",
                &path,
                &refspec,
            ],
        )?;
        git(dir, &["reset", "--quiet", "--hard"])?;
        Ok(())
    });
    let _ = std::fs::remove_file(&file);
    fetched
}

/// What a host gives for `Bundle`: the branch's tip, whether the workspace is dirty, and the
/// bundle's file (none when the client has every commit).
pub(crate) struct Given {
    pub tip: String,
    pub dirty: bool,
    pub file: Option<(PathBuf, u64)>,
}

/// Whether `have` is what a `Bundle` request may say: at most `HAVE_MOST` full commit ids.
pub(crate) fn check_have(have: &[String]) -> Result<(), BundleError> {
    if have.len() > HAVE_MOST || !have.iter().all(|c| is_commit_id(c)) {
        return Err(BundleError::BadHave);
    }
    Ok(())
}

/// The bundle of `branch` in `dir`, less what the commits of `have` (checked) reach.
pub(crate) fn make(dir: &Path, branch: &str, have: &[String]) -> Result<Given, BundleError> {
    let head = format!("refs/heads/{branch}");
    let tip =
        git(dir, &["rev-parse", "--verify", "--quiet", &head]).map_err(|_| BundleError::NoBranch(branch.to_owned()))?;
    let dirty = is_dirty(dir)?;
    // Only commits this clone knows can bound the bundle.
    let known: Vec<&String> = have
        .iter()
        .filter(|c| git(dir, &["rev-parse", "--verify", "--quiet", &format!("{c}^{{commit}}")]).is_ok())
        .collect();
    let held = known.iter().any(|c| git(dir, &["merge-base", "--is-ancestor", &tip, c]).is_ok());
    if held {
        return Ok(Given { tip, dirty, file: None });
    }
    let file = git_dir(dir).join(GIVE_FILE);
    let path = file.display().to_string();
    let mut args = vec!["bundle", "create", "--quiet", &path, &head];
    let nots: Vec<String> = known.iter().map(|c| format!("^{c}")).collect();
    args.extend(nots.iter().map(String::as_str));
    git(dir, &args)?;
    let len = std::fs::metadata(&file).map_err(|e| BundleError::File(format!("reading {path}"), e))?.len();
    if len > BUNDLE_MOST {
        let _ = std::fs::remove_file(&file);
        return Err(BundleError::TooLarge(len));
    }
    Ok(Given { tip, dirty, file: Some((file, len)) })
}

/// Gives `given` on `conn` and reads what the client made of it: `Some(fetched, said)` once
/// it said, none when it went first (the bundle is kept for the next to ask).
pub(crate) fn give(conn: &mut HostConn, given: &Given) -> Option<(bool, String)> {
    let len = given.file.as_ref().map_or(0, |(_, len)| *len);
    let answer = HostResponse::Bundle { len, tip: given.tip.clone(), dirty: given.dirty };
    write_frame(conn, &answer).ok()?;
    if let Some((file, _)) = &given.file {
        let mut bytes = std::fs::File::open(file).ok()?;
        std::io::copy(&mut bytes, conn).ok()?;
        conn.flush().ok()?;
    }
    // The client fetches it now, which may take as long as a push.
    let _ = conn.set_read_timeout(Some(crate::save::SAVE_WAIT * 2));
    let said = match read_frame(conn).ok()? {
        HostRequest::Fetched { fetched, said } => (fetched, said),
        _ => return None,
    };
    let _ = write_frame(conn, &HostResponse::Ok);
    if let Some((file, _)) = &given.file {
        let _ = std::fs::remove_file(file);
    }
    Some(said)
}

/// Copies exactly `len` bytes of `conn` into a new `file`.
fn take(conn: &mut HostConn, file: &Path, len: u64) -> Result<(), BundleError> {
    let mut out =
        std::fs::File::create(file).map_err(|e| BundleError::File(format!("creating {}", file.display()), e))?;
    let copied = std::io::copy(&mut Read::by_ref(conn).take(len), &mut out).map_err(BundleError::ReadSeed)?;
    if copied != len {
        return Err(BundleError::SeedShort(copied, len));
    }
    out.sync_all().map_err(|e| BundleError::File(format!("writing {}", file.display()), e))
}

/// `git ARGS` in `dir`: what it printed, or what went wrong.
fn git(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    let name = || args.iter().find(|a| !a.starts_with('-') && !a.contains('=')).copied().unwrap_or("").to_owned();
    match run(dir, args) {
        Ok((true, out)) => Ok(out.trim().to_owned()),
        Ok((false, out)) => Err(GitError::Said { name: name(), said: out.trim().to_owned() }),
        Err(e) => Err(GitError::Run { name: name(), source: Box::new(e) }),
    }
}

fn git_dir(dir: &Path) -> PathBuf {
    dir.join(".git")
}

/// A full commit id: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits.
fn is_commit_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}
