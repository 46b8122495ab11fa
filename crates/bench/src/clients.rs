//! Issue 9's figures, with the real Claude Code, Codex, Gemini CLI and opencode against bosun's fake model
//! servers:
//! from the server's last byte of an answer to bosun recording what it means (idle, a
//! permission prompt, an error), for each client, through `bosun agent start`.

use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use bosun_core::{Agent, SessionState};
use bosun_testkit::bosun::Bosun;
use bosun_testkit::clients::{ClaudeConfig, ClientEnv, CodexConfig, GeminiConfig, WriteOrPanic as _};
use bosun_testkit::fake_model::{FakeModel, Logged, Reply};
use bosun_testkit::repo::TempRepo;

use crate::{show, wait_secs, Figure};

mod pi;
pub use pi::pi;
mod opencode;
pub use opencode::opencode;

const TURNS: usize = 20;
const DIALOGS: usize = 8;
const ERRORS: usize = 12;
const STARTS: usize = 6;
const KILLS: usize = 10;
/// How long an observation may take before it counts as missed.
const MISSED_AFTER: u64 = 15;

/// One client under one bosun: its fake model, its environment, its binary.
struct Rig {
    bosun: Bosun,
    repo: TempRepo,
    model: FakeModel,
    env: ClientEnv,
    client: String,
    _dir: tempfile::TempDir,
}

impl Rig {
    fn start(&self, args: &[&str], rest: &[&str]) -> String {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--", self.client.as_str()]);
        all.extend(rest);
        self.bosun.start_with(self.repo.path(), &all, |cmd| {
            self.env.apply(cmd);
        })
    }

    fn agent(&self, id: &str) -> Agent {
        wait_secs(10, || show(self.bosun.state_dir(), id))
    }

    /// Waits for the agent to enter a state `want` accepts after `after` (its `state_seq`);
    /// None when it does not within `MISSED_AFTER` seconds.
    fn next_state(&self, id: &str, after: u64, want: impl Fn(&SessionState) -> bool) -> Option<Agent> {
        let deadline = std::time::Instant::now() + Duration::from_secs(MISSED_AFTER);
        loop {
            if let Some(a) = show(self.bosun.state_dir(), id).filter(|a| a.state_seq > after && want(&a.state)) {
                return Some(a);
            }
            if std::time::Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_micros(500));
        }
    }

    /// The time from the last byte of the newest main-loop answer to `a`'s state change.
    fn since_answer(&self, a: &Agent) -> Duration {
        let answered = self.model.main_requests().iter().rev().find_map(|l: &Logged| l.answered);
        let answered = answered.and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(0, |d| d.as_millis() as u64);
        Duration::from_millis(a.state_since.as_millis().saturating_sub(answered))
    }

    /// Waits for the agent's first turn to end, then times `TURNS` more, each a plain answer:
    /// the times from each answer's last byte to idle, and the agent after the last.
    fn turns(&self, id: &str) -> (Vec<Duration>, Agent) {
        let mut last = self.next_state(id, 0, |s| *s == SessionState::Idle).expect("the first turn ends");
        let mut turns = Vec::new();
        for i in 0..TURNS {
            self.model.push(Reply::text(format!("Answer {i}.")));
            self.send(id, &format!("question {i}"));
            let idle = self.next_state(id, last.state_seq, |s| *s == SessionState::Idle).expect("idle again");
            turns.push(self.since_answer(&idle));
            last = idle;
        }
        (turns, last)
    }

    fn send(&self, id: &str, text: &str) {
        self.bosun.ok(self.repo.path(), &["send", id, text]);
    }
}

fn claude_rig(claude: &Path) -> Rig {
    let model = FakeModel::anthropic();
    let dir = tempfile::tempdir().expect("temp dir");
    let repo = TempRepo::new();
    let env = ClaudeConfig::new(&model, dir.path()).trust(repo.path().canonicalize().expect("repo")).write();
    let client = claude.display().to_string();
    Rig { bosun: Bosun::new(bosun_bin()), repo, model, env, client, _dir: dir }
}

fn codex_rig(codex: &Path, configure: impl FnOnce(CodexConfig) -> CodexConfig) -> Rig {
    let model = FakeModel::openai();
    let dir = tempfile::tempdir().expect("temp dir");
    let repo = TempRepo::new();
    let config = CodexConfig::new(&model, dir.path()).trust(repo.path().canonicalize().expect("repo"));
    let env = configure(config).write();
    let client = codex.display().to_string();
    Rig { bosun: Bosun::new(bosun_bin()), repo, model, env, client, _dir: dir }
}

