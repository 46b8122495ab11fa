//! OpenAI's Codex CLI: what its rollout log lines and `notify` payloads mean, where its session id
//! is, and the `-c notify=[...]` override that makes it call bosun at the end of each turn.
//!
//! Checked against the real Codex 0.169 (crates/cli/tests/real_codex.rs, against a fake
//! OpenAI Responses server; ../shared/AGENT-FACTS.md, § Codex CLI). What it relies on:
//!
//! - Rollout logs live at `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<timestamp>-<uuid>.jsonl`, one
//!   `{"timestamp", "type", "payload"}` object a line, `type` one of `session_meta`,
//!   `response_item`, `event_msg`, `turn_context`, `compacted`.
//! - `event_msg` payloads are tagged by their own `type`: `task_started` / `task_complete` (read
//!   also as their newer aliases `turn_started` / `turn_complete`), `turn_aborted`,
//!   `user_message`, `error` and `stream_error`, each error with a `message`. Which events
//!   Codex writes to the log varies by version: older ones write neither the task events nor
//!   errors, newer ones write the task events and write errors only with extended history. So
//!   a turn's end is certain only from `notify`, and a log without errors proves nothing.
//! - 0.169 reports a failed turn in `task_complete.error` (its `codex_error_info` carries the
//!   HTTP status), and says what the agent said in `task_complete.last_agent_message`.
//! - Approval requests and the folder-trust dialog are never logged nor notified: they need the
//!   screen.
//! - `notify = [program, args...]` runs the program with one more argument, a JSON object, at
//!   the end of each turn: `{"type": "agent-turn-complete", "thread-id", "turn-id", ...}`. It
//!   fires for Codex's own title-generation thread too, and not for a main turn that failed.

use std::path::Path;

use serde::Deserialize;

use super::argv::Grammar;
use crate::{AgentError, Heartbeat, Observation, Source};

/// The override that keeps Codex (0.169) from starting its background app-server, which
/// outlives the TUI and hands later TUIs the environment it started with.
pub const NO_DAEMON: &str = "features.daemon_auto_start=false";
/// Codex offers, once a usage limit nears or is reached, to switch to a cheaper model, in a
/// dialog whose first option ("Switch to …") is selected: the message bosun types once the limit
/// has reset would answer it, changing the agent's model, and be lost. The offer is hidden, as
/// its own "never show again" does.
pub const NO_MODEL_NUDGE: &str = "notice.hide_rate_limit_model_nudge=true";

/// Codex 0.169's command line: `codex [OPTIONS] [PROMPT]` or `codex <COMMAND>`.
pub const GRAMMAR: Grammar = Grammar {
    value: &[
        "-c",
        "--config",
        "-m",
        "--model",
        "-p",
        "--profile",
        "-s",
        "--sandbox",
        "-C",
        "--cd",
        "-a",
        "--ask-for-approval",
        "--enable",
        "--disable",
        "--remote",
        "--remote-auth-token-env",
        "--local-provider",
        "--add-dir",
    ],
    optional: &[],
    variadic: &["-i", "--image"],
    subcommands: &[
        "agents",
        "exec",
        "e",
        "review",
        "login",
        "logout",
        "mcp",
        "plugin",
        "app-server",
        "remote-control",
        "completion",
        "update",
        "doctor",
        "sandbox",
        "debug",
        "apply",
        "a",
        "resume",
        "queue",
        "archive",
        "delete",
        "migrate-rollouts",
        "migrate-nfs-db",
        "unarchive",
        "fork",
        "cloud",
        "exec-server",
        "features",
        "help",
    ],
};

/// The confidence of Codex's `notify` reports: they say only "turn complete", the rollout log
/// says the rest, and neither outranks the other — they are taken in time order.
pub const NOTIFY_SOURCE: Source = Source::Log;

#[derive(Deserialize)]
struct RolloutLine {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    payload: Option<Payload>,
}

/// The fields of a payload bosun reads; `type` names an event for `event_msg` and an item kind
/// (`message`, `function_call`, ...) for `response_item`.
#[derive(Deserialize)]
struct Payload {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    codex_error_info: Option<serde_json::Value>,
    /// 0.169 reports a failed turn inside its `task_complete`.
    #[serde(default)]
    error: Option<TurnError>,
    /// What the agent said last in the turn a `task_complete` ends.
    #[serde(default)]
    last_agent_message: Option<String>,
}

