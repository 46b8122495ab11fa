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
/// (`--list-models`, offline). pi has no login check that needs no provider named (`pi auth
/// check` wants `--provider` or `--model`), and its model list exits 0 even when it lists none
/// ("No models available") or its `models.json` does not parse: the probe refuses a pi that does
/// not run (on a Node.js older than 22.19 it does not load), not one without a usable provider,
/// whose first turn then fails with pi's own message.
pub static CLIENT: Client = Client {
    program: "pi",
    package: "@earendil-works/pi-coding-agent",
    login_check: ["--list-models", "--offline"],
    key_vars: &["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"],
    log_in: "run `pi` and `/login`, or set the key variable of its provider (ANTHROPIC_API_KEY, OPENAI_API_KEY, …)",
    config: None,
    otherwise: crate::client_check::no_other_way,
};

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

    #[test]
    fn a_pi_newer_than_the_pinned_one_is_warned_of_and_its_program_is_known_by_name() {
        use crate::client_version::untested;
        assert!(untested(CLIENT.package, "1.6.0").is_none(), "the pinned version is tested");
        let (_, warning) = untested(CLIENT.package, "1.7.0").expect("a newer one is not");
        assert!(warning.contains("pi-coding-agent 1.7.0 is newer") && warning.contains("1.6.0"), "{warning}");
        assert!(Client::of("/usr/local/bin/pi").is_some_and(|c| std::ptr::eq(c, &CLIENT)));
    }
}
