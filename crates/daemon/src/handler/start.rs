//! Starting an agent: everything a start needs is checked before anything is recorded.

use std::collections::BTreeMap;

use bosun_core::{AgentId, INHERITED_ENV_FILE};

use super::*;

pub(super) async fn start_agent(ctx: &Arc<Context>, req: StartAgent) -> Answer {
    start_agent_as(ctx, req, None).await
}

/// The same, the agent's conversation forked from agent `fork_of`'s when given.
pub(super) async fn start_agent_as(ctx: &Arc<Context>, req: StartAgent, fork_of: Option<AgentId>) -> Answer {
    // Sent again after the daemon died, once carried out: its branch exists now, its checks
    // would fail; what it did is the answer.
    if let Some(events) = done_already() {
        return started(events);
    }
    let program = req
        .command
        .first()
        .ok_or_else(|| bad("no command to run: give it after `--`, e.g. `bosun agent start -- claude`"))?;
    let client = program.clone();
    let name = match &req.name {
        Some(n) => Name::parse(n).map_err(|e| bad(e.to_string()))?,
        None => Name::derive(&Path::new(program).file_name().map_or("agent".into(), |f| f.to_string_lossy())),
    };
    if let Err(e) = req.patterns.compile() {
        return Err(bad(e.to_string()));
    }
    check_door(&req)?;
    let client_check = check_client(ctx, &req).await?;
    let nonce = ctx.nonces.nonce();
    let pool = match req.workspace {
        WorkspaceChoice::Pool => {
            let dir = req.repo.clone().unwrap_or_else(|| req.cwd.clone());
            Some(super::pool::ask(ctx, dir, None, None, !req.no_wait).await?)
        }
        _ => None,
    };
    let roots = Roots {
        workspaces: ctx.dirs.workspaces(),
        agents: ctx.dirs.agents(),
        hook_command: ctx.hook_command.clone(),
        exe: ctx.exe.clone(),
        session_bits: (ctx.nonces.bits(), ctx.nonces.bits()),
    };
    let (git, sessions) = (ctx.git.clone(), ctx.sessions.clone());
    let (n, nc) = (name.clone(), nonce.clone());
    let containers = ctx.containers.clone();
    let spec = blocking(move || prepare(&*git, &*sessions, &*containers, req, n, nc, roots, pool)).await?;
    let inherited = (!spec.inherits.is_empty())
        .then(|| spec.agents_root.join(AgentId::new(&spec.nonce).as_str()).join(INHERITED_ENV_FILE));
    let input = match fork_of {
        Some(from) => Input::ForkAgent { spec: Box::new(spec), from },
        None => Input::StartAgent(Box::new(spec)),
    };
    let events = match submit(ctx, input).await {
        Ok(events) => events,
        Err(e) => {
            // Nothing was recorded: nothing of it stays behind.
            if let Some(file) = inherited {
                let _ = bosun_adapters::secret::forget(&file);
            }
            return Err(e);
        }
    };
    let mut answer = started(events)?;
    // A pool's workspace is where its slot is, once bound.
    if let Response::Started(s) = &mut answer {
        let id = s.workspace.clone();
        if let Some((path, waiting)) = query(ctx, move |st| {
            Ok(st.workspaces.get(&id).map(|w| (w.path.clone(), w.state == WorkspaceState::Waiting)))
        })
        .await?
        {
            (s.path, s.waiting) = (path, waiting);
        }
        s.warnings.extend(client_check.warnings);
        s.warnings.extend(client_check.version.and_then(|said| untested_client(&client, &said)));
    }
    Ok(answer)
}

/// What a start learnt of its client: what its `--version` printed, and what to warn of.
#[derive(Default)]
struct ClientCheck {
    version: Option<String>,
    warnings: Vec<String>,
}

