//! `Bosun`: one bosun under test, driven through its real binary, with a state directory, a
//! Claude config directory and a tmux server of its own. Dropping it kills its daemon and its
//! tmux server, even when the test panicked.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use bosun_core::Agent;
use bosun_wire::{AgentDetail, Listing};
use tempfile::TempDir;

use crate::poll::wait_for;
use crate::tools;

/// How long tests wait for something bosun should do promptly.
pub const PATIENCE: Duration = Duration::from_secs(20);

pub struct Bosun {
    bin: PathBuf,
    state: TempDir,
    claude: TempDir,
    /// Replaces `PATH` for every command (to hide tmux, say).
    path: Option<String>,
    /// Set for every command (and so for the daemon it starts).
    env: Vec<(String, String)>,
}

impl Bosun {
    /// A fresh bosun using the binary at `bin` (`env!("CARGO_BIN_EXE_bosun")`).
    pub fn new(bin: impl Into<PathBuf>) -> Self {
        tools::tmux();
        Self { bin: bin.into(), state: tempdir(), claude: tempdir(), path: None, env: Vec::new() }
    }

    /// The same, with its state directory under `parent`, outside `/tmp` (where a user's is, in
    /// their home): a sandbox's private `/tmp` hides nothing of it by itself.
    pub fn new_in(bin: impl Into<PathBuf>, parent: &Path) -> Self {
        tools::tmux();
        let state = tempfile::Builder::new()
            .prefix("bosun-")
            .disable_cleanup(std::env::var_os("BOSUN_KEEP").is_some())
            .tempdir_in(parent)
            .expect("temp dir");
        Self { bin: bin.into(), state, claude: tempdir(), path: None, env: Vec::new() }
    }

    /// The same, with `PATH` set to `path` for bosun and everything it starts.
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    pub fn state_dir(&self) -> &Path {
        self.state.path()
    }

    pub fn claude_config(&self) -> &Path {
        self.claude.path()
    }

    /// The same, with `key` set to `value` for bosun and everything it starts (`DOCKER_HOST`).
    pub fn with_env(mut self, key: &str, value: impl Into<String>) -> Self {
        self.env.push((key.to_owned(), value.into()));
        self
    }

