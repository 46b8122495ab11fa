//! bosun's own config file (`config.toml` in the state directory, or `$BOSUN_CONFIG`), as read:
//! one table per concern, each optional, none with a key bosun does not know. The daemon reads
//! it as it starts (a file that does not parse stops it, named with its line) and records it
//! when it differs from the one recorded before.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::driver::DriverKind;

/// The config file, read. Each concern is a table of its own with a default, so one is added
/// beside the others without touching them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The accounts agents sign in with, by name (`[accounts.NAME]`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub accounts: BTreeMap<String, AccountSpec>,
    /// What agents may spend in a UTC day (`[budget]`), all of them and each repository's.
    #[serde(default, skip_serializing_if = "DailyBudgets::is_empty")]
    pub budget: DailyBudgets,
}

/// `[budget]`: `daily = "20usd"` for the whole daemon, and `[budget.repos."/path"] daily = …`
/// for the agents working on one repository (in a worktree or pool slot of it).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DailyBudgets {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daily: Option<crate::budget::Budget>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub repos: BTreeMap<PathBuf, RepoBudget>,
}

impl DailyBudgets {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// A repository's daily budget.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoBudget {
    pub daily: crate::budget::Budget,
}

/// A named account: a client and the config directory its credentials live in (Claude Code's
/// `CLAUDE_CONFIG_DIR`, Codex's `CODEX_HOME`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountSpec {
    pub client: DriverKind,
    pub config: PathBuf,
}

/// A config file refused: what is wrong, and on which line.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{file}: line {line}: {what}")]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub what: String,
}

/// The longest account name.
const NAME_MOST: usize = 64;

impl Config {
    /// Whether it says nothing (no file, or an empty one).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// The config `text` (from `file`, named in errors) says.
    pub fn parse(text: &str, file: &str) -> Result<Self, ConfigError> {
        let fail = |line: usize, what: String| ConfigError { file: file.to_owned(), line, what };
        let config: Self = toml::from_str(text).map_err(|e: toml::de::Error| {
            let line = e.span().map_or(1, |s| line_of(text, s.start));
            fail(line, e.message().to_owned())
        })?;
        let at = |key: &str| line_of(text, text.find(key).unwrap_or(0));
        for (name, spec) in &config.accounts {
            if let Some(what) = account_problem(name, spec) {
                return Err(fail(at(name), what));
            }
        }
        Ok(config)
    }

    /// The account called `name`, or why not: the names there are.
    pub fn account(&self, name: &str) -> Result<&AccountSpec, String> {
        self.accounts.get(name).ok_or_else(|| {
            let names: Vec<&str> = self.accounts.keys().map(String::as_str).collect();
            match names.is_empty() {
                true => format!("no account is called {name:?}: bosun's config names none"),
                false => format!("no account is called {name:?} (there are {})", names.join(", ")),
            }
        })
    }
}

