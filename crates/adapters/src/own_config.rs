//! Makes the config directory bosun gives a confined agent's program (`bosun_core::OwnConfig`),
//! before its first start: the user's files it is made from are read here (regular files only,
//! bounded; the user's own links, a dotfiles checkout's, are followed), the folders its program
//! is to trust are found (its workspace, and the main repository of a worktree), and the
//! directory is made whole beside its place and then renamed into it. One that is there already
//! is the agent's and is never written again; anything else at its place (a link) is refused.

use std::fs::{self, DirBuilder, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use bosun_core::own_config::{OwnConfig, Seeding};

use crate::AdapterError;

/// The largest file of the user's read: a `.claude.json` grows with every project the user
/// opens, to a few MB.
const MOST: u64 = 64 * 1024 * 1024;

/// Makes `own` for an agent working in `cwd`, unless it is there (see the module doc).
pub fn make(own: &OwnConfig, cwd: &Path) -> Result<(), AdapterError> {
    let io = |what: String| move |e| AdapterError::io(what, e);
    match fs::symlink_metadata(&own.dir) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => {
            let e = std::io::Error::other("something else is there (a link?)");
            return Err(AdapterError::io(format!("cannot use {} as its config", own.dir.display()), e));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(AdapterError::io(format!("cannot look at {}", own.dir.display()), e)),
    }
    let Some(parent) = own.dir.parent() else {
        return Err(AdapterError::io("an agent's config", std::io::Error::other("it has no parent directory")));
    };
    fs::create_dir_all(parent).map_err(io(format!("cannot make {}", parent.display())))?;
    let partial = parent.join(".config.partial");
    match fs::remove_dir_all(&partial).or_else(|_| fs::remove_file(&partial)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(AdapterError::io(format!("cannot remove {}", partial.display()), e));
        }
        _ => {}
    }
    DirBuilder::new().mode(0o700).create(&partial).map_err(io(format!("cannot make {}", partial.display())))?;
    let filled = fill(own, &partial, &trusted(cwd));
    if filled.is_err() {
        let _ = fs::remove_dir_all(&partial);
    }
    filled?;
    fs::rename(&partial, &own.dir).map_err(io(format!("cannot make {}", own.dir.display())))
}

/// Writes the files of `own` into `partial`, a new directory, with `trusted` trusted.
fn fill(own: &OwnConfig, partial: &Path, trusted: &[PathBuf]) -> Result<(), AdapterError> {
    let io = |what: String| move |e| AdapterError::io(what, e);
    for seed in own.seeds() {
        let to = partial.join(seed.name);
        let user = match &seed.from {
            Some(from) => read_users(from)?,
            None => None,
        };
        let made = match (seed.how, user) {
            (Seeding::Copy, Some(bytes)) => Some(bytes),
            (Seeding::Copy, None) => None,
            (how, user) => {
                let text = user.map(|b| String::from_utf8_lossy(&b).into_owned());
                let shown = seed.from.as_deref().map_or_else(|| seed.name.into(), |f| f.display().to_string());
                let made = how.make(text.as_deref(), trusted).map_err(|source| AdapterError::Seed {
                    name: seed.name,
                    from: shown,
                    source: Box::new(source),
                })?;
                made.map(String::into_bytes)
            }
        };
        if let Some(bytes) = made {
            // A seed may sit in a folder of the config (Gemini CLI's `.gemini/`).
            if let Some(folder) = to.parent().filter(|f| *f != partial) {
                DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(folder)
                    .map_err(io(format!("cannot make {}", folder.display())))?;
            }
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&to)
                .map_err(io(format!("cannot write {}", to.display())))?;
            file.write_all(&bytes).map_err(io(format!("cannot write {}", to.display())))?;
        }
    }
    Ok(())
}

