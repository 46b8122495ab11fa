//! Whether a client bosun knows (Claude Code, Codex, …) can start for an agent, told from what its
//! `--version` and its own login check (`claude auth status`, `codex login status`) said when run
//! as the agent will run it: one line saying what is wrong and how to fix it, or warnings.
//!
//! A client that does not run is refused; so is one whose check says it is not logged in, unless
//! it has a way to authenticate that its check does not see: a key in its environment, or (Codex)
//! a model provider of its own. A version that cannot be read is a warning: bosun reads a client
//! by what it does, and the version only says whether bosun was tested with it.

use crate::client_version;

/// How one of the client's commands went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ran {
    /// It exited 0, printing this on its stdout (trimmed; its first line is its version).
    Ok(String),
    /// It exited otherwise (its code, when it had one), saying this.
    Failed { code: Option<i32>, said: String },
    /// It could not be run, or did not finish in time.
    NotRun(String),
}

/// What the client's two commands said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    pub version: Ran,
    pub login: Ran,
}

/// The ways of authenticating the client's own check may not report, as the agent will have them.
pub struct Auth<'a> {
    /// Whether the agent's environment sets this variable to something.
    pub set: &'a dyn Fn(&str) -> bool,
    /// The client's config file (`Client::config`), when there is one.
    pub config: Option<&'a str>,
    /// The client's arguments.
    pub args: &'a [String],
}

/// What a start makes of a probe: the line it is refused with, or warnings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    pub refusal: Option<String>,
    pub warnings: Vec<String>,
}

/// A client bosun probes before an agent runs it here: a driver's program that has a login
/// check of its own (`AgentDriver::client`).
#[derive(Debug)]
pub struct Client {
    /// Its program's file name, as on `PATH` (`claude`; the simulator `claudeless` is none).
    pub program: &'static str,
    /// Its npm package.
    pub package: &'static str,
    /// Its own login check's arguments.
    pub login_check: [&'static str; 2],
    /// Variables it authenticates with besides its login.
    pub key_vars: &'static [&'static str],
    /// How to log it in.
    pub log_in: &'static str,
    /// Its config file that may name a way to authenticate of its own: the variable naming its
    /// directory, that directory's name in the home directory otherwise, and the file's name.
    pub config: Option<(&'static str, &'static str, &'static str)>,
    /// Whether its arguments or that config file's text name a way to authenticate that its
    /// check does not see.
    pub otherwise: fn(args: &[String], config: Option<&str>) -> bool,
    /// For a client whose login check exits 0 whatever it finds (pi's model list): what its
    /// output, the agent's arguments and that config file's text say is missing, in words that
    /// follow the program's name and say how to give it (`has no key for provider …`). A probe
    /// of such a client is not kept: the files its output reflects change with no change to the
    /// agent's environment.
    pub login_said: Option<LoginSaid>,
    /// Variables its probes (`--version`, its login check) run with besides the agent's: what
    /// spares them work an agent's run needs (Gemini CLI's relaunch of itself with a larger
    /// heap, a second Node.js start).
    pub probe_env: &'static [(&'static str, &'static str)],
}

/// What a login check's output, the agent's arguments and the client's config file say is
/// missing for it to authenticate; none when nothing is.
pub type LoginSaid = fn(said: &str, args: &[String], config: Option<&str>) -> Option<String>;

impl Client {
    /// The client `program` is, by the name of its file, among the drivers' clients.
    pub fn of(program: &str) -> Option<&'static Client> {
        let name = std::path::Path::new(program).file_name()?.to_str()?;
        crate::driver::DriverKind::ALL.iter().filter_map(|k| k.behaviour().client()).find(|c| c.program == name)
    }
}

/// No way to authenticate but a login and a key.
pub fn no_other_way(_args: &[String], _config: Option<&str>) -> bool {
    false
}

