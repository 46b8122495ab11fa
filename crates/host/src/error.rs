//! `HostError`: what went wrong serving or reaching a session host.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("cannot start {command:?} in a pseudo-terminal: {reason}")]
    Spawn { command: Vec<String>, reason: String },
    /// Nothing answers at the endpoint (its socket, or its TCP address).
    #[error("no session host answers at {0}")]
    Gone(String),
    #[error("session host at {at}: {message}")]
    Refused { at: String, message: String },
    #[error("session host at {at}: {source}")]
    Frame {
        at: String,
        #[source]
        source: bosun_wire::FrameError,
    },
    /// A file that must be private (a token, an address) is not, or is not what it should be.
    #[error("refusing {}: {why}", .path.display())]
    Unsafe { path: PathBuf, why: String },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl HostError {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io { context: context.into(), source }
    }
}
