//! bosun's IPC protocol between the CLI and the daemon: typed requests and responses, their
//! framing (a 4-byte big-endian length, then JSON), and the state directory layout both sides
//! agree on.

mod frame;
mod hook;
mod paths;
mod request;
mod response;

pub use frame::{decode, encode, read_frame, read_frame_within, write_frame, FrameError, MAX_FRAME};
pub use hook::{HookEvent, NOTIFY};
pub use paths::{StateDir, StateDirError};
pub use request::{Envelope, EventsQuery, MergeAsk, PoolAsk, PrAsk, Request, RunCommand, StartAgent};
pub use response::{
    AgentDetail, AgentSummary, DaemonStatus, ErrorKind, Finding, Fixed, Listing, Pools, Pruned, Removed, Response,
    Started, WireError,
};

/// The version both sides must share; a CLI and a daemon that differ refuse to talk.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