/// The bytes of the user's file at `path`, none when it is not there; only a regular file is
/// read, at most `MOST` bytes.
fn read_users(path: &Path) -> Result<Option<Vec<u8>>, AdapterError> {
    let io = |e| AdapterError::io(format!("cannot read {}", path.display()), e);
    let file = match OpenOptions::new().read(true).custom_flags(nix::libc::O_NONBLOCK).open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    if !file.metadata().map_err(io)?.is_file() {
        return Err(io(std::io::Error::other("it is not a regular file")));
    }
    let mut bytes = Vec::new();
    file.take(MOST + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > MOST {
        return Err(io(std::io::Error::other(format!("it is larger than {MOST} bytes"))));
    }
    Ok(Some(bytes))
}

/// The folders an agent working in `cwd` has its program trust: `cwd`, and the main worktree of
/// its repository (Claude Code 2.1.3xx and Codex decide a worktree's trust through it); each
/// also as its real path when that differs.
pub fn trusted(cwd: &Path) -> Vec<PathBuf> {
    let mut found = vec![cwd.to_owned()];
    found.extend(main_worktree(cwd));
    let real: Vec<PathBuf> = found.iter().filter_map(|p| fs::canonicalize(p).ok()).collect();
    for path in real {
        if !found.contains(&path) {
            found.push(path);
        }
    }
    found
}

/// The main worktree of the repository `dir` is in (the first `git worktree list` names), when
/// it has one (a bare repository has none).
fn main_worktree(dir: &Path) -> Option<PathBuf> {
    let out = crate::git_in(dir).args(["worktree", "list", "--porcelain"]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut first = text.split("\n\n").next()?.lines();
    let path = first.next()?.strip_prefix("worktree ")?;
    (!first.any(|l| l == "bare")).then(|| PathBuf::from(path))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn claude(dir: &Path, user: &Path) -> OwnConfig {
        OwnConfig {
            dir: dir.join("config"),
            driver: bosun_core::driver::DriverKind::Claude,
            user: Some(user.to_owned()),
            user_state: Some(user.join(".claude.json")),
        }
    }

    /// Made once from the user's files, trusting the worktree and its main repository; never
    /// written again; and refused at a link, which is not followed.
    #[test]
    fn an_own_config_is_made_once_from_the_users_and_never_through_a_link() {
        let repo = bosun_testkit::repo::TempRepo::new();
        let place = tempfile::tempdir().unwrap();
        let ws = place.path().join("ws");
        repo.git(&["worktree", "add", "-q", "-b", "ws", ws.to_str().unwrap()]);
        let user = place.path().join("user");
        fs::create_dir(&user).unwrap();
        fs::write(user.join(".credentials.json"), "{\"token\": 1}").unwrap();
        fs::write(user.join("settings.json"), "{\"model\": \"opus\", \"hooks\": {}}").unwrap();
        fs::write(user.join(".claude.json"), "{\"customApiKeyResponses\": {\"approved\": [\"k\"]}}").unwrap();
        let agent = place.path().join("agent");
        let own = claude(&agent, &user);

        make(&own, &ws).unwrap();
        let read = |name: &str| fs::read_to_string(own.dir.join(name)).unwrap();
        assert_eq!(read(".credentials.json"), "{\"token\": 1}");
        let settings: serde_json::Value = serde_json::from_str(&read("settings.json")).unwrap();
        assert_eq!(settings, serde_json::json!({"model": "opus"}));
        let state: serde_json::Value = serde_json::from_str(&read(".claude.json")).unwrap();
        assert_eq!(state["customApiKeyResponses"]["approved"], serde_json::json!(["k"]));
        let projects = state["projects"].as_object().unwrap();
        let repo_path = repo.path().canonicalize().unwrap();
        for trusted in [ws.clone(), repo_path.clone()] {
            let key = trusted.display().to_string();
            assert_eq!(projects[&key]["hasTrustDialogAccepted"], true, "{key} in {projects:?}");
        }
        assert_eq!(fs::metadata(&own.dir).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(fs::metadata(own.dir.join(".credentials.json")).unwrap().permissions().mode() & 0o777, 0o600);

        // Never written again: what its program made of it stays.
        fs::write(own.dir.join("settings.json"), "its own").unwrap();
        fs::write(user.join("settings.json"), "{\"model\": \"sonnet\"}").unwrap();
        make(&own, &ws).unwrap();
        assert_eq!(read("settings.json"), "its own");

        // A link where it would be is refused and not followed.
        let elsewhere = place.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        let linked = place.path().join("linked");
        fs::create_dir(&linked).unwrap();
        std::os::unix::fs::symlink(&elsewhere, linked.join("config")).unwrap();
        let e = make(&claude(&linked, &user), &ws).unwrap_err();
        assert!(e.to_string().contains("something else is there"), "{e}");
        assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0, "nothing written through the link");
    }

    /// The user without any config: it is made all the same (onboarding done, the trust), and
    /// a FIFO in place of a user's file is refused without waiting on it.
    #[test]
    fn a_user_without_a_config_gets_one_and_a_fifo_is_not_read() {
        let place = tempfile::tempdir().unwrap();
        let (user, ws) = (place.path().join("none"), place.path().join("folder"));
        fs::create_dir(&ws).unwrap();
        let own = claude(&place.path().join("a"), &user);
        make(&own, &ws).unwrap();
        let state: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(own.dir.join(".claude.json")).unwrap()).unwrap();
        assert_eq!(state["hasCompletedOnboarding"], true);
        assert_eq!(state["projects"].as_object().unwrap().keys().collect::<Vec<_>>(), [&ws.display().to_string()]);
        assert!(!own.dir.join("settings.json").exists() && !own.dir.join(".credentials.json").exists());

        fs::create_dir(&user).unwrap();
        nix::unistd::mkfifo(&user.join(".credentials.json"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let other = claude(&place.path().join("b"), &user);
        let e = make(&other, &ws).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(!other.dir.exists(), "nothing left half made");
        assert!(!place.path().join("b/.config.partial").exists(), "nor its partial directory");
    }

    #[test]
    fn a_users_config_that_is_not_toml_is_a_clear_error() {
        let place = tempfile::tempdir().unwrap();
        let user = place.path().join("codex");
        fs::create_dir(&user).unwrap();
        fs::write(user.join("config.toml"), "model = ").unwrap();
        let own = OwnConfig {
            dir: place.path().join("a/config"),
            driver: bosun_core::driver::DriverKind::Codex,
            user: Some(user.clone()),
            user_state: None,
        };
        let e = make(&own, place.path()).unwrap_err().to_string();
        assert!(e.contains("config.toml") && e.contains("not TOML"), "{e}");
        assert!(!own.dir.exists());
    }
}
