//! `Tmux`: the real `Sessions`, tmux on bosun's own socket. Every call runs
//! `tmux -S <socket> -f <config> …`, so whichever call starts the server loads bosun's
//! configuration (see `config`), and never touches the user's own tmux server.

mod config;
mod panes;

use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use bosun_core::{SessionName, SessionSeen, TermKey};

use crate::{AdapterError, Sessions, SpawnSpec};

/// How often `list` makes the server reap its children when a pane reads dead without a status,
/// and how long it waits each time before looking again.
const REAP_ATTEMPTS: usize = 3;
const REAP_WAIT: Duration = Duration::from_millis(30);

/// How long `send_text` waits between typing the text and pressing Enter, so the program has
/// taken in the text before the Enter arrives: `base`, plus `per_20_chars` for every 20
/// characters, at most `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SettleDelay {
    pub base: Duration,
    pub per_20_chars: Duration,
    pub max: Duration,
}

impl Default for SettleDelay {
    fn default() -> Self {
        Self {
            base: Duration::from_millis(50),
            per_20_chars: Duration::from_millis(1),
            max: Duration::from_millis(500),
        }
    }
}

impl SettleDelay {
    pub fn for_text(&self, text: &str) -> Duration {
        let blocks = u32::try_from(text.chars().count() / 20).unwrap_or(u32::MAX);
        self.base.saturating_add(self.per_20_chars.saturating_mul(blocks)).min(self.max)
    }
}

/// tmux on one socket, started with one configuration file.
#[derive(Clone, Debug)]
pub struct Tmux {
    program: PathBuf,
    socket: PathBuf,
    config: PathBuf,
    settle: SettleDelay,
    output_writer: Option<String>,
    /// Set once `tmux -V` ran: a start does not ask again.
    available: std::sync::OnceLock<()>,
}

impl Tmux {
    /// tmux (found on `PATH`) on `socket`, starting its server with the configuration at
    /// `config` (see `write_config`).
    pub fn new(socket: PathBuf, config: PathBuf) -> Self {
        Self {
            program: PathBuf::from("tmux"),
            socket,
            config,
            settle: SettleDelay::default(),
            output_writer: None,
            available: Default::default(),
        }
    }

    /// Has a session's output written by `writer` (a shell command prefix, already quoted for
    /// `sh`, that takes the log's path as its last argument and its output on stdin, such as
    /// bosun's rotating writer) instead of `cat >>`.
    pub fn with_output_writer(mut self, writer: impl Into<String>) -> Self {
        self.output_writer = Some(writer.into());
        self
    }

    /// Runs `program` instead of `tmux` from `PATH`.
    pub fn with_program(mut self, program: impl Into<PathBuf>) -> Self {
        self.program = program.into();
        self.available = std::sync::OnceLock::new();
        self
    }

    pub fn with_settle_delay(mut self, settle: SettleDelay) -> Self {
        self.settle = settle;
        self
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    pub fn config_path(&self) -> &Path {
        &self.config
    }

    /// Writes the configuration file (see `config::render`; `hook_prefix` is a shell command
    /// prefix, already quoted for `sh`, that the hooks call with their arguments appended), and
    /// sources it into the server when one is already running, so it applies at once.
    pub fn write_config(&self, hook_prefix: Option<&str>) -> Result<(), AdapterError> {
        let text = config::render(hook_prefix)?;
        let context = || format!("writing the tmux configuration {}", self.config.display());
        if let Some(dir) = self.config.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(|e| AdapterError::io(context(), e))?;
        }
        // Written beside and renamed, so a server starting meanwhile never reads half a file.
        let mut partial = self.config.clone().into_os_string();
        partial.push(".partial");
        fs::write(&partial, text).map_err(|e| AdapterError::io(context(), e))?;
        fs::rename(&partial, &self.config).map_err(|e| AdapterError::io(context(), e))?;
        match self.run([OsStr::new("source-file"), self.config.as_os_str()]) {
            Err(e) if no_server(&e) => Ok(()),
            other => other.map(drop),
        }
    }

