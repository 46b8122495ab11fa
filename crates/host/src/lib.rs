//! `bosun host`: a session host of bosun's own, one process per agent. It owns the agent's
//! pseudo-terminal, keeps its screen (a vt100 emulator) with a scrollback, copies its output to
//! the agent's `output.log`, and serves screen, keys, resize, attach, status and kill over a
//! Unix socket of mode 0600. It outlives the daemon, which finds it again by its socket, and
//! tells the daemon at once when the agent exits.

mod client;
mod error;
pub mod output_log;
mod protocol;
mod screen;
mod serve;

pub use client::{attach, HostClient};
pub use error::HostError;
pub use protocol::{HostRequest, HostResponse, HostStatus, DETACH_KEY};
pub use screen::Screen;
pub use serve::{serve, HostOptions};
