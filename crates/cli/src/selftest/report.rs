//! What the self-test prints: a line for each client found (or not) with its version against
//! the newest bosun was tested with, a line for each check (✓ or ✗, its latency, what bosun saw),
//! and the end: how long it took, the tested versions, and what to do about a ✗. `--json` gives
//! the same as one object.

use std::time::Duration;

use anyhow::Result;
use bosun_core::client_version::Version;

use super::checks::Outcome;
use super::found::Found;
use super::ClientName;

/// Where a person reports a check that goes wrong.
pub const REPORT: &str =
    "open an issue in bosun's repository with this output (`bosun doctor --clients --json`) and the versions above";

/// One whole run.
pub struct Run {
    /// Whether the clients were named on the command line.
    pub explicit: bool,
    pub found: Vec<(ClientName, Found)>,
    pub outcomes: Vec<Outcome>,
    /// What could not be taken down or removed at the end.
    pub leftovers: Vec<String>,
    pub took: Duration,
}

impl Run {
    /// Every check right, every client named found and readable, at least one client tested,
    /// and nothing left behind.
    pub fn ok(&self) -> bool {
        let tested = self.found.iter().any(|(_, f)| matches!(f, Found::Ready { .. }));
        let found_right = self.found.iter().all(|(_, f)| match f {
            Found::Ready { .. } => true,
            Found::Missing => !self.explicit,
            Found::Unreadable { .. } => false,
        });
        tested && found_right && self.outcomes.iter().all(|o| o.ok) && self.leftovers.is_empty()
    }
}

/// The line of a client found, or not.
fn client_line(name: ClientName, found: &Found, explicit: bool) -> String {
    let program = name.program();
    match found {
        Found::Ready { path, version, tested } => {
            let against = match tested {
                Some(t) if version > t => format!("newer than the newest bosun was tested with ({t})"),
                Some(t) if version < t => format!("older than the version bosun was tested with ({t})"),
                Some(_) => "the version bosun was tested with".to_owned(),
                None => "no tested version is known".to_owned(),
            };
            format!("  {program:<6} {version} at {}: {against}", path.display())
        }
        Found::Missing => {
            let what = if explicit { "✗" } else { "-" };
            format!(
                "{what} {program:<6} not installed (not on PATH): `npm install -g {}` installs it{}",
                name.package(),
                if explicit { "" } else { "; skipped" }
            )
        }
        Found::Unreadable { path, said: Some(said) } => {
            format!(
                "✗ {program:<6} at {}: its `--version` printed {said:?}, which is no version bosun can read",
                path.display()
            )
        }
        Found::Unreadable { path, said: None } => {
            format!("✗ {program:<6} at {}: `{program} --version` failed or printed nothing", path.display())
        }
    }
}

