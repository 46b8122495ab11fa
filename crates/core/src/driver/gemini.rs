//! Google's Gemini CLI: the hooks bosun installs (as an extension in the agent's own Gemini
//! home, `gemini_config`), what their payloads, its session log's lines and its screen mean, and
//! its command line (bosun picks the session id: `--session-id`, `--resume`).
//!
//! Checked against the real Gemini CLI 0.61.0 (crates/cli/tests/real_gemini.rs, against the
//! model server's Gemini API; docs/clients/gemini.md). What it relies on:
//!
//! - Hooks receive one JSON object on stdin (`session_id`, `transcript_path`, `cwd`,
//!   `hook_event_name`, `timestamp`, and the event's fields) and answer with JSON on stdout.
//!   In a turn: `BeforeAgent` (`prompt`), `BeforeTool` (`tool_name`, `tool_input`) before any
//!   dialog, `Notification` (`notification_type: "ToolPermission"`, `message`, `details`) when a
//!   permission dialog shows, `AfterTool`, and `AfterAgent` (`prompt_response`) once the turn
//!   ended; `SessionStart` (`source: startup | resume | clear`) at launch.
//! - `AfterAgent` fires after a failed turn too, with `prompt_response: "[no response text]"`;
//!   the error itself is written just before to the session log (`transcript_path`, JSON lines)
//!   as `{"type": "error", "content": "[API Error: …]"}`. A 401 is not retried; a 429 whose
//!   retry delay is long (a quota) shows a dialog only ("Usage limit reached … 1. Keep trying
//!   2. Stop"), other 429s are retried up to 10 times, 5 to 30 s apart, before they are errors.
//! - `BeforeTool`'s `{"decision": "deny", "reason"}` blocks the call (the model hears the
//!   reason); nothing a hook says lets a call that Gemini asks about run unasked.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::argv::Grammar;
use super::claude_hook::{head, tail};
use super::{gemini_config, AgentDriver, Driver, DriverKind, Reading, Report, Screen, StartUp};
use crate::{AgentError, Heartbeat, Observation, PromptKind, Source};

/// Gemini CLI 0.61's command line: `gemini [options] [query..]` or `gemini <command>`.
pub const GRAMMAR: Grammar = Grammar {
    value: &[
        "-m",
        "--model",
        "-i",
        "--prompt-interactive",
        "-w",
        "--worktree",
        "--approval-mode",
        "--policy",
        "--admin-policy",
        "--allowed-mcp-server-names",
        "--allowed-tools",
        "-e",
        "--extensions",
        "-r",
        "--resume",
        "--session-file",
        "--session-id",
        "--delete-session",
        "--include-directories",
        "-o",
        "--output-format",
    ],
    optional: &[],
    variadic: &[],
    subcommands: &["mcp", "extensions", "extension", "skills", "skill", "hooks", "hook", "gemma"],
};

/// The hook events bosun installs. Not `BeforeModel`, `AfterModel` (every streamed chunk) nor
/// `BeforeToolSelection`: each carries the whole conversation, and says nothing more.
pub const HOOK_EVENTS: [&str; 8] = [
    "SessionStart",
    "SessionEnd",
    "BeforeAgent",
    "AfterAgent",
    "BeforeTool",
    "AfterTool",
    "Notification",
    "PreCompress",
];

/// The name of bosun's extension in the agent's Gemini home.
pub const EXTENSION: &str = "bosun";

/// What `AfterAgent` says of a turn that produced no text (a failed one among them).
const NO_TEXT: &str = "[no response text]";

/// The most kept of a payload's text fields.
const FIELD_MAX: usize = 4_000;
/// The most of what a dialog asks.
const ASKS_MAX: usize = 500;

/// The fields of a hook payload bosun keeps, each bounded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeminiHook {
    pub hook_event_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_path: Option<String>,
    /// SessionStart's reason: `startup`, `resume` or `clear`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notification_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// What a tool acts on, which permission rules match: a command, a path or a URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// What a dialog asks, in a line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asks: Option<String>,
    /// AfterAgent's final text (its end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_response: Option<String>,
}

