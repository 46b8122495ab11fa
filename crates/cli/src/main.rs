//! The `bosun` binary: parses the command line, talks to the daemon (starting it when needed)
//! and prints for people, or JSON for scripts.

mod calls;
mod client;
mod cmd;
mod dash;
mod error;
mod input;
mod out;
mod render;
mod runbooks;
mod selftest;

use std::process::ExitCode;

use clap::Parser;

use crate::cmd::Cli;

fn main() -> ExitCode {
    bosun_adapters::private::keep_files_private();
    let cli = Cli::parse();
    let quiet = cli.command.quiet();
    // The daemon and a session host write to sockets whose readers may go: they ignore SIGPIPE.
    if !cli.command.writes_to_sockets() {
        quiet_on_closed_pipe();
    }
    match cmd::run(cli) {
        Ok(code) => code,
        Err(_) if quiet => ExitCode::SUCCESS,
        Err(e) => error::report(&e),
    }
}

/// A reader that stops reading (`bosun ls | head -1`) ends the command quietly, as it ends any
/// other command-line tool, rather than making a print fail: the default action of SIGPIPE,
/// which Rust's runtime ignores. The daemon, which writes to sockets, keeps ignoring it.
fn quiet_on_closed_pipe() {
    use nix::sys::signal::{signal, SigHandler, Signal};
    // SAFETY: setting a signal's disposition to its default installs no handler, and nothing
    // else in this process has touched SIGPIPE yet.
    let _ = unsafe { signal(Signal::SIGPIPE, SigHandler::SigDfl) };
}