/// `task_complete.error`: `{"message": "exceeded retry limit, last status: 429 Too Many
/// Requests", "codex_error_info": {"response_too_many_failed_attempts": {"http_status_code":
/// 429}}}`.
#[derive(Deserialize)]
struct TurnError {
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    codex_error_info: Option<serde_json::Value>,
}

/// What one line of a rollout log means. Every line is a log-write heartbeat; beyond that a
/// started task, a submitted prompt or a tool call, tool result or reasoning item means the agent
/// is working, a completed or aborted task that it waits for input, and an error event an error.
/// A `message` item says nothing about the turn's end (the final answer is one, written just
/// before the task completes; Codex's own context messages are user-role ones), so it is only a
/// heartbeat, as is anything unreadable.
pub fn log_observation(line: &str) -> Observation {
    let activity = Observation::Activity { heartbeat: Heartbeat::LogWrite };
    let Ok(RolloutLine { kind, payload: Some(payload) }) = serde_json::from_str::<RolloutLine>(line) else {
        return activity;
    };
    let item = payload.kind.as_deref().unwrap_or_default();
    match kind.as_str() {
        "response_item" if item == "message" => activity,
        "response_item" => Observation::Working,
        "event_msg" => match item {
            "task_started" | "turn_started" | "user_message" => Observation::Working,
            "task_complete" | "turn_complete" => match &payload.error {
                Some(e) => Observation::Error {
                    error: error_category(e.message.as_deref().unwrap_or_default(), e.codex_error_info.as_ref()),
                },
                None => Observation::Idle,
            },
            "turn_aborted" => Observation::Idle,
            // Codex retries a broken stream itself ("Reconnecting... 2/5"): a sign of life, not
            // the end of the turn.
            "stream_error" => activity,
            "error" => Observation::Error {
                error: error_category(
                    payload.message.as_deref().unwrap_or_default(),
                    payload.codex_error_info.as_ref(),
                ),
            },
            _ => activity,
        },
        _ => activity,
    }
}

/// What the agent said at the end of the turn a rollout line completes (`task_complete`'s
/// `last_agent_message`), when the line is one.
pub fn log_said(line: &str) -> Option<String> {
    let RolloutLine { kind, payload: Some(payload) } = serde_json::from_str::<RolloutLine>(line).ok()? else {
        return None;
    };
    let done = kind == "event_msg" && matches!(payload.kind.as_deref(), Some("task_complete" | "turn_complete"));
    payload.last_agent_message.filter(|s| done && !s.trim().is_empty())
}

/// The category of a Codex error from its message, falling back on its `codex_error_info`
/// when the message is not telling. Usage limits are checked before credits because Codex's
/// usage-limit message also offers to "purchase more credits", and quota before 429 because
/// running out of quota is itself answered with a 429.
pub fn error_category(message: &str, info: Option<&serde_json::Value>) -> AgentError {
    // An HTTP status says it best: a 401 comes as `http_connection_failed`, which is no
    // network failure.
    if let Some(error) = info.and_then(status_category) {
        return error;
    }
    let m = message.to_lowercase();
    let any = |words: &[&str]| words.iter().any(|w| m.contains(w));
    if any(&["usage limit"]) {
        AgentError::RateLimited
    } else if any(&["quota", "billing", "credits"]) {
        AgentError::OutOfCredits
    } else if any(&["rate limit", "rate-limit", "ratelimit", "too many requests"]) || has_code(&m, "429") {
        AgentError::RateLimited
    } else if any(&["unauthorized", "unauthenticated", "login", "log in", "sign in", "auth"]) || has_code(&m, "401") {
        AgentError::Unauthorized
    } else if any(&["network", "connection", "dns", "timed out", "timeout", "error sending request"]) {
        AgentError::NoInternet
    } else {
        info.map_or(AgentError::Other, info_category)
    }
}

/// The category of the HTTP status a `codex_error_info` object carries, when it carries one.
fn status_category(info: &serde_json::Value) -> Option<AgentError> {
    let status = info.as_object()?.values().find_map(|v| v["http_status_code"].as_u64())?;
    match status {
        401 | 403 => Some(AgentError::Unauthorized),
        402 => Some(AgentError::OutOfCredits),
        429 => Some(AgentError::RateLimited),
        _ => None,
    }
}