    /// One `list-panes` over every session; no server means no sessions.
    fn list_once(&self) -> Result<Vec<SessionSeen>, AdapterError> {
        match self.run(["list-panes", "-a", "-F", panes::LIST_FORMAT]) {
            Ok(out) => Ok(panes::parse_list(&out)),
            Err(e) if no_server(&e) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// The pid of the first pane of `session`.
    fn pane_pid(&self, session: &SessionName) -> Result<Option<u32>, AdapterError> {
        let out = self.run(["list-panes", "-s", "-t", &exact(session), "-F", "#{pane_pid}"])?;
        Ok(out.lines().next().and_then(|l| l.trim().parse().ok()))
    }

    /// Runs tmux with `args`; its stdout when it succeeds, `AdapterError::Command` with its
    /// stderr when it fails.
    fn run<I, S>(&self, args: I) -> Result<String, AdapterError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.run_as(args, false)
    }

    /// `run`, with the user's own file mask when `as_user` (`private::as_user`): for a command
    /// that may start the server, whose mask its panes' programs inherit. No other command makes
    /// a file, and without the mask set between fork and exec tmux starts by `posix_spawn`.
    fn run_as<I, S>(&self, args: I, as_user: bool) -> Result<String, AdapterError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        let mut full = vec![OsString::from("-S"), self.socket.clone().into(), "-f".into(), self.config.clone().into()];
        full.extend(args);
        let output = self.exec(&full, as_user)?;
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        } else {
            let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            let stderr = if stderr.is_empty() { output.status.to_string() } else { stderr };
            Err(AdapterError::Command { command: self.display(&full), stderr })
        }
    }

    /// Runs the tmux program with `args` as they are, outside any tmux the caller runs in.
    fn exec(&self, args: &[OsString], as_user: bool) -> Result<Output, AdapterError> {
        let mut cmd = Command::new(&self.program);
        if as_user {
            crate::private::as_user(&mut cmd);
        }
        cmd.args(args)
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| self.missing_or(e, args))
    }

    /// A failure to run tmux: `TmuxMissing` when there is no program to run.
    fn missing_or(&self, e: std::io::Error, args: &[OsString]) -> AdapterError {
        match e.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => {
                AdapterError::TmuxMissing(format!("{}: {e}", self.program.display()))
            }
            _ => AdapterError::io(format!("running {}", self.display(args)), e),
        }
    }

    /// The command line for error messages, with long arguments (typed text) shortened.
    fn display(&self, args: &[OsString]) -> String {
        let mut line = self.program.display().to_string();
        for arg in args {
            let arg = arg.to_string_lossy();
            let short: String = arg.chars().take(60).collect();
            let short = if short.len() < arg.len() { format!("{short}…") } else { short };
            line.push(' ');
            if short.is_empty() || short.contains(char::is_whitespace) || short.contains(['\'', '"', '#', '$']) {
                line.push('\'');
                line.push_str(&short.replace('\'', r"'\''"));
                line.push('\'');
            } else {
                line.push_str(&short);
            }
        }
        line
    }

    /// A failure on a missing session or server as `AdapterError::NoSession`.
    fn on_session<T>(&self, session: &SessionName, result: Result<T, AdapterError>) -> Result<T, AdapterError> {
        result.map_err(
            |e| {
                if no_server(&e) || no_session(&e) {
                    AdapterError::NoSession(session.to_string())
                } else {
                    e
                }
            },
        )
    }

    /// Types one stroke (`bosun_core::strokes`): each key a `send-keys` of its own.
    fn press_stroke(&self, session: &SessionName, keys: &[TermKey]) -> Result<(), AdapterError> {
        let target = exact_pane(session);
        for key in keys {
            let named;
            let args: &[&str] = match key {
                TermKey::Text(text) => &["send-keys", "-t", &target, "-l", "--", text],
                TermKey::Ctrl(c) => {
                    named = format!("C-{c}");
                    &["send-keys", "-t", &target, "--", &named]
                }
                TermKey::Alt(c) => {
                    named = format!("M-{c}");
                    &["send-keys", "-t", &target, "--", &named]
                }
                TermKey::F(n) => {
                    named = format!("F{n}");
                    &["send-keys", "-t", &target, "--", &named]
                }
                other => &["send-keys", "-t", &target, "--", key_name(other)],
            };
            self.on_session(session, self.run(args))?;
        }
        Ok(())
    }
}

