//! Readiness (seed 003 §3): an agent program's own login check — `claude auth status`,
//! `codex login status` — run once for each program and remembered for `KEPT`, so that bosun
//! can warn when a job or plan starts, and a classifier that uses a program that is not ready
//! is not run (the guardrails and the heuristic decide, recorded as such). Programs without a
//! login check (claudeless, a shell) are ready as far as bosun can tell.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use wait_timeout::ChildExt;

/// How long a check's answer is kept: a person may log in meanwhile.
const KEPT: Duration = Duration::from_secs(600);
/// How long a check may take.
const CHECK_WAIT: Duration = Duration::from_secs(20);

/// Whether an agent program is ready, by its own login check.
pub trait Readiness: Send + Sync {
    /// None when `program` has no login check bosun knows; else whether it passed, and why not.
    fn check(&self, program: &str) -> Option<Result<(), String>>;

    /// What `program --version` prints (its first line), once for each program; None when it
    /// cannot run or is no client bosun knows.
    fn version(&self, _program: &str) -> Option<String> {
        None
    }
}

/// The login check of `program`'s kind: `claude` or `codex` by the name of its file.
fn login_check(program: &str) -> Option<[&'static str; 2]> {
    match Path::new(program).file_name()?.to_str()? {
        "claude" => Some(["auth", "status"]),
        "codex" => Some(["login", "status"]),
        _ => None,
    }
}

/// A check's answer, and when it was given.
type Answer = (Instant, Result<(), String>);

/// Runs the programs' own checks, each at most once every `KEPT`.
#[derive(Default)]
pub struct LoginChecks {
    checked: Mutex<BTreeMap<String, Answer>>,
    versions: Mutex<BTreeMap<String, Option<String>>>,
}

impl Readiness for LoginChecks {
    fn check(&self, program: &str) -> Option<Result<(), String>> {
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

    fn version(&self, program: &str) -> Option<String> {
        login_check(program)?;
        if let Some(known) = self.versions.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(program) {
            return known.clone();
        }
        let said = version_of(program);
        self.versions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(program.to_owned(), said.clone());
        said
    }
}

/// The first line `program --version` prints, within `CHECK_WAIT`, at most 200 bytes read.
fn version_of(program: &str) -> Option<String> {
    let mut child = crate::private::as_user(&mut Command::new(program))
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    match child.wait_timeout(CHECK_WAIT) {
        Ok(Some(status)) if status.success() => {}
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
    }
    let mut out = String::new();
    let stdout = child.stdout.take()?;
    std::io::Read::read_to_string(&mut std::io::Read::take(stdout, 200), &mut out).ok()?;
    out.lines().next().map(|l| l.trim().to_owned()).filter(|l| !l.is_empty())
}

/// `program ARGS`, within `CHECK_WAIT`: ready when it exits 0.
fn run(program: &str, args: [&str; 2]) -> Result<(), String> {
    let shown = format!("{program} {}", args.join(" "));
    let mut child = crate::private::as_user(&mut Command::new(program))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("`{shown}` cannot run: {e}"))?;
    let status = match child.wait_timeout(CHECK_WAIT) {
        Ok(Some(status)) => status,
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("`{shown}` took longer than {} s", CHECK_WAIT.as_secs()));
        }
        Err(e) => return Err(format!("`{shown}`: {e}")),
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
    let line: String = line.chars().take(200).collect();
    Err(format!("`{shown}` failed ({status}): {line}"))
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
    fn a_check_that_cannot_run_is_not_ready_and_is_remembered() {
        let checks = LoginChecks::default();
        let answer = checks.check("/nonexistent/claude").expect("claude has a check");
        assert!(answer.is_err_and(|e| e.contains("cannot run")));
        assert!(checks.checked.lock().unwrap().contains_key("/nonexistent/claude"), "remembered");
    }
}
