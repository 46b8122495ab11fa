//! pi's config, as its driver knows it: where the user's is (`$PI_CODING_AGENT_DIR`, else
//! `~/.pi/agent`), what an own config (a confined agent's) is made of, and how bosun probes it.
//!
//! pi keeps its providers' keys in `auth.json`, its custom providers (base URL, API, key or the
//! variable naming it) in `models.json`, its settings in `settings.json`, its saved project-trust
//! decisions in `trust.json` and its sessions under `sessions/`. An own config gets the first two
//! as they are, the user's settings but for what runs or names their own programs and files
//! (`packages`, `extensions`, `sessionDir`: the sessions must stay in the own config, where a
//! resume finds them), and a `trust.json` of its own that trusts the agent's workspace and its
//! repository. bosun's own hooks never go in a config: they are an extension named on pi's
//! command line (`pi::files`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::client_check::Client;
use crate::own_config::{var, OwnConfig, Seed, SeedError, Seeding, UserConfig};

/// The variable pi reads its config directory from.
pub const DIR_VAR: &str = "PI_CODING_AGENT_DIR";
/// The variable that moves pi's sessions out of its config directory.
pub const SESSION_DIR_VAR: &str = "PI_CODING_AGENT_SESSION_DIR";

/// pi, as bosun probes it before an agent runs it: its `--version`, and its model list
/// (`--list-models`, offline), which lists the models of the providers it has a key for,
/// wherever the key is (pi's `auth.json` from `/login`, an `apiKey` of a provider of its
/// `models.json`, literal or the variable it names, the provider's variable such as
/// `ANTHROPIC_API_KEY`), and says "No models available" when it has none. It exits 0 either way
/// (and `pi auth check` wants a provider named): what it lists tells (`missing_key`).
pub static CLIENT: Client = Client {
    program: "pi",
    package: "@earendil-works/pi-coding-agent",
    login_check: ["--list-models", "--offline"],
    key_vars: &["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"],
    log_in: "run `pi` and `/login`, or set the key variable of its provider (ANTHROPIC_API_KEY, OPENAI_API_KEY, …)",
    config: Some((DIR_VAR, ".pi/agent", "settings.json")),
    otherwise: crate::client_check::no_other_way,
    login_said: Some(missing_key),
    probe_env: &[],
};

/// The variables pi reads the keys of its best-known providers from (pi-ai's `env-api-keys`).
const PROVIDER_VARS: [(&str, &str); 8] = [
    ("anthropic", "ANTHROPIC_API_KEY"),
    ("openai", "OPENAI_API_KEY"),
    ("google", "GEMINI_API_KEY"),
    ("openrouter", "OPENROUTER_API_KEY"),
    ("mistral", "MISTRAL_API_KEY"),
    ("groq", "GROQ_API_KEY"),
    ("xai", "XAI_API_KEY"),
    ("deepseek", "DEEPSEEK_API_KEY"),
];

/// What pi lacks to run, from its model list (`said`): the key of the provider the agent's
/// arguments name (`--provider`), or of any provider (naming then the `defaultProvider` of its
/// `settings.json`, `config`, when it has one). None when it has one, when the arguments give
/// a key (`--api-key`), or when the list cannot be read. No key is ever in what it says: the
/// list names providers and models only.
fn missing_key(said: &str, args: &[String], config: Option<&str>) -> Option<String> {
    let arg = |name: &str| {
        let eq = format!("{name}=");
        args.iter().enumerate().find_map(|(i, a)| match a.strip_prefix(&eq) {
            Some(value) => Some(value.to_owned()),
            None => (a == name).then(|| args.get(i + 1).cloned()).flatten(),
        })
    };
    if args.iter().any(|a| a == "--api-key" || a.starts_with("--api-key=")) {
        return None;
    }
    let listed = listed_providers(said)?;
    if let Some(provider) = arg("--provider").filter(|p| !p.is_empty()) {
        let has = listed.iter().any(|p| p.eq_ignore_ascii_case(&provider));
        let others = if listed.is_empty() { "none".to_owned() } else { listed[..listed.len().min(5)].join(", ") };
        return (!has).then(|| no_key(&provider, &format!("named by --provider; it has keys for {others}")));
    }
    if !listed.is_empty() {
        return None;
    }
    let default = config
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .and_then(|v| v["defaultProvider"].as_str().map(head_of))
        .filter(|p| !p.is_empty());
    Some(match default {
        Some(provider) => no_key(&provider, "its defaultProvider; it has no key for any"),
        None => format!(
            "has no key for any provider (`pi --list-models --offline`: No models available): {}",
            CLIENT.log_in
        ),
    })
}