impl Sessions for Tmux {
    fn check_available(&self) -> Result<(), AdapterError> {
        if self.available.get().is_some() {
            return Ok(());
        }
        // `-V` makes no file: it needs no mask of the user's, and so no fork (see `exec`).
        let output = Command::new(&self.program)
            .arg("-V")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| self.missing_or(e, &["-V".into()]))?;
        if output.status.success() {
            let _ = self.available.set(());
            Ok(())
        } else {
            let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            Err(AdapterError::TmuxMissing(format!(
                "`{} -V` failed: {} {stderr}",
                self.program.display(),
                output.status
            )))
        }
    }

    fn spawn(&self, spec: SpawnSpec<'_>) -> Result<Option<u32>, AdapterError> {
        /// `text` with each `#` doubled, so tmux's format expansion gives it back as it is.
        fn unformat(text: &str) -> String {
            text.replace('#', "##")
        }
        spec.check_cwd()?;
        let mut args: Vec<OsString> =
            vec!["new-session".into(), "-d".into(), "-s".into(), spec.session.as_str().into()];
        // tmux expands formats (`#{…}`, and `#(…)`, which runs a command) in a start directory
        // and a pipe-pane command: a `#` of a path is doubled so it stays a `#`.
        args.extend(["-c".into(), unformat(&spec.cwd.display().to_string()).into()]);
        for (key, value) in spec.env {
            args.extend(["-e".into(), format!("{key}={value}").into()]);
        }
        args.extend(["-P", "-F", "#{pane_pid}", "--"].map(OsString::from));
        args.extend(spec.command.iter().map(OsString::from));
        if let Some(output) = spec.output {
            // In the same tmux command list, so no output is missed before the pipe is set.
            let quoted = format!("'{}'", unformat(&output.display().to_string()).replace('\'', r"'\''"));
            args.extend([";", "pipe-pane", "-t", &exact_pane(spec.session), "-O"].map(OsString::from));
            // `exec`: the shell tmux runs it with becomes the writer, rather than start it and
            // wait beside it.
            let command = match &self.output_writer {
                Some(writer) => format!("exec {} {quoted}", unformat(writer)),
                None => format!("exec cat >> {quoted}"),
            };
            args.push(command.into());
        }
        // A server whose last session just ended (or that was killed) is on its way out: a client
        // that reaches it then sees "server exited unexpectedly". A later try starts a fresh
        // server; on a loaded machine the old one may take a moment to go.
        let mut tries = 0;
        loop {
            tries += 1;
            // In a thread with the user's mask: this may start the server.
            let started = crate::private::with_user_mask(|| self.run_as(&args, true))
                .map_err(|e| AdapterError::io("starting a thread to start tmux in", e))?;
            match started {
                Ok(out) => return Ok(out.trim().parse().ok()),
                Err(AdapterError::Command { stderr, .. }) if stderr.contains("duplicate session") => {
                    return self.pane_pid(spec.session)
                }
                Err(AdapterError::Command { stderr, .. })
                    if tries < SPAWN_TRIES
                        && (stderr.contains("server exited unexpectedly") || stderr.contains("lost server")) =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(25 * u64::from(tries)));
                    continue;
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn send_text(&self, session: &SessionName, text: &str) -> Result<(), AdapterError> {
        let target = exact_pane(session);
        // A pane kept after its program ended (remain-on-exit) takes keys and drops them: a
        // message typed there is not delivered.
        let dead = self.on_session(session, self.run(["display-message", "-p", "-t", &target, "#{pane_dead}"]))?;
        if dead.trim() == "1" {
            return Err(AdapterError::NoSession(format!("{session} (its program has ended)")));
        }
        if !text.is_empty() {
            self.on_session(session, self.run(["send-keys", "-t", &target, "-l", "--", text]))?;
            std::thread::sleep(self.settle.for_text(text));
        }
        self.on_session(session, self.run(["send-keys", "-t", &target, "Enter"]))?;
        Ok(())
    }

    fn press_enter(&self, session: &SessionName) -> Result<(), AdapterError> {
        self.on_session(session, self.run(["send-keys", "-t", &exact_pane(session), "Enter"])).map(drop)
    }

    fn press(&self, session: &SessionName, keys: &[TermKey]) -> Result<(), AdapterError> {
        for (i, stroke) in bosun_core::strokes(keys).enumerate() {
            if i > 0 {
                std::thread::sleep(std::time::Duration::from_millis(bosun_core::STROKES_APART_MS));
            }
            self.press_stroke(session, stroke)?;
        }
        Ok(())
    }

    fn size(&self, session: &SessionName) -> Result<(u16, u16), AdapterError> {
        let format = "#{window_width} #{window_height}";
        let out = self.on_session(session, self.run(["display-message", "-p", "-t", &exact_pane(session), format]))?;
        let mut sides = out.split_whitespace().map(str::parse::<u16>);
        match (sides.next(), sides.next()) {
            (Some(Ok(cols)), Some(Ok(rows))) => Ok((cols, rows)),
            _ => Err(AdapterError::Command {
                command: "tmux display-message".into(),
                stderr: format!("no window size for {session}: {out:?}"),
            }),
        }
    }

    fn resize(&self, session: &SessionName, cols: u16, rows: u16) -> Result<(), AdapterError> {
        let (x, y) = (cols.to_string(), rows.to_string());
        let args = ["resize-window", "-t", &exact_pane(session), "-x", &x, "-y", &y];
        self.on_session(session, self.run(args)).map(drop)
    }

    fn history(&self, session: &SessionName, colors: bool, lines: u32) -> Result<String, AdapterError> {
        let target = exact_pane(session);
        // A dead pane's last output has scrolled into the history under tmux's "Pane is dead"
        // line: capture the history too, so the end of a finished agent stays readable.
        let dead =
            self.on_session(session, self.run(["display-message", "-p", "-t", target.as_str(), "#{pane_dead}"]))?;
        let mut args = vec!["capture-pane", "-p"];
        if colors {
            args.push("-e");
        }
        let start = format!("-{lines}");
        if dead.trim() == "1" {
            args.extend(["-S", "-"]);
        } else if lines > 0 {
            args.extend(["-S", start.as_str()]);
        }
        args.extend(["-t", target.as_str()]);
        let screen = self.on_session(session, self.run(args))?;
        Ok(panes::trim_trailing_blank_lines(&screen).trim_start_matches('\n').to_owned())
    }

    fn list(&self) -> Result<Vec<SessionSeen>, AdapterError> {
        let mut seen = self.list_once()?;
        // tmux before 3.5 can miss the SIGCHLD of a pane's process: the pane then reads dead
        // with no status, for good, and pane-died never fires (and for a moment after an exit,
        // any version may show that). Any child of the server exiting makes it reap all of its
        // children, which records the status and fires the hook; a background `run-shell` is
        // such a child.
        for _ in 0..REAP_ATTEMPTS {
            if !seen.iter().any(panes::dead_without_status) {
                break;
            }
            self.run(["run-shell", "-b", "true"])?;
            std::thread::sleep(REAP_WAIT);
            seen = self.list_once()?;
        }
        Ok(seen)
    }

    fn kill(&self, session: &SessionName) -> Result<(), AdapterError> {
        match self.run(["kill-session", "-t", &exact(session)]) {
            Err(e) if no_server(&e) || no_session(&e) => Ok(()),
            other => other.map(drop),
        }
    }

    fn attach_command(&self, session: &SessionName) -> Vec<String> {
        vec![
            self.program.display().to_string(),
            "-S".into(),
            self.socket.display().to_string(),
            "attach-session".into(),
            "-t".into(),
            exact(session),
        ]
    }
}

/// The session named exactly `session`, never one whose name merely starts with it.
fn exact(session: &SessionName) -> String {
    format!("={session}")
}

/// The current pane of the session named exactly `session`.
/// tmux's name of a key that is not text.
fn key_name(key: &TermKey) -> &'static str {
    match key {
        TermKey::Enter => "Enter",
        TermKey::Tab => "Tab",
        TermKey::Esc => "Escape",
        TermKey::Backspace => "BSpace",
        TermKey::Up => "Up",
        TermKey::Down => "Down",
        TermKey::Left => "Left",
        TermKey::Right => "Right",
        TermKey::Home => "Home",
        TermKey::End => "End",
        TermKey::PageUp => "PPage",
        TermKey::PageDown => "NPage",
        TermKey::Insert => "IC",
        TermKey::Delete => "DC",
        TermKey::BackTab => "BTab",
        TermKey::Text(_) | TermKey::Ctrl(_) | TermKey::Alt(_) | TermKey::F(_) => "",
    }
}

