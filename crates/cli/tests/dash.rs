//! `bosun dash` end to end, in real tmux: the dashboard runs in a session of a tmux server of
//! the test's own (not bosun's), beside an agent; the test types keys (`send-keys`) and reads
//! the screen (`capture-pane`): the agent listed, its workspace view, a message typed into the
//! agent and its answer in the panel, the focus moved, back to the list, and quit with the
//! terminal restored.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use bosun_testkit::poll::wait_for;
use support::*;

/// A tmux server of the test's own, killed when dropped.
struct Screen {
    dir: tempfile::TempDir,
}

impl Screen {
    fn tmux(&self, args: &[&str]) -> Output {
        Command::new(bosun_testkit::tools::tmux())
            .arg("-S")
            .arg(self.dir.path().join("sock"))
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("run tmux")
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "dash"]).stdout).into_owned()
    }

    /// Waits until the screen shows `what`; the screen.
    fn shows(&self, what: &str) -> String {
        wait_for(PATIENCE, || self.text().contains(what).then(|| self.text()))
            .unwrap_or_else(|| panic!("the screen never showed {what:?}:\n{}", self.text()))
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "dash"];
        args.extend_from_slice(keys);
        assert!(self.tmux(&args).status.success());
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

fn quoted(p: &Path) -> String {
    format!("'{}'", p.display())
}

#[test]
fn the_dashboard_lists_an_agent_opens_its_workspace_types_into_it_and_quits_cleanly() {
    let bosun = bosun();
    let repo = TempRepo::new();
    // An agent that answers each line it is given.
    let id =
        bosun.start(repo.path(), &["--name", "echoer", "--", "sh", "-c", "while read l; do echo \"got: $l\"; done"]);
    bosun.wait_state(&id, "running");

    let screen = Screen { dir: tempfile::tempdir().unwrap() };
    let script = format!(
        "BOSUN_STATE_DIR={} CLAUDE_CONFIG_DIR={} {} dash; echo dashboard-gone; sleep 600",
        quoted(bosun.state_dir()),
        quoted(bosun.claude_config()),
        quoted(bosun.bin())
    );
    let started = screen.tmux(&["new-session", "-d", "-s", "dash", "-x", "120", "-y", "30", "sh", "-c", &script]);
    assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));

    let list = screen.shows("echoer");
    assert!(list.contains("bosun — 1 agent(s)") && list.contains(&id), "{list}");
    let width = || {
        let out = bosun.tmux(&["display-message", "-p", "-t", &format!("=bosun-{id}:"), "#{window_width}"]);
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let before = width();
    screen.keys(&["w"]);
    screen.shows("Ctrl+\\:sidebar  Ctrl+]:fullscreen");
    screen.shows("Status: running");
    // 70 % of 120 columns, inside the panel's border.
    wait_for(PATIENCE, || (width() == "82").then_some(())).expect("the agent's window fits the panel");

    // Typed into the agent through the panel, answered in it.
    screen.keys(&["-l", "hello dash"]);
    screen.keys(&["Enter"]);
    screen.shows("got: hello dash");

    screen.keys(&["C-\\"]);
    screen.shows("Tab:terminal  Esc:dashboard");
    screen.keys(&["Tab"]);
    screen.shows("Ctrl+\\:sidebar");
    screen.keys(&["C-\\"]);
    screen.shows("Tab:terminal");
    screen.keys(&["Escape"]);
    screen.shows("q:quit");
    wait_for(PATIENCE, || (width() == before).then_some(())).expect("its size given back");

    screen.keys(&["q"]);
    let after = screen.shows("dashboard-gone");
    assert!(!after.contains("q:quit"), "the dashboard's screen is gone: {after}");
    let mode = screen.tmux(&["display-message", "-p", "-t", "dash", "#{alternate_on}"]);
    assert_eq!(String::from_utf8_lossy(&mode.stdout).trim(), "0", "the terminal is back from the alternate screen");
}
