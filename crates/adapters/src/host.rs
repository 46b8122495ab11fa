//! `HostSessions`: sessions in bosun's own session host (`bosun host`), one process per agent,
//! each found by its socket in one directory (`<state>/h/<session>`). Used where tmux cannot go
//! and wherever a runbook or `--session host` asks for it; every `Sessions` call is one request
//! to the agent's host.

use std::collections::BTreeMap;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bosun_core::{SessionName, SessionSeen, TermKey};
use bosun_host::{HostClient, HostError, HostRequest, HostResponse};

use crate::{AdapterError, ContainerSpec, Containers, Sessions, SettleDelay, SpawnSpec};

/// How long a new host has to answer on its socket.
const START_WAIT: Duration = Duration::from_secs(10);
/// The size of a new session's terminal, as tmux's detached sessions get.
const START_SIZE: (u16, u16) = (160, 48);

pub struct HostSessions {
    /// The bosun binary, whose `host` mode serves a session.
    program: PathBuf,
    dir: PathBuf,
    /// The daemon's socket, which a host tells when its program exits.
    daemon: PathBuf,
    output_max: u64,
    settle: SettleDelay,
    /// The engine a container's host runs in, and the value of its `bosun.state` label.
    containers: Option<(Arc<dyn Containers>, String)>,
    /// The directory where hooks leave their reports while no daemon runs.
    spool: Option<PathBuf>,
}

/// The label naming the state directory whose daemon made a container.
pub const STATE_LABEL: &str = "bosun.state";
/// The label naming a container's session.
pub const SESSION_LABEL: &str = "bosun.session";

impl HostSessions {
    pub fn new(program: PathBuf, dir: PathBuf, daemon: PathBuf, output_max: u64) -> Self {
        Self { program, dir, daemon, output_max, settle: SettleDelay::default(), containers: None, spool: None }
    }

    /// The same, binding `spool` (the hook spool's directory) writable into containers.
    pub fn with_spool(mut self, spool: PathBuf) -> Self {
        self.spool = Some(spool);
        self
    }

    /// The same, starting the hosts of containerized agents on `engine`, labelled with `state`.
    pub fn with_containers(mut self, engine: Arc<dyn Containers>, state: String) -> Self {
        self.containers = Some((engine, state));
        self
    }

    /// The arguments of `bosun host serve` for `spec`.
    fn serve_args(&self, spec: &SpawnSpec<'_>) -> Vec<String> {
        let socket = self.socket(spec.session).display().to_string();
        let mut args = vec!["host".into(), "serve".into(), "--socket".into(), socket];
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

    /// Starts the session's host in a container: bosun's own binary bound in read-only, the
    /// sandbox's writable paths (and the repository's git directory, the hosts' directory, the
    /// hook spool's and the daemon's socket) bound at their own paths, run as this user.
    fn run_in_container(
        &self,
        spec: &SpawnSpec<'_>,
        container: &bosun_core::Container,
        sandbox: &bosun_core::Sandbox,
    ) -> Result<(), AdapterError> {
        let Some((engine, state)) = &self.containers else {
            return Err(AdapterError::Command {
                command: "bosun host in a container".into(),
                stderr: "this daemon has no container engine".into(),
            });
        };
        let mut command = vec![self.program.display().to_string()];
        command.extend(self.serve_args(spec));
        let mut writable = sandbox.writable.clone();
        writable.extend(crate::sandbox::git_dir(spec.cwd));
        writable.push(self.dir.clone());
        writable.extend(self.spool.clone());
        writable.retain(|p| p.exists());
        // The daemon's socket's own directory, read-only: its new socket shows there after a
        // restart (a socket bound by itself would stay the old one).
        let read_only: Vec<PathBuf> =
            [self.program.clone()].into_iter().chain(self.daemon.parent().map(Path::to_path_buf)).collect();
        let labels = BTreeMap::from([
            (STATE_LABEL.to_owned(), state.clone()),
            (SESSION_LABEL.to_owned(), spec.session.to_string()),
        ]);
        let user = (nix::unistd::getuid().as_raw(), nix::unistd::getgid().as_raw());
        engine.run(ContainerSpec {
            name: spec.session.as_str(),
            image: &container.image,
            command: &command,
            cwd: spec.cwd,
            env: spec.env,
            writable: &writable,
            read_only: &read_only,
            user: Some(user),
            network: container.network,
            cpus_milli: container.cpus_milli,
            memory_bytes: container.memory_bytes,
            labels: &labels,
        })?;
        Ok(())
    }

    pub fn socket(&self, session: &SessionName) -> PathBuf {
        self.dir.join(session.as_str())
    }

    /// Whether the session is one of this backend's (its host's socket is there).
    pub fn owns(&self, session: &SessionName) -> bool {
        std::fs::symlink_metadata(self.socket(session)).is_ok_and(|m| m.file_type().is_socket())
    }

    fn client(&self, session: &SessionName) -> HostClient {
        HostClient::new(self.socket(session))
    }

    fn ask(&self, session: &SessionName, request: &HostRequest) -> Result<HostResponse, AdapterError> {
        self.client(session).ask(request).map_err(|e| error(session, e))
    }

    fn host_log(&self, session: &SessionName) -> PathBuf {
        self.dir.join(format!("{session}.log"))
    }
}

fn error(session: &SessionName, e: HostError) -> AdapterError {
    match e {
        HostError::Gone(_) => AdapterError::NoSession(session.to_string()),
        other => AdapterError::Command { command: format!("bosun host ({session})"), stderr: other.to_string() },
    }
}

impl Sessions for HostSessions {
    fn check_available(&self) -> Result<(), AdapterError> {
        Ok(())
    }