fn gemini_rig(gemini: &Path) -> Rig {
    let model = FakeModel::gemini();
    let dir = tempfile::tempdir().expect("temp dir");
    let env = GeminiConfig::new(&model, dir.path()).write();
    let client = gemini.display().to_string();
    Rig { bosun: Bosun::new(bosun_bin()), repo: TempRepo::new(), model, env, client, _dir: dir }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

fn bosun_bin() -> std::path::PathBuf {
    BIN.get().expect("the bosun binary is set").clone()
}

static BIN: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

pub fn figures(bin: &Path) -> Vec<Figure> {
    let _ = BIN.set(bin.to_owned());
    let mut figures = Vec::new();
    match bosun_testkit::tools::claude_code() {
        Some(claude) => figures.extend(claude_figures(&claude)),
        None => println!("bosun-bench: Claude Code could not be installed; its figures are left out"),
    }
    match bosun_testkit::tools::codex() {
        Some(codex) => figures.extend(codex_figures(&codex)),
        None => println!("bosun-bench: Codex could not be installed; its figures are left out"),
    }
    figures.extend(gemini(bin));
    figures.extend(pi(bin));
    figures.extend(opencode(bin));
    figures
}

/// Gemini CLI's figures alone (`scripts/bench gemini`).
pub fn gemini(bin: &Path) -> Vec<Figure> {
    let _ = BIN.set(bin.to_owned());
    match bosun_testkit::tools::gemini_cli() {
        Some(gemini) => gemini_figures(&gemini),
        None => {
            println!("bosun-bench: Gemini CLI could not be installed; its figures are left out");
            Vec::new()
        }
    }
}

fn gemini_figures(gemini: &Path) -> Vec<Figure> {
    let rig = gemini_rig(gemini);
    rig.model.push(Reply::text("Ready."));
    let id = rig.start(&[], &["get ready"]);
    // Turn end: a plain answer, then idle (its AfterAgent hook).
    let (turns, mut last) = rig.turns(&id);
    let target = format!("={}:", last.session);
    let screen = |text: &str| {
        let out = rig.bosun.tmux(&["capture-pane", "-p", "-t", &target]);
        String::from_utf8_lossy(&out.stdout).contains(text)
    };
    // Permission dialogs: a shell call, answered yes by `bosun answer` once it is on the screen.
    let mut dialogs = Vec::new();
    for i in 0..DIALOGS {
        rig.model.push(Reply::ShellNeedingApproval(format!("touch file-{i}")));
        rig.model.push(Reply::text("Made it."));
        rig.send(&id, &format!("make file {i}"));
        let prompt = rig
            .next_state(&id, last.state_seq, |s| matches!(s, SessionState::Prompt { .. }))
            .expect("a permission prompt");
        dialogs.push(rig.since_answer(&prompt));
        wait_secs(MISSED_AFTER, || screen("Allow once").then_some(()));
        rig.bosun.ok(rig.repo.path(), &["answer", &id, "allow"]);
        last = rig.next_state(&id, prompt.state_seq, |s| *s == SessionState::Idle).expect("idle after the tool");
    }
    // A quota's 429: its dialog on the screen, then "2. Stop".
    let (mut errors, mut missed) = (Vec::new(), 0);
    for i in 0..ERRORS {
        rig.model.push(Reply::Status(429));
        rig.send(&id, &format!("try {i}"));
        match rig.next_state(&id, last.state_seq, |s| matches!(s, SessionState::Error { .. })) {
            Some(error) => {
                errors.push(rig.since_answer(&error));
                last = error;
            }
            None => {
                missed += 1;
                last = rig.agent(&id);
            }
        }
        // "2. Stop": the turn ends in the error its log then says.
        wait_secs(MISSED_AFTER, || screen("Keep trying").then_some(()));
        rig.bosun.ok(rig.repo.path(), &["answer", &id, "2"]);
        wait_secs(MISSED_AFTER, || (!screen("Usage limit reached")).then_some(()));
        let stopped = rig.next_state(&id, last.state_seq, |s| matches!(s, SessionState::Error { .. }));
        last = stopped.unwrap_or_else(|| rig.agent(&id));
    }
    rig.bosun.ok(rig.repo.path(), &["kill", &id]);
    let resumed = gemini_resumes(&rig);
    let false_idles = gemini_false_idles(&rig);
    vec![
        Figure::new(format!("Gemini CLI: turn end (last byte) to Idle (n={TURNS})"), turns, "p50<100", "before: never"),
        Figure::new(
            format!("Gemini CLI: permission dialog answer to prompt(permission) (n={DIALOGS})"),
            dialogs,
            "<500",
            "before: never",
        ),
        Figure::new(
            format!("Gemini CLI: quota 429 to error(rate_limited) (n={ERRORS})"),
            errors,
            "<1000",
            "before: never",
        ),
        Figure::value("Gemini CLI: API errors missed", format!("{missed} of {ERRORS}"), "none", "before: all"),
        Figure::value(
            "Gemini CLI: false idle in a 20 s stalled stream and a 20 s tool call",
            false_idles.map_or_else(|| "unmeasured".to_owned(), |n| n.to_string()),
            "0",
            "before: never",
        ),
        Figure::value(
            "Gemini CLI: kill -9 to resumed with its history",
            format!("{resumed} of {KILLS}"),
            "all",
            "before: never",
        ),
    ]
}

/// How many times a Gemini agent was seen idle, beyond its two turns' ends, in a turn whose
/// answer stalls 20 s halfway and a turn whose shell call runs 20 s (yolo: nobody is asked);
/// none when the two turns did not both run, so the figure cannot read 0 for nothing measured.
fn gemini_false_idles(rig: &Rig) -> Option<usize> {
    rig.model.push(Reply::stall(20, "A slow answer, at last."));
    rig.model.push(Reply::shell("sleep 20"));
    rig.model.push(Reply::text("Slept."));
    let id = rig.start(&["--grace", "0s"], &["--approval-mode", "yolo", "answer slowly"]);
    let first = rig.next_state(&id, 0, |s| *s == SessionState::Idle);
    let first = first.unwrap_or_else(|| {
        wait_secs(30, || show(rig.bosun.state_dir(), &id).filter(|a| a.state == SessionState::Idle))
    });
    rig.send(&id, "now sleep");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while rig.model.main_requests().len() < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = wait_secs(30, || {
        show(rig.bosun.state_dir(), &id).filter(|a| a.state_seq > first.state_seq && a.state == SessionState::Idle)
    });
    let ran = rig.model.main_requests().len() >= 3;
    let idles = rig.bosun.states_seen(&id).iter().filter(|s| *s == "idle").count();
    rig.bosun.ok(rig.repo.path(), &["kill", &id]);
    ran.then(|| idles.saturating_sub(2))
}

/// How many times of `KILLS` a Gemini agent killed with SIGKILL (it and the Node.js process it
/// relaunches itself as) is started again with its conversation: the model's next request holds
/// its first prompt and the resume's message.
fn gemini_resumes(rig: &Rig) -> usize {
    rig.model.push(Reply::text("First answer."));
    let id = rig.start(&["--on-dead", "resume*20:go on"], &["remember this"]);
    let mut last = rig.next_state(&id, 0, |s| *s == SessionState::Idle).expect("the first turn ends");
    let mut resumed = 0;
    for i in 0..KILLS {
        // The process of this generation (its pid is recorded once its session is up).
        let now = rig.agent(&id);
        let Some(pid) = now.pid.filter(|_| now.restarts == i as u32) else {
            println!("bosun-bench: Gemini CLI's generation {i} has no pid: {:?} {}", now.pid, now.restarts);
            break;
        };
        let asked = rig.model.main_requests().len();
        let _ = std::process::Command::new("pkill").args(["-9", "-P", &pid.to_string()]).status();
        let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let back = loop {
            let requests = rig.model.main_requests();
            if requests.len() > asked || std::time::Instant::now() > deadline {
                break requests;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let newest = back.last().filter(|_| back.len() > asked);
        if newest.is_some_and(|r| r.contains("remember this") && r.last_user_text().as_deref() == Some("go on")) {
            resumed += 1;
        }
        match rig.next_state(&id, last.state_seq, |s| *s == SessionState::Idle) {
            Some(idle) => last = idle,
            None => println!("bosun-bench: Gemini CLI was not idle after resume {i}: {:?}", rig.agent(&id).state),
        }
        wait_secs(MISSED_AFTER, || (rig.agent(&id).pid.is_some() && rig.agent(&id).restarts > i as u32).then_some(()));
    }
    rig.bosun.ok(rig.repo.path(), &["kill", &id]);
    resumed
}

fn claude_figures(claude: &Path) -> Vec<Figure> {
    let rig = claude_rig(claude);
    rig.model.push(Reply::text("Ready."));
    // Claude Code 2.1.3xx starts in auto mode, which shows no permission dialog: name the mode.
    let id = rig.start(&[], &["--permission-mode", "default", "get ready"]);
    // Turn end: a plain answer, then idle.
    let (turns, mut last) = rig.turns(&id);
    // Permission dialogs: a Bash call, answered yes by `bosun answer`.
    let mut dialogs = Vec::new();
    for i in 0..DIALOGS {
        rig.model.push(Reply::shell(format!("touch file-{i}")));
        rig.model.push(Reply::text("Made it."));
        rig.send(&id, &format!("make file {i}"));
        let prompt = rig
            .next_state(&id, last.state_seq, |s| matches!(s, SessionState::Prompt { .. }))
            .expect("a permission prompt");
        dialogs.push(rig.since_answer(&prompt));
        rig.bosun.ok(rig.repo.path(), &["answer", &id, "allow"]);
        last = rig.next_state(&id, prompt.state_seq, |s| *s == SessionState::Idle).expect("idle after the tool");
    }
    // API errors: a 429, then a message that is answered.
    let (mut errors, mut missed) = (Vec::new(), 0);
    for i in 0..ERRORS {
        rig.model.push(Reply::Status(429));
        rig.send(&id, &format!("try {i}"));
        match rig.next_state(&id, last.state_seq, |s| matches!(s, SessionState::Error { .. })) {
            Some(error) => {
                errors.push(rig.since_answer(&error));
                last = error;
            }
            None => {
                missed += 1;
                last = rig.agent(&id);
            }
        }
    }
    rig.bosun.ok(rig.repo.path(), &["kill", &id]);
    vec![
        Figure::new(
            format!("Claude Code: turn end (last byte) to Idle (n={TURNS})"),
            turns,
            "p50<50",
            "before: 23-54 ms",
        ),
        Figure::new(
            format!("Claude Code: permission dialog answer to prompt(permission) (n={DIALOGS})"),
            dialogs,
            "<300",
            "before: 6.05 s",
        ),
        Figure::new(
            format!("Claude Code: API error (429) to error(kind) (n={ERRORS})"),
            errors,
            "<500",
            "before: 0.7-1.4 s",
        ),
        Figure::value("Claude Code: API errors missed", format!("{missed} of {ERRORS}"), "none", "before: 3 of 12"),
    ]
}

fn codex_figures(codex: &Path) -> Vec<Figure> {
    let mut figures = Vec::new();
    // A positional prompt: a fresh agent each time, its first turn to idle.
    let rig = codex_rig(codex, |c| c);
    let mut positional = Vec::new();
    for i in 0..STARTS {
        rig.model.push(Reply::text(format!("Started {i}.")));
        let id = rig.start(&[], &[&format!("task {i}")]);
        let idle = rig.next_state(&id, 0, |s| *s == SessionState::Idle).expect("the first turn ends");
        positional.push(rig.since_answer(&idle));
        rig.bosun.ok(rig.repo.path(), &["kill", &id]);
    }
    figures.push(Figure::new(
        format!("Codex: turn end to Idle, prompt on the command line (n={STARTS})"),
        positional,
        "p50<100",
        "before: never",
    ));
    // Later turns, typed.
    rig.model.push(Reply::text("Ready."));
    let id = rig.start(&[], &["get ready"]);
    let (turns, _) = rig.turns(&id);
    rig.bosun.ok(rig.repo.path(), &["kill", &id]);
    figures.push(Figure::new(
        format!("Codex: turn end to Idle, typed turns (n={TURNS})"),
        turns,
        "p50<100",
        "before: 17-21 ms",
    ));
    // Approval dialogs.
    let rig = codex_rig(codex, CodexConfig::asking_approval);
    rig.model.push(Reply::text("Ready."));
    let id = rig.start(&[], &["get ready"]);
    let mut last = rig.next_state(&id, 0, |s| *s == SessionState::Idle).expect("the first turn ends");
    let target = format!("={}:", last.session);
    let (mut dialogs, mut drawn) = (Vec::new(), Vec::new());
    for i in 0..DIALOGS {
        rig.model.push(Reply::ShellNeedingApproval(format!("touch file-{i}")));
        rig.model.push(Reply::text("Made it."));
        rig.send(&id, &format!("make file {i}"));
        // When the dialog is on the screen: its pane read straight from tmux, as often as that
        // allows (a few ms; `bosun peek` took tens of ms more, which made bosun's part look
        // smaller than it is).
        let seen = wait_secs(MISSED_AFTER, || {
            let out = rig.bosun.tmux(&["capture-pane", "-p", "-t", &target]);
            String::from_utf8_lossy(&out.stdout).contains("Would you like to run").then(now_ms)
        });
        let prompt = rig
            .next_state(&id, last.state_seq, |s| matches!(s, SessionState::Prompt { .. }))
            .expect("an approval prompt");
        dialogs.push(rig.since_answer(&prompt));
        drawn.push(Duration::from_millis(prompt.state_since.as_millis().saturating_sub(seen)));
        rig.bosun.ok(rig.repo.path(), &["answer", &id, "allow"]);
        last = rig.next_state(&id, prompt.state_seq, |s| *s == SessionState::Idle).expect("idle after the command");
    }
    rig.bosun.ok(rig.repo.path(), &["kill", &id]);
    figures.push(Figure::new(
        format!("Codex: approval dialog answer to prompt(permission) (n={DIALOGS})"),
        dialogs,
        "<1000",
        "before: never",
    ));
    figures.push(Figure::new(
        format!("Codex: approval dialog on screen to prompt(permission) (n={DIALOGS})"),
        drawn,
        "",
        "(bosun's own part)",
    ));
    figures
}
