//! An agent's recovery policy on the command line: `--policy FILE.toml` and the `--on-*`,
//! `--allow`, `--deny`, `--grace` and `--notify-webhook` flags, and the policy they make.

use std::path::PathBuf;
use std::str::FromStr;

use anyhow::{Context, Result};
use bosun_core::{parse_duration, AgentError, PermissionRule, Policy, Step};
use clap::Args;

/// The recovery policy. A STEP is ACTION[*ATTEMPTS][+COOLDOWN][:ARGUMENT] with ACTION one of
/// nudge:MESSAGE, resume[:MESSAGE], gate:COMMAND, wait[:MESSAGE], switch[:MESSAGE] (to the next
/// account in bosun's config), escalate, done, fail; repeat a flag to chain
/// steps, e.g. `--on-idle 'nudge*2:Continue' --on-idle 'resume:Carry on' --on-idle escalate`.
#[derive(Debug, Args, Default)]
pub struct PolicyArgs {
    /// A policy file (TOML: on_idle, on_dead, on_error, on_error_kind, on_prompt, grace,
    /// accept_trust, allow, deny, webhook, budget); the
    /// flags below add to it
    #[arg(long, value_name = "FILE.toml")]
    pub policy: Option<PathBuf>,
    /// A step for when the agent's turn ends and it waits for input
    #[arg(long = "on-idle", value_name = "STEP")]
    pub on_idle: Vec<String>,
    /// A step for when the agent's process exits by itself
    #[arg(long = "on-dead", value_name = "STEP")]
    pub on_dead: Vec<String>,
    /// A step for when a request fails; `KIND=STEP` for one kind (unauthorized, out_of_credits,
    /// rate_limited, no_internet, other)
    #[arg(long = "on-error", value_name = "[KIND=]STEP")]
    pub on_error: Vec<String>,
    /// A step for when a dialog holds the agent (permission, plan, question, setup)
    #[arg(long = "on-prompt", value_name = "STEP")]
    pub on_prompt: Vec<String>,
    /// Do not answer the agent's folder-trust dialog: leave it to --on-prompt as a setup prompt
    /// (by default bosun trusts the workspace it made for the agent)
    #[arg(long = "no-accept-trust")]
    pub no_accept_trust: bool,
    /// A permission rule whose requests bosun allows at once, in Claude Code's syntax:
    /// TOOL or TOOL(PATTERN), `*` matching anything, e.g. 'Bash(git *)', 'Write' (repeatable)
    #[arg(long, value_name = "RULE")]
    pub allow: Vec<String>,
    /// A permission rule whose requests bosun denies at once; deny wins over allow, and what no
    /// rule covers waits for a person (--on-prompt) (repeatable)
    #[arg(long, value_name = "RULE")]
    pub deny: Vec<String>,
    /// Without hooks, how long idle must last before --on-idle acts (e.g. 60s, 5m)
    #[arg(long, value_name = "DURATION")]
    pub grace: Option<String>,
    /// Also POST each escalation as JSON to this http:// or https:// URL (retried with
    /// backoff; each delivery is recorded as a webhook_sent event)
    #[arg(long = "notify-webhook", value_name = "URL")]
    pub notify_webhook: Option<String>,
    /// What the agent may spend: dollars (`5usd`, at the prices `bosun usage --help` names) or
    /// tokens of every kind (`2Mtok`, `500ktok`). At 80 % a person is told; at 100 % its turn is
    /// stopped and it is paused, its work and conversation kept, until `bosun resume AGENT
    /// --budget MORE`
    #[arg(long, value_name = "AMOUNT")]
    pub budget: Option<String>,
}

