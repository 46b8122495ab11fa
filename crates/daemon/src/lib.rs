//! bosun's daemon: owns the state directory, the event store and bosun's tmux server; runs the
//! engine loop around the pure core, carries out effects, serves the CLI over a Unix socket and,
//! at start, reconciles what it remembers with what it finds.

pub mod channels;
mod classifier;
pub mod engine;
pub mod executor;
mod faults;
mod handler;
mod jobs;
mod judge;
mod memory;
pub mod nonces;
mod pidlock;
mod plan_log;
mod pod_reports;
mod pods;
mod preflight;
mod pull_request;
mod reconcile;
mod server;
mod spool;
mod step_run;
mod store;
mod watch;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bosun_adapters::{DesktopNotifier, Git, LocalGit, LocalSurvey, LocalWorkspaces, Sessions, Tmux, Workspaces};
use bosun_wire::StateDir;
use tokio::net::UnixListener;
use tokio::sync::Notify;

pub use engine::{EngineError, EngineHandle};
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

/// Runs the daemon until it is asked to stop (request, SIGTERM or SIGINT).
pub fn run(opts: Options) -> Result<(), DaemonError> {
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
    let _lock = pidlock::PidLock::acquire(&opts.dirs.pid_file())?;
    let mut store = Store::open(&opts.dirs.db())?;
    // A database made by an earlier bosun, before its files were made private, is made so now.
    for suffix in ["", "-wal", "-shm"] {
        let mut file = opts.dirs.db().into_os_string();
        file.push(suffix);
        let _ = std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600));
    }
    let state = store.load()?;
    tracing::info!(version = bosun_wire::VERSION, pid = std::process::id(), events = store.count(), "daemon starting");

    let hook_command = format!("{} --state-dir {} hook", shell_quote(&opts.exe), shell_quote(root));
    // BOSUN_OUTPUT_LOG_MAX (bytes) sets where an agent's output.log rotates.
    let output_max = std::env::var("BOSUN_OUTPUT_LOG_MAX").ok().and_then(|v| v.parse::<u64>().ok());
    let output_max = output_max.unwrap_or(bosun_adapters::output_log::OUTPUT_LOG_MAX);
    let tmux = Tmux::new(opts.dirs.tmux_socket(), opts.dirs.tmux_config())
        .with_output_writer(format!("{hook_command} output --max {output_max}"));
    if let Err(e) = tmux.write_config(Some(&format!("{hook_command} tmux"))) {
        tracing::warn!("cannot write tmux config: {e}");
    }
    // DOCKER_HOST, else the engine's default socket; reached only when a container is asked for.
    let containers: Arc<dyn bosun_adapters::Containers> =
        Arc::new(bosun_adapters::DockerContainers::new(None).map_err(|e| DaemonError::Io {
            context: "cannot start the Docker client's runtime".into(),
            source: std::io::Error::other(e.to_string()),
        })?);
    // KUBECONFIG, else ~/.kube/config, else the pod's service account; reached only when a pod
    // is asked for.
    let cluster: Arc<dyn bosun_k8s::Cluster> =
        Arc::new(bosun_k8s::KubeCluster::new(None).map_err(|e| DaemonError::Io {
            context: "cannot start the Kubernetes client's runtime".into(),
            source: std::io::Error::other(e.to_string()),
        })?);
    // How the pods' hosts are reached: `BOSUN_K8S_REACH` = address, forward or auto (the default).
    let reach = match std::env::var("BOSUN_K8S_REACH") {
        Ok(text) => bosun_adapters::Reach::parse(&text).ok_or_else(|| {
            DaemonError::Setting(format!(
                "BOSUN_K8S_REACH={text:?} is not a way to reach pods: give address, forward or auto"
            ))
        })?,
        Err(_) => bosun_adapters::Reach::default(),
    };
    let (pod_changes, pod_changes_rx) = std::sync::mpsc::channel();
    let (pod_reports, pod_reports_rx) = std::sync::mpsc::channel();
    let host = Arc::new(
        bosun_adapters::HostSessions::new(opts.exe.clone(), opts.dirs.hosts(), opts.dirs.socket(), output_max)
            .with_containers(containers.clone(), opts.dirs.label())
            .with_spool(opts.dirs.spool())
            .with_pods(
                bosun_adapters::PodHosts::new(cluster.clone(), opts.dirs.digest(), pod_changes, pod_reports)
                    .with_reach(reach),
            ),
    );
    let sessions: Arc<dyn Sessions> =
        Arc::new(bosun_adapters::RoutedSessions::new(Arc::new(tmux), host.clone(), opts.dirs.clone()));
    let local = Arc::new(
        LocalWorkspaces::new().with_containers(containers.clone(), opts.dirs.label()).with_cluster(cluster.clone()),
    );
    let workspaces: Arc<dyn Workspaces> = local.clone();
    let pools: Arc<dyn bosun_adapters::Pools> = local;
    let git: Arc<dyn Git> = Arc::new(LocalGit);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(io("cannot start the runtime"))?;
    let readiness: Arc<dyn bosun_adapters::readiness::Readiness> =
        Arc::new(bosun_adapters::readiness::LoginChecks::default());
    let forge: Arc<dyn bosun_adapters::forge::Forge> = Arc::new(bosun_adapters::forge::GhCli);
    let channels = Arc::new(channels::Channels::new(opts.dirs.clone(), runtime.handle().clone()));
    let nonces = Arc::new(nonces::Nonces::from_env(store.count()));
    let executor = executor::Executor {
        nonces: nonces.clone(),
        channels: channels.clone(),
        forge: forge.clone(),
        readiness: readiness.clone(),
        workspaces: workspaces.clone(),
        git: git.clone(),
        pools: pools.clone(),
        sessions: sessions.clone(),
        notifier: Arc::new(DesktopNotifier),
        webhooks: Arc::new(bosun_adapters::webhook::HttpWebhooks::default()),
        runtime: runtime.handle().clone(),
        logs: Arc::default(),
        steps: Arc::default(),
        dirs: opts.dirs.clone(),
        hook_command: hook_command.clone(),
        looking: Arc::default(),
    };
    // Stop when asked (request or signal), and also if the engine thread ends on its own.
    let shutdown = Arc::new(Notify::new());
    let on_exit = {
        let shutdown = shutdown.clone();
        move || shutdown.notify_one()
    };
    let (engine, thread) = engine::start(store, state, executor, on_exit);
    let result = runtime.block_on(async {
        let listener = bind(&opts.dirs.socket())?;
        reconcile::at_start(&engine, &*sessions, &*pools, runtime.handle()).await;
        let ctx = Arc::new(handler::Context {
            nonces,
            engine: engine.clone(),
            hook_command,
            workspaces,
            git,
            pools,
            sessions,
            containers,
            cluster,
            survey: Arc::new(LocalSurvey),
            readiness,
            forge,
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
        pods::follow(engine.clone(), host.clone(), pod_changes_rx).await;
        pod_reports::relay(ctx.clone(), pod_reports_rx);
        tokio::spawn(async move {
            signals().await;
            shutdown.notify_one();
        });
        tracing::info!(socket = %opts.dirs.socket().display(), "daemon ready");
        server::serve(listener, ctx).await;
        let _ = std::fs::remove_file(opts.dirs.socket());
        Ok::<_, DaemonError>(())
    });
    // Effects still running hold engine handles: stop the loop explicitly rather than wait for
    // them; whatever they were doing is reconciled at the next start.
    engine.stop();
    let _ = thread.join();
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    tracing::info!("daemon stopped");
    result
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
