//! bosun's daemon: owns the state directory, the event store and bosun's tmux server; runs the
//! engine loop around the pure core, carries out effects, serves the CLI over a Unix socket and,
//! at start, reconciles what it remembers with what it finds.

pub mod channels;
pub mod config;
pub mod engine;
pub mod executor;
mod faults;
mod handler;
mod jobs;
mod judge;
mod memory;
pub mod nonces;
mod parts;
mod pidlock;
mod plan_log;
mod pod_reports;
mod pods;
mod preflight;
pub mod prices;
mod pull_request;
mod reconcile;
mod repo_facts;
mod server;
mod spool;
mod store;
mod watch;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bosun_wire::StateDir;
use tokio::net::UnixListener;
use tokio::sync::Notify;

pub use engine::{EngineError, EngineHandle};
pub use parts::{Parts, PodFeeds};
pub use pidlock::LockError;
pub use store::{Store, StoreError};

/// How the daemon is started.
pub struct Options {
    pub dirs: StateDir,
    /// The `bosun` executable tmux hooks call back into.
    pub exe: PathBuf,
    /// Started in the background by the CLI: leave the terminal's session.
    pub detach: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{context}: {source}")]
    Io { context: String, source: std::io::Error },
    #[error("{} exists and is not a socket: move it away", .0.display())]
    NotASocket(PathBuf),
    /// A setting from the environment that means nothing.
    #[error("{0}")]
    Setting(String),
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> DaemonError {
    let context = context.into();
    move |source| DaemonError::Io { context, source }
}

/// Runs the daemon until it is asked to stop (request, SIGTERM or SIGINT), with the parts bosun
/// runs with.
pub fn run(opts: Options) -> Result<(), DaemonError> {
    run_with(opts, |opts, hook_command| Parts::real(&opts.dirs, &opts.exe, hook_command))
}

/// Runs the daemon with the parts `parts` makes (given the options and the hook command),
/// once the state directory is locked and the log loaded.
pub fn run_with(
    opts: Options,
    parts: impl FnOnce(&Options, &str) -> Result<Parts, DaemonError>,
) -> Result<(), DaemonError> {
    // Read before anything is touched: a config that does not parse changes nothing.
    let config = config::read(&opts.dirs).map_err(|e| DaemonError::Setting(format!("bosun's config: {e}")))?;
    let (store, _lock, state) = open(&opts)?;
    let hook_command = format!("{} --state-dir {} hook", shell_quote(&opts.exe), shell_quote(opts.dirs.root()));
    let parts = parts(&opts, &hook_command)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(io("cannot start the runtime"))?;
    let channels = Arc::new(channels::Channels::new(opts.dirs.clone(), runtime.handle().clone()));
    let nonces = Arc::new(nonces::Nonces::from_env(store.count()));
    let executor = executor::Executor::new(&parts, runtime.handle(), &opts.dirs, &hook_command, &nonces, &channels);
    // Stop when asked (request or signal), and also if the engine thread ends on its own.
    let shutdown = Arc::new(Notify::new());
    let on_exit = {
        let shutdown = shutdown.clone();
        move || shutdown.notify_one()
    };
    let (engine, thread) = engine::start(store, state, executor, on_exit);
    if let Err(e) = runtime.block_on(engine.submit(bosun_core::Input::ConfigRead(config))) {
        tracing::error!("the config was not recorded: {e}");
    }
    let result = runtime.block_on(serve(&opts, parts, hook_command, engine.clone(), nonces, channels, shutdown));
    // Effects still running hold engine handles: stop the loop explicitly rather than wait for
    // them; whatever they were doing is reconciled at the next start.
    engine.stop();
    let _ = thread.join();
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    tracing::info!("daemon stopped");
    result
}

/// Makes the state directory (private), takes its lock and loads the log.
fn open(opts: &Options) -> Result<(Store, pidlock::PidLock, bosun_core::State), DaemonError> {
    if opts.detach {
        let _ = nix::unistd::setsid();
    }
    let root = opts.dirs.root();
    std::fs::create_dir_all(root).map_err(io(format!("cannot create {}", root.display())))?;
    let _ = std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o700));
    // Made before any agent starts: a sandbox or a container is given it only when it exists.
    let spool = opts.dirs.spool();
    std::fs::create_dir_all(&spool).map_err(io(format!("cannot create {}", spool.display())))?;
    let _ = std::fs::set_permissions(&spool, std::fs::Permissions::from_mode(0o700));
    let lock = pidlock::PidLock::acquire(&opts.dirs.pid_file())?;
    let mut store = Store::open(&opts.dirs.db())?;
    // A database made by an earlier bosun, before its files were made private, is made so now.
    for suffix in ["", "-wal", "-shm"] {
        let mut file = opts.dirs.db().into_os_string();
        file.push(suffix);
        let _ = std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600));
    }
    let state = store.load()?;
    tracing::info!(version = bosun_wire::VERSION, pid = std::process::id(), events = store.count(), "daemon starting");
    Ok((store, lock, state))
}