/// `codex_error_info` is a bare name (`"unauthorized"`) or a one-key object
/// (`{"http_connection_failed": {"http_status_code": null}}`).
fn info_category(info: &serde_json::Value) -> AgentError {
    let name = match info {
        serde_json::Value::String(name) => name.as_str(),
        serde_json::Value::Object(map) => map.keys().next().map_or("", String::as_str),
        _ => "",
    };
    match name {
        "usage_limit_exceeded" => AgentError::RateLimited,
        "unauthorized" => AgentError::Unauthorized,
        "http_connection_failed" | "response_stream_connection_failed" => AgentError::NoInternet,
        _ => AgentError::Other,
    }
}

/// Whether `text` holds the number `code` not as part of a longer number.
fn has_code(text: &str, code: &str) -> bool {
    text.match_indices(code).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + code.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_digit()) && !after.is_some_and(|c| c.is_ascii_digit())
    })
}

/// `path` with its `.` and `..` resolved as written (no link is followed).
fn lexical(path: &Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The session id of a rollout log: the uuid that ends its file name,
/// `rollout-2025-05-07T17-24-21-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl`. None for any other
/// file name.
pub fn session_id_from_path(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_prefix("rollout-")?.strip_suffix(".jsonl")?;
    let start = stem.len().checked_sub(36)?;
    let uuid = stem.get(start..)?;
    let timestamp = stem.get(..start)?.strip_suffix('-')?;
    (!timestamp.is_empty() && is_uuid(uuid)).then(|| uuid.to_owned())
}

/// `8-4-4-4-12` hexadecimal digits.
fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups.iter().zip([8, 4, 4, 4, 12]).all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()))
}

/// What Codex's screen shows that nothing else reports: an approval dialog ("Would you like to
/// run the following command? … › 1. Yes, proceed (y) … Press enter to confirm or esc to
/// cancel"), the folder-trust dialog ("Trust this folder? … › 1. Trust and continue"), or a
/// sign-in screen. None for anything else.
pub fn screen_observation(screen: &str) -> Option<Observation> {
    use crate::PromptKind;
    if is_trust_dialog(screen) {
        return Some(Observation::Prompt { kind: PromptKind::Setup, asks: Some("trust this folder?".into()) });
    }
    if screen.contains("Sign in with ChatGPT") || screen.contains("Provide your own API key") {
        return Some(Observation::Prompt { kind: PromptKind::Setup, asks: Some("sign in".into()) });
    }
    let question = screen.lines().map(str::trim).rfind(|l| l.starts_with("Would you like to"))?;
    let confirm = screen.contains("Press enter to confirm") || screen.contains("Yes, proceed");
    if !confirm {
        return None;
    }
    // The command follows a `$ `; an edit or a grant says what in its question.
    let command = screen.lines().map(str::trim).rfind(|l| l.starts_with("$ ")).map(|l| format!("run: {}", &l[2..]));
    let asks = command.unwrap_or_else(|| question.to_owned());
    Some(Observation::Prompt { kind: PromptKind::Permission, asks: Some(asks.chars().take(500).collect()) })
}

/// Codex's folder-trust dialog.
pub fn is_trust_dialog(screen: &str) -> bool {
    screen.contains("Trust this folder?") || screen.contains("Trust and continue")
}

/// The fields of a `notify` payload bosun reads.
#[derive(Deserialize)]
struct Notification {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default, rename = "thread-id")]
    thread: Option<String>,
    #[serde(default, rename = "input-messages")]
    input: Vec<serde_json::Value>,
    #[serde(default, rename = "last-assistant-message")]
    said: Option<String>,
}

/// The start of what Codex asks its own title-generation thread.
const TITLE_REQUEST: &str = "Generate a concise, single-line task title";

impl Notification {
    /// Whether the call reports a turn of the agent's main thread: not one of Codex's own side
    /// threads (the title generation, which has its own thread id and no rollout log), and, once
    /// the main thread's id is known (`main`, from its rollout log's name), of that thread.
    fn of_main_thread(&self, main: Option<&str>) -> bool {
        let titling = self.input.iter().any(|m| m.as_str().is_some_and(|m| m.trim_start().starts_with(TITLE_REQUEST)));
        let other = matches!((main, self.thread.as_deref()), (Some(main), Some(t)) if t != main);
        !titling && !other
    }
}

