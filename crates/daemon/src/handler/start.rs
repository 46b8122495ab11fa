//! Starting an agent: everything a start needs is checked before anything is recorded.

use std::collections::BTreeMap;

use bosun_core::{AgentId, StartAsk, WorkspaceAsk, INHERITED_ENV_FILE};

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
    ask_of(&req).check().map_err(|refused| bad(refused.to_string()))?;
    let req = on_account(ctx, req).await?;
    let client_check = check_client(ctx, &req).await?;
    let nonce = ctx.nonces.nonce();
    let pool = match req.workspace {
        WorkspaceAsk::Pool => {
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
    let parts =
        Parts { git: ctx.git.clone(), sessions: ctx.sessions.clone(), containers: ctx.containers.clone(), pool };
    let spec = blocking(move || Ok(prepare(parts, req, name, nonce, roots))).await??;
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
        let config = bosun_adapters::readiness::client_config(&probe_of, &env);
        let set = |k: &str| bosun_adapters::readiness::is_set(&env, k);
        let auth = bosun_core::client_check::Auth { set: &set, config: config.as_deref(), args: &args };
        let verdict = bosun_core::client_check::assess(&probe_of, &probe, &auth);
        let version = match probe.version {
            bosun_core::client_check::Ran::Ok(said) => said.lines().next().map(str::to_owned),
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
pub(super) fn started(events: Vec<Event>) -> Answer {
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
    let package = bosun_core::client_check::Client::of(program)?.package;
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
            // A client bosun knows says its package.
            let how = bosun_core::client_check::Client::of(program)
                .map_or_else(|| "install it".to_owned(), |c| format!("install it (`npm install -g {}`)", c.package));
            return Err(bad(format!("{} is not found on PATH: {how}, or give its full path", short(program))));
        }
    }
    // Whatever the caller's environment holds is passed on; what no process can be given is not.
    for (key, value) in req.env.iter().chain(&req.inherit) {
        if key.is_empty() || key.contains(['=', '\0']) || value.contains('\0') {
            return Err(bad(format!("the environment variable {:?} cannot be passed to a process", short(key))));
        }
    }
    // What its client is given must be its (opencode's config content, which bosun adds to).
    let all: std::collections::BTreeMap<String, String> =
        req.inherit.iter().chain(&req.env).map(|(k, v)| (k.clone(), v.clone())).collect();
    DriverKind::chosen(req.driver, &req.command).behaviour().check_env(&all).map_err(bad)?;
    if let Some(branch) = req.branch.as_deref().filter(|b| b.len() > BRANCH_MAX) {
        return Err(bad(format!("the branch name {} is longer than {BRANCH_MAX} bytes", short(branch))));
    }
    Ok(())
}

/// `req` with its client's variables pointed at the config directory of the account it names,
/// when it names one; an account bosun's config does not name is refused with those it does.
async fn on_account(ctx: &Arc<Context>, mut req: StartAgent) -> Result<StartAgent, WireError> {
    let Some(name) = req.account.clone() else { return Ok(req) };
    let driver = DriverKind::chosen(req.driver, &req.command);
    let all: BTreeMap<String, String> =
        req.inherit.iter().chain(&req.env).map(|(k, v)| (k.clone(), v.clone())).collect();
    let env = query(ctx, move |s| s.config.account_env(&name, driver, &all).map_err(bad)).await?;
    req.env.extend(env);
    Ok(req)
}

/// What `req` asks of where the agent's work happens and where it runs.
fn ask_of(req: &StartAgent) -> StartAsk<'_> {
    StartAsk {
        workspace: req.workspace,
        branch: req.branch.as_deref(),
        base_ref: req.base_ref.as_deref(),
        pool_options: req.task.is_some() || req.no_wait,
        runtime: req.runtime.ask(),
    }
}