fn exact_pane(session: &SessionName) -> String {
    format!("={session}:")
}

/// tmux failed because no server runs on the socket (or the socket is missing or stale).
fn no_server(err: &AdapterError) -> bool {
    matches!(err, AdapterError::Command { stderr, .. }
        if stderr.contains("no server running") || stderr.contains("error connecting to"))
}

/// tmux failed because the target session does not exist. "no current target" is what a server
/// holding no session at all answers (one just started by a `new-session` that has not made its
/// session yet, or one about to exit), so the named session does not exist either.
/// How many times a session is asked of a server that may be on its way out (see `spawn`):
/// within about a second in all.
const SPAWN_TRIES: u32 = 8;

fn no_session(err: &AdapterError) -> bool {
    matches!(err, AdapterError::Command { stderr, .. }
        if ["can't find session", "can't find pane", "can't find window", "no current target"]
            .iter()
            .any(|says| stderr.contains(says)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settle_delay_grows_with_the_text_up_to_its_cap() {
        let settle = SettleDelay::default();
        assert_eq!(settle.for_text("hi"), Duration::from_millis(50));
        assert_eq!(settle.for_text(&"x".repeat(200)), Duration::from_millis(60));
        assert_eq!(settle.for_text(&"x".repeat(100_000)), Duration::from_millis(500));
    }
}