/// "has no key for provider P (why): set its variable, or run `pi` and `/login`".
fn no_key(provider: &str, why: &str) -> String {
    let provider = head_of(provider);
    let var = PROVIDER_VARS.iter().find(|(p, _)| p.eq_ignore_ascii_case(&provider)).map(|(_, v)| *v);
    let give = var.map_or_else(|| "give it an `apiKey` in pi's models.json".to_owned(), |var| format!("set {var}"));
    format!("has no key for provider {provider} ({why}): {give}, or run `pi` and `/login`")
}

/// A provider's name as a message shows it: its first 60 characters, no control characters.
fn head_of(name: &str) -> String {
    name.chars().filter(|c| !c.is_control()).take(60).collect()
}

/// The providers pi's model list names (each line after its header: `provider  model  …`): none
/// when it says "No models available"; None when it is neither.
fn listed_providers(said: &str) -> Option<Vec<String>> {
    if said.contains("No models available") {
        return Some(Vec::new());
    }
    let mut lines = said.lines().map(str::trim).filter(|l| !l.is_empty());
    lines.next().filter(|header| header.split_whitespace().take(2).eq(["provider", "model"]))?;
    let mut providers: Vec<String> = lines.filter_map(|l| l.split_whitespace().next()).map(head_of).collect();
    providers.dedup();
    Some(providers)
}

/// `settings.json`: the user's, but for their programs and where their sessions go.
const SETTINGS: Seeding = Seeding::Made(settings);
/// `trust.json`: the agent's folders trusted.
const TRUST: Seeding = Seeding::Made(trust);

/// The user's pi config directory (`PI_CODING_AGENT_DIR`, else `.pi/agent` in `HOME`).
pub(super) fn user_config(env: &BTreeMap<String, String>) -> UserConfig {
    let dir = var(env, DIR_VAR).or_else(|| var(env, "HOME").map(|h| h.join(".pi").join("agent")));
    UserConfig { dir, state: None }
}

pub(super) fn seeds(own: &OwnConfig) -> Vec<Seed> {
    vec![
        Seed { name: "auth.json", from: own.user_file("auth.json"), how: Seeding::Copy },
        Seed { name: "models.json", from: own.user_file("models.json"), how: Seeding::Copy },
        Seed { name: "settings.json", from: own.user_file("settings.json"), how: SETTINGS },
        Seed { name: "trust.json", from: None, how: TRUST },
    ]
}

/// Points pi's config directory at `dir`.
pub(super) fn point(dir: &Path, env: &mut BTreeMap<String, String>) {
    env.insert(DIR_VAR.into(), dir.display().to_string());
}

/// The user's `settings.json` without `packages`, `extensions` (their programs, which also
/// resolve from the user's directory) and `sessionDir`.
fn settings(user: Option<&str>, _trusted: &[PathBuf]) -> Result<Option<String>, SeedError> {
    let Some(text) = user else { return Ok(None) };
    let mut settings: Value = serde_json::from_str(text).map_err(SeedError::NotJson)?;
    let Some(fields) = settings.as_object_mut() else { return Err(SeedError::NotObject) };
    for theirs in ["packages", "extensions", "sessionDir"] {
        fields.remove(theirs);
    }
    Ok(Some(format!("{settings:#}\n")))
}

