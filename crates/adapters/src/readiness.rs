//! Readiness (seed 003 §3): an agent program's own login check — `claude auth status`,
//! `codex login status` — run once for each program and remembered for `KEPT`, so that bosun
//! can warn when a job or plan starts, and a classifier that uses a program that is not ready
//! is not run (the guardrails and the heuristic decide, recorded as such). Programs without a
//! login check (claudeless, a shell) are ready as far as bosun can tell. And a client's probe
//! before an agent starts it: its `--version` and its login check, run in the agent's
//! environment (what bosun makes of it is `bosun_core::client_check`'s). Which programs have a
//! login check, and what it is, each driver says (`AgentDriver::client`).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bosun_core::client_check::{Client, Probe, Ran};
use wait_timeout::ChildExt;

/// How long a check's answer is kept: a person may log in meanwhile.
const KEPT: Duration = Duration::from_secs(600);
/// How long a check may take.
const CHECK_WAIT: Duration = Duration::from_secs(20);

/// Whether an agent program is ready, by its own login check.
pub trait Readiness: Send + Sync {
    /// None when `program` has no login check bosun knows; else whether it passed, and why not.
    fn check(&self, program: &str) -> Option<Result<(), NotReady>>;

    /// `program --version` and its login check, run as an agent runs it: with `env` laid over
    /// the daemon's environment. None when `program` is no client bosun knows.
    fn probe(&self, _program: &str, _env: &BTreeMap<String, String>) -> Option<Probe> {
        None
    }
}

/// Why a program's own login check did not pass; `check` is the command as run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotReady {
    #[error("`{check}` cannot run: {why}")]
    CannotRun { check: String, why: String },
    #[error("`{check}` took longer than {secs} s", secs = CHECK_WAIT.as_secs())]
    TooLong { check: String },
    #[error("`{check}`: {why}")]
    Lost { check: String, why: String },
    /// It ran and failed (its exit status), saying this of the login.
    #[error("`{check}` failed ({status}): {said}")]
    Failed { check: String, status: String, said: String },
}

/// The login check of `program`'s client, by the name of its file (`Client::of`).
fn login_check(program: &str) -> Option<[&'static str; 2]> {
    Client::of(program).map(|c| c.login_check)
}

/// A check's answer, and when it was given.
type Answer = (Instant, Result<(), NotReady>);

/// Runs the programs' own checks, each at most once every `KEPT`.
#[derive(Default)]
pub struct LoginChecks {
    checked: Mutex<BTreeMap<String, Answer>>,
    /// Probes that found the client running and logged in, by program and environment.
    probed: Mutex<BTreeMap<(String, u64), (Instant, Probe)>>,
}

impl Readiness for LoginChecks {
    fn check(&self, program: &str) -> Option<Result<(), NotReady>> {
        let args = login_check(program)?;
        {
            let checked = self.checked.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some((_, answer)) = checked.get(program).filter(|(at, _)| at.elapsed() < KEPT) {
                return Some(answer.clone());
            }
        }
        let answer = run(program, args);
        let mut checked = self.checked.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        checked.insert(program.to_owned(), (Instant::now(), answer.clone()));
        Some(answer)
    }

    /// A probe that found the client running and logged in is kept for `KEPT` for the same
    /// program and environment; any other runs again next time (a person fixes it meanwhile), and
    /// so does any probe of a client whose login check's output tells (`Client::login_said`).
    fn probe(&self, program: &str, env: &BTreeMap<String, String>) -> Option<Probe> {
        let client = Client::of(program)?;
        let key = (program.to_owned(), fingerprint(env));
        let kept = || self.probed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, probe)) = kept().get(&key).filter(|(at, _)| at.elapsed() < KEPT) {
            return Some(probe.clone());
        }
        let mut probing = env.clone();
        probing.extend(client.probe_env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        let version = run_in(program, &["--version"], &probing);
        let login = match &version {
            Ran::Ok(_) => run_in(program, &client.login_check, &probing),
            // It does not run: its login check would say no more.
            _ => Ran::NotRun("not run".into()),
        };
        let probe = Probe { version, login };
        // A client whose output tells (pi's model list) is probed anew each time.
        if client.login_said.is_none() && matches!((&probe.version, &probe.login), (Ran::Ok(_), Ran::Ok(_))) {
            kept().insert(key, (Instant::now(), probe.clone()));
        }
        Some(probe)
    }
}

/// The first line `program --version` prints (at most 200 characters), run in the caller's
/// environment within `CHECK_WAIT`; none when it does not run or fails. Not kept.
pub fn version_line(program: &str) -> Option<String> {
    let env = Client::of(program).map(|c| c.probe_env).unwrap_or_default();
    let env = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    match run_in(program, &["--version"], &env) {
        Ran::Ok(said) => said.lines().next().map(|line| line.chars().take(200).collect()),
        _ => None,
    }
}