impl GeminiHook {
    /// Reads the payload Gemini CLI passed on stdin to the hook for `event` (used when the
    /// payload does not name one); anything unreadable gives a payload with the event's name.
    pub fn parse(raw: &str, event: &str) -> Self {
        let v: Value = serde_json::from_str(raw).unwrap_or_default();
        let text = |v: &Value, key: &str| v[key].as_str().map(|s| head(s, FIELD_MAX));
        let name = v["hook_event_name"].as_str().filter(|n| !n.is_empty()).unwrap_or(event);
        let input = if v["tool_input"].is_object() { &v["tool_input"] } else { &v["details"] };
        let subject = ["command", "file_path", "dir_path", "path", "url"].iter().find_map(|k| text(input, k));
        let tool = v["tool_name"].as_str().map(|t| head(t, 200));
        let asks = match (&tool, &subject, text(&v, "message")) {
            (Some(tool), Some(subject), _) => Some(format!("{tool}: {subject}")),
            (_, Some(subject), Some(message)) => Some(format!("{message}: {subject}")),
            (_, None, Some(message)) => Some(message),
            (Some(tool), None, None) => Some(tool.clone()),
            _ => None,
        };
        Self {
            hook_event_name: head(name, 100),
            session_id: text(&v, "session_id").map(|s| head(&s, 200)),
            transcript_path: text(&v, "transcript_path"),
            source: text(&v, "source").map(|s| head(&s, 100)),
            notification_type: text(&v, "notification_type").map(|s| head(&s, 100)),
            message: text(&v, "message"),
            tool_name: tool,
            subject,
            asks: asks.map(|a| head(a.trim(), ASKS_MAX)),
            prompt_response: v["prompt_response"].as_str().map(|s| tail(s, FIELD_MAX)),
        }
    }

    /// What it said at the end of the turn, when the turn produced text.
    fn said(&self) -> Option<&str> {
        self.prompt_response.as_deref().filter(|s| !s.trim().is_empty() && s.trim() != NO_TEXT)
    }
}

/// The hook payload a report of Gemini's kept; none for another driver's.
fn kept(report: &Report) -> Option<GeminiHook> {
    if report.driver != DriverKind::Gemini {
        return None;
    }
    let named = || GeminiHook { hook_event_name: report.event.clone(), ..GeminiHook::default() };
    Some(serde_json::from_str(&report.payload).unwrap_or_else(|_| named()))
}

/// What a hook call means. `failed`: the agent's turn is known to have failed (its log said
/// so), so that the `AfterAgent` of a turn without text that follows says nothing more.
pub fn hook_observation(p: &GeminiHook, failed: bool) -> Option<Observation> {
    let activity = Observation::Activity { heartbeat: Heartbeat::HookCall };
    Some(match p.hook_event_name.as_str() {
        "SessionStart" if matches!(p.source.as_deref(), None | Some("startup" | "resume")) => Observation::Started,
        "BeforeAgent" | "BeforeTool" | "AfterTool" => Observation::Working,
        "Notification" if p.notification_type.as_deref() == Some("ToolPermission") => {
            Observation::Prompt { kind: PromptKind::Permission, asks: p.asks.clone() }
        }
        "AfterAgent" if failed && p.said().is_none() => return None,
        "AfterAgent" => Observation::Idle,
        _ => activity,
    })
}

/// The permission a `BeforeTool` asks the policy about: its tool and what it acts on.
fn permission(p: &GeminiHook) -> Option<(String, Option<String>)> {
    let tool = p.tool_name.clone().filter(|_| p.hook_event_name == "BeforeTool")?;
    Some((tool, p.subject.clone()))
}

/// What the hook prints for a policy's answer to a `BeforeTool`: a denial blocks the call, its
/// reason told to the model; an allowance lets Gemini CLI decide as it would (it asks, or not).
pub fn permission_reply(answer: &crate::PermissionAnswer) -> String {
    match answer {
        crate::PermissionAnswer::Allow { .. } => serde_json::json!({ "decision": "allow" }).to_string(),
        crate::PermissionAnswer::Deny { rule } => serde_json::json!({
            "decision": "deny",
            "reason": format!("bosun's permission policy denies this ({rule})"),
        })
        .to_string(),
    }
}