/// Checks everything a start needs before anything is recorded or created: what it asks goes
/// together, what it runs in is here, and the repository holds what the core's siting rule
/// needs to know (`repo_facts::find`), which then decides its workspace and runtime.
fn prepare(parts: Parts, req: StartAgent, name: Name, nonce: Nonce, roots: Roots) -> Result<AgentSpec, WireError> {
    let ask = ask_of(&req);
    let gather = ask.gather(&req.runtime, &nonce).map_err(|refused| bad(refused.to_string()))?;
    parts.check_available(&req, &roots.exe).map_err(adapter_error)?;
    let source = req.repo.clone().unwrap_or_else(|| req.cwd.clone());
    if !source.is_dir() {
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        return Err(adapter_error(AdapterError::io(format!("{} is not a directory", source.display()), missing)));
    }
    let pool_repo = parts.pool.as_ref().map(|p| p.spec.repo.clone());
    let facts = crate::repo_facts::find(&*parts.git, source, gather, pool_repo).map_err(adapter_error)?;
    let task = req.task.clone().or_else(|| req.prompt.clone());
    let id = bosun_core::WorkspaceId::new(&name, &nonce);
    let sited = ask.site(req.runtime.clone(), facts, &id, &nonce, task).map_err(|r| bad(r.to_string()))?;
    let driver_kind = DriverKind::chosen(req.driver, &req.command);
    let driver = driver_kind.behaviour().record(roots.session_bits, req.patterns);
    // The repository's own settings for the agent's client, copied into its workspace.
    let settings_root = sited.settings_root;
    let repo_settings = driver.behaviour().repo_settings();
    let settings = repo_settings.map(|s| settings_root.join(s.file)).filter(|p| p.is_file());
    let settings_folder =
        repo_settings.and_then(|s| s.folder).and_then(|f| bosun_adapters::settings_folder::list(&settings_root, f));
    let (env, inherited) = split_env(req.env, req.inherit);
    let inherits: Vec<String> = inherited.keys().cloned().collect();
    if !inherits.is_empty() {
        let dir = roots.agents.join(AgentId::new(&nonce).as_str());
        bosun_adapters::secret::write_env(&dir.join(INHERITED_ENV_FILE), &inherited).map_err(adapter_error)?;
    }
    Ok(AgentSpec {
        name,
        nonce,
        workspaces_root: roots.workspaces,
        agents_root: roots.agents,
        kind: sited.kind,
        settings_from: settings,
        settings_folder,
        command: req.command,
        env,
        inherits,
        driver,
        policy: req.policy,
        prompt: req.prompt,
        hook_command: roots.hook_command,
        pool: parts.pool,
        backend: req.session,
        runtime: sited.runtime,
    })
}

/// The adapters a start looks at, and the pool its workspace is of, when it asks for one.
struct Parts {
    git: Arc<dyn Git>,
    sessions: Arc<dyn Sessions>,
    containers: Arc<dyn bosun_adapters::Containers>,
    pool: Option<bosun_core::PoolAsk>,
}

impl Parts {
    /// What runs the agent is here: tmux for a session of its own, bubblewrap for a sandbox, an
    /// engine for a container.
    fn check_available(&self, req: &StartAgent, exe: &std::path::Path) -> Result<(), AdapterError> {
        if req.runtime.backend(req.session) == bosun_core::SessionBackend::Tmux {
            self.sessions.check_available()?;
        }
        match &req.runtime {
            bosun_core::Runtime::Local | bosun_core::Runtime::K8s(_) => Ok(()),
            bosun_core::Runtime::Sandbox { .. } => bosun_adapters::sandbox::check_available(),
            bosun_core::Runtime::Docker(container) => {
                self.containers.check_available()?;
                // Its session host is bosun's own binary, bound in: one the image cannot run is
                // refused now, with what the container said, not found out 10 s after the start.
                self.containers.check_runs(&container.image, exe)
            }
        }
    }
}

/// What of a start's environment is recorded (the `--env` variables and the inherited paths
/// bosun reads), and what it inherits besides, whose values stay out of the log. A session of the
/// caller's tmux is not the agent's.
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
