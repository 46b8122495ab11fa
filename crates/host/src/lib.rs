//! `bosun host`: a session host of bosun's own, one process per agent. It owns the agent's
//! pseudo-terminal, keeps its screen (a vt100 emulator) with a scrollback, copies its output to
//! the agent's `output.log`, and serves screen, keys, resize, attach, status and kill over a
//! Unix socket of mode 0600 or, in a container, on TCP to whoever presents its token. It
//! outlives the daemon, which finds it again by its socket or address file, and tells the
//! daemon at once when the agent exits. Where no daemon's socket can be reached (a pod), it
//! relays its agent's hook reports to the daemon that follows it.

mod bundle;
mod client;
mod conn;
mod endpoint;
mod error;
mod files;
mod listen;
pub mod output_log;
mod private_file;
mod protocol;
mod relay;
mod save;
mod screen;
mod serve;
mod token;

pub use bundle::BUNDLE_MOST;
pub use client::{attach, GivenBundle, Heard, HostClient, Reports};
pub use conn::HostConn;
pub use endpoint::HostEndpoint;
pub use error::HostError;
pub use listen::{Listen, TokenFrom};
pub use protocol::{HostRequest, HostResponse, HostStatus, DETACH_KEY};
pub use relay::Relay;
pub use save::{Ended, SaveTo};
pub use screen::Screen;
pub use serve::{serve, HostOptions};
pub use token::HostToken;
