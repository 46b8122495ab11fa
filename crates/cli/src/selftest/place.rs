//! Where the self-test runs: a temp directory (`bosun-selftest-<random>` in the system's temp
//! dir, mode 0700) holding a home, a temp dir, a bosun state directory, a git repository and the clients'
//! config directories, and a process environment that names none of the user's: the user's
//! config, credentials and API keys are removed from it, `HOME` is the temp home and `TMPDIR` the temp dir, so neither
//! the private daemon and tmux server it starts nor any client they run can reach them.
//!
//! `finish` (or a drop) takes it all down: the tmux server, the daemon, then every process whose
//! command line or environment still names the directory, then the directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use bosun_wire::{Request, StateDir};

use crate::client::Client;

/// Variables removed besides `bosun_model_server::clients::SCRUBBED`: where the user's configs
/// are, and the desktop (a self-test notifies nobody).
const REMOVED: &[&str] = &[
    "BOSUN_STATE_DIR",
    "CLAUDE_CONFIG_DIR",
    "CLAUDELESS_CONFIG_DIR",
    "CODEX_HOME",
    "PI_CODING_AGENT_DIR",
    "PI_CODING_AGENT_SESSION_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "DBUS_SESSION_BUS_ADDRESS",
];
/// Variables removed by the start of their name: an account's settings and keys.
const REMOVED_PREFIXES: &[&str] = &["ANTHROPIC_", "OPENAI_", "CLAUDE_", "CODEX_", "AWS_", "GOOGLE_", "AZURE_"];
/// Variables removed by the end of their name: any other credential.
const REMOVED_SUFFIXES: &[&str] = &["_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_CREDENTIALS"];
/// How long the daemon and the processes left may take to go.
const GONE_WAIT: Duration = Duration::from_secs(10);

pub struct Place {
    dir: PathBuf,
    finished: bool,
}

impl Place {
    /// Makes the directory, its home and repository, and clears the environment.
    pub fn new() -> Result<Self> {
        let dir = std::env::temp_dir().join(format!("bosun-selftest-{:08x}", fastrand::u32(..)));
        std::fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        // Resolved, so the paths bosun records and the paths git reports compare alike.
        let dir = std::fs::canonicalize(&dir).with_context(|| format!("cannot resolve {}", dir.display()))?;
        let place = Self { dir, finished: false };
        for sub in ["home", "tmp", "state", "repo", "configs"] {
            let path = place.dir.join(sub);
            std::fs::create_dir(&path).with_context(|| format!("cannot create {}", path.display()))?;
        }
        clear_environment(&place.dir.join("home"), &place.dir.join("tmp"));
        if let Err(e) = make_repo(&place.repo()) {
            place.finish();
            return Err(e);
        }
        Ok(place)
    }

    /// The repository every agent's workspace is made from.
    pub fn repo(&self) -> PathBuf {
        self.dir.join("repo")
    }

    /// A fresh directory for one agent's config and home.
    pub fn config_dir(&self, name: &str) -> PathBuf {
        self.dir.join("configs").join(name)
    }

    fn state(&self) -> Result<StateDir> {
        Ok(StateDir::new(self.dir.join("state"))?)
    }

    /// The private bosun, its daemon started.
    pub fn start_bosun(&self) -> Result<Client> {
        let client = Client::new(self.state()?);
        client.start_daemon().context("the self-test's own bosun daemon did not start")?;
        Ok(client)
    }

    /// Takes everything down and removes the directory: what could not be, said in a line each.
    pub fn finish(mut self) -> Vec<String> {
        self.take_down()
    }

