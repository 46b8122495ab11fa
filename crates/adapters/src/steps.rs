//! Steps: a job's shell step, run so that it outlives a crash of bosun and is never run twice: the
//! daemon claims the run's directory, then a small wrapper shell in a process group of its own
//! writes its pid there, runs the command and writes its exit status (`run_dir/status`). Asked
//! again for the same run after a restart, the daemon reads the status of a run that finished
//! meanwhile, waits for one still running, and runs the command only when no run of it started.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The wrapper: writes its pid into `$3`, runs `$1` with `sh -c`, and writes its status into
/// `$2` (aside, then renamed).
/// bosun's files (`$3` the pid, `$2` the status) are written with bosun's mask, the step runs with
/// its user's (`$4`, when known).
const WRAPPER: &str = r#"b=$(umask); printf '%s' "$$" > "$3"; [ -z "$4" ] || umask "$4"; sh -c "$1"; s=$?; umask "$b"; printf '%s' "$s" > "$2.part" && mv "$2.part" "$2"; exit $s"#;

/// How long a claimed run's wrapper may take to write its pid before the run counts as never
/// started.
const CLAIM_WAIT: Duration = Duration::from_secs(2);

/// How often a run left by an earlier daemon is looked at.
const POLL: Duration = Duration::from_millis(100);

/// How a run ended: its exit status, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    Exited(i32),
    Killed,
    Failed(String),
}

/// A shell step to run: its command, with `env` besides the daemon's, in `cwd`, its output
/// appended to `log`, its pid and status kept in `run_dir`.
pub struct StepCommand<'a> {
    pub command: &'a str,
    pub env: &'a std::collections::BTreeMap<String, String>,
    pub cwd: &'a Path,
    pub log: &'a Path,
    pub run_dir: &'a Path,
}

/// Runs steps, and stops them.
pub trait Steps: Send + Sync {
    /// Runs (or takes up) the step's command; `started` is told the wrapper's pid (its process
    /// group).
    fn run(&self, step: &StepCommand<'_>, started: &mut dyn FnMut(u32)) -> Ended;
    /// Ends a running step: SIGTERM to its whole process group (its shell and all it started).
    fn stop(&self, group: u32);
}

/// Steps run by `sh`, each in a process group of its own.
#[derive(Debug, Default, Clone, Copy)]
pub struct ShellSteps;

impl Steps for ShellSteps {
    fn run(&self, step: &StepCommand<'_>, started: &mut dyn FnMut(u32)) -> Ended {
        run(step.command, step.env, step.cwd, step.log, step.run_dir, started)
    }
    fn stop(&self, group: u32) {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(group as i32), nix::sys::signal::Signal::SIGTERM);
    }
}

fn run(
    command: &str,
    env: &std::collections::BTreeMap<String, String>,
    cwd: &Path,
    log: &Path,
    run_dir: &Path,
    started: &mut dyn FnMut(u32),
) -> Ended {
    let (status, pid, claim) = (run_dir.join("status"), run_dir.join("pid"), run_dir.join("claimed"));
    if claim.exists() && read_pid(&pid).is_none() {
        // Claimed by a daemon that died about then: its wrapper may be starting.
        poll_until(CLAIM_WAIT, POLL, || read_pid(&pid).is_some() || read_status(&status).is_some());
    }
    if let Some(code) = read_status(&status) {
        return Ended::Exited(code);
    }
    if let Some(alive) = read_pid(&pid).filter(|p| is_ours(*p, &status)) {
        started(alive);
        while is_ours(alive, &status) {
            std::thread::sleep(POLL);
        }
        return read_status(&status).map_or(Ended::Killed, Ended::Exited);
    }
    if let Err(e) = fs::create_dir_all(run_dir).and_then(|()| fs::write(&claim, "")) {
        return Ended::Failed(format!("cannot claim {}: {e}", run_dir.display()));
    }
    let _ = fs::remove_file(&pid);
    let out = log
        .parent()
        .map(fs::create_dir_all)
        .transpose()
        .and_then(|_| fs::OpenOptions::new().create(true).append(true).open(log));
    let (out, err) = match out.and_then(|o| o.try_clone().map(|e| (o, e))) {
        Ok(pair) => pair,
        Err(e) => return Ended::Failed(format!("cannot open {}: {e}", log.display())),
    };
    let child = Command::new("sh")
        .args(["-c", WRAPPER, "bosun-step", command])
        .arg(&status)
        .arg(&pid)
        .arg(crate::private::user_mask().map(|m| format!("{m:o}")).unwrap_or_default())
        .envs(env)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return Ended::Failed(format!("cannot run sh: {e}")),
    };
    started(child.id());
    match child.wait() {
        Ok(s) => read_status(&status).or(s.code()).map_or(Ended::Killed, Ended::Exited),
        Err(e) => Ended::Failed(format!("cannot wait for sh: {e}")),
    }
}

/// Polls `done` every `every` until it holds or `within` has passed.
fn poll_until(within: Duration, every: Duration, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + within;
    while !done() && std::time::Instant::now() < deadline {
        std::thread::sleep(every);
    }
}

fn read_status(path: &Path) -> Option<i32> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn read_pid(path: &Path) -> Option<u32> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Whether `pid` is still this run's wrapper (a pid the system gave to another process since
/// names another status file, or none).
fn is_ours(pid: u32, status: &Path) -> bool {
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let want = status.as_os_str().as_encoded_bytes();
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // A zombie has done its work: its status is written or never will be.
    let zombie = stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z'));
    !zombie && cmdline.split(|b| *b == 0).any(|arg| arg == want)
}
