//! `bosun agent start`: an agent in a new workspace and session, as its flags ask.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use bosun_core::driver::generic::Patterns;
use bosun_core::driver::DriverKind;
use bosun_core::Name;
use bosun_wire::{StartAgent, WorkspaceChoice};
use clap::Args;

use crate::client::Client;
use crate::cmd::place::{RuntimeArg, SessionArg, WorkspaceKindArg};
use crate::cmd::policy::PolicyArgs;
use crate::error::usage;
use crate::out::print_json;

/// Start COMMAND in a fresh workspace and tmux session; prints the agent id, workspace path
/// and branch
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  bosun agent start --name fix-login -- claude \"Fix the login bug\"")]
pub struct StartArgs {
    /// Repository to make the worktree from [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// Kind of workspace
    #[arg(long, value_enum, default_value_t = WorkspaceKindArg::Worktree)]
    pub workspace: WorkspaceKindArg,
    /// Branch to create for the worktree [default: ws-<nonce>]
    #[arg(long)]
    pub branch: Option<String>,
    /// Where the branch starts [default: HEAD]
    #[arg(long = "ref", value_name = "REF")]
    pub base_ref: Option<String>,
    /// Name of the agent and its workspace (letters, digits, '.', '_', '-') [default: the command's name]
    #[arg(long)]
    pub name: Option<String>,
    /// Extra environment for the agent (it also gets this shell's environment)
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    #[arg(long)]
    pub json: bool,
    /// How bosun reads the agent [default: from the command's name: claude, codex, else generic]
    #[arg(long, value_parser = driver_kind())]
    pub driver: Option<DriverKind>,
    /// The agent's first prompt (Claude and Codex get it on their command line; a generic agent
    /// has it typed)
    #[arg(long)]
    pub prompt: Option<String>,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Generic driver: a regular expression that means the agent waits for input
    #[arg(long, value_name = "REGEX")]
    pub prompt_pattern: Option<String>,
    /// Generic driver: a regular expression that means the agent is working
    #[arg(long, value_name = "REGEX")]
    pub working_pattern: Option<String>,
    /// Generic driver: a regular expression that means the agent hit an error
    #[arg(long, value_name = "REGEX")]
    pub error_pattern: Option<String>,
    /// --workspace pool: the task written to the workspace's TASK.md [default: the prompt]
    #[arg(long, value_name = "FILE")]
    pub task_file: Option<PathBuf>,
    /// --workspace pool: fail at once when every workspace of the pool is taken, instead of
    /// waiting in line for one
    #[arg(long)]
    pub no_wait: bool,
    /// What holds the agent's terminal: a tmux session on bosun's own server, or bosun's own
    /// session host (one `bosun host` process per agent, no tmux needed)
    #[arg(long, value_enum, default_value_t = SessionArg::Tmux)]
    pub session: SessionArg,
    /// Where the agent runs: on this machine as it is; in a bubblewrap sandbox where it may
    /// write only its workspace, its repository's git directory and its own config, with a
    /// private /tmp and no home directory but its own; in a Docker container (--image); or in
    /// a Kubernetes pod (--image, --namespace) whose init container clones the repository's
    /// `origin` and whose host pushes the agent's branch back there when it ends
    #[arg(long, value_enum, default_value_t = RuntimeArg::Local)]
    pub runtime: RuntimeArg,
    /// --runtime k8s: the namespace of the agent's pod
    #[arg(long, value_name = "NAME", default_value = "default")]
    pub namespace: String,
    /// --runtime k8s: a secret whose keys become the agent's environment (its credentials);
    /// repeat for more
    #[arg(long = "secret", value_name = "NAME")]
    pub secrets: Vec<String>,
    /// --runtime k8s: bosun's program in the image
    #[arg(long, value_name = "PATH", default_value = "bosun")]
    pub bosun_in_image: String,
    /// --runtime sandbox or docker: cut the agent off the network (loopback only)
    #[arg(long)]
    pub no_network: bool,
    /// --runtime docker or k8s: the image whose container runs the agent (in docker, bosun's
    /// own binary is bound into it and serves its session; its workspace and config are bound at
    /// their own paths; in a pod, it must hold bosun, git and the agent)
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// --runtime docker or k8s: CPU limit (say 2 or 1.5)
    #[arg(long, value_name = "N")]
    pub cpus: Option<String>,
    /// --runtime docker or k8s: memory limit (say 512m or 2g)
    #[arg(long, value_name = "SIZE")]
    pub memory: Option<String>,
    /// --runtime k8s: a claim of SIZE (say 10g) for the agent's workspace and config, so that
    /// its uncommitted work and conversation outlive its pod (an `on_dead` resume goes on
    /// there); it is deleted when the workspace is removed
    #[arg(long, value_name = "SIZE")]
    pub storage: Option<String>,
    /// The agent's command and its arguments
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `--driver NAME`, one of the drivers' names.
fn driver_kind() -> impl clap::builder::TypedValueParser<Value = DriverKind> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(DriverKind::ALL.map(DriverKind::name)).try_map(|s| s.parse::<DriverKind>())
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
    let repo = match &args.repo {
        Some(r) => {
            Some(std::fs::canonicalize(r).map_err(|_| usage(format!("--repo {}: no such directory", r.display())))?)
        }
        None => None,
    };
    if (args.task_file.is_some() || args.no_wait) && !matches!(args.workspace, WorkspaceKindArg::Pool) {
        return Err(usage("--task-file and --no-wait only apply to --workspace pool"));
    }
    let task = args.task_file.as_deref().map(crate::input::read_task).transpose()?;
    let workspace = match args.workspace {
        WorkspaceKindArg::Pool => {
            if args.base_ref.is_some() {
                return Err(usage(
                    "--ref does not apply to --workspace pool: its workspaces start from the pool's base",
                ));
            }
            WorkspaceChoice::Pool
        }
        WorkspaceKindArg::Worktree => WorkspaceChoice::Worktree,
        WorkspaceKindArg::Volume if !matches!(args.runtime, RuntimeArg::Docker) => {
            return Err(usage("--workspace volume needs --runtime docker: only a container can mount a volume"));
        }
        WorkspaceKindArg::Volume => WorkspaceChoice::Volume,
        WorkspaceKindArg::Folder => {
            if args.branch.is_some() || args.base_ref.is_some() {
                return Err(usage("--branch and --ref only apply to --workspace worktree"));
            }
            WorkspaceChoice::Folder
        }
    };
    let runtime = runtime(&args)?;
    let s = client.start_agent(Box::new(StartAgent {
        repo,
        cwd: std::env::current_dir().context("cannot read the current directory")?,
        workspace,
        branch: args.branch,
        base_ref: args.base_ref,
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
    }))?;
    print_started(&s, args.json)
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

/// Where `agent start` runs the agent, from `--runtime` and the options that go with it.
fn runtime(args: &StartArgs) -> Result<bosun_core::Runtime> {
    use bosun_core::{Container, Runtime};
    let docker_only = args.image.is_some() || args.cpus.is_some() || args.memory.is_some();
    let k8s_only = !args.secrets.is_empty()
        || args.namespace != "default"
        || args.bosun_in_image != "bosun"
        || args.storage.is_some();
    if k8s_only && !matches!(args.runtime, RuntimeArg::K8s) {
        return Err(usage("--namespace, --secret, --storage and --bosun-in-image apply to --runtime k8s"));
    }
    match args.runtime {
        RuntimeArg::Local if args.no_network => Err(usage("--no-network applies to --runtime sandbox or docker")),
        RuntimeArg::Local | RuntimeArg::Sandbox if docker_only => {
            Err(usage("--image, --cpus and --memory apply to --runtime docker or k8s"))
        }
        RuntimeArg::Local => Ok(Runtime::Local),
        RuntimeArg::Sandbox => Ok(Runtime::Sandbox { network: !args.no_network }),
        RuntimeArg::Docker => {
            let image = args.image.clone().ok_or_else(|| usage("--runtime docker needs --image IMAGE"))?;
            let cpus_milli = args.cpus.as_deref().map(Container::cpus).transpose().map_err(usage)?;
            let memory_bytes = args.memory.as_deref().map(Container::memory).transpose().map_err(usage)?;
            Ok(Runtime::Docker(Container { image, cpus_milli, memory_bytes, network: !args.no_network, volume: None }))
        }
        RuntimeArg::K8s => {
            if args.no_network {
                return Err(usage("--no-network does not apply to --runtime k8s: a pod's network is its cluster's"));
            }
            let image = args.image.clone().ok_or_else(|| usage("--runtime k8s needs --image IMAGE"))?;
            let cpus_milli = args.cpus.as_deref().map(Container::cpus).transpose().map_err(usage)?;
            let memory_bytes = args.memory.as_deref().map(Container::memory).transpose().map_err(usage)?;
            let storage = args.storage.as_deref().map(Container::memory).transpose();
            let storage_bytes = storage.map_err(|e| usage(format!("--storage: {e}")))?;
            for name in std::iter::once(&args.namespace).chain(&args.secrets) {
                if !bosun_core::Pod::is_dns_label(name) {
                    return Err(usage(format!(
                        "{name:?} is not a Kubernetes name (lowercase letters, digits and '-', at most 63)"
                    )));
                }
            }
            Ok(Runtime::K8s(bosun_core::Pod {
                cpus_milli,
                memory_bytes,
                storage_bytes,
                secrets: args.secrets.clone(),
                bosun: args.bosun_in_image.clone(),
                ..bosun_core::Pod::new(args.namespace.clone(), image)
            }))
        }
    }
}