    fn spawn(&self, spec: SpawnSpec<'_>) -> Result<Option<u32>, AdapterError> {
        let client = self.client(spec.session);
        if let Ok(status) = client.status() {
            return Ok(status.pid);
        }
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| AdapterError::io(format!("creating {}", self.dir.display()), e))?;
        if let Some((container, sandbox)) = spec.container {
            self.run_in_container(&spec, container, sandbox)?;
            let deadline = Instant::now() + START_WAIT;
            return loop {
                if let Ok(status) = client.status() {
                    break Ok(status.pid);
                }
                if Instant::now() >= deadline {
                    if let Some((engine, _)) = &self.containers {
                        let _ = engine.remove(spec.session.as_str());
                    }
                    break Err(AdapterError::Command {
                        command: format!("bosun host in container {}", spec.session),
                        stderr: format!("it did not serve its session within {} s", START_WAIT.as_secs()),
                    });
                }
                std::thread::sleep(Duration::from_millis(5));
            };
        }
        let log_path = self.host_log(spec.session);
        let log = std::fs::File::create(&log_path)
            .map_err(|e| AdapterError::io(format!("creating {}", log_path.display()), e))?;
        let mut child = Command::new(&self.program)
            .args(self.serve_args(&spec))
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

    fn type_key(&self, session: &SessionName, key: char) -> Result<(), AdapterError> {
        self.press(session, &[TermKey::Text(key.to_string())])
    }

    fn press(&self, session: &SessionName, keys: &[TermKey]) -> Result<(), AdapterError> {
        self.ask(session, &HostRequest::Press { keys: keys.to_vec() }).map(drop)
    }

    fn size(&self, session: &SessionName) -> Result<(u16, u16), AdapterError> {
        let status = self.client(session).status().map_err(|e| error(session, e))?;
        Ok((status.cols, status.rows))
    }

    fn resize(&self, session: &SessionName, cols: u16, rows: u16) -> Result<(), AdapterError> {
        self.ask(session, &HostRequest::Resize { cols, rows }).map(drop)
    }

    fn capture(&self, session: &SessionName, colors: bool) -> Result<String, AdapterError> {
        match self.ask(session, &HostRequest::Screen { colors })? {
            HostResponse::Screen { text } => Ok(text),
            other => Err(error(session, self.client(session).unexpected(other))),
        }
    }

    fn list(&self) -> Result<Vec<SessionSeen>, AdapterError> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Ok(Vec::new()) };
        let mut seen = Vec::new();
        for entry in entries.flatten() {
            if !entry.file_type().is_ok_and(|t| t.is_socket()) {
                continue;
            }
            let path = entry.path();
            match HostClient::new(&path).status() {
                Ok(s) => {
                    seen.push(SessionSeen { session: SessionName::from_reported(&s.session), pid: s.pid, exit: s.exit })
                }
                // Its host is gone (the machine restarted, or it was killed): so is the session.
                Err(HostError::Gone(_)) => remove_stale(&path),
                Err(e) => tracing::warn!("cannot ask the session host at {}: {e}", path.display()),
            }
        }
        Ok(seen)
    }

    fn kill(&self, session: &SessionName) -> Result<(), AdapterError> {
        match self.client(session).ask(&HostRequest::Kill) {
            Ok(_) | Err(HostError::Gone(_)) => {
                // A container whose host is gone is removed (its engine would keep it otherwise).
                if let Some((engine, _)) = &self.containers {
                    let _ = engine.remove(session.as_str());
                }
                remove_stale(&self.socket(session));
                let _ = std::fs::remove_file(self.host_log(session));
                Ok(())
            }
            Err(e) => Err(error(session, e)),
        }
    }

    fn attach_command(&self, session: &SessionName) -> Vec<String> {
        let socket = self.socket(session).display().to_string();
        vec![self.program.display().to_string(), "host".into(), "attach".into(), "--socket".into(), socket]
    }
}

/// Removes a socket no host answers on (a connection refused means none listens).
fn remove_stale(path: &Path) {
    if std::os::unix::net::UnixStream::connect(path).is_err() {
        let _ = std::fs::remove_file(path);
    }
}