/// What a line of its session log means: an error line is an error of its kind; anything else
/// (the session's header, messages, `$set` updates) a sign of life.
pub fn log_observation(line: &str) -> Observation {
    let activity = Observation::Activity { heartbeat: Heartbeat::LogWrite };
    let Ok(v) = serde_json::from_str::<Value>(line) else { return activity };
    match v["type"].as_str() {
        Some("error") => Observation::Error { error: error_category(v["content"].as_str().unwrap_or_default()) },
        _ => activity,
    }
}

/// What the agent said last in the turn the end of a session log (`log`) ends with: the text of its last
/// answer (`{"type": "gemini", "content": "…"}`) after the turn's prompt (`"type": "user"`); none
/// when the turn ended in an error or said nothing.
pub fn said_in_tail(log: &str) -> Option<String> {
    for line in log.lines().rev() {
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        match v["type"].as_str() {
            Some("gemini") => match v["content"].as_str().filter(|t| !t.trim().is_empty()) {
                Some(text) => return Some(tail(text, FIELD_MAX)),
                None => continue,
            },
            Some("user" | "error") => return None,
            _ => continue,
        }
    }
    None
}

/// The kind of an error Gemini CLI writes (`[API Error: …]` and its advice).
pub fn error_category(text: &str) -> AgentError {
    let m = text.to_lowercase();
    let any = |words: &[&str]| words.iter().any(|w| m.contains(w));
    // A quota's 429 says "check your plan and billing details": the rate limit is read first.
    if any(&[
        "\"code\":429",
        "resource_exhausted",
        "resource has been exhausted",
        "quota",
        "rate limit",
        "usage limit",
        "please retry in",
        "try again later",
    ]) {
        AgentError::RateLimited
    } else if any(&["billing", "credits", "prepay"]) {
        AgentError::OutOfCredits
    } else if any(&["\"code\":401", "\"code\":403", "unauthenticated", "permission_denied", "api key not valid"]) {
        AgentError::Unauthorized
    } else if any(&["fetch failed", "econnrefused", "enotfound", "etimedout", "network", "socket hang up"]) {
        AgentError::NoInternet
    } else {
        AgentError::Other
    }
}

/// What its screen shows that its hooks do not (or not first): the folder-trust dialog ("Do you
/// trust the files in this folder?"), a sign-in dialog, a quota's "Usage limit reached" dialog,
/// and its approval dialogs ("Allow execution of [Shell]?" … "1. Allow once").
pub fn screen_observation(screen: &str) -> Option<Observation> {
    if is_trust_dialog(screen) {
        return Some(Observation::Prompt { kind: PromptKind::Setup, asks: Some("trust this folder?".into()) });
    }
    if screen.contains("How would you like to authenticate") || screen.contains("Login with Google") {
        return Some(Observation::Prompt { kind: PromptKind::Setup, asks: Some("sign in".into()) });
    }
    if screen.contains("Usage limit reached") && screen.contains("Keep trying") {
        return Some(Observation::Error { error: AgentError::RateLimited });
    }
    let asks = screen
        .lines()
        .map(|l| l.trim().trim_matches('│').trim())
        .rfind(|l| (l.starts_with("Allow execution of") || l.starts_with("Apply this change?")) && l.ends_with('?'))?;
    screen.contains("Allow once").then(|| Observation::Prompt {
        kind: PromptKind::Permission,
        asks: Some(asks.chars().take(ASKS_MAX).collect()),
    })
}

/// Gemini CLI's folder-trust dialog.
pub fn is_trust_dialog(screen: &str) -> bool {
    screen.contains("Do you trust the files in this folder?")
}

