//! The `bosun` binary: parses the command line, talks to the daemon (starting it when needed)
//! and prints for people, or JSON for scripts.

mod args;
mod calls;
mod client;
mod commands;
mod cron_cmd;
mod daemon_cmd;
mod dash;
mod docs;
mod doctor_cmd;
mod error;
mod events_cmd;
mod host_cmd;
mod job_cmd;
mod plan_cmd;
mod policy_args;
mod pool_cmd;
mod queue_cmd;
mod render;
mod replay_cmd;
mod runbook_cmd;
mod selftest;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

fn main() -> ExitCode {
    bosun_adapters::private::keep_files_private();
    let cli = Cli::parse();
    let quiet = matches!(cli.command, Command::Hook(_));
    // The daemon and a session host write to sockets whose readers may go: they ignore SIGPIPE.
    let writes_to_sockets = match &cli.command {
        Command::Daemon(args::DaemonCommand::Run { .. }) | Command::Hook(_) => true,
        Command::Host(host) => matches!(**host, args::HostCommand::Serve { .. }),
        _ => false,
    };
    if !writes_to_sockets {
        quiet_on_closed_pipe();
    }
    match run(cli) {
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

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Completions { shell } => return docs::completions(shell),
        Command::Man => return docs::man(),
        Command::Host(cmd) => return host_cmd::run(*cmd),
        Command::Doctor { clients: Some(clients), json, .. } => return selftest::run(clients, json),
        _ => {}
    }
    let dirs = bosun_wire::StateDir::resolve(cli.state_dir)?;
    let client = client::Client::new(dirs);
    match cli.command {
        Command::Daemon(cmd) => daemon_cmd::run(&client, cmd),
        Command::Hook(hook) => commands::hook(&client, hook),
        Command::Runbook(cmd) => runbook_cmd::run(cmd),
        Command::Run { command, args, json } => job_cmd::run(&client, command, args, json),
        Command::Job(cmd) => job_cmd::job(&client, cmd),
        Command::Queue(cmd) => queue_cmd::queue(&client, cmd),
        Command::Pool(cmd) => pool_cmd::pool(&client, cmd),
        Command::Dash => dash::run(&client),
        Command::Events { follow, agent, job, from, json } => events_cmd::run(&client, follow, agent, job, from, json),
        Command::Worker(cmd) => queue_cmd::worker(&client, cmd),
        Command::Cron(cmd) => cron_cmd::cron(&client, cmd),
        Command::Plan(cmd) => plan_cmd::plan(&client, cmd),
        Command::Doctor { fix, json, .. } => doctor_cmd::run(&client, fix, json),
        Command::Replay { job, events, json } => replay_cmd::run(&client, job, events, json),
        other => commands::run(&client, other).map(|()| ExitCode::SUCCESS),
    }
}