    /// The `PATH` given with `with_path`.
    pub fn path_var(&self) -> Option<&str> {
        self.path.as_deref()
    }

    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// `bosun ARGS` run in `cwd`, with this bosun's environment.
    pub fn command(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.args(args)
            .current_dir(cwd)
            .env("BOSUN_STATE_DIR", self.state.path())
            .env("CLAUDE_CONFIG_DIR", self.claude.path())
            .env_remove("TMUX")
            .env_remove("BOSUN_LOG")
            // Notifications go to the daemon's log, not the tester's desktop.
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY");
        if let Some(p) = &self.path {
            cmd.env("PATH", p);
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd
    }

    pub fn run(&self, cwd: &Path, args: &[&str]) -> Output {
        self.command(cwd, args).output().expect("run bosun")
    }

    /// Runs `bosun ARGS` and returns its stdout; panics, with its stderr, when it fails.
    pub fn ok(&self, cwd: &Path, args: &[&str]) -> String {
        let out = self.run(cwd, args);
        assert!(
            out.status.success(),
            "bosun {args:?} failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            self.log()
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs the hook command bosun installs for Claude agent `id` (generation 0), as Claude
    /// would, with `payload` on stdin.
    pub fn hook(&self, id: &str, event: &str, payload: &[u8]) -> Output {
        let mut child = self
            .command(self.state_dir(), &["hook", "claude", id, "0", event])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run the hook");
        // A hook may stop reading a huge payload: a broken pipe here is fine.
        let _ = std::io::Write::write_all(&mut child.stdin.take().expect("its stdin"), payload);
        child.wait_with_output().expect("the hook ends")
    }

    /// Runs `bosun ARGS`, which must fail, and returns its stderr.
    pub fn fails(&self, cwd: &Path, args: &[&str]) -> String {
        let out = self.run(cwd, args);
        assert!(
            !out.status.success(),
            "bosun {args:?} should have failed; stdout:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// `bosun agent start --json ARGS`: the new agent's id.
    pub fn start(&self, cwd: &Path, args: &[&str]) -> String {
        let mut all = vec!["agent", "start", "--json"];
        all.extend_from_slice(args);
        let v: serde_json::Value = serde_json::from_str(&self.ok(cwd, &all)).expect("start prints JSON");
        v["agent"].as_str().expect("agent id").to_owned()
    }

    /// `bosun run --json ARGS`: the new job's id.
    pub fn run_job(&self, cwd: &Path, args: &[&str]) -> String {
        let mut all = vec!["run", "--json"];
        all.extend_from_slice(args);
        let v: serde_json::Value = serde_json::from_str(&self.ok(cwd, &all)).expect("run prints JSON");
        v["job"].as_str().expect("job id").to_owned()
    }

    /// `bosun agent start --json ARGS` with the command changed by `setup` first (the agent's
    /// environment, say: an agent runs with its starter's): the new agent's id.
    pub fn start_with(&self, cwd: &Path, args: &[&str], setup: impl FnOnce(&mut Command)) -> String {
        let mut all = vec!["agent", "start", "--json"];
        all.extend_from_slice(args);
        let mut cmd = self.command(cwd, &all);
        setup(&mut cmd);
        let out = cmd.output().expect("run bosun");
        assert!(
            out.status.success(),
            "bosun {all:?} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("start prints JSON");
        v["agent"].as_str().expect("agent id").to_owned()
    }

    /// Every event the daemon recorded so far, in order (read from its database, read-only).
    pub fn events(&self) -> Vec<bosun_core::Event> {
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let db =
            rusqlite::Connection::open_with_flags(self.state.path().join("bosun.db"), flags).expect("open bosun.db");
        let mut stmt = db.prepare("SELECT body FROM events ORDER BY seq").expect("read events");
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).expect("read events");
        rows.map(|body| serde_json::from_str(&body.expect("an event")).expect("an event parses")).collect()
    }

    /// The states the agent was observed in, in order.
    pub fn states_seen(&self, id: &str) -> Vec<String> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                bosun_core::Event::AgentObserved { id: a, state, .. } if a.to_string() == id => Some(state.label()),
                _ => None,
            })
            .collect()
    }

    pub fn list(&self) -> Listing {
        serde_json::from_str(&self.ok(self.state_dir(), &["ls", "--json"])).expect("ls --json parses")
    }

    pub fn show(&self, id: &str) -> AgentDetail {
        serde_json::from_str(&self.ok(self.state_dir(), &["show", id, "--json"])).expect("show --json parses")
    }

    pub fn agent(&self, id: &str) -> Agent {
        self.show(id).agent
    }

    /// Waits until the agent's state label (`running`, `dead(crashed:3)`, …) is `label`.
    pub fn wait_state(&self, id: &str, label: &str) -> Agent {
        let mut last = String::new();
        wait_for(PATIENCE, || {
            let a = self.agent(id);
            last = format!("{} {}", a.state.label(), a.error.as_deref().unwrap_or(""));
            (a.state.label() == label).then_some(a)
        })
        .unwrap_or_else(|| {
            let screen = self.run(self.state_dir(), &["peek", id]);
            let screen = String::from_utf8_lossy(&screen.stdout);
            panic!("agent {id} never became {label}; last {last}\n--- screen ---\n{screen}\n{}", self.log())
        })
    }

    /// Waits until the agent's session is up (started and not dead), whatever it is doing.
    pub fn wait_up(&self, id: &str) -> Agent {
        let mut last = String::new();
        wait_for(PATIENCE, || {
            let a = self.agent(id);
            last = a.state.label();
            a.state.is_up().then_some(a)
        })
        .unwrap_or_else(|| panic!("agent {id} never came up; last {last}\n{}", self.log()))
    }

    /// Waits until `bosun peek` shows `text`, and returns the screen.
    pub fn wait_screen(&self, id: &str, text: &str) -> String {
        let mut last = String::new();
        wait_for(PATIENCE, || {
            // Until the agent runs, peek says it is starting: keep polling.
            let out = self.run(self.state_dir(), &["peek", id]);
            last = String::from_utf8_lossy(if out.status.success() { &out.stdout } else { &out.stderr }).into_owned();
            last.contains(text).then(|| last.clone())
        })
        .unwrap_or_else(|| {
            let a = self.agent(id);
            let state = format!("{} {}", a.state.label(), a.error.as_deref().unwrap_or(""));
            panic!("{text:?} never showed on {id}'s screen ({state}):\n{last}\n{}", self.log())
        })
    }

    /// The pid of the daemon that runs now (one holds the lock on `daemon.pid`).
    pub fn daemon_pid(&self) -> Option<i32> {
        let path = self.state.path().join("daemon.pid");
        let file = std::fs::File::open(&path).ok()?;
        if file.try_lock_shared().is_ok() {
            return None;
        }
        let text = std::fs::read_to_string(self.state.path().join("daemon.pid")).ok()?;
        text.trim().parse().ok()
    }

    /// Kills the daemon with SIGKILL and waits until it is gone.
    pub fn kill_daemon_hard(&self) {
        let pid = self.daemon_pid().expect("a running daemon");
        assert!(Command::new("kill").args(["-9", &pid.to_string()]).status().expect("kill").success());
        let gone = wait_for(PATIENCE, || (!Path::new(&format!("/proc/{pid}")).exists()).then_some(()));
        assert!(gone.is_some(), "daemon {pid} survived SIGKILL");
    }

    /// Sends `request` to the running daemon on a socket of its own, as any client could, and
    /// returns its one answer.
    pub fn ask(&self, request: bosun_wire::Request) -> bosun_wire::Response {
        use std::io::{Read, Write};
        let mut s = std::os::unix::net::UnixStream::connect(self.state.path().join("run/bosun.sock")).expect("connect");
        let envelope = bosun_wire::Envelope { version: bosun_wire::VERSION.into(), request, id: None };
        s.write_all(&bosun_wire::encode(&envelope).expect("encode")).expect("send");
        let mut len = [0u8; 4];
        s.read_exact(&mut len).expect("an answer");
        let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
        s.read_exact(&mut body).expect("an answer");
        bosun_wire::decode(&body).expect("an answer decodes")
    }

    /// `tmux -S <state>/tmux.sock ARGS`.
    pub fn tmux(&self, args: &[&str]) -> Output {
        Command::new(tools::tmux())
            .arg("-S")
            .arg(self.state.path().join("tmux.sock"))
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("run tmux")
    }

    /// Names of the sessions on this bosun's tmux server.
    pub fn sessions(&self) -> Vec<String> {
        let out = self.tmux(&["list-sessions", "-F", "#{session_name}"]);
        String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect()
    }

    /// The daemon's log, for failure messages.
    pub fn log(&self) -> String {
        let log = std::fs::read_to_string(self.state.path().join("daemon.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        format!("--- daemon log (tail) ---\n{}", lines[lines.len().saturating_sub(30)..].join("\n"))
    }
}

impl Drop for Bosun {
    fn drop(&mut self) {
        if let Some(pid) = self.daemon_pid() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
        let _ = self.tmux(&["kill-server"]);
        // Session hosts outlive daemons by design: each is asked to end with its program.
        for found in bosun_adapters::HostDir::new(self.state.path().join("h")).found() {
            if let Ok(endpoint) = found.endpoint {
                let _ = bosun_host::HostClient::new(endpoint).ask(&bosun_host::HostRequest::Kill);
            }
        }
    }
}

/// A temp dir under /tmp, kept after the test when `BOSUN_KEEP` is set (to read a failed run's
/// state: `BOSUN_STATE_DIR=<dir> bosun events`).
fn tempdir() -> TempDir {
    tempfile::Builder::new()
        .prefix("bosun-")
        .disable_cleanup(std::env::var_os("BOSUN_KEEP").is_some())
        .tempdir_in("/tmp")
        .expect("temp dir")
}