/// Its extension's manifest and hooks file: one command hook per event in `HOOK_EVENTS`;
/// `hook_command` is a shell command prefix (already quoted for `sh`).
pub fn extension(hook_command: &str) -> (String, String) {
    let manifest = serde_json::json!({
        "name": EXTENSION, "version": "1.0.0",
        "description": "bosun's hooks: how this agent reports its turns to bosun",
    });
    let hooks: serde_json::Map<String, Value> = HOOK_EVENTS
        .iter()
        .map(|event| {
            let command = format!("{hook_command} {event}");
            let hook = serde_json::json!([{"hooks": [{"type": "command", "command": command, "name": "bosun"}]}]);
            ((*event).to_owned(), hook)
        })
        .collect();
    (manifest.to_string(), serde_json::json!({ "hooks": hooks }).to_string())
}

/// The session log a hook report names (`transcript_path`), accepted only where Gemini CLI keeps
/// this agent's: `<home>/.gemini/tmp/<project>/chats/session-<time>-<first 8 of its session
/// id>.jsonl`, `<home>` its own Gemini home, an absolute path with no `..` in it. A report is
/// untrusted: any other path (a secret, a FIFO, another agent's log) is not read. None in a pod,
/// whose log is there.
pub fn session_log(a: &crate::Agent, p: &GeminiHook) -> Option<PathBuf> {
    use std::path::Component;
    let Driver::Gemini { session_id } = &a.driver else { return None };
    let home = crate::OwnConfig::of(a)?.dir;
    let path = Path::new(p.transcript_path.as_deref()?);
    let plain = path.is_absolute() && path.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    let name = path.file_name()?.to_str()?;
    let short = session_id.get(..8)?;
    let named = name.starts_with("session-") && name.ends_with(&format!("-{short}.jsonl"));
    let chats = path.parent()?;
    let placed = chats.file_name().is_some_and(|n| n == "chats")
        && chats.parent()?.parent() == Some(home.join(".gemini").join("tmp").as_path());
    (plain && named && placed).then(|| path.to_owned())
}

/// Where the agent's Gemini home is where it runs: its own config, or the claim of its pod.
fn gemini_home(a: &crate::Agent) -> Option<PathBuf> {
    match a.runtime.pod() {
        Some(_) => Some(PathBuf::from(crate::POD_CONFIG)),
        None => crate::OwnConfig::of(a).map(|own| own.dir),
    }
}

/// Google's Gemini CLI: bosun picks its session id; its hooks (an extension in its own home)
/// report its turns, its session log its errors, its screen its start-up and quota dialogs.
pub struct Gemini;

