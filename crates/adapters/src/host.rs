//! `HostSessions`: sessions in bosun's own session host (`bosun host`), one process per agent,
//! each found in one directory (`<state>/h`, see `HostDir`): by its Unix socket, or, for a host
//! in a container with the network, by the TCP address it wrote and the token the daemon made
//! for it. Used where tmux cannot go and wherever a runbook or `--session host` asks for it (a
//! host in a container or a pod is started by that place's launcher, `crate::launch`); every
//! `Sessions` call is one request to the agent's host.

mod dir;
pub mod pod;

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bosun_core::{SessionName, SessionSeen, TermKey};
use bosun_host::{HostClient, HostError, HostRequest, HostResponse};

use crate::{AdapterError, Containers, Sessions, SettleDelay, SpawnSpec};

pub use dir::{FoundHost, HostDir};

/// How long a new host has to answer on its socket.
pub(crate) const START_WAIT: Duration = Duration::from_secs(10);
/// The size of a new session's terminal, as tmux's detached sessions get.
const START_SIZE: (u16, u16) = (160, 48);

pub struct HostSessions {
    /// The bosun binary, whose `host` mode serves a session.
    pub(crate) program: PathBuf,
    pub(crate) dir: HostDir,
    /// The daemon's socket, which a host tells when its program exits.
    pub(crate) daemon: PathBuf,
    output_max: u64,
    settle: SettleDelay,
    /// The engine a container's host runs in, and the value of its `bosun.state` label.
    pub(crate) containers: Option<(Arc<dyn Containers>, String)>,
    /// The directory where hooks leave their reports while no daemon runs (where a container
    /// is shown its agent's own spool).
    pub(crate) spool: Option<PathBuf>,
    /// The cluster whose pods run the hosts of agents in pods.
    pub(crate) pods: Option<pod::PodHosts>,
}

/// The label naming the state directory whose daemon made a container.
pub const STATE_LABEL: &str = "bosun.state";
/// The label naming a container's session.
pub const SESSION_LABEL: &str = "bosun.session";

impl HostSessions {
    pub fn new(program: PathBuf, dir: PathBuf, daemon: PathBuf, output_max: u64) -> Self {
        Self {
            program,
            dir: HostDir::new(dir),
            daemon,
            output_max,
            settle: SettleDelay::default(),
            containers: None,
            spool: None,
            pods: None,
        }
    }

    /// The same, starting the hosts of agents in pods on a cluster.
    pub fn with_pods(mut self, pods: pod::PodHosts) -> Self {
        self.pods = Some(pods);
        self
    }

    /// The names of this daemon's pods in `namespace`.
    pub fn pod_names(&self, namespace: &str) -> Result<Vec<String>, AdapterError> {
        match &self.pods {
            Some(pods) => pods.names(namespace),
            None => Err(no_cluster()),
        }
    }

    /// Watches the pods of `namespace`, once (agents found there after a restart).
    pub fn watch_pods(&self, namespace: &str) -> Result<(), AdapterError> {
        match &self.pods {
            Some(pods) => pods.watch(namespace),
            None => Err(no_cluster()),
        }
    }

    /// The same, showing a container its agent's own spool at `spool` (the hook spool's
    /// directory).
    pub fn with_spool(mut self, spool: PathBuf) -> Self {
        self.spool = Some(spool);
        self
    }

    /// The same, starting the hosts of containerized agents on `engine`, labelled with `state`.
    pub fn with_containers(mut self, engine: Arc<dyn Containers>, state: String) -> Self {
        self.containers = Some((engine, state));
        self
    }

    /// The arguments of `bosun host serve` for `spec`: on its Unix socket, or on TCP (any free
    /// port on loopback) with the token in its file when `tcp`.
    pub(crate) fn serve_args(&self, spec: &SpawnSpec<'_>, tcp: bool) -> Vec<String> {
        let mut args: Vec<String> = vec!["host".into(), "serve".into()];
        if tcp {
            args.extend(["--listen".into(), "tcp:127.0.0.1:0".into()]);
            args.extend(["--token-file".into(), self.dir.token_file(spec.session).display().to_string()]);
            args.extend(["--address-file".into(), self.dir.address_file(spec.session).display().to_string()]);
        } else {
            args.extend(["--socket".into(), self.dir.socket(spec.session).display().to_string()]);
        }
        args.extend(["--session".into(), spec.session.to_string()]);
        args.extend(["--size".into(), format!("{}x{}", START_SIZE.0, START_SIZE.1)]);
        args.extend(["--daemon".into(), self.daemon.display().to_string()]);
        if let Some(output) = spec.output {
            args.extend(["--output".into(), output.display().to_string()]);
            args.extend(["--output-max".into(), self.output_max.to_string()]);
        }
        args.push("--".into());
        args.extend(spec.command.iter().cloned());
        args
    }