/// What of an environment a client's answers may depend on, hashed (its values include keys):
/// all of it but what changes from one shell command to the next.
fn fingerprint(env: &BTreeMap<String, String>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for pair in env.iter().filter(|(k, _)| !matches!(k.as_str(), "PWD" | "OLDPWD" | "SHLVL" | "_")) {
        pair.hash(&mut h);
    }
    h.finish()
}

/// The most of a client's output kept; the rest is read and dropped. pi's model list, which its
/// check is, takes about 8 KiB with the keys of three providers.
const SAID_MAX: usize = 64 * 1024;
/// How long its output may stay open once it has exited (a program it started may hold it).
const EOF_WAIT: Duration = Duration::from_secs(1);

/// `program ARGS` with `env` over the daemon's environment, stdin empty, within `CHECK_WAIT`;
/// its output read as it comes (a program that prints megabytes does not stall on a full pipe),
/// the first `SAID_MAX` bytes of each kept: all its stdout, trimmed, when it exits 0.
fn run_in(program: &str, args: &[&str], env: &BTreeMap<String, String>) -> Ran {
    let spawned = crate::private::as_user(&mut Command::new(program))
        .args(args)
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => return Ran::NotRun(e.to_string()),
    };
    let stdout = child.stdout.take().map(drain);
    let stderr = child.stderr.take().map(drain);
    let status = match child.wait_timeout(CHECK_WAIT) {
        Ok(Some(status)) => status,
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            return Ran::NotRun(format!("it took longer than {} s", CHECK_WAIT.as_secs()));
        }
        Err(e) => return Ran::NotRun(e.to_string()),
    };
    let said = |rx: Option<std::sync::mpsc::Receiver<Vec<u8>>>| {
        let kept = rx.and_then(|rx| rx.recv_timeout(EOF_WAIT).ok()).unwrap_or_default();
        String::from_utf8_lossy(&kept).into_owned()
    };
    let (stdout, stderr) = (said(stdout), said(stderr));
    if status.success() {
        return Ran::Ok(stdout.trim().to_owned());
    }
    Ran::Failed { code: status.code(), said: format!("{stdout}\n{stderr}") }
}

/// Reads `pipe` to its end on a thread of its own, keeping the first `SAID_MAX` bytes, which it
/// sends once the pipe is closed.
fn drain(mut pipe: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (mut kept, mut buf) = (Vec::new(), [0u8; 8192]);
        loop {
            match pipe.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = SAID_MAX.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
        let _ = tx.send(kept);
    });
    rx
}

/// Whether an agent run with `env` (over the daemon's environment) has `key` set to something.
pub fn is_set(env: &BTreeMap<String, String>, key: &str) -> bool {
    env.get(key).cloned().or_else(|| std::env::var(key).ok()).is_some_and(|v| !v.is_empty())
}

/// The config file of `program`'s client (`Client::config`) an agent run with `env` reads (for
/// Codex `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`), at most 256 KiB of it.
pub fn client_config(program: &str, env: &BTreeMap<String, String>) -> Option<String> {
    let (dir_var, in_home, file) = Client::of(program)?.config?;
    let var = |k: &str| env.get(k).cloned().or_else(|| std::env::var(k).ok()).filter(|v| !v.is_empty());
    let home =
        var(dir_var).map(std::path::PathBuf::from).or_else(|| var("HOME").map(|h| Path::new(&h).join(in_home)))?;
    let path = home.join(file);
    // A regular file only: a FIFO there would never end.
    std::fs::metadata(&path).ok().filter(std::fs::Metadata::is_file)?;
    let file = std::fs::File::open(path).ok()?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(file, 256 * 1024), &mut text).ok()?;
    Some(text)
}