impl AgentDriver for Gemini {
    /// It shows "(esc to cancel, …)" while it responds (Gemini CLI 0.61).
    fn interrupt_keys(&self) -> Option<&'static [crate::TermKey]> {
        Some(&super::ESC)
    }

    fn kind(&self) -> DriverKind {
        DriverKind::Gemini
    }

    fn record(&self, (a, b): (u64, u64), _patterns: super::generic::Patterns) -> Driver {
        Driver::Gemini { session_id: super::claude::session_uuid(a, b) }
    }

    fn grammar(&self) -> Option<&'static Grammar> {
        Some(&GRAMMAR)
    }

    fn user_config(&self, env: &std::collections::BTreeMap<String, String>) -> Option<crate::own_config::UserConfig> {
        Some(gemini_config::user_config(env))
    }

    fn config_seeds(&self, own: &crate::OwnConfig) -> Vec<crate::own_config::Seed> {
        gemini_config::seeds(own)
    }

    fn point_config(&self, dir: &Path, env: &mut std::collections::BTreeMap<String, String>) {
        gemini_config::point(dir, env);
    }

    fn config_env(&self) -> Option<&'static str> {
        Some(gemini_config::HOME_VAR)
    }

    /// Gemini CLI takes `CI=true` or `GITHUB_ACTIONS=true` for headless mode: its positional
    /// prompt becomes `--prompt`, its shell tool is left out, and it exits after one turn.
    fn terminal_env(&self) -> &'static [(&'static str, &'static str)] {
        &[("CI", "false"), ("GITHUB_ACTIONS", "false")]
    }

    /// Its `SessionStart` comes before its input is ready: a message typed within about 0.5 s of
    /// it is lost (docs/clients/gemini.md); a second is left.
    fn input_settle_ms(&self) -> u64 {
        1_000
    }

    /// The project's `.gemini/settings.json`, which a worktree lacks when it is not committed.
    fn repo_settings(&self) -> Option<super::RepoSettings> {
        Some(super::RepoSettings { file: ".gemini/settings.json", copy_to: ".gemini/settings.json", folder: None })
    }

    fn client(&self) -> Option<&'static crate::client_check::Client> {
        Some(&gemini_config::CLIENT)
    }

    /// Its hooks come from its home only: it always runs with one of its own.
    fn own_config_always(&self) -> bool {
        true
    }

    fn has_hooks(&self) -> bool {
        true
    }

    /// `gemini … --session-id <id> [prompt]`; resumed, `--resume <id>` and the message. When the
    /// user names the extensions it may use (`-e`), bosun's is named too.
    fn command_line(&self, a: &crate::Agent, _settings: &Path, resume: Option<Option<&str>>) -> Vec<String> {
        let mut argv = a.command.clone();
        let names_extensions = argv.iter().skip(1).any(|x| {
            matches!(x.as_str(), "-e" | "--extensions") || x.starts_with("--extensions=") || x.starts_with("-e=")
        });
        if names_extensions {
            argv.extend(["--extensions".to_owned(), EXTENSION.to_owned()]);
        }
        let id = self.conversation(a).unwrap_or_default();
        match resume {
            None => {
                argv.extend(["--session-id".to_owned(), id]);
                argv.extend(a.prompt.clone());
            }
            Some(message) => {
                argv.extend(["--resume".to_owned(), id]);
                argv.extend(message.map(str::to_owned));
            }
        }
        argv
    }

    /// Its extension, naming the agent and its generation, in its Gemini home; in a pod, whose
    /// home is new (every pod's without a claim, one on a claim at its first launch only), also
    /// the pod's workspace trusted there, as the own config trusts it here, and the sign-in its
    /// environment chooses (`gemini_config::sign_in`), as the user's settings choose it here.
    fn files(&self, a: &crate::Agent, _settings: &Path) -> Vec<(PathBuf, String)> {
        let Some(home) = gemini_home(a) else { return Vec::new() };
        let dir = home.join(".gemini").join("extensions").join(EXTENSION);
        let hook = format!("{} report gemini {} --generation {}", a.hook_command, a.id, a.restarts);
        let (manifest, hooks) = extension(&hook);
        let mut files =
            vec![(dir.join("gemini-extension.json"), manifest), (dir.join("hooks").join("hooks.json"), hooks)];
        let fresh = a.runtime.pod().is_some_and(|pod| pod.claim.is_none() || a.restarts == 0);
        if fresh && a.policy.accept_trust {
            let trusted = serde_json::json!({ crate::POD_WORKSPACE: "TRUST_FOLDER" });
            files.push((home.join(".gemini").join("trustedFolders.json"), format!("{trusted:#}\n")));
        }
        if let Some(method) = gemini_config::sign_in(&a.env).filter(|_| fresh) {
            let settings = serde_json::json!({"security": {"auth": {"selectedType": method}}});
            files.push((home.join(".gemini").join("settings.json"), format!("{settings:#}\n")));
        }
        files
    }

    fn conversation(&self, a: &crate::Agent) -> Option<String> {
        match &a.driver {
            Driver::Gemini { session_id } => Some(session_id.clone()),
            _ => None,
        }
    }

    /// Its start-up dialogs (trust, sign-in) reach no hook: its screen is looked at.
    fn start_up(&self, _a: &crate::Agent) -> StartUp {
        StartUp { look_at_screen: true, ..StartUp::default() }
    }

    /// Its hook's payload read into what bosun keeps of one (`GeminiHook`), as JSON.
    fn take_report(&self, event: &str, payload: &str) -> Report {
        let kept = GeminiHook::parse(payload, event);
        let event = kept.hook_event_name.clone();
        Report { driver: DriverKind::Gemini, event, payload: serde_json::to_string(&kept).unwrap_or_default() }
    }

    fn read_report(&self, a: Option<&crate::Agent>, report: &Report) -> Option<Reading> {
        let p = kept(report)?;
        let failed = a.is_some_and(|a| matches!(a.state, crate::SessionState::Error { .. }));
        // What it said is read from its session log (`said_in_log`): 0.61's `prompt_response`
        // joins the streamed chunks of each answer with spaces.
        Some(Reading {
            observation: hook_observation(&p, failed).map(|o| (Source::Hook, o)),
            permission: permission(&p),
            log: a.and_then(|a| session_log(a, &p)),
            ..Reading::default()
        })
    }

    fn log_observation(&self, line: &str) -> Observation {
        log_observation(line)
    }

    fn log_usage(&self, line: &str) -> Option<crate::usage::Used> {
        super::session_usage::gemini(line)
    }

    /// The end of a turn: its session log (the payload's, where this agent's are, else the one
    /// it named before) holds the answer as the model gave it.
    fn said_in_log(&self, a: &crate::Agent, report: &Report) -> Option<PathBuf> {
        let p = kept(report).filter(|p| p.hook_event_name == "AfterAgent")?;
        session_log(a, &p).or_else(|| a.log.clone())
    }

    fn said_in_tail(&self, tail: &str) -> Option<String> {
        said_in_tail(tail)
    }

    fn screen(&self, text: &str) -> Option<Screen> {
        Some(Screen { trust: is_trust_dialog(text), seen: screen_observation(text) })
    }

    /// Its quota dialog reaches only the screen.
    fn screen_shows_dialogs(&self) -> bool {
        true
    }

    fn permission_reply(&self, report: &Report, answer: &crate::PermissionAnswer) -> Option<String> {
        kept(report).filter(|p| p.hook_event_name == "BeforeTool").map(|_| permission_reply(answer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(event: &str, payload: &str, failed: bool) -> Option<Observation> {
        hook_observation(&GeminiHook::parse(payload, event), failed)
    }

    #[test]
    fn hooks_mean_what_gemini_cli_0_61_says() {
        // Payloads as the real client sent them (trimmed).
        let base = r#""session_id":"5c835ed9-9542-4837-aa86-b17bb585788b","transcript_path":"/h/.gemini/tmp/w/chats/session-2026-11-28T02-20-5c835ed9.jsonl","cwd":"/w","timestamp":"2026-11-28T02:21:04.006Z""#;
        let p = |rest: &str| format!("{{{base},{rest}}}");
        assert_eq!(
            read("", &p(r#""hook_event_name":"SessionStart","source":"startup""#), false),
            Some(Observation::Started)
        );
        assert_eq!(
            read("", &p(r#""hook_event_name":"SessionStart","source":"resume""#), false),
            Some(Observation::Started)
        );
        let clear = read("", &p(r#""hook_event_name":"SessionStart","source":"clear""#), false);
        assert_eq!(clear, Some(Observation::Activity { heartbeat: Heartbeat::HookCall }));
        assert_eq!(
            read("", &p(r#""hook_event_name":"BeforeAgent","prompt":"say hi""#), false),
            Some(Observation::Working)
        );
        let tool = p(
            r#""hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"touch approved-file","description":"test"}"#,
        );
        assert_eq!(read("", &tool, false), Some(Observation::Working));
        let kept = GeminiHook::parse(&tool, "BeforeTool");
        assert_eq!(permission(&kept), Some(("run_shell_command".into(), Some("touch approved-file".into()))));
        let asked = p(
            r#""hook_event_name":"Notification","notification_type":"ToolPermission","message":"Tool Confirm Shell Command requires execution","details":{"type":"exec","title":"Confirm Shell Command","command":"touch approved-file","rootCommand":"touch"}"#,
        );
        assert_eq!(
            read("", &asked, false),
            Some(Observation::Prompt {
                kind: PromptKind::Permission,
                asks: Some("Tool Confirm Shell Command requires execution: touch approved-file".into())
            })
        );
        let done = p(
            r#""hook_event_name":"AfterAgent","prompt":"say hi","prompt_response":"Hello from fake gemini.","stop_hook_active":false"#,
        );
        assert_eq!(read("", &done, false), Some(Observation::Idle));
        assert_eq!(read("", &done, true), Some(Observation::Idle), "a turn with text ended, whatever came before");
        let failed = p(r#""hook_event_name":"AfterAgent","prompt":"x","prompt_response":"[no response text]""#);
        assert_eq!(read("", &failed, false), Some(Observation::Idle));
        assert_eq!(read("", &failed, true), None, "the failed turn's error stands");
        assert_eq!(GeminiHook::parse(&failed, "AfterAgent").said(), None);
        assert_eq!(
            read("PreCompress", "not json", false),
            Some(Observation::Activity { heartbeat: Heartbeat::HookCall })
        );
    }

    #[test]
    fn hostile_payloads_are_bounded_and_read_as_data() {
        let huge = "x".repeat(1_000_000);
        let payload = serde_json::json!({"hook_event_name": "e".repeat(10_000), "tool_name": huge, "message": huge,
            "tool_input": {"command": huge}, "prompt_response": format!("start{huge}end"), "transcript_path": "../../etc"})
        .to_string();
        let report = Gemini.take_report("AfterAgent", &payload);
        assert!(report.payload.len() < 20_000, "kept: {} bytes", report.payload.len());
        assert_eq!(report.event.len(), 100);
        let p = kept(&report).unwrap_or_default();
        assert!(p.prompt_response.as_deref().unwrap_or_default().ends_with("end"), "a message keeps its end");
        for raw in ["[]", "null", "\"AfterAgent\"", "{\"hook_event_name\": 7}", "\u{0}"] {
            let r = Gemini.take_report("Notification", raw);
            assert_eq!(r.event, "Notification", "{raw}");
            assert!(Gemini.read_report(None, &r).is_some());
        }
        let claude = DriverKind::Claude.behaviour().take_report("Stop", "{}");
        assert_eq!(Gemini.read_report(None, &claude), None);
    }

    #[test]
    fn a_policy_denial_blocks_the_call_and_an_allowance_leaves_it_to_gemini() {
        let deny = permission_reply(&crate::PermissionAnswer::Deny { rule: "Bash(rm *)".into() });
        let deny: Value = serde_json::from_str(&deny).unwrap_or_default();
        assert_eq!(deny["decision"], "deny");
        assert!(deny["reason"].as_str().unwrap_or_default().contains("Bash(rm *)"));
        let notification = Gemini.take_report("Notification", r#"{"hook_event_name":"Notification"}"#);
        let allow = crate::PermissionAnswer::Allow { rule: "x".into() };
        assert_eq!(Gemini.permission_reply(&notification, &allow), None, "only BeforeTool is answered");
    }

    #[test]
    fn what_it_said_is_its_last_answer_of_the_turn_in_its_log() {
        let lines = [
            r#"{"sessionId":"s","projectHash":"h","startTime":"t","kind":"main"}"#,
            r#"{"id":"1","type":"user","content":[{"text":"fix it"}]}"#,
            r#"{"id":"2","type":"gemini","content":"Looking.","toolCalls":[{"name":"run_shell_command"}]}"#,
            r#"{"id":"3","type":"gemini","content":"","toolCalls":[]}"#,
            r#"{"id":"4","type":"gemini","content":"All fixed. Shall I push?","thoughts":[],"model":"gemini-2.5-pro"}"#,
            r#"{"$set":{"lastUpdated":"2026-11-28T02:27:05.942Z"}}"#,
        ];
        assert_eq!(said_in_tail(&lines.join("\n")).as_deref(), Some("All fixed. Shall I push?"));
        let failed = [
            lines[4],
            r#"{"id":"5","type":"user","content":[{"text":"again"}]}"#,
            r#"{"id":"6","type":"error","content":"[API Error: x]"}"#,
        ];
        assert_eq!(said_in_tail(&failed.join("\n")), None, "a failed turn said nothing");
        assert_eq!(said_in_tail(r#"{"type":"gemini","content":"cut"#), None);
    }

    #[test]
    fn log_errors_are_errors_of_their_kind() {
        let line = |content: &str| serde_json::json!({"id": "1", "type": "error", "content": content}).to_string();
        let auth = line(r#"[API Error: {"error":{"code":401,"message":"fake error","status":"UNAUTHENTICATED"}}]"#);
        assert_eq!(log_observation(&auth), Observation::Error { error: AgentError::Unauthorized });
        let quota = line("[API Error: fake error Please retry in 600s.]\nPlease wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method");
        assert_eq!(log_observation(&quota), Observation::Error { error: AgentError::RateLimited });
        let plan = line("[API Error: You exceeded your current quota, please check your plan and billing details.]");
        assert_eq!(log_observation(&plan), Observation::Error { error: AgentError::RateLimited }, "a 429 first");
        let credits = line("[API Error: Your prepayment credits are depleted.]");
        assert_eq!(log_observation(&credits), Observation::Error { error: AgentError::OutOfCredits });
        let net = line("[API Error: exception TypeError: fetch failed sending request]");
        assert_eq!(log_observation(&net), Observation::Error { error: AgentError::NoInternet });
        let activity = Observation::Activity { heartbeat: Heartbeat::LogWrite };
        assert_eq!(log_observation(r#"{"type":"gemini","content":"429 quota"}"#), activity);
        assert_eq!(log_observation(r#"{"$set":{"lastUpdated":"x"}}"#), activity);
        assert_eq!(log_observation("not json"), activity);
    }

    #[test]
    fn the_screen_shows_its_dialogs() {
        // As Gemini CLI 0.61 draws them (trimmed).
        let approval = "╭──╮\n│ ? Shell  touch approved-file │\n│ Allow execution of [Shell]? │\n│ │\n│ ● 1. Allow once │\n│   2. Allow for this session │\n│   3. No, suggest changes (esc) │\n╰──╯";
        assert_eq!(
            screen_observation(approval),
            Some(Observation::Prompt {
                kind: PromptKind::Permission,
                asks: Some("Allow execution of [Shell]?".into())
            })
        );
        let quota = "│ Usage limit reached for all Pro models. │\n│ Access resets at 2:36 AM UTC. │\n│ ● 1. Keep trying │\n│   2. Stop │";
        assert_eq!(screen_observation(quota), Some(Observation::Error { error: AgentError::RateLimited }));
        let trust = "│ Do you trust the files in this folder? │\n│ ● 1. Trust folder (work) │\n│   2. Trust parent folder (gx) │\n│   3. Don't trust │";
        assert!(is_trust_dialog(trust));
        assert!(matches!(screen_observation(trust), Some(Observation::Prompt { kind: PromptKind::Setup, .. })));
        assert_eq!(screen_observation("✦ Allow execution of [Shell]? I would not."), None, "words are no dialog");
        let menu = super::super::dialog::menu(approval).expect("its options read");
        assert_eq!(menu.selected, Some(0));
        assert_eq!(
            menu.find(super::super::dialog::Want::Person { answer: super::super::dialog::DialogAnswer::Allow }),
            Ok(0)
        );
    }

    #[test]
    fn a_prompt_on_its_command_line_is_held_apart_and_each_event_reports_its_name() {
        let driver = Gemini.record((1, 2), super::super::generic::Patterns::default());
        assert!(matches!(&driver, Driver::Gemini { session_id } if session_id.len() == 36));
        let (command, prompt) =
            driver.split_prompt(vec!["gemini".into(), "-m".into(), "x".into(), "do it".into()], None);
        assert_eq!((command.len(), prompt.as_deref()), (3, Some("do it")));
        let (_, hooks) = extension("'/bin/bosun' hook report gemini a-1 --generation 0");
        let hooks: Value = serde_json::from_str(&hooks).unwrap_or_default();
        for event in HOOK_EVENTS {
            let command = hooks["hooks"][event][0]["hooks"][0]["command"].as_str().unwrap_or_default();
            assert!(command.ends_with(&format!(" {event}")), "{event}: {command}");
        }
    }
}
