//! The command line, as clap parses it.

use std::path::PathBuf;

use bosun_core::driver::dialog::DialogAnswer;
use bosun_core::driver::DriverKind;
use clap::{Args, Parser, Subcommand, ValueEnum};

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

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start agents
    #[command(subcommand)]
    Agent(AgentCommand),
    /// List agents and workspaces with their state and age
    Ls(JsonFlag),
    /// Show everything bosun knows about an agent
    Show {
        /// Agent id (any unique prefix) or name
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// What an agent or job changed against the commit its workspace started at: committed,
    /// not committed and untracked files alike (coloured on a terminal)
    Diff {
        /// Agent id (any unique prefix) or name, or job id
        id: String,
        /// Only the files, each with its change (A/M/D/R/T) and lines added and removed
        #[arg(long)]
        stat: bool,
        /// Colour the patch [default: auto, on when stdout is a terminal]
        #[arg(long, value_enum, default_value_t = Colors::Auto)]
        colors: Colors,
        /// Print the files (and the patch, unless --stat) as JSON
        #[arg(long)]
        json: bool,
    },
    /// Merge an agent's or job's branch into the branch its workspace started from (or --into),
    /// without touching your checked-out files unless that branch is checked out (then it must
    /// be clean); then end its agent and remove its workspace (a pool's is released), deleting
    /// its branch only when all of it is merged
    #[command(group(clap::ArgGroup::new("how").args(["squash", "rebase"])))]
    Merge {
        /// Agent id (any unique prefix) or name, or job id
        id: String,
        /// The branch to merge into [default: the branch its workspace started from, else the
        /// current branch]
        #[arg(long, value_name = "BRANCH")]
        into: Option<String>,
        /// One commit with all its changes (its branch is kept: it is not merged)
        #[arg(long)]
        squash: bool,
        /// Its commits replayed on the target, which then moves to them
        #[arg(long)]
        rebase: bool,
        /// The message of a merge or squash commit
        #[arg(long, short, value_name = "TEXT")]
        message: Option<String>,
        /// Commit what its workspace holds not committed first (the agent's last words as the body)
        #[arg(long)]
        commit: bool,
        /// Merge although its agent is working
        #[arg(long)]
        force: bool,
        /// On a conflict, ask its agent to merge the target into its branch and resolve it, wait
        /// until it is idle again, then try once more
        #[arg(long)]
        resolve_with_agent: bool,
        /// How long to wait for the agent to resolve the conflicts, in seconds
        #[arg(long, default_value_t = 1800, value_name = "SECS", requires = "resolve_with_agent")]
        wait: u64,
        #[arg(long)]
        json: bool,
    },
    /// A new agent in a new worktree that starts where this one is (its commits, and what it has
    /// not committed in one more commit), its conversation forked, so the work can be tried two
    /// ways; the agent forked is left as it is
    Fork {
        /// Agent id (any unique prefix) or name
        id: String,
        /// The fork's name [default: NAME-fork]
        #[arg(long)]
        name: Option<String>,
        /// What the fork is told first
        #[arg(long)]
        prompt: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Push an agent's or job's branch to `origin` and open a pull request for it with GitHub's
    /// `gh` (installed and logged in), into the branch its workspace started from (or --into);
    /// its URL is recorded and shown by `bosun show`
    Pr {
        /// Agent id (any unique prefix) or name, or job id
        id: String,
        #[arg(long, value_name = "BRANCH")]
        into: Option<String>,
        /// Its title [default: "Work of BRANCH"]; its body is the agent's last words
        #[arg(long, value_name = "TEXT")]
        title: Option<String>,
        /// Open it as a draft
        #[arg(long)]
        draft: bool,
        #[arg(long)]
        json: bool,
    },
    /// Print an agent's screen
    Peek {
        /// Agent id (any unique prefix) or name
        id: String,
        /// Keep the screen's colours [default: auto, on when stdout is a terminal]
        #[arg(long, value_enum, default_value_t = Colors::Auto)]
        colors: Colors,
        /// Lines of what scrolled off above the screen to print first (tmux keeps 10000, bosun's
        /// own host 2000)
        #[arg(long, value_name = "LINES", default_value_t = 0)]
        scrollback: u32,
    },
    /// Attach this terminal to an agent's session (detach with Ctrl-b d in tmux, Ctrl+] in
    /// bosun's own session host)
    Attach {
        /// Agent id (any unique prefix) or name
        id: String,
    },
    /// Type a message into an agent's session and press Enter
    ///
    /// The message is typed when the agent waits for input: while it works, or while it shows a
    /// dialog (a permission, the folder-trust dialog), it waits its turn, never typed into the
    /// dialog, whose Enter would pick an option. A message holds text: control characters
    /// (Ctrl-C, Escape, a carriage return) are refused unless --raw; at most 12 KiB.
    Send {
        /// Agent id (any unique prefix) or name
        id: String,
        /// The text to send (several words are joined by spaces)
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
        /// Type control characters as they are, as keys (Ctrl-C as \x03 ends most programs)
        #[arg(long)]
        raw: bool,
        /// Type it now or fail (exit 1): never wait behind a turn or a dialog
        #[arg(long)]
        now: bool,
        #[arg(long)]
        json: bool,
    },
    /// Stop an agent (its workspace stays)
    Kill {
        /// Agent id (any unique prefix) or name
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// List what needs a person (open escalations; --all for resolved ones too)
    Escalations {
        #[arg(long)]
        all: bool,
        #[arg(long)]
        json: bool,
    },
    /// Resolve an escalation; --message types a message into its agent when it waits for input
    Resolve {
        /// Escalation id (e3, or 3)
        id: String,
        #[arg(long)]
        message: Option<String>,
        /// Also answer the dialog its agent waits at: allow, deny or an option's number (see
        /// `bosun answer`)
        #[arg(long, value_name = "ANSWER")]
        answer: Option<DialogAnswer>,
    },
    /// Answer the dialog an agent waits at (permission, plan, question, setup)
    ///
    /// `allow` picks its first option that starts with "Yes", `deny` the first that starts with
    /// "No", a number that option. The options are read from the agent's screen; with
    /// --message, the text is typed once the agent waits for input again (after a deny, it is
    /// what the agent should do instead).
    Answer {
        /// Agent id (any unique prefix) or name
        id: String,
        /// allow, deny, or the number of an option (1-9)
        answer: DialogAnswer,
        #[arg(long)]
        message: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Manage workspaces
    #[command(subcommand)]
    Workspace(WorkspaceCommand),
    /// Re-run detection and classification over a job's recorded events with this build's rules,
    /// and print each decision that comes out differently (original beside replayed). Exits 1
    /// when any differs, 0 when all agree.
    Replay {
        /// Job id (any unique prefix); or give --events
        #[arg(required_unless_present = "events", conflicts_with = "events")]
        job: Option<String>,
        /// Replay an `events.jsonl` written by `bosun job export` instead (no daemon needed)
        #[arg(long, value_name = "FILE")]
        events: Option<std::path::PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Print a shell completion script: `bosun completions bash > ~/.local/share/bash-completion/completions/bosun`,
    /// `bosun completions zsh > "${fpath[1]}/_bosun"`, `bosun completions fish > ~/.config/fish/completions/bosun.fish`
    Completions {
        /// The shell to complete for
        shell: clap_complete::Shell,
    },
    /// Print bosun's man page (roff): `bosun man | man -l -`, or save it as `bosun.1`
    Man,
    /// Find what no record owns: workspace directories and git worktrees, `ws-*` branches,
    /// tmux sessions on bosun's server, agent directories. Exits 1 while any remains.
    ///
    /// Repositories looked at: those bosun's records name, those of leftover worktrees, and the
    /// one you stand in. With --fix, each leftover is removed unless someone's work may be in it:
    /// a worktree or folder that holds changes, or a branch with commits on no other branch,
    /// tag or remote, is kept and said why. --fix also runs `git worktree prune` where a
    /// worktree's directory is gone.
    Doctor {
        /// Remove the leftovers that hold no one's work
        #[arg(long)]
        fix: bool,
        #[arg(long)]
        json: bool,
        /// Instead: run the installed Claude Code and Codex (those named, else both) through
        /// bosun against a scripted model server on 127.0.0.1, in a temp repository, state and
        /// config with a fake key: a line per check, exit 1 when bosun misreads a client
        #[arg(long, num_args = 0.., value_name = "CLIENT", value_enum, conflicts_with = "fix")]
        clients: Option<Vec<crate::selftest::ClientName>>,
    },
    /// Read the runbooks of .bosun/runbooks/ (the nearest up from here)
    #[command(subcommand)]
    Runbook(RunbookCommand),
    /// Run a runbook command: `bosun run build auth "Add login" --base main`
    Run {
        /// The command's name
        command: String,
        /// Its arguments, as its `args` spec says
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Jobs started by `bosun run`
    #[command(subcommand)]
    Job(JobCommand),
    /// The dashboard: every agent and job as it changes, and an agent's workspace with its live
    /// terminal (`?` inside lists the keys)
    Dash,
    /// Print the events bosun records, as they are recorded with --follow: every one, or one
    /// agent's or job's (`--json`: one object per line with seq, at and event, for scripts)
    Events {
        /// Keep printing events as they are recorded
        #[arg(short, long)]
        follow: bool,
        /// Only this agent's (id, id prefix or name)
        #[arg(long, conflicts_with = "job")]
        agent: Option<String>,
        /// Only this job's (its steps' jobs, workspace and agents)
        #[arg(long)]
        job: Option<String>,
        /// The first event to print, by its seq [default: 1, or with --follow the next one]
        #[arg(long, value_name = "SEQ")]
        from: Option<u64>,
        #[arg(long)]
        json: bool,
    },
    /// Workspace pools: warm worktrees per repository, handed to one task at a time and reset
    /// after it (`bosun agent start --workspace pool`)
    #[command(subcommand)]
    Pool(PoolCommand),
    /// Queues of work items for workers
    #[command(subcommand)]
    Queue(QueueCommand),
    /// Workers: each feeds a queue's items into a job
    #[command(subcommand)]
    Worker(WorkerCommand),
    /// Plans: jobs run in order, each from the branch the one before produced
    #[command(subcommand)]
    Plan(PlanCommand),
    /// Crons: each starts a job on a schedule (cron expressions are read in UTC)
    #[command(subcommand)]
    Cron(CronCommand),
    /// Manage the background daemon
    #[command(subcommand)]
    Daemon(DaemonCommand),
    /// bosun's own session host: what the daemon starts for an agent run with `--session host`,
    /// and `attach` to one
    #[command(subcommand)]
    Host(Box<HostCommand>),
    /// Entry point for hooks bosun installs (tmux); not for people
    #[command(hide = true, subcommand)]
    Hook(HookCommand),
}

#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Start COMMAND in a fresh workspace and tmux session; prints the agent id, workspace path
    /// and branch
    #[command(after_help = "Example:\n  bosun agent start --name fix-login -- claude \"Fix the login bug\"")]
    Start(Box<StartArgs>),
}

#[derive(Debug, Args)]
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

/// The recovery policy. A STEP is ACTION[*ATTEMPTS][+COOLDOWN][:ARGUMENT] with ACTION one of
/// nudge:MESSAGE, resume[:MESSAGE], gate:COMMAND, escalate, done, fail; repeat a flag to chain
/// steps, e.g. `--on-idle 'nudge*2:Continue' --on-idle 'resume:Carry on' --on-idle escalate`.
#[derive(Debug, Args, Default)]
pub struct PolicyArgs {
    /// A policy file (TOML: on_idle, on_dead, on_error, on_error_kind, on_prompt, grace,
    /// accept_trust, allow, deny, webhook); the
    /// flags below add to it
    #[arg(long, value_name = "FILE.toml")]
    pub policy: Option<PathBuf>,
    /// A step for when the agent's turn ends and it waits for input
    #[arg(long = "on-idle", value_name = "STEP")]
    pub on_idle: Vec<String>,
    /// A step for when the agent's process exits by itself
    #[arg(long = "on-dead", value_name = "STEP")]
    pub on_dead: Vec<String>,
    /// A step for when a request fails; `KIND=STEP` for one kind (unauthorized, out_of_credits,
    /// rate_limited, no_internet, other)
    #[arg(long = "on-error", value_name = "[KIND=]STEP")]
    pub on_error: Vec<String>,
    /// A step for when a dialog holds the agent (permission, plan, question, setup)
    #[arg(long = "on-prompt", value_name = "STEP")]
    pub on_prompt: Vec<String>,
    /// Do not answer the agent's folder-trust dialog: leave it to --on-prompt as a setup prompt
    /// (by default bosun trusts the workspace it made for the agent)
    #[arg(long = "no-accept-trust")]
    pub no_accept_trust: bool,
    /// A permission rule whose requests bosun allows at once, in Claude Code's syntax:
    /// TOOL or TOOL(PATTERN), `*` matching anything, e.g. 'Bash(git *)', 'Write' (repeatable)
    #[arg(long, value_name = "RULE")]
    pub allow: Vec<String>,
    /// A permission rule whose requests bosun denies at once; deny wins over allow, and what no
    /// rule covers waits for a person (--on-prompt) (repeatable)
    #[arg(long, value_name = "RULE")]
    pub deny: Vec<String>,
    /// Without hooks, how long idle must last before --on-idle acts (e.g. 60s, 5m)
    #[arg(long, value_name = "DURATION")]
    pub grace: Option<String>,
    /// Also POST each escalation as JSON to this http:// or https:// URL (retried with
    /// backoff; each delivery is recorded as a webhook_sent event)
    #[arg(long = "notify-webhook", value_name = "URL")]
    pub notify_webhook: Option<String>,
}

/// `--driver NAME`, one of the drivers' names.
fn driver_kind() -> impl clap::builder::TypedValueParser<Value = DriverKind> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(DriverKind::ALL.map(DriverKind::name)).try_map(|s| s.parse::<DriverKind>())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RuntimeArg {
    Local,
    Sandbox,
    Docker,
    K8s,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SessionArg {
    Tmux,
    Host,
}

impl From<SessionArg> for bosun_core::SessionBackend {
    fn from(s: SessionArg) -> Self {
        match s {
            SessionArg::Tmux => Self::Tmux,
            SessionArg::Host => Self::Host,
        }
    }
}

// Parsed once per process: the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum HostCommand {
    /// Run COMMAND in a pseudo-terminal and serve it until killed, on a Unix socket (--socket)
    /// or on TCP to whoever presents a token (--listen, for an agent in a container with the
    /// network); the daemon starts this, and it outlives the daemon, which finds it again by its
    /// socket or address file
    #[command(group(clap::ArgGroup::new("where").required(true).args(["socket", "listen"])))]
    Serve {
        /// The Unix socket to listen on (made with mode 0600); its peers must be this user
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
        /// Listen on TCP instead, `tcp:ADDR:PORT` (port 0: any free port); every connection must
        /// first present the token in --token-file
        #[arg(long, value_name = "tcp:ADDR:PORT", value_parser = parse_listen, requires = "address_file")]
        listen: Option<std::net::SocketAddr>,
        /// With --listen: the file holding the token (read once at start; it must be this user's
        /// and mode 0600)
        #[arg(long, value_name = "FILE", requires = "listen", conflicts_with = "token_env")]
        token_file: Option<PathBuf>,
        /// With --listen, instead of --token-file: the environment variable holding the token
        /// (in a pod, set from a secret); the program served does not inherit it
        #[arg(long, value_name = "NAME", requires = "listen")]
        token_env: Option<String>,
        /// With --listen: where to write the address really bound (mode 0600, written whole)
        #[arg(long, value_name = "FILE", requires = "listen")]
        address_file: Option<PathBuf>,
        /// The session's name, as the daemon knows it
        #[arg(long)]
        session: String,
        /// The terminal's size, COLSxROWS
        #[arg(long, default_value = "160x48", value_parser = parse_size)]
        size: (u16, u16),
        /// A file the program's output is appended to
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Where the output file rotates, in bytes
        #[arg(long, default_value_t = bosun_adapters::output_log::OUTPUT_LOG_MAX)]
        output_max: u64,
        /// The daemon's socket, told at once when the program exits
        #[arg(long, value_name = "PATH")]
        daemon: Option<PathBuf>,
        /// Where `save` requests push the workspace's branch (--save-branch), for a host whose
        /// workspace lives only beside it (in a pod)
        #[arg(long, value_name = "URL", requires = "save_branch", conflicts_with = "save_bundle")]
        save_remote: Option<String>,
        /// Take the workspace's branch (--save-branch) as a git bundle from the daemon before
        /// the program starts (unless the workspace holds it already), and give it back as one
        /// once the program ended: for a repository with no remote the pod could reach
        #[arg(long, requires = "save_branch")]
        save_bundle: bool,
        /// The branch that is saved
        #[arg(long, value_name = "BRANCH")]
        save_branch: Option<String>,
        /// End with the program: save (with --save-remote, or once the daemon fetched the
        /// bundle with --save-bundle), write how it ended and what the save did to FILE as JSON
        /// (in a pod, its termination message: /dev/termination-log), then exit with the
        /// program's status
        #[arg(long, value_name = "FILE")]
        exit_file: Option<PathBuf>,
        /// Listen at SOCKET for the agent's hook reports (where its hooks look for the
        /// daemon's socket) and relay them to the daemon that follows this host
        #[arg(long, value_name = "SOCKET")]
        relay: Option<PathBuf>,
        /// Before starting the program, write the files that variable VAR holds (a JSON object
        /// of absolute path to content; the program does not inherit VAR)
        #[arg(long, value_name = "VAR")]
        files_env: Option<String>,
        /// The program and its arguments
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Attach this terminal to the session a host serves, on its Unix socket (--socket) or on
    /// TCP (--address or --address-file, with --token-file); detach with Ctrl+]
    #[command(group(clap::ArgGroup::new("where").required(true).args(["socket", "address", "address_file"])))]
    Attach {
        /// The host's Unix socket
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
        /// The host's TCP address, ADDR:PORT
        #[arg(long, value_name = "ADDR:PORT", requires = "token_file")]
        address: Option<std::net::SocketAddr>,
        /// The file the host wrote its TCP address to
        #[arg(long, value_name = "FILE", requires = "token_file")]
        address_file: Option<PathBuf>,
        /// The file holding the TCP host's token (this user's, mode 0600)
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
    },
}

/// `tcp:ADDR:PORT`.
fn parse_listen(text: &str) -> Result<std::net::SocketAddr, String> {
    let addr =
        text.strip_prefix("tcp:").ok_or_else(|| format!("{text:?} is not tcp:ADDR:PORT (say tcp:127.0.0.1:0)"))?;
    addr.parse().map_err(|e| format!("{addr:?}: {e}"))
}

/// `COLSxROWS`, each 1 to 1000.
fn parse_size(text: &str) -> Result<(u16, u16), String> {
    let (c, r) = text.split_once('x').ok_or_else(|| format!("{text:?} is not COLSxROWS (say 160x48)"))?;
    let (c, r) =
        (c.parse::<u16>().map_err(|e| format!("columns: {e}"))?, r.parse::<u16>().map_err(|e| format!("rows: {e}"))?);
    bosun_core::check_size(c, r).map_err(|e| e.to_string())?;
    Ok((c, r))
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum WorkspaceKindArg {
    /// A git worktree on a new branch
    Worktree,
    /// An empty directory
    Folder,
    /// A warm worktree of the repository's pool, handed out at once and reset after use
    /// (see `bosun pool`)
    Pool,
    /// A clone on a new branch in a volume of the container engine, not on this disk
    /// (--runtime docker only); its commits come back to the branch here when the agent ends
    Volume,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Colors {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Args)]
pub struct JsonFlag {
    /// Print JSON for scripts
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum WorkspaceCommand {
    /// List workspaces
    Ls(JsonFlag),
    /// Remove a workspace; refused when it holds changes unless --force. Its branch is deleted
    /// only when it holds no commits beyond where it started, else kept and reported.
    Rm {
        /// Workspace id (any unique prefix, or its nonce)
        id: String,
        /// Remove it even though it holds uncommitted changes (they are lost)
        #[arg(long)]
        force: bool,
        #[arg(long)]
        json: bool,
    },
    /// Remove every workspace no agent runs in and that holds no changes
    Prune {
        /// Only say what would be removed
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum JobCommand {
    /// List jobs with their state, step and age
    Ls(JsonFlag),
    /// Show a job: its steps, visits and outcome
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Cancel a job (its on_cancel step, if any, still runs)
    Cancel { id: String },
    /// Run a failed or cancelled job again from where it stopped, in its workspace as it is now
    /// (fix what made it fail first); its steps' visits count from zero
    ///
    /// When the step's agent died without finishing its work (it crashed, was lost or was
    /// killed, its policy having said neither done nor fail), the job goes on mid-step: that
    /// same agent is restarted with its conversation resumed, so it continues where it stopped.
    /// Otherwise (a shell step, or an agent that ended with an outcome) the step starts again.
    #[command(after_help = "Example:\n  bosun job resume j3kq9 && bosun send <agent> \"Carry on\"")]
    Resume { id: String },
    /// Write a job's run memory into a directory: state.json and events.jsonl
    ///
    /// state.json is a checkpoint of where the job stands: its step and try, visits, vars, its
    /// workspace (path and branch), the agents its steps ran (with each one's conversation id,
    /// e.g. Claude's session id), their messages and escalations, and where `bosun job resume`
    /// would take it up again. events.jsonl holds every recorded event that concerns the job
    /// (the job, the jobs it ran as steps, its workspace, its agents and their messages, timers
    /// and escalations), in order, one JSON object a line: {"seq":N,"at":MS,"event":{…}}.
    #[command(after_help = "Example:\n  bosun job export j3kq9 --dir ./memory/j3kq9")]
    Export {
        /// The job (its id, or the start of it)
        id: String,
        /// Where to write (created if missing)
        #[arg(long, value_name = "DIR")]
        dir: PathBuf,
        /// Overwrite an earlier export in DIR
        #[arg(long)]
        force: bool,
        /// Print {"dir":…,"events":N,"seq":N}
        #[arg(long)]
        json: bool,
    },
    /// Wait until a job is over; exit 0 when done, 1 when failed or cancelled
    Wait { id: String },
    /// Print the output of a job's shell steps, step by step and try by try
    Logs {
        id: String,
        /// Keep printing until the job is over
        #[arg(short, long)]
        follow: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum PoolCommand {
    /// Make the repository's pool and its workspaces now (they are also made when a task needs
    /// one): each a worktree `<project>--<n>` at a detached HEAD on the base — the remote's
    /// default branch, else the repository's
    Init {
        /// How many workspaces it keeps [default: 2, or what the pool has]
        #[arg(long)]
        size: Option<u32>,
        /// The repository [default: the current directory]
        #[arg(long, value_name = "DIR")]
        repo: Option<PathBuf>,
        /// A command run once in each new workspace (`npm ci`), not per task
        #[arg(long, value_name = "COMMAND")]
        setup: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// List the pools' workspaces: state (available, bound to whom, resetting, dirty), disk
    /// usage and age, and the tasks waiting
    Ls(JsonFlag),
    /// Keep N workspaces: more are made now; available ones beyond N are removed now, bound
    /// ones when released
    Resize {
        project: String,
        size: u32,
        #[arg(long)]
        json: bool,
    },
    /// Take a workspace for a script: a new branch in the first available one, waiting in line
    /// for one when all are taken (as a lock is taken); prints its path once it is ready (the
    /// path alone when the output is not a terminal, `ws=$(bosun pool acquire)`; on a terminal
    /// its branch and how to release it too)
    Acquire {
        /// The repository [default: the current directory]
        #[arg(long, value_name = "DIR")]
        repo: Option<PathBuf>,
        /// The branch made in it [default: ws-<nonce>]
        #[arg(long)]
        branch: Option<String>,
        /// Written to the workspace's TASK.md (excluded from git)
        #[arg(long, value_name = "FILE")]
        task_file: Option<PathBuf>,
        /// Fail at once when every workspace is taken, instead of waiting for one
        #[arg(long)]
        no_wait: bool,
        #[arg(long)]
        json: bool,
    },
    /// Give a workspace back: refused while it holds uncommitted or untracked work (unless
    /// --force); its branch is kept when it holds commits no other branch, tag or remote has,
    /// deleted otherwise; then it is reset in the background (fetch, reset to the base, clean)
    Release {
        /// The pool workspace (`<project>--<n>`) or the task's workspace id
        workspace: String,
        /// Release and reset it even with uncommitted work, which is lost
        #[arg(long)]
        force: bool,
        /// Also clean ignored files (build output such as target/ and node_modules/, kept by
        /// default so the next task starts warm)
        #[arg(long)]
        pristine: bool,
        #[arg(long)]
        json: bool,
    },
    /// Remove a pool workspace, or the whole pool; never one bound to a task, nor (without
    /// --force) one holding work
    Rm {
        project: String,
        /// One workspace (`<project>--<n>`) [default: all of them, and the pool]
        workspace: Option<String>,
        #[arg(long)]
        force: bool,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum QueueCommand {
    /// Add an item: `bosun queue push bugs title="Login fails" url=…`
    Push {
        queue: String,
        /// The item's fields, as KEY=VALUE (a job sees them as ${item.KEY})
        #[arg(value_name = "KEY=VALUE")]
        fields: Vec<String>,
    },
    /// List items, of one queue or all
    Ls {
        queue: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Put a dead item back in its queue
    Retry { item: String },
    /// Remove an item that no job works on
    Drop { item: String },
}

#[derive(Debug, Subcommand)]
pub enum WorkerCommand {
    /// Start a worker the runbooks define (it keeps the runbook text it starts with)
    Start { name: String },
    /// Stop a worker (jobs it started run on)
    Stop { name: String },
    /// List workers
    Ls(JsonFlag),
}

#[derive(Debug, Subcommand)]
pub enum PlanCommand {
    /// Start a plan the runbooks define: each job starts once the jobs it uses are done (at
    /// most the plan's `concurrency` at once), on `feature/<job>` (a numeric suffix when taken),
    /// from the plan's `base` (else the current commit) when it uses none, else from the branch
    /// of the first it uses with the others merged in; a failure stops what depends on it
    Run {
        name: String,
        /// Remove the variants a judge did not keep: their workspaces and branches (one holding
        /// work not committed is kept)
        #[arg(long)]
        drop_losers: bool,
        /// Print the plan as JSON
        #[arg(long)]
        json: bool,
    },
    /// Keep variant N of a plan job whose variants a person judges (`keep_best = "person"`)
    Pick {
        id: String,
        job: String,
        /// The variant to keep: 1 for the job's `-v1` branch, …
        variant: u32,
        /// Print the plan as JSON
        #[arg(long)]
        json: bool,
    },
    /// List plans and where each job stands
    Ls(JsonFlag),
    /// Run a failed plan's failed jobs again (fix what made them fail first)
    Resume {
        id: String,
        /// Print the plan as JSON
        #[arg(long)]
        json: bool,
    },
    /// What a plan did: per job, what it uses, where it started and what it merged, its
    /// branch, its agents' turns and their classes, how it ended; and the plan's final branch
    Show {
        id: String,
        /// Print the summary as JSON
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum CronCommand {
    /// Start a cron the runbooks define (it keeps the runbook text it starts with); it skips a
    /// turn while the job it started last still runs
    Start { name: String },
    /// Stop a cron (a job it started runs on)
    Stop { name: String },
    /// Start the cron's job now, once, whether the cron runs or not
    Once {
        name: String,
        /// Print the job as JSON
        #[arg(long)]
        json: bool,
    },
    /// List started crons: schedule, next turn, last job
    Ls(JsonFlag),
}

#[derive(Debug, Subcommand)]
pub enum RunbookCommand {
    /// List the commands, jobs, agents, queues, workers and crons the runbooks define
    Ls(JsonFlag),
    /// Validate every runbook; print every error as file:line:column (exit 1 when any)
    Check,
}

#[derive(Debug, Subcommand)]
pub enum DaemonCommand {
    /// Run the daemon in the foreground (logs to stderr)
    Run {
        #[arg(long, hide = true)]
        detach: bool,
    },
    /// Start the daemon in the background (other commands do this when needed)
    Start,
    /// Stop the daemon; agents keep running and are adopted again at the next start
    Stop,
    /// Say whether the daemon runs, and its pid, version and counts (exit 3 when not running)
    Status(JsonFlag),
    /// Print the daemon's log
    Logs {
        /// Number of lines from the end
        #[arg(short = 'n', long, default_value_t = 50)]
        lines: usize,
        /// Keep printing as the log grows
        #[arg(short, long)]
        follow: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    #[command(subcommand)]
    Tmux(TmuxHook),
    /// A Claude Code hook (payload on stdin)
    Claude { agent: String, generation: u32, event: String },
    /// Codex's notify program (payload as the last argument)
    Codex { agent: String, payload: String },
    /// An agent's terminal output (on stdin, from tmux's pipe-pane), appended to FILE, which is
    /// rotated to FILE.1 at --max bytes
    Output {
        file: std::path::PathBuf,
        #[arg(long)]
        max: u64,
    },
}

#[derive(Debug, Subcommand)]
pub enum TmuxHook {
    PaneDied { session: String, status: String, signal: String },
    SessionClosed { session: String },
}