/// What a start of `program` (a client bosun knows) makes of what `probe` found.
pub fn assess(program: &str, probe: &Probe, auth: &Auth<'_>) -> Verdict {
    let Some(client) = Client::of(program) else { return Verdict::default() };
    let name = client.program;
    let reinstall =
        format!("install it again (`npm install -g {}`), or give the full path of one that runs", client.package);
    let mut verdict = Verdict::default();
    match &probe.version {
        Ran::NotRun(why) => {
            verdict.refusal = Some(format!("{program} cannot be run ({}): {reinstall}", short(why)));
            return verdict;
        }
        Ran::Failed { code, said } => {
            verdict.refusal = Some(format!(
                "{program} does not run: `{name} --version` {} ({}): {reinstall}",
                exited(*code),
                short(said)
            ));
            return verdict;
        }
        Ran::Ok(said) if client_version::parse(said.lines().next().unwrap_or_default()).is_none() => {
            let tested = client_version::tested(client.package).map_or("?".into(), |v| v.to_string());
            verdict.warnings.push(format!(
                "cannot read the version of {program} from `{name} --version` (it printed {:?}): bosun was tested \
                 with {name} {tested}; if the agent misbehaves, run `scripts/test-clients` in bosun's checkout with \
                 this {name} and report what fails",
                short(said)
            ));
        }
        Ran::Ok(_) => {}
    }
    let check = client.login_check.join(" ");
    match &probe.login {
        Ran::Ok(said) => {
            let missing = client.login_said.and_then(|read| read(said, auth.args, auth.config));
            verdict.refusal = missing.map(|missing| format!("{program} {missing}"));
        }
        Ran::Failed { .. } if authenticates_otherwise(client, auth) => {}
        Ran::Failed { said, .. } => {
            verdict.refusal =
                Some(format!("{program} is not logged in (`{name} {check}`: {}): {}", telling(said), client.log_in));
        }
        Ran::NotRun(why) => verdict.warnings.push(format!(
            "cannot tell whether {program} is logged in (`{name} {check}`: {}): if the agent asks to sign in, {}",
            short(why),
            client.log_in
        )),
    }
    verdict
}

/// Whether the client has a way to authenticate that its own check does not report.
fn authenticates_otherwise(client: &Client, auth: &Auth<'_>) -> bool {
    client.key_vars.iter().any(|v| (auth.set)(v)) || (client.otherwise)(auth.args, auth.config)
}

/// What a login check says of the login (`"loggedIn": false`, `Not logged in`), not its other
/// warnings, in one short line.
fn telling(said: &str) -> String {
    let line = said.lines().map(str::trim).find(|l| {
        let l = l.to_lowercase();
        l.contains("logged") || l.contains("login")
    });
    short(line.unwrap_or(said).trim_end_matches(','))
}

fn exited(code: Option<i32>) -> String {
    code.map_or_else(|| "was killed".to_owned(), |c| format!("exited {c}"))
}