impl Config {
    /// The variables that put an agent of `driver`, whose variables are `env`, on account
    /// `name` (its config directory), or why it cannot be put there.
    pub fn account_env(
        &self,
        name: &str,
        driver: DriverKind,
        env: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, String> {
        let spec = self.account(name)?;
        if spec.client != driver {
            let (theirs, ours) = (spec.client.name(), driver.name());
            return Err(format!("account {name} is a {theirs} account, and the agent runs {ours}"));
        }
        let mut on = env.clone();
        driver.behaviour().point_config(&spec.config, &mut on);
        Ok(on.into_iter().filter(|(k, v)| env.get(k) != Some(v)).collect())
    }

    /// The account agent variables `env` of `driver` are on, by name, when the config names it.
    pub fn account_of(&self, driver: DriverKind, env: &BTreeMap<String, String>) -> Option<&str> {
        let dir = driver.behaviour().user_config(env)?.dir?;
        self.accounts.iter().find(|(_, s)| s.client == driver && s.config == dir).map(|(n, _)| n.as_str())
    }
}

fn account_problem(name: &str, spec: &AccountSpec) -> Option<String> {
    let fine = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty() || name.len() > NAME_MOST || !name.chars().all(fine) {
        return Some(format!("account {name:?}: a name is 1 to {NAME_MOST} letters, digits, '-', '_' or '.'"));
    }
    if !spec.config.is_absolute() {
        return Some(format!("account {name}: `config` is not an absolute path: {}", spec.config.display()));
    }
    if spec.client.behaviour().config_env().is_none() {
        return Some(format!("account {name}: bosun does not know where a {} agent's account is", spec.client.name()));
    }
    None
}

/// The line (from 1) of byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset).map_or(1, |head| head.matches('\n').count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn daily_budgets_are_read_for_the_daemon_and_each_repository_and_a_bad_one_named_by_line() {
        let text = "[budget]\ndaily = \"20usd\"\n\n[budget.repos.\"/src/app\"]\ndaily = { usd = 5 }\n";
        let c = Config::parse(text, "config.toml").unwrap();
        assert_eq!(c.budget.daily, Some("20usd".parse().unwrap()));
        assert_eq!(c.budget.repos[std::path::Path::new("/src/app")].daily, "5usd".parse().unwrap());
        for (bad, line) in [("[budget]\ndaily = \"lots\"\n", 2), ("[budget]\n\nweekly = \"5usd\"\n", 3)] {
            let e = Config::parse(bad, "config.toml").unwrap_err();
            assert_eq!(e.line, line, "{e}");
        }
        let e = Config::parse("[budget]\ndaily = \"lots\"\n", "config.toml").unwrap_err();
        assert!(e.to_string().contains("`5usd`"), "the forms accepted: {e}");
    }

    #[test]
    fn accounts_are_read_by_name() {
        let text = "[accounts.work]\nclient = \"claude\"\nconfig = \"/home/me/.claude-work\"\n\n\
                    [accounts.home]\nclient = \"codex\"\nconfig = \"/home/me/.codex\"\n";
        let c = Config::parse(text, "config.toml").unwrap();
        assert_eq!(
            c.accounts["work"],
            AccountSpec { client: DriverKind::Claude, config: "/home/me/.claude-work".into() }
        );
        assert_eq!(c.accounts["home"].client, DriverKind::Codex);
        assert_eq!(Config::parse("", "config.toml").unwrap(), Config::default());
    }

    #[test]
    fn a_bad_config_names_its_line() {
        let e = Config::parse("[accounts.a]\nclient = \"claude\"\nconfig = \"/x\"\nshell = 1\n", "c.toml").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("c.toml", 4), "{e}");
        assert!(e.what.contains("unknown field `shell`"), "{e}");
        let e = Config::parse("\n\n[nonsense]\n", "c.toml").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let e = Config::parse("[accounts.a]\nclient = \"vim\"\nconfig = \"/x\"\n", "c.toml").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        let e = Config::parse("\n[accounts.a]\nclient = \"claude\"\nconfig = \"rel\"\n", "c.toml").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(e.what.contains("absolute"), "{e}");
        let e = Config::parse("[accounts.\"a b\"]\nclient = \"claude\"\nconfig = \"/x\"\n", "c.toml").unwrap_err();
        assert!(e.what.contains("a name is"), "{e}");
        let e = Config::parse("[accounts.g]\nclient = \"generic\"\nconfig = \"/x\"\n", "c.toml").unwrap_err();
        assert!(e.what.contains("does not know"), "{e}");
    }

    #[test]
    fn an_account_not_named_is_refused_with_the_names_there_are() {
        let text =
            "[accounts.b]\nclient = \"claude\"\nconfig = \"/b\"\n[accounts.a]\nclient = \"claude\"\nconfig = \"/a\"\n";
        let c = Config::parse(text, "config.toml").unwrap();
        assert_eq!(c.account("z").unwrap_err(), "no account is called \"z\" (there are a, b)");
        assert!(Config::default().account("z").unwrap_err().contains("names none"));
    }

    #[test]
    fn an_account_points_its_clients_variables_at_its_directory_and_only_for_its_client() {
        let text =
            "[accounts.a]\nclient = \"claude\"\nconfig = \"/a\"\n[accounts.c]\nclient = \"codex\"\nconfig = \"/c\"\n";
        let c = Config::parse(text, "config.toml").unwrap();
        let env: BTreeMap<String, String> = [("CLAUDELESS_CONFIG_DIR".to_owned(), "/mine".to_owned())].into();
        let on = c.account_env("a", DriverKind::Claude, &env).unwrap();
        assert_eq!(on["CLAUDE_CONFIG_DIR"], "/a");
        assert_eq!(on["CLAUDELESS_CONFIG_DIR"], "/a", "claudeless, which reads its own first, too");
        assert_eq!(c.account_env("c", DriverKind::Codex, &BTreeMap::new()).unwrap()["CODEX_HOME"], "/c");
        let e = c.account_env("c", DriverKind::Claude, &env).unwrap_err();
        assert_eq!(e, "account c is a codex account, and the agent runs claude");
        let mut moved = env.clone();
        moved.extend(on);
        assert_eq!(c.account_of(DriverKind::Claude, &moved), Some("a"));
        assert_eq!(c.account_of(DriverKind::Claude, &env), None);
    }
}
