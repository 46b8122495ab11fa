//! The command line, as clap parses it, and where each command goes. One file per command
//! holds its arguments and its `run` (`agent/start.rs`, `pool/acquire.rs`, …); a folder per
//! command group routes its subcommands the same way. Argument groups that several commands
//! share live once each: `flags.rs` (`--json`, `--colors`), `policy.rs` (the recovery policy),
//! `place.rs` (the workspace, session and runtime an agent asks for).

pub mod agent;
pub mod completions;
pub mod cron;
pub mod daemon;
pub mod dash;
pub mod doctor;
pub mod escalation;
pub mod events;
pub mod flags;
pub mod hook;
pub mod host;
pub mod job;
pub mod ls;
pub mod man;
pub mod place;
pub mod plan;
pub mod policy;
pub mod pool;
pub mod queue;
pub mod replay;
pub mod runbook;
pub mod usage;
pub mod work;
pub mod worker;
pub mod workspace;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{CommandFactory, Parser, Subcommand};

use crate::client::Client;

/// bosun runs AI coding agents unattended and in parallel: each in its own git worktree and tmux
/// session, watched by a daemon that remembers everything across its own crashes.
#[derive(Debug, Parser)]
#[command(name = "bosun", version, propagate_version = true, after_help = crate::error::EXIT_CODES)]
pub struct Cli {
    /// State directory (database, sockets, workspaces) [default: $BOSUN_STATE_DIR, else
    /// $XDG_STATE_HOME/bosun, else ~/.local/state/bosun]
    #[arg(long, global = true, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

/// Every command, in the order `bosun --help` lists them; each one's words are in its file.
#[derive(Debug, Subcommand)]
pub enum Command {
    #[command(subcommand)]
    Agent(agent::AgentCommand),
    Ls(ls::LsArgs),
    Show(agent::show::ShowArgs),
    Usage(usage::UsageArgs),
    Diff(work::diff::DiffArgs),
    Merge(work::merge::MergeArgs),
    Fork(agent::fork::ForkArgs),
    Pr(work::pr::PrArgs),
    Peek(agent::peek::PeekArgs),
    Attach(agent::attach::AttachArgs),
    Send(agent::send::SendArgs),
    Kill(agent::kill::KillArgs),
    Resume(agent::resume::ResumeArgs),
    Escalations(escalation::list::EscalationsArgs),
    Resolve(escalation::resolve::ResolveArgs),
    Answer(agent::answer::AnswerArgs),
    Wait(agent::wait::WaitArgs),
    #[command(subcommand)]
    Workspace(workspace::WorkspaceCommand),
    Replay(replay::ReplayArgs),
    Completions(completions::CompletionsArgs),
    Man(man::ManArgs),
    Doctor(doctor::DoctorArgs),
    #[command(subcommand)]
    Runbook(runbook::RunbookCommand),
    Run(job::run::RunArgs),
    #[command(subcommand)]
    Job(job::JobCommand),
    Dash(dash::DashArgs),
    Events(events::EventsArgs),
    #[command(subcommand)]
    Pool(pool::PoolCommand),
    #[command(subcommand)]
    Queue(queue::QueueCommand),
    #[command(subcommand)]
    Worker(worker::WorkerCommand),
    #[command(subcommand)]
    Plan(plan::PlanCommand),
    #[command(subcommand)]
    Cron(cron::CronCommand),
    #[command(subcommand)]
    Daemon(daemon::DaemonCommand),
    #[command(subcommand)]
    Host(Box<host::HostCommand>),
    #[command(hide = true, subcommand)]
    Hook(hook::HookCommand),
}

impl Command {
    /// Whether a failure ends it silently and with success (a hook must never stop its agent).
    pub fn quiet(&self) -> bool {
        matches!(self, Command::Hook(_))
    }

    /// Whether it writes to sockets whose readers may go (the daemon, a session host, a hook),
    /// and so ignores SIGPIPE.
    pub fn writes_to_sockets(&self) -> bool {
        match self {
            Command::Daemon(daemon::DaemonCommand::Run(_)) | Command::Hook(_) => true,
            Command::Host(host) => matches!(**host, host::HostCommand::Serve(_)),
            _ => false,
        }
    }
}

/// Runs the command. Those that need no state directory (completions, the man page, a session
/// host) run before it is resolved; every other one talks to the daemon through `client`.
pub fn run(cli: Cli) -> Result<ExitCode> {
    let state_dir = cli.state_dir;
    let client = move || -> Result<Client> { Ok(Client::new(bosun_wire::StateDir::resolve(state_dir)?)) };
    match cli.command {
        Command::Completions(args) => completions::run(args, Cli::command()),
        Command::Man(args) => man::run(args, Cli::command()),
        Command::Host(cmd) => host::run(*cmd),
        Command::Agent(cmd) => agent::run(&client()?, cmd),
        Command::Ls(args) => ls::run(&client()?, args),
        Command::Show(args) => agent::show::run(&client()?, args),
        Command::Usage(args) => usage::run(&client()?, args),
        Command::Diff(args) => work::diff::run(&client()?, args),
        Command::Merge(args) => work::merge::run(&client()?, args),
        Command::Fork(args) => agent::fork::run(&client()?, args),
        Command::Pr(args) => work::pr::run(&client()?, args),
        Command::Peek(args) => agent::peek::run(&client()?, args),
        Command::Attach(args) => agent::attach::run(&client()?, args),
        Command::Send(args) => agent::send::run(&client()?, args),
        Command::Kill(args) => agent::kill::run(&client()?, args),
        Command::Resume(args) => agent::resume::run(&client()?, args),
        Command::Escalations(args) => escalation::list::run(&client()?, args),
        Command::Resolve(args) => escalation::resolve::run(&client()?, args),
        Command::Answer(args) => agent::answer::run(&client()?, args),
        Command::Wait(args) => agent::wait::run(&client()?, args),
        Command::Workspace(cmd) => workspace::run(&client()?, cmd),
        Command::Replay(args) => replay::run(&client()?, args),
        Command::Doctor(args) => doctor::run(client, args),
        // It reads no state, yet a state directory that cannot be resolved fails it as before.
        Command::Runbook(cmd) => client().and_then(|_| runbook::run(cmd)),
        Command::Run(args) => job::run::run(&client()?, args),
        Command::Job(cmd) => job::run(&client()?, cmd),
        Command::Dash(args) => dash::run(&client()?, args),
        Command::Events(args) => events::run(&client()?, args),
        Command::Pool(cmd) => pool::run(&client()?, cmd),
        Command::Queue(cmd) => queue::run(&client()?, cmd),
        Command::Worker(cmd) => worker::run(&client()?, cmd),
        Command::Plan(cmd) => plan::run(&client()?, cmd),
        Command::Cron(cmd) => cron::run(&client()?, cmd),
        Command::Daemon(cmd) => daemon::run(&client()?, cmd),
        Command::Hook(cmd) => hook::run(&client()?, cmd),
    }
}