/// `{"<folder>": true, …}` for the folders the agent's program is to trust.
fn trust(_user: Option<&str>, trusted: &[PathBuf]) -> Result<Option<String>, SeedError> {
    let folders: serde_json::Map<String, Value> =
        trusted.iter().map(|dir| (dir.display().to_string(), Value::from(true))).collect();
    Ok(Some(format!("{:#}\n", Value::Object(folders))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_own_config_holds_the_keys_the_providers_the_settings_but_for_their_programs_and_the_trust() {
        let env: BTreeMap<String, String> = [("HOME".to_owned(), "/home/u".to_owned())].into();
        let own = OwnConfig::new(crate::driver::DriverKind::Pi, Path::new("/s/agents/a"), &env).expect("a config");
        assert_eq!(own.user.as_deref(), Some(Path::new("/home/u/.pi/agent")));
        let seeds = own.seeds();
        let names: Vec<&str> = seeds.iter().map(|s| s.name).collect();
        assert_eq!(names, ["auth.json", "models.json", "settings.json", "trust.json"]);
        assert_eq!(seeds[1].from.as_deref(), Some(Path::new("/home/u/.pi/agent/models.json")));
        let user = r#"{"defaultProvider": "anthropic", "retry": {"enabled": false},
            "packages": ["npm:evil@1.0.0"], "extensions": ["./mine.ts"], "sessionDir": "/elsewhere"}"#;
        let made: Value = serde_json::from_str(&SETTINGS.make(Some(user), &[]).unwrap().unwrap()).unwrap();
        assert_eq!(made, serde_json::json!({"defaultProvider": "anthropic", "retry": {"enabled": false}}));
        assert!(SETTINGS.make(Some("[1]"), &[]).is_err(), "a settings file that is no object");
        let trusted = TRUST.make(None, &[PathBuf::from("/s/ws"), PathBuf::from("/home/u/repo")]).unwrap().unwrap();
        let trusted: Value = serde_json::from_str(&trusted).unwrap();
        assert_eq!(trusted, serde_json::json!({"/s/ws": true, "/home/u/repo": true}));
        let mut pointed = BTreeMap::new();
        own.point(&mut pointed);
        assert_eq!(pointed.get(DIR_VAR).map(String::as_str), Some("/s/agents/a/config"));
        let own_dir: BTreeMap<String, String> = [(DIR_VAR.to_owned(), "/p".to_owned())].into();
        assert_eq!(user_config(&own_dir).dir.as_deref(), Some(Path::new("/p")));
    }

    /// pi 1.6.0's `--list-models --offline`, as it printed them.
    const NONE: &str = "No models available. Use /login to log into a provider via OAuth or API key. See:\n  \
                        /p/docs/providers.md\n  /p/docs/models.md";
    const FAKE: &str = "provider    model              context  max-out  thinking  images\nbosun-fake  \
                        claude-sonnet-4-5  128K     16.4K    no        no";

    #[test]
    fn a_pi_is_signed_in_when_its_model_list_lists_the_provider_it_will_use() {
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let said = missing_key(NONE, &[], None).expect("no key at all");
        assert!(said.starts_with("has no key for any provider") && said.contains("/login"), "{said}");
        assert!(said.contains("ANTHROPIC_API_KEY"), "{said}");
        let settings = r#"{"defaultProvider": "anthropic", "defaultModel": "claude-sonnet-4-5"}"#;
        let said = missing_key(NONE, &[], Some(settings)).expect("no key for its default");
        assert_eq!(
            said,
            "has no key for provider anthropic (its defaultProvider; it has no key for any): set ANTHROPIC_API_KEY, or \
             run `pi` and `/login`"
        );
        assert_eq!(missing_key(FAKE, &[], Some(settings)), None, "pi falls back on a provider it has a key for");
        assert_eq!(missing_key(FAKE, &args(&["--provider", "bosun-fake"]), None), None);
        let said = missing_key(FAKE, &args(&["--provider=my-proxy", "fix it"]), None).expect("not that one");
        assert!(said.contains("provider my-proxy (named by --provider; it has keys for bosun-fake)"), "{said}");
        assert!(said.contains("an `apiKey` in pi's models.json"), "{said}");
        assert_eq!(missing_key(NONE, &args(&["--api-key", "k"]), None), None, "a key on its command line");
        assert_eq!(missing_key("garbage", &[], None), None, "a list it cannot read tells nothing");
        let hostile = format!("provider  model\n{}\u{1b}[2J m", "p".repeat(500));
        let said = missing_key(&hostile, &args(&["--provider", "x"]), None).unwrap();
        assert!(!said.chars().any(char::is_control) && said.len() < 400, "{said:?}");
    }

    #[test]
    fn a_pi_newer_than_the_pinned_one_is_warned_of_and_its_program_is_known_by_name() {
        use crate::client_version::untested;
        assert!(untested(CLIENT.package, "1.6.0").is_none(), "the pinned version is tested");
        let (_, warning) = untested(CLIENT.package, "1.7.0").expect("a newer one is not");
        assert!(warning.contains("pi-coding-agent 1.7.0 is newer") && warning.contains("1.6.0"), "{warning}");
        assert!(Client::of("/usr/local/bin/pi").is_some_and(|c| std::ptr::eq(c, &CLIENT)));
    }
}