/// `program ARGS`, within `CHECK_WAIT`: ready when it exits 0.
fn run(program: &str, args: [&str; 2]) -> Result<(), NotReady> {
    let check = format!("{program} {}", args.join(" "));
    let spawned = crate::private::as_user(&mut Command::new(program))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => return Err(NotReady::CannotRun { check, why: e.to_string() }),
    };
    let status = match child.wait_timeout(CHECK_WAIT) {
        Ok(Some(status)) => status,
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(NotReady::TooLong { check });
        }
        Err(e) => return Err(NotReady::Lost { check, why: e.to_string() }),
    };
    if status.success() {
        return Ok(());
    }
    let out = child.wait_with_output().map(|o| [o.stdout, o.stderr].concat()).unwrap_or_default();
    let said = String::from_utf8_lossy(&out);
    // What it says of the login, not its other warnings.
    let line = said
        .lines()
        .map(str::trim)
        .find(|l| l.contains("logged") || l.contains("Logged") || l.contains("login"))
        .or_else(|| said.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("");
    let said: String = line.chars().take(200).collect();
    Err(NotReady::Failed { check, status: status.to_string(), said })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_claude_and_codex_have_a_login_check() {
        assert_eq!(login_check("/usr/local/bin/claude"), Some(["auth", "status"]));
        assert_eq!(login_check("codex"), Some(["login", "status"]));
        for none in ["claudeless", "sh", "/opt/claude-wrapper", ""] {
            assert_eq!(login_check(none), None, "{none}");
            assert_eq!(LoginChecks::default().check(none), None);
        }
    }

    #[test]
    fn a_probe_runs_the_client_in_the_agents_environment_and_keeps_only_one_that_passed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let claude = dir.path().join("claude");
        let script = "#!/bin/sh\n[ \"$1\" = --version ] && { echo \"$V (Claude Code)\"; exit 0; }\n[ -n \"$KEY\" ]\n";
        std::fs::write(&claude, script).unwrap();
        std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
        let env = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
        };
        let checks = LoginChecks::default();
        let program = claude.to_str().unwrap();
        let out = checks.probe(program, &env(&[("V", "2.1.9")])).expect("claude is probed");
        assert_eq!(out.version, Ran::Ok("2.1.9 (Claude Code)".into()), "run with the agent's variables");
        assert!(matches!(out.login, Ran::Failed { code: Some(1), .. }), "{out:?}");
        let passed = checks.probe(program, &env(&[("V", "2.1.9"), ("KEY", "k")])).unwrap();
        assert_eq!(passed.login, Ran::Ok(String::new()));
        assert_eq!(checks.probed.lock().unwrap().len(), 1, "only the probe that passed is kept");
        // pi's check exits 0 with or without a key: its list tells, and is read each time.
        let pi = dir.path().join("pi");
        std::fs::write(&pi, "#!/bin/sh\necho 'provider  model'\necho 'anthropic  claude-x'\n").unwrap();
        std::fs::set_permissions(&pi, std::fs::Permissions::from_mode(0o755)).unwrap();
        let listed = checks.probe(pi.to_str().unwrap(), &env(&[])).unwrap();
        assert_eq!(listed.login, Ran::Ok("provider  model\nanthropic  claude-x".into()), "all of it");
        assert_eq!(checks.probed.lock().unwrap().len(), 1, "pi's probe is not kept");
        // A client that prints megabytes is read to its end, not waited for on a full pipe, and
        // only the start of what it said is kept.
        let loud = dir.path().join("codex");
        std::fs::write(&loud, "#!/bin/sh\nhead -c 5000000 /dev/zero | tr '\\0' x\necho\nexit 1\n").unwrap();
        std::fs::set_permissions(&loud, std::fs::Permissions::from_mode(0o755)).unwrap();
        let started = Instant::now();
        let out = checks.probe(loud.to_str().unwrap(), &env(&[])).unwrap();
        assert!(started.elapsed() < CHECK_WAIT, "read as it came");
        assert!(matches!(&out.version, Ran::Failed { said, .. } if said.len() <= 2 * SAID_MAX + 1), "kept in part");
        let missing = checks.probe("/nonexistent/codex", &env(&[])).unwrap();
        assert!(matches!(missing.version, Ran::NotRun(_)), "{missing:?}");
        assert!(checks.probe("/bin/sh", &env(&[])).is_none(), "no client bosun knows");
    }

    /// Gemini CLI's probes run with `GEMINI_CLI_NO_RELAUNCH=true` (one Node.js start, not two),
    /// over the agent's environment.
    #[test]
    fn a_probe_runs_with_its_clients_probe_variables_over_the_agents() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let gemini = dir.path().join("gemini");
        let script = "#!/bin/sh\n[ \"$1\" = --version ] && { echo \"0.61.0 $GEMINI_CLI_NO_RELAUNCH\"; exit 0; }\n[ \"$GEMINI_CLI_NO_RELAUNCH\" = true ]\n";
        std::fs::write(&gemini, script).unwrap();
        std::fs::set_permissions(&gemini, std::fs::Permissions::from_mode(0o755)).unwrap();
        let program = gemini.to_str().unwrap();
        // The probe's own value stands over the agent's.
        let env: BTreeMap<String, String> = [("GEMINI_CLI_NO_RELAUNCH".to_owned(), "false".to_owned())].into();
        let probe = LoginChecks::default().probe(program, &env).expect("gemini is a client");
        assert_eq!(probe.version, Ran::Ok("0.61.0 true".into()));
        assert_eq!(probe.login, Ran::Ok(String::new()));
        assert_eq!(version_line(program).as_deref(), Some("0.61.0 true"));
    }

    #[test]
    fn a_check_that_cannot_run_is_not_ready_and_is_remembered() {
        let checks = LoginChecks::default();
        let answer = checks.check("/nonexistent/claude").expect("claude has a check");
        assert!(answer.is_err_and(|e| e.to_string().contains("cannot run")));
        assert!(checks.checked.lock().unwrap().contains_key("/nonexistent/claude"), "remembered");
    }
}
