//! `HostEndpoint`: where a session host is reached: its Unix socket (on this machine), or a TCP
//! address and the token it asks for (in a container). Shown without its token.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use crate::{private_file, HostError, HostToken};

/// The largest address file read.
const ADDRESS_MOST: u64 = 256;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostEndpoint {
    Unix(PathBuf),
    Tcp { addr: SocketAddr, token: HostToken },
}

impl HostEndpoint {
    /// A TCP host's endpoint from the address file it wrote and the token file it was given.
    pub fn tcp_from_files(address_file: &Path, token_file: &Path) -> Result<Self, HostError> {
        let text = private_file::read(address_file, ADDRESS_MOST)?;
        let addr = std::str::from_utf8(&text).ok().and_then(|t| t.trim().parse().ok()).ok_or_else(|| {
            HostError::Unsafe { path: address_file.to_owned(), why: "it holds no address (ADDR:PORT)".into() }
        })?;
        Ok(Self::Tcp { addr, token: HostToken::read(token_file)? })
    }

    /// The Unix socket, for an endpoint that is one.
    pub fn socket(&self) -> Option<&Path> {
        match self {
            Self::Unix(path) => Some(path),
            Self::Tcp { .. } => None,
        }
    }
}

impl std::fmt::Display for HostEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unix(path) => write!(f, "{}", path.display()),
            Self::Tcp { addr, .. } => write!(f, "tcp:{addr}"),
        }
    }
}

impl From<PathBuf> for HostEndpoint {
    fn from(path: PathBuf) -> Self {
        Self::Unix(path)
    }
}

impl From<&Path> for HostEndpoint {
    fn from(path: &Path) -> Self {
        Self::Unix(path.to_owned())
    }
}
