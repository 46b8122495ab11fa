//! Gemini CLI's config, as its driver knows it: where the user's is (`$GEMINI_CLI_HOME/.gemini`,
//! else `~/.gemini`), what an own config is made of, and its login check.
//!
//! Gemini CLI reads hooks only from settings files (its user's `settings.json`, a trusted
//! project's `.gemini/settings.json`, a root-owned system file) and from extensions in its home:
//! none takes a file bosun names on the command line. So every Gemini agent, here or confined,
//! runs with a home of its own (`GEMINI_CLI_HOME`, the agent's own config), where bosun's hooks
//! are an extension (`gemini::files`). It is made once from the user's: their login
//! (`oauth_creds.json`, `google_accounts.json`) as it is, their `settings.json` (auth method,
//! model, UI, approval mode, policies) but for what runs their own programs (`hooks`,
//! `hooksConfig`, `mcpServers`), and a `trustedFolders.json` of its own that trusts the agent's
//! workspace and its repository.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::client_check::Client;
use crate::own_config::{var, OwnConfig, Seed, SeedError, Seeding, UserConfig};

/// The variable Gemini CLI reads its home from (its config is in `.gemini/` there).
pub const HOME_VAR: &str = "GEMINI_CLI_HOME";

/// Gemini CLI, as bosun probes it. Its login check: `gemini --list-sessions` exits 41 saying
/// "Please set an Auth method …" when it has no way to sign in, and lists sessions (offline)
/// when it has one.
pub static CLIENT: Client = Client {
    program: "gemini",
    package: "@google/gemini-cli",
    login_check: ["--list-sessions", "--skip-trust"],
    key_vars: &["GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA"],
    log_in: "run `gemini` and sign in, or set GEMINI_API_KEY",
    config: None,
    otherwise: crate::client_check::no_other_way,
    login_said: None,
    // Without it, each run starts Node.js twice: the second with `--max-old-space-size` set to
    // half the machine's memory (0.61.0's `getNodeMemoryArgs`), which a probe does not need.
    probe_env: &[("GEMINI_CLI_NO_RELAUNCH", "true")],
};

/// The sign-in method (`security.auth.selectedType`) the variables of `env` choose, in the order
/// Gemini CLI itself reads them when it runs headless: Google sign-in, Vertex AI, an API key.
/// Run in a terminal with none chosen in its settings, Gemini CLI opens its sign-in dialog even
/// with `GEMINI_API_KEY` set ("Existing API key detected … Select \"Gemini API Key\""), so a
/// home made without the user's settings (a pod's) has it written.
pub(super) fn sign_in(env: &BTreeMap<String, String>) -> Option<&'static str> {
    let on = |name: &str| env.get(name).is_some_and(|v| v == "true");
    if on("GOOGLE_GENAI_USE_GCA") {
        Some("oauth-personal")
    } else if on("GOOGLE_GENAI_USE_VERTEXAI") {
        Some("vertex-ai")
    } else {
        env.get("GEMINI_API_KEY").filter(|key| !key.is_empty()).map(|_| "gemini-api-key")
    }
}

/// `.gemini/settings.json`: the user's, but for their programs.
const SETTINGS: Seeding = Seeding::Made(settings);
/// `.gemini/trustedFolders.json`: the agent's folders trusted.
const TRUSTED: Seeding = Seeding::Made(trusted_folders);

/// The user's Gemini config directory (`.gemini` in `GEMINI_CLI_HOME`, else in `HOME`).
pub(super) fn user_config(env: &BTreeMap<String, String>) -> UserConfig {
    let home = var(env, HOME_VAR).or_else(|| var(env, "HOME"));
    UserConfig { dir: home.map(|h| h.join(".gemini")), state: None }
}

pub(super) fn seeds(own: &OwnConfig) -> Vec<Seed> {
    vec![
        Seed { name: ".gemini/oauth_creds.json", from: own.user_file("oauth_creds.json"), how: Seeding::Copy },
        Seed { name: ".gemini/google_accounts.json", from: own.user_file("google_accounts.json"), how: Seeding::Copy },
        Seed { name: ".gemini/settings.json", from: own.user_file("settings.json"), how: SETTINGS },
        Seed { name: ".gemini/trustedFolders.json", from: None, how: TRUSTED },
    ]
}