    /// The pid of the host that already serves `spec`'s session (a start sent again), if one
    /// does; else None, the hosts' directory made for a new one.
    pub(crate) fn serving(&self, spec: &SpawnSpec<'_>) -> Result<Option<Option<u32>>, AdapterError> {
        if let Ok(status) = self.status(spec.session) {
            return Ok(Some(status.pid));
        }
        let dir = self.dir.path();
        std::fs::create_dir_all(dir).map_err(|e| AdapterError::io(format!("creating {}", dir.display()), e))?;
        Ok(None)
    }

    pub fn dir(&self) -> &HostDir {
        &self.dir
    }

    /// Whether the session is one of this backend's (its host's socket or token is there).
    pub fn owns(&self, session: &SessionName) -> bool {
        self.dir.holds(session)
    }

    fn client(&self, session: &SessionName) -> Result<HostClient, HostError> {
        // A port-forward another daemon made is not given the token: its port may be anyone's.
        if self.pods.as_ref().is_some_and(|p| !p.trusted(&self.dir, session)) {
            return Err(HostError::Gone(format!("{session} (a port-forward of an earlier daemon)")));
        }
        self.dir.endpoint(session).map(HostClient::new)
    }

    fn ask(&self, session: &SessionName, request: &HostRequest) -> Result<HostResponse, AdapterError> {
        self.client(session).and_then(|c| c.ask(request)).map_err(|e| error(session, e))
    }

    pub(crate) fn status(&self, session: &SessionName) -> Result<bosun_host::HostStatus, HostError> {
        self.client(session)?.status()
    }

    fn host_log(&self, session: &SessionName) -> PathBuf {
        self.dir.path().join(format!("{session}.log"))
    }
}

pub(crate) fn no_cluster() -> AdapterError {
    AdapterError::Command {
        command: "bosun host in a pod".into(),
        stderr: "this daemon has no Kubernetes cluster (set KUBECONFIG for the daemon, or run it in a cluster)".into(),
    }
}

pub(crate) fn error(session: &SessionName, e: HostError) -> AdapterError {
    match e {
        HostError::Gone(_) => AdapterError::NoSession(session.to_string()),
        other => AdapterError::Command { command: format!("bosun host ({session})"), stderr: other.to_string() },
    }
}

impl Sessions for HostSessions {
    fn check_available(&self) -> Result<(), AdapterError> {
        Ok(())
    }

