//! Finding a client the self-test runs: the first `claude`, `codex`, … on `PATH` that is an
//! executable file, and the version its `--version` says (its first line, at most 200 bytes, read
//! within 20 s as the daemon's own readiness probe reads it), compared with the versions bosun was tested
//! with (`scripts/real-clients`, compiled in).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use bosun_adapters::readiness::version_line;
use bosun_core::client_version::{self, Version};

use super::ClientName;

/// What was found of a client.
#[derive(Clone, Debug)]
pub enum Found {
    /// On `PATH`, and its version read.
    Ready { path: PathBuf, version: Version, tested: Option<Version> },
    /// Not on `PATH`.
    Missing,
    /// On `PATH`, but what its `--version` printed (nothing, when it failed) is no version.
    Unreadable { path: PathBuf, said: Option<String> },
}

/// Finds `name` on `PATH` and reads its version.
pub fn find(name: ClientName) -> Found {
    let Some(path) = on_path(name.program()) else { return Found::Missing };
    let said = version_line(&path.display().to_string());
    match said.as_deref().and_then(client_version::parse) {
        Some(version) => Found::Ready { path, version, tested: client_version::tested(name.package()) },
        None => Found::Unreadable { path, said },
    }
}

/// The first executable file named `program` in a directory of `PATH` (relative entries are
/// passed over: the self-test never runs a program found from where it stands).
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|candidate| runnable(candidate))
}

fn runnable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