/// Reconciles, replays what was spooled while it was down, then serves until asked to stop.
async fn serve(
    opts: &Options,
    parts: Parts,
    hook_command: String,
    engine: EngineHandle,
    nonces: Arc<nonces::Nonces>,
    channels: Arc<channels::Channels>,
    shutdown: Arc<Notify>,
) -> Result<(), DaemonError> {
    // Recorded before anyone can ask: the first response is costed at them.
    match prices::read(&opts.dirs) {
        Ok(prices) => {
            if let Err(e) = engine.submit(bosun_core::Input::PricesRead(prices)).await {
                tracing::error!("the prices were not recorded: {e}");
            }
        }
        Err(e) => tracing::error!("the price file was not read, the prices recorded before stand: {e}"),
    }
    let listener = bind(&opts.dirs.socket())?;
    let runtime = tokio::runtime::Handle::current();
    reconcile::at_start(&engine, &*parts.sessions, &*parts.pools, &runtime).await;
    let ctx = Arc::new(handler::Context {
        nonces,
        engine: engine.clone(),
        hook_command,
        exe: opts.exe.clone(),
        workspaces: parts.workspaces,
        git: parts.git,
        pools: parts.pools,
        sessions: parts.sessions,
        containers: parts.containers,
        cluster: parts.cluster,
        survey: parts.survey,
        readiness: parts.readiness,
        forge: parts.forge,
        dirs: opts.dirs.clone(),
        started_at: engine::now().as_millis(),
        shutdown: shutdown.clone(),
        stopping: tokio::sync::watch::Sender::new(false),
        streams: tokio::sync::RwLock::new(()),
    });
    let serving = Arc::downgrade(&ctx);
    channels.serve_with(Arc::new(move |stream, agent| {
        if let Some(ctx) = serving.upgrade() {
            server::spawn_connection(stream, ctx, server::Speaker::Agent(agent));
        }
    }));
    spool::reopen_channels(&ctx, &channels).await;
    spool::replay(&ctx, &opts.dirs.old_hook_spool(), &server::Speaker::Anyone).await;
    spool::replay(&ctx, &opts.dirs.hook_spool(), &server::Speaker::Anyone).await;
    // Reconciled, and told what happened while it was down: what nothing will move on is
    // put to a person now, rather than left to wait forever.
    if let Err(e) = engine.submit(bosun_core::Input::CheckLiveness).await {
        tracing::error!("the check for agents and jobs stuck failed: {e}");
    }
    tokio::spawn(watch::sessions(engine.clone(), ctx.sessions.clone(), watch::INTERVAL));
    if let Some(pods) = parts.pods {
        pods::follow(engine.clone(), pods.host, pods.changes).await;
        pod_reports::relay(ctx.clone(), pods.reports);
    }
    tokio::spawn(async move {
        signals().await;
        shutdown.notify_one();
    });
    tracing::info!(socket = %opts.dirs.socket().display(), "daemon ready");
    server::serve(listener, ctx).await;
    let _ = std::fs::remove_file(opts.dirs.socket());
    Ok(())
}

/// Binds the socket, replacing a stale one (the pid lock proves no daemon owns it).
fn bind(path: &Path) -> Result<UnixListener, DaemonError> {
    use std::os::unix::fs::FileTypeExt;
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(DaemonError::NotASocket(path.to_owned()));
        }
        std::fs::remove_file(path).map_err(io(format!("cannot remove stale socket {}", path.display())))?;
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io(format!("cannot create {}", dir.display())))?;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    let listener = UnixListener::bind(path).map_err(io(format!("cannot listen on {}", path.display())))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(io(format!("cannot restrict {}", path.display())))?;
    Ok(listener)
}

async fn signals() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

/// Quotes a path for `sh`.
fn shell_quote(path: &Path) -> String {
    bosun_core::template::shell_quote(&path.display().to_string())
}