/// The first non-empty line of `s`, at most 160 characters, control characters (a terminal's
/// escapes) shown as `?`: what goes in a one-line message.
fn short(s: &str) -> String {
    let line = s.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("nothing");
    let cut: String = line.chars().take(160).map(|c| if c.is_control() { '?' } else { c }).collect();
    if cut.len() < line.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(version: Ran, login: Ran) -> Probe {
        Probe { version, login }
    }

    fn ok(s: &str) -> Ran {
        Ran::Ok(s.into())
    }

    fn logged_out() -> Ran {
        Ran::Failed { code: Some(1), said: "Not logged in".into() }
    }

    fn none(_: &str) -> bool {
        false
    }

    fn auth<'a>(set: &'a dyn Fn(&str) -> bool, codex_config: Option<&'a str>, args: &'a [String]) -> Auth<'a> {
        Auth { set, config: codex_config, args }
    }

    #[test]
    fn a_client_that_runs_and_is_logged_in_starts_without_a_word() {
        let p = probe(ok("2.1.332 (Claude Code)"), ok("{\"loggedIn\": true}"));
        assert_eq!(assess("claude", &p, &auth(&none, None, &[])), Verdict::default());
        assert_eq!(
            assess("claudeless", &probe(Ran::NotRun("x".into()), logged_out()), &auth(&none, None, &[])),
            Verdict::default()
        );
    }

    #[test]
    fn a_client_that_does_not_run_or_is_logged_out_is_refused_in_one_line_saying_what_to_do() {
        let broken = Ran::Failed { code: Some(127), said: "/usr/bin/env: 'node': No such file or directory\n".into() };
        let v = assess("/opt/claude", &probe(broken, logged_out()), &auth(&none, None, &[]));
        let line = v.refusal.expect("refused");
        assert!(line.contains("does not run") && line.contains("node") && line.contains("npm install -g"), "{line}");
        let v = assess("codex", &probe(ok("codex-cli 0.171.0"), logged_out()), &auth(&none, None, &[]));
        let line = v.refusal.expect("refused");
        assert!(line.contains("not logged in") && line.contains("codex login"), "{line}");
        assert_eq!(line.lines().count(), 1);
        let json =
            Ran::Failed { code: Some(1), said: "{\n  \"loggedIn\": false,\n  \"authMethod\": \"none\"\n}".into() };
        let line = assess("claude", &probe(ok("2.1.332"), json), &auth(&none, None, &[])).refusal.expect("refused");
        assert!(line.contains("\"loggedIn\": false)") && line.contains("claude auth login"), "{line}");
    }

    #[test]
    fn a_key_or_a_provider_its_check_does_not_see_counts_as_logged_in() {
        let p = probe(ok("codex-cli 0.171.0"), logged_out());
        let key = |v: &str| v == "OPENAI_API_KEY";
        assert_eq!(assess("codex", &p, &auth(&key, None, &[])).refusal, None);
        let config = "model = \"gpt-5.5\"\nmodel_provider = \"fake\"\n[model_providers.fake]\nenv_key = \"K\"\n";
        assert_eq!(assess("codex", &p, &auth(&none, Some(config), &[])).refusal, None);
        assert!(assess("codex", &p, &auth(&none, Some("model_provider = \"openai\""), &[])).refusal.is_some());
        let args = vec!["--oss".to_owned()];
        assert_eq!(assess("codex", &p, &auth(&none, None, &args)).refusal, None);
        let claude_key = |v: &str| v == "ANTHROPIC_API_KEY";
        assert_eq!(assess("claude", &probe(ok("2.1.332"), logged_out()), &auth(&claude_key, None, &[])).refusal, None);
    }

    #[test]
    fn what_a_client_prints_reaches_the_message_as_one_short_line_without_its_escapes() {
        let said = format!("\u{1b}]0;pwned\u{7}\u{1b}[2J{}\nsecond line", "x".repeat(1000));
        let broken = Ran::Failed { code: Some(1), said };
        let line = assess("claude", &probe(broken, logged_out()), &auth(&none, None, &[])).refusal.expect("refused");
        assert!(!line.chars().any(char::is_control), "{line:?}");
        assert!(line.lines().count() == 1 && line.len() < 400, "{line}");
    }

    #[test]
    fn a_version_that_cannot_be_read_is_a_warning_and_a_check_that_cannot_run_too() {
        let v = assess("claude", &probe(ok("garbage"), ok("")), &auth(&none, None, &[]));
        assert_eq!(v.refusal, None);
        assert!(v.warnings.len() == 1 && v.warnings[0].contains("cannot read the version"), "{v:?}");
        let v = assess(
            "claude",
            &probe(ok("2.1.332"), Ran::NotRun("took longer than 20 s".into())),
            &auth(&none, None, &[]),
        );
        assert_eq!(v.refusal, None);
        assert!(v.warnings[0].contains("cannot tell whether"), "{v:?}");
    }
}
