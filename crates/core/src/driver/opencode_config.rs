//! opencode's config, as its driver knows it: where the user's is (`$XDG_CONFIG_HOME/opencode`,
//! else `~/.config/opencode`), how bosun's plugin reaches it, where a confined one writes, and
//! its login check.
//!
//! opencode reads its user's config where it is and adds, on top, the config given in
//! `OPENCODE_CONFIG_CONTENT` (JSON; its `plugin` list is added to the user's). A content the
//! agent is given (or inherits) is kept, bosun's plugin added to it (`merge`); one bosun cannot
//! add to is refused at start (`check`). bosun's plugin is
//! a file in the agent's own config directory (`<agent dir>/config`), named there: nothing of
//! the user's is copied or written. (A directory named by `OPENCODE_CONFIG_DIR` would do too, but
//! opencode installs its plugin package there from the npm registry at every start of a new one,
//! and waits for that before loading any plugin.)
//!
//! Confined (a sandbox, a container), its home read-only, it reads its config and writes its
//! data (its database of sessions, logs, snapshots), state and cache in its own config directory
//! (`XDG_CONFIG_HOME`, `XDG_DATA_HOME`, `XDG_STATE_HOME`, `XDG_CACHE_HOME` there): opencode
//! writes in its config directory at every start (a `.gitignore`), and fails when it cannot. Its
//! config is the user's `opencode.json` but for what runs their programs (`plugin`, `mcp`; one
//! JSON cannot read, with comments, is not copied); no
//! login of theirs is copied (a key in its environment, or a provider of its config, signs it
//! in). Here, the copy is made too (an own config is made once, for either) and not read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::client_check::Client;
use crate::own_config::{var, OwnConfig, Seed, SeedError, Seeding, UserConfig};

/// The variable opencode reads config from, merged over the user's files.
pub const CONTENT_VAR: &str = "OPENCODE_CONFIG_CONTENT";

/// The name of bosun's plugin in the agent's own config directory.
pub const PLUGIN: &str = "bosun-plugin.js";

/// The folder there of the file its plugin keeps per session.
pub const SESSIONS: &str = "sessions";

/// opencode, as bosun probes it. It needs no login: without a key or a login it runs on the
/// free models of its own provider, so its check (`opencode auth list`, which lists the stored
/// credentials, offline) only shows it runs.
pub static CLIENT: Client = Client {
    program: "opencode",
    package: "opencode-ai",
    login_check: ["auth", "list"],
    key_vars: &["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENCODE_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY"],
    log_in: "run `opencode auth login`, or set your provider's API key",
    config: None,
    otherwise: crate::client_check::no_other_way,
    login_said: None,
    probe_env: &[],
};

/// The user's opencode config directory.
pub(super) fn user_config(env: &BTreeMap<String, String>) -> UserConfig {
    let config = var(env, "XDG_CONFIG_HOME").or_else(|| var(env, "HOME").map(|h| h.join(".config")));
    UserConfig { dir: config.map(|c| c.join("opencode")), state: None }
}

/// Names bosun's plugin in `dir` (the agent's own config directory) in `OPENCODE_CONFIG_CONTENT`,
/// after the plugins the agent's own content names, which is kept (`check` refused one bosun
/// cannot add to before the agent started).
pub(super) fn point(dir: &Path, env: &mut BTreeMap<String, String>) {
    let plugin = Value::from(dir.join(PLUGIN).display().to_string());
    let ours = serde_json::json!({ "plugin": [plugin] }).to_string();
    let content = match env.get(CONTENT_VAR) {
        Some(given) => merge(given, &ours).unwrap_or(ours),
        None => ours,
    };
    env.insert(CONTENT_VAR.into(), content);
}

/// `theirs` (a user's `OPENCODE_CONFIG_CONTENT`) with `ours` over it: its fields replaced by
/// ours, its `plugin` list added to. None when `theirs` is not a JSON object (see `check`).
pub fn merge(theirs: &str, ours: &str) -> Option<String> {
    let Ok(Value::Object(mut content)) = serde_json::from_str::<Value>(theirs) else { return None };
    let Ok(Value::Object(ours)) = serde_json::from_str::<Value>(ours) else { return None };
    for (key, value) in ours {
        match (content.get_mut(&key), value) {
            (Some(Value::Array(plugins)), Value::Array(more)) if key == "plugin" => {
                for p in more {
                    if !plugins.contains(&p) {
                        plugins.push(p);
                    }
                }
            }
            (_, value) => {
                content.insert(key, value);
            }
        }
    }
    Some(Value::Object(content).to_string())
}

