//! `HostError`: what went wrong serving or reaching a session host.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("cannot start {command:?} in a pseudo-terminal: {reason}")]
    Spawn { command: Vec<String>, reason: String },
    #[error("no session host answers at {}", .0.display())]
    Gone(PathBuf),
    #[error("session host at {}: {message}", .socket.display())]
    Refused { socket: PathBuf, message: String },
    #[error("session host at {}: {source}", .socket.display())]
    Frame {
        socket: PathBuf,
        #[source]
        source: bosun_wire::FrameError,
    },
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