/// A client bosun knows (Claude Code, Codex) that runs here, unconfined, is run as the agent will run it,
/// before anything is made: one that does not run, or is not logged in, is refused with one
/// line saying what to do (`bosun_core::client_check`).
async fn check_client(ctx: &Arc<Context>, req: &StartAgent) -> Result<ClientCheck, WireError> {
    let Some(program) = req.command.first().filter(|p| bosun_core::client_check::Client::of(p).is_some()) else {
        return Ok(ClientCheck::default());
    };
    // In a container or a pod, the client is the image's, logged in by its secrets; in a
    // sandbox it runs on a config of bosun's own, made at its start (and its login check would
    // write the first-start fields into the user's, which a sandboxed agent never touches).
    if req.runtime != bosun_core::Runtime::Local {
        return Ok(ClientCheck::default());
    }
    let mut env = req.inherit.clone();
    env.extend(req.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    let (readiness, probe_of, args) = (ctx.readiness.clone(), program.clone(), req.command[1..].to_vec());
    let checked = blocking(move || {
        let Some(probe) = readiness.probe(&probe_of, &env) else { return Ok(None) };
        let config = bosun_adapters::readiness::codex_config(&env);
        let set = |k: &str| bosun_adapters::readiness::is_set(&env, k);
        let auth = bosun_core::client_check::Auth { set: &set, codex_config: config.as_deref(), args: &args };
        let verdict = bosun_core::client_check::assess(&probe_of, &probe, &auth);
        let version = match probe.version {
            bosun_core::client_check::Ran::Ok(said) => Some(said),
            _ => None,
        };
        Ok(Some((verdict, version)))
    })
    .await?;
    let Some((verdict, version)) = checked else { return Ok(ClientCheck::default()) };
    if let Some(line) = verdict.refusal {
        return Err(bad(line));
    }
    Ok(ClientCheck { version, warnings: verdict.warnings })
}

/// What the core recorded of a start.
fn started(events: Vec<Event>) -> Answer {
    let (mut agent, mut workspace) = (None, None);
    for e in events {
        match e {
            Event::AgentCreated { agent: a } => agent = Some(a.id),
            Event::WorkspaceCreating { workspace: w } => workspace = Some(w),
            _ => {}
        }
    }
    let (Some(agent), Some(w)) = (agent, workspace) else {
        return Err(WireError::new(ErrorKind::Failed, "the start recorded no agent"));
    };
    let waiting = w.state == WorkspaceState::Waiting;
    Ok(Response::Started(Started {
        agent,
        branch: w.branch().map(str::to_owned),
        workspace: w.id,
        path: w.path,
        waiting,
        warnings: Vec::new(),
    }))
}

/// Versions of a client already told of as untested, by this daemon: each is told once.
static TOLD: std::sync::Mutex<std::collections::BTreeSet<String>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// The warning, once per version, that `program`, whose `--version` printed `said`, is a client
/// newer than bosun was tested with.
fn untested_client(program: &str, said: &str) -> Option<String> {
    let package = bosun_core::client_check::Client::of(program)?.package();
    let (version, warning) = bosun_core::client_version::untested(package, said)?;
    let key = format!("{program} {version}");
    TOLD.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(key).then_some(warning)
}

/// The longest branch name taken.
const BRANCH_MAX: usize = 200;

/// What can be told wrong from the request alone: the program (it must be there to run), the
/// variables given with `--env`, the branch's length. Errors quote at most the start of a value.
fn check_door(req: &StartAgent) -> Result<(), WireError> {
    let short = |s: &str| -> String {
        let cut: String = s.chars().take(60).collect();
        if cut.len() < s.len() {
            format!("{cut}…")
        } else {
            cut
        }
    };
    let program = req.command.first().map(String::as_str).unwrap_or_default();
    if program.trim().is_empty() {
        return Err(bad("the command to run is empty: give it after `--`, e.g. `bosun agent start -- claude`"));
    }
    let runnable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let path = if Path::new(program).is_absolute() { PathBuf::from(program) } else { req.cwd.join(program) };
        if !runnable(&path) {
            return Err(bad(format!("{} is not an executable file: check the command after `--`", short(program))));
        }
    } else {
        let path = req.env.get("PATH").or_else(|| req.inherit.get("PATH")).cloned().unwrap_or_default();
        if !std::env::split_paths(&path).any(|dir| runnable(&dir.join(program))) {
            return Err(bad(format!("{} is not found on PATH: install it, or give its full path", short(program))));
        }
    }
    // Whatever the caller's environment holds is passed on; what no process can be given is not.
    for (key, value) in req.env.iter().chain(&req.inherit) {
        if key.is_empty() || key.contains(['=', '\0']) || value.contains('\0') {
            return Err(bad(format!("the environment variable {:?} cannot be passed to a process", short(key))));
        }
    }
    if let Some(branch) = req.branch.as_deref().filter(|b| b.len() > BRANCH_MAX) {
        return Err(bad(format!("the branch name {} is longer than {BRANCH_MAX} bytes", short(branch))));
    }
    Ok(())
}