/// Why the `OPENCODE_CONFIG_CONTENT` an agent is given (with `--env`, or in the caller's
/// environment) cannot be its: bosun adds its plugin to it, which it can only do to a JSON
/// object whose `plugin`, if any, is a list. Replaced, the user's config (its model, its
/// permissions) would be lost without a word; left alone, bosun would not hear the agent.
pub(super) fn check(env: &BTreeMap<String, String>) -> Result<(), String> {
    let Some(given) = env.get(CONTENT_VAR) else { return Ok(()) };
    let why = match serde_json::from_str::<Value>(given) {
        Ok(Value::Object(content)) if matches!(content.get("plugin"), None | Some(Value::Array(_))) => return Ok(()),
        Ok(Value::Object(_)) => "its `plugin` is not a list".to_owned(),
        Ok(_) => "it is not a JSON object".to_owned(),
        Err(e) => format!("it is not JSON that bosun can read ({e}; opencode's comments are not read)"),
    };
    Err(format!("{CONTENT_VAR} cannot be given to opencode with bosun's plugin added: {why}"))
}

/// The package opencode installs into every config directory it reads before it loads any plugin.
const PLUGIN_PACKAGE: &str = "@opencode-ai/plugin";

/// What tells opencode that config directory `dir` (a confined one's, or a pod's) holds its
/// plugin package, so that it starts without the npm registry (a container's or a pod's network
/// may not reach it; unreached, opencode loads no plugin, bosun's neither). opencode 1.18.33
/// (`Npm.install`) installs into a config directory that has no `node_modules`, or whose
/// `package.json` names a package that its `package-lock.json` does not; it reads nothing of the
/// package itself. Nothing there needs it: bosun's plugin imports none of it, and the config
/// bosun makes holds no plugin or tool of the user's. So the package is named in both files and
/// not installed: `node_modules` holds npm's record of a folder with no package in it.
pub(super) fn package_marks(dir: &Path) -> Vec<(PathBuf, String)> {
    let needs = serde_json::json!({ PLUGIN_PACKAGE: "*" });
    let manifest = serde_json::json!({ "dependencies": needs });
    let lock = serde_json::json!({
        "name": "opencode", "lockfileVersion": 3, "requires": true, "packages": { "": { "dependencies": needs } },
    });
    let none = serde_json::json!({ "name": "opencode", "lockfileVersion": 3, "requires": true, "packages": {} });
    [("package.json", manifest), ("package-lock.json", lock), ("node_modules/.package-lock.json", none)]
        .into_iter()
        .map(|(name, text)| (dir.join(name), format!("{text:#}\n")))
        .collect()
}

/// The user's `opencode.json`, as a confined opencode reads it from its own config.
const SETTINGS: Seeding = Seeding::Made(settings);

/// Where a confined opencode reads its config and writes (its home, the user's, is read-only
/// there, and opencode writes in its config directory at every start): its config (made from
/// the user's: `config_seeds`), data (`opencode.db`, logs, snapshots), state and cache, in its
/// own config directory `dir`.
pub(super) fn confine(dir: &Path, env: &mut BTreeMap<String, String>) {
    let homes = [("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state")];
    for (var, name) in homes.into_iter().chain([("XDG_CACHE_HOME", "cache")]) {
        env.insert(var.into(), dir.join(name).display().to_string());
    }
}

/// The files of its own config: the user's `opencode.json` (read only by a confined one, whose
/// config is there).
pub(super) fn seeds(own: &OwnConfig) -> Vec<Seed> {
    vec![Seed { name: "config/opencode/opencode.json", from: own.user_file("opencode.json"), how: SETTINGS }]
}

