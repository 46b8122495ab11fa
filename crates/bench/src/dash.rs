//! Issue 12's figures, with `bosun dash` running in a tmux server of the bench's own beside 50
//! agents: a new agent to its row on the dashboard, a key typed in the workspace view to its
//! echo in the panel, and the dashboard's CPU while nothing happens.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use bosun_testkit::bosun::Bosun;
use bosun_testkit::repo::TempRepo;

use crate::{wait_secs, Figure};

const AGENTS: usize = 50;
const NEW: usize = 10;
const KEYS: usize = 20;
const IDLE: Duration = Duration::from_secs(20);

pub fn figures(bin: &Path) -> Vec<Figure> {
    let bosun = Bosun::new(bin);
    let repo = TempRepo::new();
    let echo = ["--", "sh", "-c", "while read l; do echo \"got: $l\"; done"];
    for n in 0..AGENTS {
        let name = format!("idle{n}");
        let mut args = vec!["--name", name.as_str()];
        args.extend_from_slice(&echo);
        bosun.start(repo.path(), &args);
    }
    wait_secs(120, || {
        (bosun.list().agents.iter().filter(|a| a.state.label() == "running").count() == AGENTS).then_some(())
    });
    let screen = Screen::new(&bosun);
    screen.wait_for(|t| t.contains(&format!("idle{}", AGENTS - 1)));
    let cpu = screen.cpu_while_idle();
    let mut shown = Vec::new();
    for n in 0..NEW {
        let name = format!("probe{n}");
        let mut args = vec!["--name", name.as_str()];
        args.extend_from_slice(&echo);
        bosun.start(repo.path(), &args);
        // The start returned: the agent is recorded. Until the dashboard shows it:
        let t0 = Instant::now();
        screen.wait_for(|t| t.contains(&name));
        shown.push(t0.elapsed());
    }
    // The newest agent is on top: open its workspace view and type into it.
    screen.keys(&["w"]);
    screen.wait_for(|t| t.contains("Ctrl+\\:sidebar"));
    let mut echoed = Vec::new();
    let mut typed = String::new();
    for n in 0..KEYS {
        let c = char::from(b'a' + (n % 26) as u8);
        typed.push(c);
        let t0 = Instant::now();
        screen.keys(&["-l", &c.to_string()]);
        screen.wait_for(|t| t.contains(&typed));
        echoed.push(t0.elapsed());
    }
    vec![
        Figure::new(format!("new agent to its row in `bosun dash`, {AGENTS} agents (n={NEW})"), shown, "< 100 ms", "-"),
        Figure::new(format!("key typed in the workspace view to its echo (n={KEYS})"), echoed, "< 50 ms", "-"),
        Figure::value(
            format!("dashboard CPU, {AGENTS} agents, nothing happening, {} s", IDLE.as_secs()),
            format!("{cpu:.2} % of a core"),
            "< 2 %",
            "-",
        ),
    ]
}

/// `bosun dash` in a tmux server of the bench's own (200×50), killed when dropped.
struct Screen {
    dir: tempfile::TempDir,
}

impl Screen {
    fn new(bosun: &Bosun) -> Self {
        let screen = Self { dir: tempfile::tempdir().expect("temp dir") };
        let q = |p: &Path| format!("'{}'", p.display());
        let script = format!(
            "BOSUN_STATE_DIR={} CLAUDE_CONFIG_DIR={} exec {} dash",
            q(bosun.state_dir()),
            q(bosun.claude_config()),
            q(bosun.bin())
        );
        let out = screen.tmux(&["new-session", "-d", "-s", "dash", "-x", "200", "-y", "50", "sh", "-c", &script]);
        assert!(out.status.success(), "tmux: {}", String::from_utf8_lossy(&out.stderr));
        screen
    }

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

    fn wait_for(&self, f: impl Fn(&str) -> bool) {
        wait_secs(30, || f(&self.text()).then_some(()));
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "dash"];
        args.extend_from_slice(keys);
        assert!(self.tmux(&args).status.success());
    }

    /// The dashboard process's CPU over `IDLE`, in percent of one core.
    fn cpu_while_idle(&self) -> f64 {
        let out = self.tmux(&["display-message", "-p", "-t", "dash", "#{pane_pid}"]);
        let pid = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let ticks = || -> u64 {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or_default().split_whitespace().collect();
            fields.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
                + fields.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0)
        };
        let (t0, c0) = (Instant::now(), ticks());
        std::thread::sleep(IDLE);
        let used = (ticks() - c0) as f64 / 100.0;
        used / t0.elapsed().as_secs_f64() * 100.0
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}
