//! `bosun agent start`: an agent in a new workspace and session, as its flags ask.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use bosun_core::driver::generic::Patterns;
use bosun_core::driver::DriverKind;
use bosun_core::Name;
use bosun_wire::StartAgent;
use clap::Args;

use crate::client::Client;
use crate::cmd::place::{RuntimeArgs, SessionArg, WorkspaceArgs};
use crate::cmd::policy::PolicyArgs;
use crate::error::usage;
use crate::out::print_json;

/// Start COMMAND in a fresh workspace and tmux session; prints the agent id, workspace path
/// and branch
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  bosun agent start --name fix-login -- claude \"Fix the login bug\"")]
pub struct StartArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
    /// Name of the agent and its workspace (letters, digits, '.', '_', '-') [default: the command's name]
    #[arg(long)]
    name: Option<String>,
    /// Extra environment for the agent (it also gets this shell's environment)
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    #[arg(long)]
    json: bool,
    /// How bosun reads the agent [default: from the command's name: claude, codex, gemini, pi, opencode, else generic]
    #[arg(long, value_parser = driver_kind())]
    driver: Option<DriverKind>,
    /// The agent's first prompt (Claude and Codex get it on their command line; a generic agent
    /// has it typed)
    #[arg(long)]
    prompt: Option<String>,
    #[command(flatten)]
    policy: PolicyArgs,
    /// Generic driver: a regular expression that means the agent waits for input
    #[arg(long, value_name = "REGEX")]
    prompt_pattern: Option<String>,
    /// Generic driver: a regular expression that means the agent is working
    #[arg(long, value_name = "REGEX")]
    working_pattern: Option<String>,
    /// Generic driver: a regular expression that means the agent hit an error
    #[arg(long, value_name = "REGEX")]
    error_pattern: Option<String>,
    /// --workspace pool: the task written to the workspace's TASK.md [default: the prompt]
    #[arg(long, value_name = "FILE")]
    task_file: Option<PathBuf>,
    /// --workspace pool: fail at once when every workspace of the pool is taken, instead of
    /// waiting in line for one
    #[arg(long)]
    no_wait: bool,
    /// Return once the agent's program runs (`bosun wait ID`), not as soon as its start is
    /// recorded; exit 1 when it dies first
    #[arg(long)]
    wait: bool,
    /// What holds the agent's terminal: a tmux session on bosun's own server, or bosun's own
    /// session host (one `bosun host` process per agent, no tmux needed)
    #[arg(long, value_enum, default_value_t = SessionArg::Tmux)]
    session: SessionArg,
    #[command(flatten)]
    runtime: RuntimeArgs,
    /// The account it signs in with: one named in bosun's config (`[accounts.NAME]` in
    /// `config.toml`), whose config directory its client is given
    #[arg(long, value_name = "NAME")]
    account: Option<String>,
    /// The agent's command and its arguments
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// `--driver NAME`, one of the drivers' names.
fn driver_kind() -> impl clap::builder::TypedValueParser<Value = DriverKind> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(DriverKind::ALL.iter().map(|k| k.name()))
        .try_map(|s| s.parse::<DriverKind>())
}

/// The most of a value `--env` takes.
const ENV_VALUE_MAX: usize = 64 * 1024;

pub fn run(client: &Client, args: StartArgs) -> Result<ExitCode> {
    if let Some(name) = &args.name {
        Name::parse(name).map_err(|e| crate::error::usage(e.to_string()))?;
    }
    let mut env = BTreeMap::new();
    for kv in &args.env {
        let shown: String = kv.chars().take(60).collect();
        let (k, v) = kv.split_once('=').ok_or_else(|| usage(format!("--env {shown:?} is not KEY=VALUE")))?;
        let name_ok = k.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !name_ok {
            return Err(usage(format!(
                "--env {shown:?}: {k:.60?} is not a variable name (letters, digits and _, not starting with a digit)"
            )));
        }
        if v.len() > ENV_VALUE_MAX {
            return Err(usage(format!("--env {k}: its value is {} bytes; the most is {ENV_VALUE_MAX}", v.len())));
        }
        env.insert(k.to_owned(), v.to_owned());
    }
    let repo = args.workspace.repo()?;
    let ask = bosun_core::StartAsk {
        workspace: args.workspace.kind,
        branch: args.workspace.branch.as_deref(),
        base_ref: args.workspace.base_ref.as_deref(),
        pool_options: args.task_file.is_some() || args.no_wait,
        runtime: args.runtime.runtime,
    };
    ask.check().map_err(|refused| usage(refused.to_string()))?;
    let task = args.task_file.as_deref().map(crate::input::read_task).transpose()?;
    let runtime = args.runtime.runtime()?;
    let s = client.start_agent(Box::new(StartAgent {
        repo,
        cwd: std::env::current_dir().context("cannot read the current directory")?,
        workspace: args.workspace.kind,
        branch: args.workspace.branch,
        base_ref: args.workspace.base_ref,
        name: args.name,
        env,
        // A variable that is not UTF-8 cannot cross the socket; it is left out.
        inherit: std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect(),
        driver: args.driver,
        prompt: args.prompt,
        policy: crate::cmd::policy::policy(&args.policy).map_err(|e| usage(format!("{e:#}")))?,
        patterns: Patterns { prompt: args.prompt_pattern, working: args.working_pattern, error: args.error_pattern },
        command: args.command,
        task,
        no_wait: args.no_wait,
        session: args.session.into(),
        runtime,
        account: args.account,
    }))?;
    let printed = print_started(&s, args.json)?;
    if !args.wait {
        return Ok(printed);
    }
    match super::wait::wait(client, s.agent.as_str(), bosun_core::WaitFor::Up, None)? {
        (bosun_core::Reached::Yes, _) => Ok(printed),
        (_, d) => {
            eprintln!("bosun: {} did not come up: it is {}", s.agent, d.agent.state.label());
            Ok(ExitCode::FAILURE)
        }
    }
}

/// What `agent start` and `fork` print of the agent started.
pub fn print_started(s: &bosun_wire::Started, json: bool) -> Result<ExitCode> {
    for w in &s.warnings {
        eprintln!("warning: {w}");
    }
    if json {
        print_json(s)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("agent      {}", s.agent);
    if s.waiting {
        println!("workspace  waiting for a pool workspace (see `bosun pool ls`)");
    } else {
        println!("workspace  {}", s.path.display());
    }
    if let Some(b) = &s.branch {
        println!("branch     {b}");
    }
    Ok(ExitCode::SUCCESS)
}