fn tested_versions() -> String {
    ClientName::ALL
        .iter()
        .map(|c| match bosun_core::client_version::tested(c.package()) {
            Some(v) => format!("{} {v}", c.title()),
            None => format!("{} (none)", c.title()),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn print(run: &Run) {
    println!("bosun doctor --clients: the installed clients through bosun, against a scripted model on 127.0.0.1");
    for (name, found) in &run.found {
        println!("{}", client_line(*name, found, run.explicit));
    }
    let width = run.outcomes.iter().map(|o| o.title.chars().count()).max().unwrap_or(0);
    for o in &run.outcomes {
        let mark = if o.ok { "✓" } else { "✗" };
        let latency = o.latency.map_or_else(|| "-".to_owned(), |l| format!("{} ms", l.as_millis()));
        let title = format!("{:<width$}", o.title);
        println!("{mark} {:<6} {title} {latency:>8}  {}", o.client.program(), o.detail);
        if let Some(screen) = o.screen.as_deref().filter(|s| !s.trim().is_empty()) {
            println!("    its screen:");
            for line in screen.lines().rev().take(6).collect::<Vec<_>>().into_iter().rev() {
                println!("    | {}", line.trim_end());
            }
        }
    }
    for line in &run.leftovers {
        println!("✗ left behind: {line}");
    }
    let checks = run.outcomes.len();
    let right = run.outcomes.iter().filter(|o| o.ok).count();
    let secs = run.took.as_secs_f64();
    if !run.found.iter().any(|(_, f)| matches!(f, Found::Ready { .. })) {
        println!("no client to test: install Claude Code, Codex, Gemini CLI, opencode or pi, or put it on PATH");
    } else {
        println!("{right} of {checks} checks right in {secs:.1} s");
    }
    println!("tested with: {} (bosun's scripts/real-clients)", tested_versions());
    if run.ok() {
        println!("bosun reads these versions right");
    } else if checks > right {
        println!("bosun misreads what it checks of this version: do not leave its agents unattended yet");
        let mut failing: Vec<ClientName> = run.outcomes.iter().filter(|o| !o.ok).map(|o| o.client).collect();
        failing.dedup();
        for client in failing {
            if let Some(tested) = bosun_core::client_version::tested(client.package()) {
                println!("  meanwhile the tested {} is `npm install -g {}@{tested}`", client.title(), client.package());
            }
        }
        println!("and {REPORT}");
    }
}

pub fn print_json(run: &Run) -> Result<()> {
    let clients: Vec<serde_json::Value> = run
        .found
        .iter()
        .map(|(name, found)| {
            let (state, path, version, said, tested) = match found {
                Found::Ready { path, version, tested } => {
                    ("found", Some(path), Some(version.to_string()), None, tested.map(|t| t.to_string()))
                }
                Found::Missing => ("missing", None, None, None, None),
                Found::Unreadable { path, said } => ("unreadable", Some(path), None, said.clone(), None),
            };
            let newer = match found {
                Found::Ready { version, tested: Some(t), .. } => Some(version > t),
                _ => None,
            };
            serde_json::json!({
                "client": name, "state": state, "path": path, "version": version, "version_said": said,
                "tested": tested, "newer_than_tested": newer,
                "line": client_line(*name, found, run.explicit).trim_start(),
            })
        })
        .collect();
    let tested: serde_json::Map<String, serde_json::Value> = ClientName::ALL
        .iter()
        .map(|c| {
            (
                c.program().to_owned(),
                bosun_core::client_version::tested(c.package()).map(|v: Version| v.to_string()).into(),
            )
        })
        .collect();
    crate::out::print_json(&serde_json::json!({
        "ok": run.ok(),
        "took_ms": u64::try_from(run.took.as_millis()).unwrap_or(u64::MAX),
        "clients": clients,
        "checks": run.outcomes,
        "left_behind": run.leftovers,
        "tested": tested,
        "report": REPORT,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn ready(version: Version, tested: Version) -> Found {
        Found::Ready { path: PathBuf::from("/bin/claude"), version, tested: Some(tested) }
    }

    #[test]
    fn a_clients_line_says_whether_it_is_newer_than_tested() {
        let tested = Version(2, 1, 332);
        let line = |v| client_line(ClientName::Claude, &ready(v, tested), false);
        assert_eq!(
            line(Version(2, 1, 400)),
            "  claude 2.1.400 at /bin/claude: newer than the newest bosun was tested with (2.1.332)"
        );
        assert_eq!(line(tested), "  claude 2.1.332 at /bin/claude: the version bosun was tested with");
        assert!(line(Version(2, 0, 1)).ends_with("older than the version bosun was tested with (2.1.332)"));
    }

    #[test]
    fn a_run_is_right_only_with_a_client_tested_every_named_one_found_and_every_check_right() {
        let run = |explicit, found: Vec<(ClientName, Found)>| Run {
            explicit,
            found,
            outcomes: Vec::new(),
            leftovers: Vec::new(),
            took: Duration::ZERO,
        };
        let claude = (ClientName::Claude, ready(Version(1, 0, 0), Version(1, 0, 0)));
        assert!(run(false, vec![claude.clone(), (ClientName::Codex, Found::Missing)]).ok(), "one missing is skipped");
        assert!(!run(true, vec![claude.clone(), (ClientName::Codex, Found::Missing)]).ok(), "one named is missing");
        assert!(!run(false, vec![(ClientName::Codex, Found::Missing)]).ok(), "none tested");
        let unreadable = Found::Unreadable { path: PathBuf::from("/bin/codex"), said: None };
        assert!(!run(false, vec![claude.clone(), (ClientName::Codex, unreadable)]).ok(), "a version unread");
        let mut left = run(false, vec![claude]);
        left.leftovers.push("process 1 (x) still runs".into());
        assert!(!left.ok(), "something left behind");
    }
}