    fn take_down(&mut self) -> Vec<String> {
        if self.finished {
            return Vec::new();
        }
        self.finished = true;
        let mut left = Vec::new();
        if let Ok(dirs) = self.state() {
            // The clients first, so no hook of a dying client asks for a daemon again.
            let _ = Command::new("tmux")
                .arg("-S")
                .arg(dirs.tmux_socket())
                .arg("kill-server")
                .env_remove("TMUX")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            let client = Client::new(dirs);
            let _ = client.request_if_running(Request::Shutdown);
            let deadline = Instant::now() + GONE_WAIT;
            while client.daemon_alive() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        left.extend(end_processes_naming(&self.dir));
        if std::fs::remove_dir_all(&self.dir).is_err() {
            // A process that went last may have written one more file.
            left.extend(end_processes_naming(&self.dir));
            if let Err(e) = std::fs::remove_dir_all(&self.dir) {
                left.push(format!("cannot remove {}: {e}", self.dir.display()));
            }
        }
        left
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        for line in self.take_down() {
            eprintln!("bosun: {line}");
        }
    }
}

/// This process's environment (and so the daemon's, the tmux server's and every agent's) without
/// the user's configs and keys, with `home` as `HOME` and `tmp` as `TMPDIR` (where the clients
/// keep sockets and scripts of their own). Called before any thread is started.
fn clear_environment(home: &Path, tmp: &Path) {
    let removed = |name: &str| {
        bosun_model_server::clients::SCRUBBED.contains(&name)
            || REMOVED.contains(&name)
            || REMOVED_PREFIXES.iter().any(|p| name.starts_with(p))
            || REMOVED_SUFFIXES.iter().any(|s| name.ends_with(s))
    };
    let names: Vec<_> = std::env::vars_os().map(|(k, _)| k).filter(|k| k.to_str().is_none_or(removed)).collect();
    for name in names {
        std::env::remove_var(name);
    }
    std::env::set_var("HOME", home);
    std::env::set_var("TMPDIR", tmp);
}

/// A repository on branch `main` with one commit (a README and pi's project settings).
fn make_repo(repo: &Path) -> Result<()> {
    std::fs::write(repo.join("README.md"), "A repository of bosun's self-test.\n")?;
    // Project resources, which pi asks to trust before it loads them.
    std::fs::create_dir(repo.join(".pi"))?;
    std::fs::write(repo.join(".pi/settings.json"), "{}\n")?;
    let steps: [&[&str]; 3] = [
        &["init", "-q", "-b", "main"],
        &["add", "README.md", ".pi"],
        &[
            "-c",
            "user.name=bosun",
            "-c",
            "user.email=selftest@bosun.invalid",
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-qm",
            "bosun self-test",
        ],
    ];
    for args in steps {
        let out =
            Command::new("git").args(args).current_dir(repo).stdin(Stdio::null()).output().context("cannot run git")?;
        if !out.status.success() {
            bail!("git {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
        }
    }
    Ok(())
}

/// Kills (SIGKILL) every process of this user's whose command line or environment names `dir`,
/// but this one, until none is left or `GONE_WAIT` has passed: the ones that outlived it.
fn end_processes_naming(dir: &Path) -> Vec<String> {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    let deadline = Instant::now() + GONE_WAIT;
    loop {
        let found = processes_naming(dir);
        if found.is_empty() {
            return Vec::new();
        }
        if Instant::now() >= deadline {
            return found.into_iter().map(|(pid, cmd)| format!("process {pid} ({cmd}) still runs")).collect();
        }
        for (pid, _) in &found {
            if let Ok(pid) = i32::try_from(*pid) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The processes (pid, command) whose command line or environment names `dir`, from `/proc`.
fn processes_naming(dir: &Path) -> Vec<(u32, String)> {
    /// The most of a process's command line or environment read.
    const READ_MAX: u64 = 1024 * 1024;
    let needle = dir.display().to_string();
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let read = |path: PathBuf| -> String {
        use std::io::Read;
        let mut bytes = Vec::new();
        if let Ok(file) = std::fs::File::open(path) {
            let _ = file.take(READ_MAX).read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            if pid == me {
                return None;
            }
            let cmdline = read(entry.path().join("cmdline"));
            // A zombie has neither: it is gone but for its parent's wait.
            (cmdline.contains(&needle) || read(entry.path().join("environ")).contains(&needle)).then(|| {
                let shown: String = cmdline.replace('\0', " ").trim().chars().take(80).collect();
                (pid, shown)
            })
        })
        .collect()
}