    /// A host here, for a session on this machine (containers and pods are their launchers').
    fn spawn(&self, spec: SpawnSpec<'_>) -> Result<Option<u32>, AdapterError> {
        spec.check_cwd()?;
        if let Some(serving) = self.serving(&spec)? {
            return Ok(serving);
        }
        let log_path = self.host_log(spec.session);
        let log = std::fs::File::create(&log_path)
            .map_err(|e| AdapterError::io(format!("creating {}", log_path.display()), e))?;
        let client = self.client(spec.session).map_err(|e| error(spec.session, e))?;
        let mut child = Command::new(&self.program)
            .args(self.serve_args(&spec, false))
            .current_dir(spec.cwd)
            .envs(spec.env)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            // Its own process group: a signal to the daemon's (Ctrl+C in its terminal) is not its.
            .process_group(0)
            .spawn()
            .map_err(|e| AdapterError::io(format!("starting {} host", self.program.display()), e))?;
        let deadline = Instant::now() + START_WAIT;
        loop {
            if let Ok(status) = client.status() {
                // Reaped when it ends, so it never lingers as a zombie of the daemon.
                std::thread::spawn(move || child.wait());
                return Ok(status.pid);
            }
            let ended = child.try_wait().ok().flatten();
            if ended.is_some() || Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                let said = std::fs::read_to_string(&log_path).unwrap_or_default();
                return Err(AdapterError::Command { command: "bosun host serve".into(), stderr: said });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn send_text(&self, session: &SessionName, text: &str) -> Result<(), AdapterError> {
        if !text.is_empty() {
            self.press(session, &[TermKey::Text(text.to_owned())])?;
            std::thread::sleep(self.settle.for_text(text));
        }
        self.press_enter(session)
    }

    fn press_enter(&self, session: &SessionName) -> Result<(), AdapterError> {
        self.press(session, &[TermKey::Enter])
    }

    fn press(&self, session: &SessionName, keys: &[TermKey]) -> Result<(), AdapterError> {
        self.ask(session, &HostRequest::Press { keys: keys.to_vec() }).map(drop)
    }

    fn size(&self, session: &SessionName) -> Result<(u16, u16), AdapterError> {
        let status = self.status(session).map_err(|e| error(session, e))?;
        Ok((status.cols, status.rows))
    }

    fn resize(&self, session: &SessionName, cols: u16, rows: u16) -> Result<(), AdapterError> {
        self.ask(session, &HostRequest::Resize { cols, rows }).map(drop)
    }

    fn history(&self, session: &SessionName, colors: bool, lines: u32) -> Result<String, AdapterError> {
        match self.ask(session, &HostRequest::Screen { colors, scrollback: lines })? {
            HostResponse::Screen { text } => Ok(text),
            other => Err(AdapterError::Command {
                command: format!("bosun host ({session})"),
                stderr: format!("unexpected answer {other:?}"),
            }),
        }
    }

    fn list(&self) -> Result<Vec<SessionSeen>, AdapterError> {
        let mut seen = Vec::new();
        for found in self.dir.found() {
            let named = SessionName::from_reported(&found.session);
            let endpoint = match found.endpoint {
                Ok(endpoint) => endpoint,
                Err(e) => {
                    tracing::warn!("cannot reach the session host of {}: {e}", found.session);
                    continue;
                }
            };
            // A pod whose reports are followed is known to be there: its host's beats say so,
            // and the pods' watch tells its end. It costs no call.
            if self.pods.as_ref().is_some_and(|p| p.is_followed(&named)) {
                seen.push(SessionSeen { session: named, pid: None, exit: None });
                continue;
            }
            let status = match &self.pods {
                Some(p) if !p.trusted(&self.dir, &named) => Err(HostError::Gone(endpoint.to_string())),
                _ => HostClient::new(endpoint.clone()).status(),
            };
            match status {
                Ok(s) => {
                    // A pod's host relays its agent's reports: they are followed (again, after a
                    // restart or once it can be reached again).
                    if let Some(pods) = self.pods.as_ref().filter(|_| self.dir.pod_namespace(&named).is_some()) {
                        pods.follow(&self.dir, &named);
                    }
                    seen.push(SessionSeen { session: SessionName::from_reported(&s.session), pid: s.pid, exit: s.exit })
                }
                // A pod's host that does not answer has ended (its pod's watch tells how) or
                // cannot be reached from here (through a port-forward, whose local end always
                // answers, that is any error): its pod stands for it until the watch says more.
                Err(_) if self.dir.pod_namespace(&named).is_some() => {
                    // Its pod may run where the noted address no longer leads (a port-forward
                    // of the daemon before this one): looked for again, now and then.
                    if let (Some(pods), Some(ns)) = (&self.pods, self.dir.pod_namespace(&named)) {
                        pods.look_for(&self.dir, &named, &ns);
                    }
                    seen.push(SessionSeen { session: named, pid: None, exit: None })
                }
                // Its host is gone (the machine restarted, or it was killed): so is the session.
                Err(HostError::Gone(_)) => self.dir.forget_if_stale(&named, &endpoint),
                Err(e) => tracing::warn!("cannot ask the session host at {endpoint}: {e}"),
            }
        }
        Ok(seen)
    }

    fn kill(&self, session: &SessionName) -> Result<(), AdapterError> {
        if let Some(namespace) = self.dir.pod_namespace(session) {
            // A pod's host saves its agent's work as it ends: it is told to end the agent, and
            // its pod is deleted once it has gone (the core asks again when the save is safe).
            let pods = self.pods.as_ref().ok_or_else(no_cluster)?;
            return match self.client(session).and_then(|c| c.ask(&HostRequest::Kill)) {
                Ok(_) => Ok(()),
                // Gone; or, through a port-forward (whose local end always answers), not
                // reached while its pod no longer runs.
                Err(e) if matches!(e, HostError::Gone(_)) || !pods.runs(session, &namespace) => {
                    pods.remove(&self.dir, session, &namespace);
                    Ok(())
                }
                Err(e) => Err(error(session, e)),
            };
        }
        match self.client(session).and_then(|c| c.ask(&HostRequest::Kill)) {
            Ok(_) | Err(HostError::Gone(_)) => {
                // A container whose host is gone is removed (its engine would keep it otherwise).
                if let Some((engine, _)) = &self.containers {
                    let _ = engine.remove(session.as_str());
                }
                if self.dir.is_tcp(session) {
                    // Its address and token go with it: nothing may reach that port by them again.
                    self.dir.forget(session);
                } else {
                    self.dir.forget_if_stale(session, &bosun_host::HostEndpoint::Unix(self.dir.socket(session)));
                }
                let _ = std::fs::remove_file(self.host_log(session));
                Ok(())
            }
            Err(e) => Err(error(session, e)),
        }
    }

    fn attach_command(&self, session: &SessionName) -> Vec<String> {
        let mut argv = vec![self.program.display().to_string(), "host".into(), "attach".into()];
        if self.dir.is_tcp(session) {
            argv.extend(["--address-file".into(), self.dir.address_file(session).display().to_string()]);
            argv.extend(["--token-file".into(), self.dir.token_file(session).display().to_string()]);
        } else {
            argv.extend(["--socket".into(), self.dir.socket(session).display().to_string()]);
        }
        argv
    }
}
