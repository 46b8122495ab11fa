//! `Forge`: where pull requests are opened. `GhCli` opens them with GitHub's `gh`, which must be
//! installed and logged in (`gh auth status`); it never prompts, and every value reaches it as
//! an argument.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::AdapterError;

/// A pull request to open: `branch` (pushed already) into `into`.
#[derive(Clone, Debug)]
pub struct PrAsk<'a> {
    pub branch: &'a str,
    pub into: &'a str,
    pub title: &'a str,
    pub body: &'a str,
    pub draft: bool,
}

pub trait Forge: Send + Sync {
    /// Opens the pull request in `repo`'s forge: its URL.
    fn open_pr(&self, repo: &Path, ask: &PrAsk<'_>) -> Result<String, AdapterError>;
}

#[derive(Debug, Default)]
pub struct GhCli;

fn gh(repo: &Path) -> Command {
    let mut cmd = Command::new("gh");
    crate::private::as_user(&mut cmd);
    cmd.current_dir(repo).env("GH_PROMPT_DISABLED", "1").env("NO_COLOR", "1").stdin(Stdio::null());
    cmd
}

/// The URL of `branch`'s open pull request, as `gh pr view` tells it; none when it has none
/// (or `gh` says nothing it can read).
fn open_pr_of(repo: &Path, branch: &str) -> Option<String> {
    let out = gh(repo).args(["pr", "view", branch, "--json", "url,state"]).output().ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok().filter(|_| out.status.success())?;
    let url = v["url"].as_str().filter(|_| v["state"] == "OPEN")?;
    (url.starts_with("https://") || url.starts_with("http://")).then(|| url.chars().take(2048).collect())
}

fn refused(why: String) -> AdapterError {
    AdapterError::Command { command: "gh".into(), stderr: why }
}

impl Forge for GhCli {
    fn open_pr(&self, repo: &Path, ask: &PrAsk<'_>) -> Result<String, AdapterError> {
        let out = gh(repo).args(["auth", "status"]).output().map_err(|e| {
            refused(format!("gh cannot run ({e}): install GitHub's CLI (https://cli.github.com) to open pull requests"))
        })?;
        if !out.status.success() {
            return Err(refused("gh is not logged in: run `gh auth login` first".into()));
        }
        // The branch's open pull request, when it has one (opened by a step cut off by a
        // restart, or by an earlier `bosun pr`): the push updated it, and another cannot be made.
        if let Some(url) = open_pr_of(repo, ask.branch) {
            return Ok(url);
        }
        let mut cmd = gh(repo);
        cmd.args(["pr", "create", "--head", ask.branch, "--base", ask.into, "--title", ask.title, "--body", ask.body]);
        if ask.draft {
            cmd.arg("--draft");
        }
        let out = cmd.output().map_err(|e| refused(format!("gh cannot run: {e}")))?;
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(refused(format!("gh pr create failed: {}", err.trim())));
        }
        said.lines()
            .map(str::trim)
            .rfind(|l| l.starts_with("https://") || l.starts_with("http://"))
            .map(|l| l.chars().take(2048).collect())
            .ok_or_else(|| refused(format!("gh pr create printed no URL: {:?}", said.trim())))
    }
}