/// What a `notify` call means, from the JSON object Codex passes as the program's last argument:
/// `agent-turn-complete` of the agent's main thread means it waits for input. None for any
/// other (or unreadable) payload. `main` is the main thread's id when known.
pub fn notify_observation(payload_json: &str, main: Option<&str>) -> Option<Observation> {
    let n: Notification = serde_json::from_str(payload_json).ok()?;
    (n.kind == "agent-turn-complete" && n.of_main_thread(main)).then_some(Observation::Idle)
}

/// What the agent said at the end of the main-thread turn a `notify` call reports (its
/// `last-assistant-message`).
pub fn notify_said(payload_json: &str, main: Option<&str>) -> Option<String> {
    let n = serde_json::from_str::<Notification>(payload_json).ok().filter(|n| n.of_main_thread(main))?;
    n.said.filter(|s| !s.trim().is_empty())
}

/// The argument bosun passes to `codex` after `-c` so that Codex runs `command` (followed by
/// the notification's JSON) at the end of each turn: `notify=["prog","arg",...]`, a TOML array of
/// basic strings. It overrides any `notify` in the user's `config.toml` for this run only.
pub fn notify_config(command: &[String]) -> String {
    let items: Vec<String> = command.iter().map(|s| toml_string(s)).collect();
    format!("notify=[{}]", items.join(","))
}

/// A TOML basic string: quotes, backslashes and control characters escaped.
fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// OpenAI's Codex CLI: its `notify` program reports the end of turns, its rollout log (found
/// by searching `$CODEX_HOME/sessions`) the rest, its screen its approval dialogs.
pub struct Codex;