/// The policy `args` make: the file's, with the flags' steps and rules added.
pub fn policy(args: &PolicyArgs) -> Result<Policy> {
    let mut policy = match &args.policy {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
            toml::from_str::<Policy>(&text).map_err(|e| anyhow::anyhow!("{}: {}", path.display(), one_line(&e)))?
        }
        None => Policy::default(),
    };
    let step = |s: &String| Step::from_str(s).map_err(anyhow::Error::new);
    for s in &args.on_idle {
        policy.on_idle.0.push(step(s)?);
    }
    for s in &args.on_dead {
        policy.on_dead.0.push(step(s)?);
    }
    for s in &args.on_prompt {
        policy.on_prompt.0.push(step(s)?);
    }
    for s in &args.on_error {
        match s.split_once('=').map(|(k, rest)| (error_kind(k), rest)) {
            Some((Some(kind), rest)) => policy.on_error_kind.entry(kind).or_default().0.push(step(&rest.to_owned())?),
            _ => policy.on_error.0.push(step(s)?),
        }
    }
    for (rules, into) in [(&args.allow, &mut policy.allow), (&args.deny, &mut policy.deny)] {
        for r in rules {
            into.push(r.parse::<PermissionRule>().map_err(anyhow::Error::new)?);
        }
    }
    if args.no_accept_trust {
        policy.accept_trust = false;
    }
    if let Some(g) = &args.grace {
        policy.grace_ms = parse_duration(g).map_err(|e| anyhow::anyhow!("--grace {e}"))?;
    }
    if let Some(b) = &args.budget {
        policy.budget = Some(b.parse().map_err(|e| anyhow::anyhow!("--{e}"))?);
    }
    if let Some(url) = &args.notify_webhook {
        policy.webhook = Some(bosun_core::WebhookUrl::parse(url).map_err(|e| anyhow::anyhow!("--notify-{e}"))?);
    }
    Ok(policy)
}

fn error_kind(text: &str) -> Option<AgentError> {
    Some(match text {
        "unauthorized" => AgentError::Unauthorized,
        "out_of_credits" => AgentError::OutOfCredits,
        "rate_limited" => AgentError::RateLimited,
        "no_internet" => AgentError::NoInternet,
        "other" => AgentError::Other,
        _ => return None,
    })
}

/// A TOML error on one line: "line 3, column 5: unknown field `on_idel`, expected one of …".
fn one_line(e: &toml::de::Error) -> String {
    let text = e.to_string();
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or_default().trim_start_matches("TOML parse error at ").to_owned();
    let last = text.lines().rfind(|l| !l.trim().is_empty()).unwrap_or_default().to_owned();
    if last == first {
        first
    } else {
        format!("{first}: {last}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(toml_text: &str) -> Result<Policy> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(&path, toml_text).unwrap();
        policy(&PolicyArgs { policy: Some(path), ..PolicyArgs::default() })
    }

    #[test]
    fn a_policy_file_reads_tables_strings_and_lists() {
        let p = parse(
            r#"
grace = "30s"
on_idle = [{ action = "nudge", message = "Continue", attempts = 2, cooldown = "10s" }, "escalate"]
on_exit = { action = "recover", message = "Try again" }
on_error = "escalate"
[on_error_kind]
rate_limited = "nudge+1m:Go on"
"#,
        )
        .unwrap();
        assert_eq!(p.grace_ms, 30_000);
        assert_eq!(
            p.on_idle.0.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["nudge*2+10s:Continue", "escalate"]
        );
        assert_eq!(p.on_dead.0[0].to_string(), "resume:Try again");
        assert_eq!(p.on_error.0[0].to_string(), "escalate");
        assert_eq!(p.on_error_kind[&AgentError::RateLimited].0[0].to_string(), "nudge+1m:Go on");
    }

    #[test]
    fn a_bad_policy_file_says_where() {
        let err = parse("on_idel = \"escalate\"\n").unwrap_err().to_string();
        assert!(err.contains("line 1") && err.contains("on_idel"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        let err = parse("on_idle = { action = \"jump\" }\n").unwrap_err().to_string();
        assert!(err.contains("line 1"), "{err}");
    }

    #[test]
    fn flags_add_to_the_file_and_name_error_kinds() {
        let args = PolicyArgs {
            on_idle: vec!["nudge:Go".into()],
            on_error: vec!["rate_limited=nudge+30s:Retry".into(), "escalate".into()],
            grace: Some("5s".into()),
            ..PolicyArgs::default()
        };
        let p = policy(&args).unwrap();
        assert_eq!(p.on_idle.0.len(), 1);
        assert_eq!(p.on_error_kind[&AgentError::RateLimited].0[0].cooldown_ms, 30_000);
        assert_eq!(p.on_error.0[0].to_string(), "escalate");
        assert_eq!(p.grace_ms, 5_000);
        let bad = PolicyArgs { on_idle: vec!["nudge".into()], ..PolicyArgs::default() };
        assert!(policy(&bad).unwrap_err().to_string().contains("needs its message"));
    }
}
