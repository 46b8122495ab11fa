//! `Screen`: a program running in a tmux server of the test's own (not bosun's), whose screen
//! the test reads (`capture-pane`) and types into (`send-keys`) — for the dashboard, end to end.
//! The server is killed when the `Screen` is dropped.

use std::path::Path;
use std::process::{Command, Output};

use crate::bosun::{Bosun, PATIENCE};
use crate::poll::wait_for;

pub struct Screen {
    dir: tempfile::TempDir,
}

impl Screen {
    /// `bosun ARGS` with `bosun`'s environment, in a session `screen` of `width`×`height`; `then`
    /// is shell text run after it ends (the session stays while it runs). With no `then`, bosun
    /// is the pane's process itself (`#{pane_pid}`).
    pub fn bosun(bosun: &Bosun, args: &str, (width, height): (u16, u16), then: &str) -> Self {
        let screen = Self { dir: tempfile::tempdir().expect("a temp dir for tmux") };
        let q = |p: &Path| format!("'{}'", p.display());
        let mut env =
            format!("BOSUN_STATE_DIR={} CLAUDE_CONFIG_DIR={}", q(bosun.state_dir()), q(bosun.claude_config()));
        if let Some(path) = bosun.path_var() {
            env = format!("{env} PATH={}", q(Path::new(path)));
        }
        let script = match then {
            "" => format!("{env} exec {} {args}", q(bosun.bin())),
            then => format!("{env} {} {args}; {then}", q(bosun.bin())),
        };
        let (w, h) = (width.to_string(), height.to_string());
        let out = screen.tmux(&["new-session", "-d", "-s", "screen", "-x", &w, "-y", &h, "sh", "-c", &script]);
        assert!(out.status.success(), "tmux new-session: {}", String::from_utf8_lossy(&out.stderr));
        screen
    }

    pub fn tmux(&self, args: &[&str]) -> Output {
        Command::new(crate::tools::tmux())
            .arg("-S")
            .arg(self.dir.path().join("sock"))
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("run tmux")
    }

    /// What the screen shows now.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "screen"]).stdout).into_owned()
    }

    /// Waits until the screen shows `what`; the screen then.
    pub fn shows(&self, what: &str) -> String {
        self.until(|t| t.contains(what))
    }

    /// Waits until `f` holds for the screen; the screen then.
    pub fn until(&self, f: impl Fn(&str) -> bool) -> String {
        wait_for(PATIENCE, || Some(self.text()).filter(|t| f(t)))
            .unwrap_or_else(|| panic!("the screen never showed what was waited for:\n{}", self.text()))
    }

    /// `send-keys` to the screen: tmux key names, or `-l TEXT` for text as it is.
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "screen"];
        args.extend_from_slice(keys);
        assert!(self.tmux(&args).status.success(), "send-keys {keys:?}");
    }

    /// A tmux format of the screen's pane (`#{pane_pid}`, `#{alternate_on}`).
    pub fn format(&self, format: &str) -> String {
        let out = self.tmux(&["display-message", "-p", "-t", "screen", format]);
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}