/// The user's `opencode.json` without what runs their programs (`plugin`, `mcp`). A file JSON
/// cannot read (opencode's may hold comments) is not copied: those cannot be taken out of it for
/// sure, and an agent here, which never reads the copy, must not fail to start for it.
fn settings(user: Option<&str>, _trusted: &[PathBuf]) -> Result<Option<String>, SeedError> {
    let Some(mut settings) = user.and_then(|text| serde_json::from_str::<Value>(text).ok()) else { return Ok(None) };
    let Some(fields) = settings.as_object_mut() else { return Ok(None) };
    for theirs in ["plugin", "mcp"] {
        fields.remove(theirs);
    }
    Ok(Some(format!("{settings:#}\n")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::OwnConfig;

    #[test]
    fn the_plugin_is_named_over_the_users_config_which_is_left_where_it_is() {
        let env: BTreeMap<String, String> = [("HOME".to_owned(), "/home/u".to_owned())].into();
        let own = OwnConfig::new(crate::driver::DriverKind::Opencode, Path::new("/s/agents/a"), &env).expect("one");
        assert_eq!(own.user.as_deref(), Some(Path::new("/home/u/.config/opencode")));
        let seeds = own.seeds();
        assert_eq!(seeds.iter().map(|s| s.name).collect::<Vec<_>>(), ["config/opencode/opencode.json"]);
        assert_eq!(seeds[0].from.as_deref(), Some(Path::new("/home/u/.config/opencode/opencode.json")));
        let user = r#"{"model": "a/b", "provider": {"a": {"options": {"baseURL": "http://x"}}},
            "plugin": ["/home/u/p.js"], "mcp": {"evil": {"type": "local", "command": ["x"]}}}"#;
        let made: Value = serde_json::from_str(&SETTINGS.make(Some(user), &[]).unwrap().unwrap()).unwrap();
        assert_eq!(made, serde_json::json!({"model": "a/b", "provider": {"a": {"options": {"baseURL": "http://x"}}}}));
        assert_eq!(SETTINGS.make(Some("// a comment\n{}"), &[]).unwrap(), None, "not copied, and no error");
        assert_eq!(SETTINGS.make(Some("[]"), &[]).unwrap(), None);
        let mut pointed = env.clone();
        own.point(&mut pointed);
        let content: Value = serde_json::from_str(&pointed[CONTENT_VAR]).unwrap();
        assert_eq!(content, serde_json::json!({"plugin": ["/s/agents/a/config/bosun-plugin.js"]}));
        let xdg: BTreeMap<String, String> = [("XDG_CONFIG_HOME".to_owned(), "/x".to_owned())].into();
        assert_eq!(user_config(&xdg).dir.as_deref(), Some(Path::new("/x/opencode")));
    }

    #[test]
    fn the_agents_own_content_is_kept_and_bosuns_plugin_added_once() {
        let mut env: BTreeMap<String, String> =
            [(CONTENT_VAR.to_owned(), r#"{"model": "a/b", "plugin": ["theirs"]}"#.to_owned())].into();
        point(Path::new("/c"), &mut env);
        point(Path::new("/c"), &mut env);
        let content: Value = serde_json::from_str(&env[CONTENT_VAR]).unwrap();
        assert_eq!(content, serde_json::json!({"model": "a/b", "plugin": ["theirs", "/c/bosun-plugin.js"]}));
        assert_eq!(check(&env), Ok(()));
        for (bad, why) in [
            ("not json", "not JSON"),
            ("// a comment\n{}", "not JSON"),
            ("[1]", "not a JSON object"),
            (r#"{"plugin": "one.js"}"#, "not a list"),
        ] {
            env.insert(CONTENT_VAR.into(), bad.into());
            let e = check(&env).unwrap_err();
            assert!(e.starts_with("OPENCODE_CONFIG_CONTENT cannot be given") && e.contains(why), "{e}");
        }
    }

    #[test]
    fn an_inherited_content_is_merged_with_bosuns_plugin_not_replaced() {
        let ours = r#"{"plugin": ["/c/bosun-plugin.js"], "model": "x/ours"}"#;
        let theirs = r#"{"model": "a/b", "permission": {"bash": "ask"}, "plugin": ["theirs.js"]}"#;
        let merged: Value = serde_json::from_str(&merge(theirs, ours).unwrap()).unwrap();
        let expected = serde_json::json!({"model": "x/ours", "permission": {"bash": "ask"}, "plugin": ["theirs.js", "/c/bosun-plugin.js"]});
        assert_eq!(merged, expected);
        let merged: Value = serde_json::from_str(&merge("{}", ours).unwrap()).unwrap();
        assert_eq!(merged["plugin"], serde_json::json!(["/c/bosun-plugin.js"]));
        assert_eq!(merge("nope", ours), None);
    }

    #[test]
    fn an_opencode_newer_than_the_pinned_one_is_warned_of() {
        use crate::client_version::untested;
        assert!(untested(CLIENT.package, "1.18.33").is_none(), "the pinned version is tested");
        let (_, warning) = untested(CLIENT.package, "1.19.0").expect("a newer one is not");
        assert!(warning.contains("opencode-ai 1.19.0 is newer") && warning.contains("1.18.33"), "{warning}");
        assert!(Client::of("/usr/local/bin/opencode").is_some_and(|c| std::ptr::eq(c, &CLIENT)));
    }
}