/// Checks everything a start needs before anything is recorded or created.
#[allow(clippy::too_many_arguments)]
fn prepare(
    git: &dyn Git,
    sessions: &dyn Sessions,
    containers: &dyn bosun_adapters::Containers,
    mut req: StartAgent,
    name: Name,
    nonce: Nonce,
    roots: Roots,
    pool: Option<bosun_core::PoolAsk>,
) -> Result<AgentSpec, AdapterError> {
    check_runtime(sessions, containers, &req, &roots.exe)?;
    let source = req.repo.clone().unwrap_or_else(|| req.cwd.clone());
    if !source.is_dir() {
        return Err(AdapterError::io(
            format!("{} is not a directory", source.display()),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    }
    let (kind, settings_root) = match req.workspace {
        WorkspaceChoice::Worktree if matches!(req.runtime, bosun_core::Runtime::K8s(_)) => {
            let NewBranch { repo, branch, base_ref, base } =
                new_branch(git, &source, req.base_ref.take(), req.branch.take(), &nonce)?;
            let remote = git.remote_url(&repo)?;
            let mut claim = None;
            if let bosun_core::Runtime::K8s(pod) = &mut req.runtime {
                let source = bosun_core::PodSource {
                    remote: remote.clone(),
                    repo: repo.clone(),
                    base: base.clone(),
                    branch: branch.clone(),
                };
                pod.source = Some(Box::new(source));
                // Storage asked for: a claim of the agent's own holds its clone and config.
                if pod.storage_bytes.is_some() {
                    let name = bosun_core::Pod::claim_name(&nonce);
                    pod.claim = Some(name.clone());
                    claim = Some(bosun_core::PodClaim { namespace: pod.namespace.clone(), name });
                }
            }
            (WorkspaceKind::Pod { repo: repo.clone(), remote, branch, base_ref, base, claim }, repo)
        }
        WorkspaceChoice::Worktree => {
            let NewBranch { repo, branch, base_ref, base } =
                new_branch(git, &source, req.base_ref.take(), req.branch.take(), &nonce)?;
            (WorkspaceKind::Worktree { repo: repo.clone(), branch, base_ref, base }, repo)
        }
        WorkspaceChoice::Volume => {
            let bosun_core::Runtime::Docker(container) = &mut req.runtime else {
                return Err(AdapterError::Command {
                    command: "a volume workspace".into(),
                    stderr: "only an agent in a container (--runtime docker) can work in a volume".into(),
                });
            };
            let NewBranch { repo, branch, base_ref, base } =
                new_branch(git, &source, req.base_ref.take(), req.branch.take(), &nonce)?;
            let volume = bosun_core::WorkspaceId::new(&name, &nonce).volume();
            container.volume = Some(volume.clone());
            let image = container.image.clone();
            (WorkspaceKind::Volume { repo: repo.clone(), branch, base_ref, base, volume, image }, repo)
        }
        WorkspaceChoice::Folder => (WorkspaceKind::Folder, source),
        WorkspaceChoice::Pool => {
            let repo = pool.as_ref().map_or_else(|| git.repo_root(&source), |p| Ok(p.spec.repo.clone()))?;
            let branch = req.branch.unwrap_or_else(|| nonce.default_branch());
            git.check_new_branch(&repo, &branch)?;
            let task = req.task.clone().or_else(|| req.prompt.clone());
            (WorkspaceKind::Pool { repo: repo.clone(), slot: None, branch, base: String::new(), task }, repo)
        }
    };
    let driver_kind = DriverKind::chosen(req.driver, &req.command);
    let driver = driver_kind.behaviour().record(roots.session_bits, req.patterns);
    // The repository's own settings for the agent (Claude's), copied into its workspace.
    let settings = driver.behaviour().repo_settings().map(|f| settings_root.join(f)).filter(|p| p.is_file());
    let (env, inherited) = split_env(req.env, req.inherit);
    let inherits: Vec<String> = inherited.keys().cloned().collect();
    if !inherits.is_empty() {
        let dir = roots.agents.join(AgentId::new(&nonce).as_str());
        bosun_adapters::secret::write_env(&dir.join(INHERITED_ENV_FILE), &inherited)?;
    }
    Ok(AgentSpec {
        name,
        nonce,
        workspaces_root: roots.workspaces,
        agents_root: roots.agents,
        kind,
        settings_from: settings,
        command: req.command,
        env,
        inherits,
        driver,
        policy: req.policy,
        prompt: req.prompt,
        hook_command: roots.hook_command,
        pool,
        backend: req.session,
        runtime: req.runtime,
    })
}

/// What the start's runtime needs is there: tmux only for a session of its own, bubblewrap only
/// for a sandbox, an engine that can run bosun's binary `exe` in the image for a container; a
/// pod's own rules.
fn check_runtime(
    sessions: &dyn Sessions,
    containers: &dyn bosun_adapters::Containers,
    req: &StartAgent,
    exe: &Path,
) -> Result<(), AdapterError> {
    if req.runtime.backend(req.session) == bosun_core::SessionBackend::Tmux {
        sessions.check_available()?;
    }
    match &req.runtime {
        bosun_core::Runtime::Local => {}
        bosun_core::Runtime::Sandbox { .. } => bosun_adapters::sandbox::check_available()?,
        bosun_core::Runtime::Docker(container) => {
            containers.check_available()?;
            // Its session host is bosun's own binary, bound in: one the image cannot run is
            // refused now, with what the container said, not found out 10 s after the start.
            containers.check_runs(&container.image, exe)?;
        }
        bosun_core::Runtime::K8s(pod) => {
            if !matches!(req.workspace, WorkspaceChoice::Worktree) {
                return Err(AdapterError::Command {
                    command: "an agent in a pod".into(),
                    stderr: "its workspace is a clone in its pod: --workspace does not apply to --runtime k8s".into(),
                });
            }
            if !bosun_core::Pod::is_dns_label(&pod.namespace) {
                return Err(AdapterError::Command {
                    command: "an agent in a pod".into(),
                    stderr: format!("{:?} is not a namespace's name (lowercase letters, digits, '-')", pod.namespace),
                });
            }
        }
    }
    Ok(())
}

/// What of a start's environment is recorded (the `--env` variables and the inherited paths
/// bosun reads), and what it inherits besides, whose values stay out of the log. A session of the
/// caller's tmux is not the agent's.
/// A new branch of the repository `source` is in, to make a workspace on.
struct NewBranch {
    repo: std::path::PathBuf,
    branch: String,
    base_ref: String,
    base: String,
}

/// `branch` (else the nonce's default) at `base_ref` (else `HEAD`) in `source`'s repository,
/// checked to be new there, with the commit it starts at.
fn new_branch(
    git: &dyn Git,
    source: &std::path::Path,
    base_ref: Option<String>,
    branch: Option<String>,
    nonce: &Nonce,
) -> Result<NewBranch, AdapterError> {
    let repo = git.repo_root(source)?;
    let base_ref = base_ref.unwrap_or_else(|| "HEAD".to_owned());
    let base = git.resolve_commit(&repo, &base_ref)?;
    let branch = branch.unwrap_or_else(|| nonce.default_branch());
    git.check_new_branch(&repo, &branch)?;
    Ok(NewBranch { repo, branch, base_ref, base })
}

fn split_env(
    mut given: BTreeMap<String, String>,
    mut inherited: BTreeMap<String, String>,
) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    for key in ["TMUX", "TMUX_PANE"] {
        inherited.remove(key);
        given.remove(key);
    }
    for key in bosun_core::RECORDED_ENV {
        if let Some(value) = inherited.get(*key) {
            given.entry((*key).to_owned()).or_insert_with(|| value.clone());
        }
    }
    inherited.retain(|k, _| !given.contains_key(k));
    (given, inherited)
}

/// Where a new agent's files go, and how its hooks call back.
pub struct Roots {
    pub workspaces: PathBuf,
    pub agents: PathBuf,
    pub hook_command: String,
    /// bosun's own binary, which a container's session host runs.
    pub exe: PathBuf,
    /// The bits a session id that a driver picks itself (Claude's) is made of.
    pub session_bits: (u64, u64),
}