impl super::AgentDriver for Codex {
    /// Its status line says "esc to interrupt" while it works (Codex 0.171.0).
    fn interrupt_keys(&self) -> Option<&'static [crate::TermKey]> {
        Some(&super::ESC)
    }

    fn kind(&self) -> super::DriverKind {
        super::DriverKind::Codex
    }

    fn user_config(&self, env: &std::collections::BTreeMap<String, String>) -> Option<crate::own_config::UserConfig> {
        Some(super::codex_config::user_config(env))
    }

    fn config_seeds(&self, own: &crate::OwnConfig) -> Vec<crate::own_config::Seed> {
        super::codex_config::seeds(own)
    }

    fn point_config(&self, dir: &std::path::Path, env: &mut std::collections::BTreeMap<String, String>) {
        super::codex_config::point(dir, env);
    }

    fn client(&self) -> Option<&'static crate::client_check::Client> {
        Some(&super::codex_config::CLIENT)
    }

    fn config_env(&self) -> Option<&'static str> {
        Some("CODEX_HOME")
    }

    fn record(&self, _ids: (u64, u64), _patterns: super::generic::Patterns) -> super::Driver {
        super::Driver::Codex
    }

    fn grammar(&self) -> Option<&'static Grammar> {
        Some(&GRAMMAR)
    }

    /// `codex -c notify=… -c features.daemon_auto_start=false … [prompt]`; resumed, `codex
    /// resume <session-id> -c … [message]`, the session named by the rollout log it wrote
    /// (without one, it starts anew).
    fn command_line(&self, a: &crate::Agent, _settings: &Path, resume: Option<Option<&str>>) -> Vec<String> {
        let mut command = a.command.clone();
        if resume.is_none() {
            command.extend(a.prompt.clone());
        }
        // Codex calls its `notify` program at the end of every turn, the JSON as last argument.
        let hook = format!("{} codex {} \"$1\"", a.hook_command, a.id);
        let notify = notify_config(&["sh".into(), "-c".into(), hook, "bosun-notify".into()]);
        // And it starts no background app-server: one would outlive the agent and serve later
        // agents with the first one's environment; nor offers to switch models near a limit.
        let overrides = ["-c", &notify, "-c", NO_DAEMON, "-c", NO_MODEL_NUDGE].map(str::to_owned);
        let fork = a.fork.as_ref().filter(|_| a.restarts == 0 && resume.is_none());
        match (resume, self.conversation(a), command.first().cloned()) {
            (Some(message), Some(id), Some(program)) => {
                command = vec![program, "resume".into(), id];
                command.extend(overrides);
                command.extend(message.map(str::to_owned));
            }
            // A fork's first launch: `codex fork ID`, working where it is started (not in the
            // directory of the session forked, which Codex otherwise asks about), its flags and
            // prompt after.
            (None, _, Some(program)) if fork.is_some() => {
                let rest = command.split_off(1);
                command = vec![program, "fork".into(), fork.map(|f| f.conversation.clone()).unwrap_or_default()];
                command.extend(overrides);
                command.extend(["-c".to_owned(), "tui.resume_cwd=\"current\"".to_owned()]);
                command.extend(rest);
            }
            _ => {
                let at = command.len().min(1);
                command.splice(at..at, overrides);
            }
        }
        command
    }

    fn conversation(&self, a: &crate::Agent) -> Option<String> {
        a.log.as_deref().and_then(session_id_from_path)
    }

    fn can_fork(&self) -> bool {
        true
    }

    /// It reports only the end of turns: one started without a prompt, or restarted (its
    /// message is typed), waits for input. Its rollout log, which says how turns fail, is
    /// looked for from the start.
    fn start_up(&self, a: &crate::Agent) -> super::StartUp {
        let waits_for_input = a.prompt.is_none() || a.restarts > 0;
        super::StartUp { find_log: true, waits_for_input, ..super::StartUp::default() }
    }

    /// `$CODEX_HOME/sessions` (its own config's in a sandbox or a container), `~/.codex/sessions`
    /// by default.
    fn log_search(&self, a: &crate::Agent) -> Option<std::path::PathBuf> {
        crate::OwnConfig::dir_of(a).map(|h| h.join("sessions"))
    }

    /// A fork with a config of its own finds the rollout it forks (`codex fork ID` looks under
    /// `$CODEX_HOME/sessions/YYYY/MM/DD/`) only when it is copied there.
    fn fork_copies(&self, a: &crate::Agent) -> Vec<(std::path::PathBuf, std::path::PathBuf)> {
        let (Some(own), Some(from)) = (crate::OwnConfig::of(a), a.fork.as_ref().and_then(|f| f.transcript.clone()))
        else {
            return Vec::new();
        };
        // Its date's folders and its name.
        let dated: Vec<_> = from.components().rev().take(4).collect();
        let to = dated.into_iter().rev().fold(own.dir.join("sessions"), |to, c| to.join(c));
        vec![(from, to)]
    }

    /// Its rollout, into `config`'s `sessions` under the same dated folders, where `codex resume
    /// ID` looks for it.
    fn switch_copies(
        &self,
        a: &crate::Agent,
        config: &std::path::Path,
    ) -> Vec<(std::path::PathBuf, std::path::PathBuf)> {
        let Some(from) = a.log.clone() else { return Vec::new() };
        let dated: Vec<_> = from.components().rev().take(4).collect();
        let to = dated.into_iter().rev().fold(config.join("sessions"), |to, c| to.join(c));
        vec![(from, to)]
    }

    /// Where `-C DIR` / `--cd DIR` (the last one given) moves it, relative to its own
    /// directory, `.` and `..` resolved as written.
    fn log_cwd(&self, a: &crate::Agent) -> std::path::PathBuf {
        let mut args = a.command.iter().skip(1);
        let mut dir = None;
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--" => break,
                "-C" | "--cd" => dir = args.next().cloned().or(dir),
                other => {
                    if let Some(d) = other.strip_prefix("--cd=").or_else(|| other.strip_prefix("-C")) {
                        dir = Some(d.to_owned());
                    }
                }
            }
        }
        match dir {
            Some(d) => lexical(&a.cwd.join(d)),
            None => a.cwd.clone(),
        }
    }

    /// Its notify says only "turn complete" (of the main thread: the one whose rollout log
    /// bosun follows); its rollout log says the rest. Neither outranks the other: they report
    /// at the log's tier, in time order.
    /// Its notify argument, kept whole (the hook command bounds it).
    fn take_report(&self, event: &str, payload: &str) -> super::Report {
        super::Report::bounded(super::DriverKind::Codex, event, payload, usize::MAX)
    }

    fn read_report(&self, a: Option<&crate::Agent>, report: &super::Report) -> Option<super::Reading> {
        if report.driver != super::DriverKind::Codex {
            return None;
        }
        let payload = &report.payload;
        let main = a.and_then(|a| self.conversation(a));
        Some(super::Reading {
            observation: notify_observation(payload, main.as_deref()).map(|o| (NOTIFY_SOURCE, o)),
            said: notify_said(payload, main.as_deref()),
            ..super::Reading::default()
        })
    }

    fn log_observation(&self, line: &str) -> Observation {
        log_observation(line)
    }

    fn log_said(&self, line: &str) -> Option<String> {
        log_said(line)
    }

    fn log_usage(&self, line: &str) -> Option<crate::usage::Used> {
        super::session_usage::codex(line)
    }

    fn log_model(&self, line: &str) -> Option<String> {
        super::session_usage::codex_model(line)
    }

    fn log_limit_reset(&self, line: &str) -> Option<crate::Timestamp> {
        super::limit_reset::codex(line)
    }

    fn screen(&self, text: &str) -> Option<super::Screen> {
        Some(super::Screen { trust: is_trust_dialog(text), seen: screen_observation(text) })
    }

    fn screen_shows_dialogs(&self) -> bool {
        true
    }

    fn new_log_per_session(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACTIVITY: Observation = Observation::Activity { heartbeat: Heartbeat::LogWrite };

    fn event(payload: &str) -> String {
        format!(r#"{{"timestamp":"2025-09-01T10:00:00.000Z","type":"event_msg","payload":{payload}}}"#)
    }

    #[test]
    fn lines_mean_what_their_type_says() {
        let item = |payload: &str| format!(r#"{{"type":"response_item","payload":{payload}}}"#);
        let cases = [
            (event(r#"{"type":"task_started","model_context_window":272000}"#), Observation::Working),
            (event(r#"{"type":"turn_started","turn_id":"1"}"#), Observation::Working),
            (event(r#"{"type":"user_message","message":"fix it"}"#), Observation::Working),
            (event(r#"{"type":"task_complete","last_agent_message":"Done."}"#), Observation::Idle),
            (event(r#"{"type":"task_complete","error":null}"#), Observation::Idle),
            // Line types new in 0.169 are signs of life.
            (r#"{"type":"world_state","payload":{"x":1}}"#.to_owned(), ACTIVITY),
            (r#"{"type":"token_usage_record","payload":{}}"#.to_owned(), ACTIVITY),
            (r#"{"type":"item_completed","payload":{"type":"x"}}"#.to_owned(), ACTIVITY),
            (r#"{"type":"thread_settings_applied","payload":{}}"#.to_owned(), ACTIVITY),
            (r#"{"type":"ordinal","payload":7}"#.to_owned(), ACTIVITY),
            (event(r#"{"type":"turn_aborted","reason":"interrupted"}"#), Observation::Idle),
            (event(r#"{"type":"token_count","info":null}"#), ACTIVITY),
            (event(r#"{"type":"agent_message","message":"Done."}"#), ACTIVITY),
            (item(r#"{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}"#), Observation::Working),
            (item(r#"{"type":"function_call_output","call_id":"c1","output":"ok"}"#), Observation::Working),
            (item(r#"{"type":"reasoning","summary":[]}"#), Observation::Working),
            (item(r#"{"type":"message","role":"assistant","content":[]}"#), ACTIVITY),
            (
                item(
                    r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>"}]}"#,
                ),
                ACTIVITY,
            ),
            (r#"{"timestamp":"t","type":"session_meta","payload":{"id":"x","cwd":"/w"}}"#.to_owned(), ACTIVITY),
            (r#"{"type":"turn_context","payload":{"cwd":"/w","model":"gpt-5"}}"#.to_owned(), ACTIVITY),
            (r#"{"type":"compacted","payload":{"message":"summary"}}"#.to_owned(), ACTIVITY),
            (r#"{"type":"event_msg"}"#.to_owned(), ACTIVITY),
            ("not json".to_owned(), ACTIVITY),
            (String::new(), ACTIVITY),
        ];
        for (line, expected) in cases {
            assert_eq!(log_observation(&line), expected, "{line}");
        }
    }

    #[test]
    fn errors_are_categorised_by_their_message() {
        let cases = [
            (
                "You've hit your usage limit. Upgrade to Pro, purchase more credits or try again later.",
                AgentError::RateLimited,
            ),
            ("exceeded retry limit, last status: 429 Too Many Requests", AgentError::RateLimited),
            ("Rate limit reached for gpt-5", AgentError::RateLimited),
            ("Quota exceeded. Check your plan and billing details.", AgentError::OutOfCredits),
            ("unexpected status 401 Unauthorized: Missing bearer", AgentError::Unauthorized),
            ("Your access token could not be refreshed. Please log out and sign in again.", AgentError::Unauthorized),
            (
                "Connection failed: error sending request for url (https://api.openai.com/v1/responses)",
                AgentError::NoInternet,
            ),
            ("dns error: failed to lookup address information", AgentError::NoInternet),
            ("request timed out", AgentError::NoInternet),
            ("stream disconnected before completion", AgentError::Other),
            ("unexpected status 4010", AgentError::Other),
        ];
        for (message, error) in cases {
            let line = event(&format!(r#"{{"type":"error","message":{}}}"#, serde_json::json!(message)));
            assert_eq!(log_observation(&line), Observation::Error { error }, "{message}");
        }
        let stream = event(r#"{"type":"stream_error","message":"Reconnecting... 2/5 (network error)"}"#);
        assert_eq!(log_observation(&stream), Observation::Activity { heartbeat: Heartbeat::LogWrite });
        let bare = event(r#"{"type":"error"}"#);
        assert_eq!(log_observation(&bare), Observation::Error { error: AgentError::Other });
    }

    #[test]
    fn a_failed_turn_is_an_error_of_its_http_status() {
        let failed = |error: &str| {
            log_observation(&event(&format!(r#"{{"type":"task_complete","turn_id":"1","error":{error}}}"#)))
        };
        let rate = r#"{"message":"exceeded retry limit, last status: 429 Too Many Requests","codex_error_info":{"response_too_many_failed_attempts":{"http_status_code":429}}}"#;
        assert_eq!(failed(rate), Observation::Error { error: AgentError::RateLimited });
        let auth = r#"{"message":"unexpected status 401 Unauthorized: connection failed","codex_error_info":{"http_connection_failed":{"http_status_code":401}}}"#;
        assert_eq!(failed(auth), Observation::Error { error: AgentError::Unauthorized });
        let net = r#"{"message":"stream error: connection refused","codex_error_info":{"http_connection_failed":{"http_status_code":null}}}"#;
        assert_eq!(failed(net), Observation::Error { error: AgentError::NoInternet });
    }

    #[test]
    fn error_info_decides_when_the_message_does_not() {
        let info = |v: serde_json::Value| error_category("something went wrong", Some(&v));
        assert_eq!(info(serde_json::json!("usage_limit_exceeded")), AgentError::RateLimited);
        assert_eq!(info(serde_json::json!("unauthorized")), AgentError::Unauthorized);
        assert_eq!(
            info(serde_json::json!({"http_connection_failed": {"http_status_code": null}})),
            AgentError::NoInternet
        );
        assert_eq!(info(serde_json::json!("context_window_exceeded")), AgentError::Other);
        let line = event(r#"{"type":"error","message":"oops","codex_error_info":"unauthorized"}"#);
        assert_eq!(log_observation(&line), Observation::Error { error: AgentError::Unauthorized });
    }

    #[test]
    fn the_session_id_is_the_uuid_ending_the_file_name() {
        let id = "5973b6c0-94b8-487b-a530-2aeb6098ae0e";
        let path = format!("/home/u/.codex/sessions/2025/05/07/rollout-2025-05-07T17-24-21-{id}.jsonl");
        assert_eq!(session_id_from_path(Path::new(&path)).as_deref(), Some(id));
        for bad in [
            format!("rollout-{id}.jsonl"),
            format!("rollout-2025-05-07T17-24-21-{id}.json"),
            format!("session-2025-05-07T17-24-21-{id}.jsonl"),
            "rollout-2025-05-07T17-24-21-5973b6c0-94b8-487b-a530-2aeb6098ae0z.jsonl".to_owned(),
            "rollout-2025-05-07T17-24-21-5973b6c094b8-487b-a530-2aeb6098ae0e0.jsonl".to_owned(),
            "rollout-é.jsonl".to_owned(),
            String::new(),
        ] {
            assert_eq!(session_id_from_path(Path::new(&bad)), None, "{bad}");
        }
    }

    #[test]
    fn turn_completion_notifications_mean_idle() {
        let done = r#"{"type":"agent-turn-complete","thread-id":"t","turn-id":"1","cwd":"/w","input-messages":["hi"],"last-assistant-message":"Hello"}"#;
        assert_eq!(notify_observation(done, None), Some(Observation::Idle));
        assert_eq!(notify_observation(done, Some("t")), Some(Observation::Idle));
        assert_eq!(notify_observation(r#"{"type":"approval-requested"}"#, None), None);
        assert_eq!(notify_observation("[]", None), None);
        assert_eq!(notify_observation("not json", None), None);
        assert_eq!(notify_said(done, None).as_deref(), Some("Hello"), "what it said is what its turn is classified on");
        assert_eq!(notify_said(r#"{"type":"agent-turn-complete"}"#, None), None);
        let done = event(r#"{"type":"task_complete","turn_id":"1","last_agent_message":"Fixed."}"#);
        assert_eq!(log_said(&done).as_deref(), Some("Fixed."), "the rollout says it too, as soon");
        assert_eq!(log_said(&event(r#"{"type":"task_complete","last_agent_message":null}"#)), None);
        assert_eq!(log_said(&event(r#"{"type":"agent_message","message":"x","last_agent_message":"y"}"#)), None);
    }

    #[test]
    fn the_screen_shows_approvals_and_the_trust_dialog() {
        // As Codex 0.169 draws them (trimmed).
        let approval = "› make the file\n• Running touch approved-file\n  Would you like to run the following command?\n  Environment: local\n  Reason: The test asks to run this outside the sandbox.\n  $ touch approved-file\n› 1. Yes, proceed (y)\n  2. Yes, and don't ask again for commands that start with `touch approved-file` (p)\n  3. No, and tell Codex what to do differently (esc)\n  Press enter to confirm or esc to cancel";
        assert_eq!(
            screen_observation(approval),
            Some(Observation::Prompt {
                kind: crate::PromptKind::Permission,
                asks: Some("run: touch approved-file".into())
            })
        );
        let trust = "  Folder access\n  /w\n  Trust this folder? Codex can read, edit, and run files here\n› 1. Trust and continue\n  2. Back to Agent Command Center\n  enter continue · esc back";
        assert!(is_trust_dialog(trust));
        assert!(matches!(screen_observation(trust), Some(Observation::Prompt { kind: crate::PromptKind::Setup, .. })));
        let working = "› make the file\n• Working (0s • esc to interrupt)\n› Ask Codex to do anything";
        assert_eq!(screen_observation(working), None);
        assert_eq!(screen_observation("Would you like to hear a joke?"), None, "a question in the text is no dialog");
    }

    #[test]
    fn only_the_main_threads_turns_count() {
        let title = r#"{"type":"agent-turn-complete","thread-id":"019a-title","turn-id":"1","client":"codex-tui","input-messages":["Generate a concise, single-line task title for this request: fix the bug"],"last-assistant-message":"Fix the bug"}"#;
        assert_eq!(notify_observation(title, None), None, "Codex's own title thread");
        assert_eq!(notify_said(title, None), None);
        let other = r#"{"type":"agent-turn-complete","thread-id":"other","input-messages":["hi"],"last-assistant-message":"x"}"#;
        assert_eq!(notify_observation(other, Some("main")), None, "a thread that is not the main one");
        assert_eq!(notify_said(other, Some("main")), None);
        assert_eq!(notify_observation(other, None), Some(Observation::Idle), "before the main one is known");
    }

    #[test]
    fn the_notify_override_is_a_toml_array_of_the_command() {
        let command = ["/opt/bosun bin/bosun", "hook", "codex", "ag-1"].map(String::from);
        assert_eq!(notify_config(&command), r#"notify=["/opt/bosun bin/bosun","hook","codex","ag-1"]"#);
        assert_eq!(notify_config(&[]), "notify=[]");
        let awkward = ["say \"hi\"", r"C:\bin", "a\nb\tc", "\u{1}\u{7f}", "ünï"].map(String::from);
        let config = notify_config(&awkward);
        assert_eq!(config, r#"notify=["say \"hi\"","C:\\bin","a\nb\tc","\u0001\u007F","ünï"]"#);
        // These TOML escapes are also JSON's, so JSON reads the array back.
        let back: Vec<String> = serde_json::from_str(config.trim_start_matches("notify=")).unwrap();
        assert_eq!(back, awkward);
    }
}
