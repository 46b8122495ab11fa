//! Whether a client bosun knows (Claude Code, Codex) can start for an agent, told from what its
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
    /// It exited 0, printing this (its first line).
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
    /// Codex's `config.toml` (in `CODEX_HOME`, else `~/.codex`), when there is one.
    pub codex_config: Option<&'a str>,
    /// The client's arguments.
    pub args: &'a [String],
}

/// What a start makes of a probe: the line it is refused with, or warnings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    pub refusal: Option<String>,
    pub warnings: Vec<String>,
}

/// The clients bosun probes, by the file name of the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    Claude,
    Codex,
}

impl Client {
    pub fn of(program: &str) -> Option<Client> {
        match std::path::Path::new(program).file_name()?.to_str()? {
            "claude" => Some(Client::Claude),
            "codex" => Some(Client::Codex),
            _ => None,
        }
    }

    /// Its own login check's arguments.
    pub fn login_check(self) -> [&'static str; 2] {
        match self {
            Client::Claude => ["auth", "status"],
            Client::Codex => ["login", "status"],
        }
    }

    /// Its program's name on `PATH`.
    pub fn name(self) -> &'static str {
        match self {
            Client::Claude => "claude",
            Client::Codex => "codex",
        }
    }

    /// Its npm package.
    pub fn package(self) -> &'static str {
        match self {
            Client::Claude => "@anthropic-ai/claude-code",
            Client::Codex => "@openai/codex",
        }
    }

    /// Variables it authenticates with besides its login.
    fn key_vars(self) -> &'static [&'static str] {
        match self {
            Client::Claude => &[
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_AUTH_TOKEN",
                "CLAUDE_CODE_OAUTH_TOKEN",
                "CLAUDE_CODE_USE_BEDROCK",
                "CLAUDE_CODE_USE_VERTEX",
                "CLAUDE_CODE_USE_FOUNDRY",
            ],
            Client::Codex => &["OPENAI_API_KEY", "CODEX_API_KEY"],
        }
    }

    /// How to log it in.
    fn log_in(self) -> &'static str {
        match self {
            Client::Claude => "run `claude auth login`, or set ANTHROPIC_API_KEY",
            Client::Codex => "run `codex login`, or set OPENAI_API_KEY, or name a model_provider in its config.toml",
        }
    }
}

/// What a start of `program` (a client bosun knows) makes of what `probe` found.
pub fn assess(program: &str, probe: &Probe, auth: &Auth<'_>) -> Verdict {
    let Some(client) = Client::of(program) else { return Verdict::default() };
    let name = client.name();
    let reinstall =
        format!("install it again (`npm install -g {}`), or give the full path of one that runs", client.package());
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
        Ran::Ok(line) if client_version::parse(line).is_none() => {
            let tested = client_version::tested(client.package()).map_or("?".into(), |v| v.to_string());
            verdict.warnings.push(format!(
                "cannot read the version of {program} from `{name} --version` (it printed {:?}): bosun was tested \
                 with {name} {tested}; if the agent misbehaves, run `scripts/test-clients` in bosun's checkout with \
                 this {name} and report what fails",
                short(line)
            ));
        }
        Ran::Ok(_) => {}
    }
    let check = client.login_check().join(" ");
    match &probe.login {
        Ran::Ok(_) => {}
        Ran::Failed { .. } if authenticates_otherwise(client, auth) => {}
        Ran::Failed { said, .. } => {
            verdict.refusal =
                Some(format!("{program} is not logged in (`{name} {check}`: {}): {}", telling(said), client.log_in()));
        }
        Ran::NotRun(why) => verdict.warnings.push(format!(
            "cannot tell whether {program} is logged in (`{name} {check}`: {}): if the agent asks to sign in, {}",
            short(why),
            client.log_in()
        )),
    }
    verdict
}

/// Whether the client has a way to authenticate that its own check does not report.
fn authenticates_otherwise(client: Client, auth: &Auth<'_>) -> bool {
    if client.key_vars().iter().any(|v| (auth.set)(v)) {
        return true;
    }
    match client {
        Client::Claude => false,
        // A provider of its own (a local model, a proxy), named in its config or on its command
        // line (`--oss`, `-c model_provider=…`, a `--profile` that may name one).
        Client::Codex => {
            let options = ["--oss", "-c", "--config", "-p", "--profile"];
            let by_args = auth
                .args
                .iter()
                .any(|a| options.contains(&a.as_str()) || a.starts_with("--config=") || a.starts_with("--profile="));
            by_args || auth.codex_config.is_some_and(names_a_provider)
        }
    }
}

/// Whether a Codex `config.toml` names a model provider other than OpenAI's (at its top or in a
/// profile).
fn names_a_provider(config: &str) -> bool {
    config.lines().map(str::trim).any(|l| {
        let Some(rest) = l.strip_prefix("model_provider") else { return false };
        let Some(value) = rest.trim_start().strip_prefix('=') else { return false };
        let value = value.split('#').next().unwrap_or_default().trim().trim_matches(|c| c == '"' || c == '\'');
        !value.is_empty() && value != "openai"
    })
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
        Auth { set, codex_config, args }
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
