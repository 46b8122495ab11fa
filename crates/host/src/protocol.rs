//! What is asked of a session host and what it answers, as length-prefixed JSON frames (the
//! daemon's framing). One request and one answer per connection, except `Attach`, after whose
//! answer the connection carries the terminal's raw bytes both ways; `Reports`, after which
//! the host sends the agent's hook reports and the client answers each; and the git bundles
//! of a host that saves by bundle, whose raw bytes follow a `Seed` request or a `Bundle` answer.

use bosun_core::{ExitStatus, TermKey};
use serde::{Deserialize, Serialize};

/// The byte that ends an attach from the terminal's side (Ctrl+]), as telnet's escape does.
pub const DETACH_KEY: u8 = 0x1d;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HostRequest {
    Status,
    /// The visible screen, with colour escapes when `colors`, and up to `scrollback` lines of
    /// what scrolled off above it.
    Screen {
        colors: bool,
        #[serde(default)]
        scrollback: u32,
    },
    /// Keys typed at once.
    Press {
        keys: Vec<TermKey>,
    },
    /// Sizes the terminal; answered with its size before.
    Resize {
        cols: u16,
        rows: u16,
    },
    /// Ends the program (its process group) and the host.
    Kill,
    /// The connection becomes the terminal: the screen as it is, then every byte the program
    /// writes; every byte sent is typed, until the client goes.
    Attach,
    /// Pushes the workspace's branch to its remote (a host started with somewhere to save to).
    Save,
    /// The connection follows the agent's hook reports (a host that relays them): answered
    /// `Ok`, then each report comes as `HostResponse::Report`, to be answered `Answered`, with
    /// an `Ok` as a beat while there are none.
    Reports,
    /// What the daemon said to a report: what the hook prints, if anything.
    Answered {
        stdout: Option<String>,
    },
    /// The workspace's branch as a git bundle of `len` bytes, which follow on the connection
    /// (a host that saves by bundle takes it before its program starts): answered `Ok` once
    /// the branch is checked out.
    Seed {
        len: u64,
    },
    /// The workspace's branch as a git bundle, once the program ended (a host that saves by
    /// bundle): without the commits reachable from `have` (those the daemon has). Answered
    /// `HostResponse::Bundle`, whose bytes follow; the client then says `Fetched`.
    Bundle {
        have: Vec<String>,
    },
    /// What the client made of the bundle: whether the work is safe with it now (`fetched`),
    /// and what git said. The host then ends, as it does after a push.
    Fetched {
        fetched: bool,
        said: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HostResponse {
    Ok,
    Status(HostStatus),
    Screen {
        text: String,
    },
    Resized {
        before: (u16, u16),
    },
    /// What a `Save` did: whether the branch was pushed, whether the workspace holds work not
    /// committed (which no push carries), and what git said.
    Saved {
        pushed: bool,
        dirty: bool,
        said: String,
    },
    Error {
        message: String,
    },
    /// A hook report of the agent's, to a client following them.
    Report {
        hook: bosun_wire::HookEvent,
    },
    /// To a client following the reports of a host that saves by bundle: the program ended,
    /// and its branch waits to be fetched (`HostRequest::Bundle`).
    Exited {
        exit: ExitStatus,
    },
    /// The answer of a host that waits for its `Seed` to anything else: no program runs yet.
    Seeding,
    /// The answer to `Bundle`: `len` bytes of bundle follow (none: the client has every commit
    /// of the branch already); `tip` is the branch's commit, `dirty` whether the workspace
    /// holds work not committed, which no bundle carries.
    Bundle {
        len: u64,
        tip: String,
        dirty: bool,
    },
}

/// Who the host runs and whether it has ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostStatus {
    pub session: String,
    /// The program's pid (its process group's too).
    pub pid: Option<u32>,
    /// Set once the program has exited; the host stays, with its last screen, until killed.
    pub exit: Option<ExitStatus>,
    pub cols: u16,
    pub rows: u16,
}

/// The first frame on a TCP connection: the host's token. Anything else first, or a wrong
/// token, and the host closes the connection having served nothing; a right one is answered
/// `Ok`, and the connection goes on as a Unix socket's would. No `Debug`: it holds the token.
#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum HostHello {
    Hello { token: String },
}