/// Points Gemini CLI's home at `dir` (its config in `dir/.gemini`).
pub(super) fn point(dir: &Path, env: &mut BTreeMap<String, String>) {
    env.insert(HOME_VAR.into(), dir.display().to_string());
}

/// The user's `settings.json` without `hooks`, `hooksConfig` (which can turn bosun's off) and
/// `mcpServers`. Gemini CLI's settings may hold comments: a file JSON cannot read is an error.
fn settings(user: Option<&str>, _trusted: &[PathBuf]) -> Result<Option<String>, SeedError> {
    let Some(text) = user else { return Ok(None) };
    let mut settings: Value = serde_json::from_str(text).map_err(SeedError::NotJson)?;
    let Some(fields) = settings.as_object_mut() else { return Err(SeedError::NotObject) };
    for theirs in ["hooks", "hooksConfig", "mcpServers"] {
        fields.remove(theirs);
    }
    Ok(Some(format!("{settings:#}\n")))
}

/// `{"<folder>": "TRUST_FOLDER", …}` for the folders the agent's program is to trust.
fn trusted_folders(_user: Option<&str>, trusted: &[PathBuf]) -> Result<Option<String>, SeedError> {
    let folders: serde_json::Map<String, Value> =
        trusted.iter().map(|dir| (dir.display().to_string(), Value::from("TRUST_FOLDER"))).collect();
    Ok(Some(format!("{:#}\n", Value::Object(folders))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_own_config_holds_the_login_the_settings_but_for_their_programs_and_the_trust() {
        let env: BTreeMap<String, String> = [("HOME".to_owned(), "/home/u".to_owned())].into();
        let own = OwnConfig::new(crate::driver::DriverKind::Gemini, Path::new("/s/agents/a"), &env).expect("a config");
        assert_eq!(own.user.as_deref(), Some(Path::new("/home/u/.gemini")));
        let seeds = own.seeds();
        let names: Vec<&str> = seeds.iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                ".gemini/oauth_creds.json",
                ".gemini/google_accounts.json",
                ".gemini/settings.json",
                ".gemini/trustedFolders.json"
            ]
        );
        assert_eq!(seeds[0].from.as_deref(), Some(Path::new("/home/u/.gemini/oauth_creds.json")));
        let user = r#"{"security": {"auth": {"selectedType": "oauth-personal"}}, "model": {"name": "gemini-2.5-pro"},
            "hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "touch /tmp/pwned"}]}]},
            "hooksConfig": {"enabled": false}, "mcpServers": {"evil": {"command": "x"}}}"#;
        let made: Value = serde_json::from_str(&SETTINGS.make(Some(user), &[]).unwrap().unwrap()).unwrap();
        assert_eq!(
            made,
            serde_json::json!({"security": {"auth": {"selectedType": "oauth-personal"}},
                               "model": {"name": "gemini-2.5-pro"}})
        );
        assert!(SETTINGS.make(Some("// a comment\n{}"), &[]).unwrap_err().to_string().contains("not JSON"));
        let trust = TRUSTED.make(None, &[PathBuf::from("/s/ws"), PathBuf::from("/home/u/repo")]).unwrap().unwrap();
        let trust: Value = serde_json::from_str(&trust).unwrap();
        assert_eq!(trust, serde_json::json!({"/s/ws": "TRUST_FOLDER", "/home/u/repo": "TRUST_FOLDER"}));
        let mut pointed = BTreeMap::new();
        own.point(&mut pointed);
        assert_eq!(pointed.get(HOME_VAR).map(String::as_str), Some("/s/agents/a/config"));
        let own_home: BTreeMap<String, String> = [(HOME_VAR.to_owned(), "/g".to_owned())].into();
        assert_eq!(user_config(&own_home).dir.as_deref(), Some(Path::new("/g/.gemini")));
    }

    #[test]
    fn a_gemini_newer_than_the_pinned_one_is_warned_of() {
        use crate::client_version::untested;
        assert!(untested(CLIENT.package, "0.61.0").is_none(), "the pinned version is tested");
        let (_, warning) = untested(CLIENT.package, "0.62.1").expect("a newer one is not");
        assert!(warning.contains("gemini-cli 0.62.1 is newer") && warning.contains("0.61.0"), "{warning}");
        assert!(Client::of("/usr/local/bin/gemini").is_some_and(|c| std::ptr::eq(c, &CLIENT)));
    }
}
