//! pi's figures (issue 28), with the real pi against the fake Anthropic API (a provider of its
//! `models.json`), through `bosun agent start`: turn end to idle (its extension's
//! `agent_settled`), an extension's dialog about a call to `prompt(permission)` (pi asks nothing of
//! its own before a tool runs), a 429 to `error(rate_limited)` (pi's own retries off, as Claude Code's are), false
//! idles in a 20 s stalled stream and a 20 s tool call, and resumes with history after kill -9.

use std::path::Path;
use std::time::Duration;

use bosun_core::SessionState;
use bosun_testkit::bosun::Bosun;
use bosun_testkit::clients::{PiConfig, WriteOrPanic as _};
use bosun_testkit::fake_model::{FakeModel, Reply};
use bosun_testkit::repo::TempRepo;

use super::{bosun_bin, Rig, BIN, DIALOGS, ERRORS, KILLS, MISSED_AFTER, TURNS};
use crate::{show, wait_secs, Figure};

/// A user's extension that asks before every `bash` call, as pi's example `permission-gate` does.
const GATE: &str = r#"export default function (pi) {
  pi.on("tool_call", async (event, ctx) => {
    if (event.toolName !== "bash") return undefined;
    const choice = await ctx.ui.select(`Run this?\n\n  ${event.input.command}\n`, ["Yes", "No"]);
    return choice === "Yes" ? undefined : { block: true, reason: "Blocked by user" };
  });
}
"#;

/// pi's figures alone (`scripts/bench pi`).
pub fn pi(bin: &Path) -> Vec<Figure> {
    let _ = BIN.set(bin.to_owned());
    match bosun_testkit::tools::pi() {
        Some(pi) => figures(&pi),
        None => {
            println!("bosun-bench: pi could not be installed; its figures are left out");
            Vec::new()
        }
    }
}

fn rig(pi: &Path) -> Rig {
    let model = FakeModel::anthropic();
    let dir = tempfile::tempdir().expect("temp dir");
    let env = PiConfig::new(&model, dir.path()).write();
    let client = pi.display().to_string();
    Rig { bosun: Bosun::new(bosun_bin()), repo: TempRepo::new(), model, env, client, _dir: dir }
}

fn figures(pi: &Path) -> Vec<Figure> {
    let rig = rig(pi);
    let gate = rig._dir.path().join("gate.js");
    std::fs::write(&gate, GATE).expect("write the gate extension");
    let gate = gate.display().to_string();
    rig.model.push(Reply::text("Ready."));
    let id = rig.start(&[], &["-e", &gate, "get ready"]);
    let (turns, mut last) = rig.turns(&id);
    // An extension's dialog before a bash call, answered yes by `bosun answer`.
    let mut dialogs = Vec::new();
    for i in 0..DIALOGS {
        rig.model.push(Reply::shell(format!("touch file-{i}")));
        rig.model.push(Reply::text("Made it."));
        rig.send(&id, &format!("make file {i}"));
        let prompt = rig
            .next_state(&id, last.state_seq, |s| matches!(s, SessionState::Prompt { .. }))
            .expect("the extension's prompt");
        dialogs.push(rig.since_answer(&prompt));
        rig.bosun.ok(rig.repo.path(), &["answer", &id, "allow"]);
        last = rig.next_state(&id, prompt.state_seq, |s| *s == SessionState::Idle).expect("idle after the tool");
    }
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
    let false_idles = false_idles(&rig);
    let resumed = resumes(&rig);
    vec![
        Figure::new(format!("pi: turn end (last byte) to Idle (n={TURNS})"), turns, "p50<100", "before: never"),
        Figure::new(
            format!("pi: extension's dialog (its call's last byte) to prompt(permission) (n={DIALOGS})"),
            dialogs,
            "<500",
            "before: never",
        ),
        Figure::new(format!("pi: 429 to error(rate_limited) (n={ERRORS})"), errors, "<1000", "before: never"),
        Figure::value("pi: API errors missed", format!("{missed} of {ERRORS}"), "none", "before: all"),
        Figure::value(
            "pi: false idle in a 20 s stalled stream and a 20 s tool call",
            false_idles.map_or_else(|| "unmeasured".to_owned(), |n| n.to_string()),
            "0",
            "before: never",
        ),
        Figure::value(
            "pi: kill -9 to resumed with its history",
            format!("{resumed} of {KILLS}"),
            "all",
            "before: never",
        ),
    ]
}

/// How many times a pi agent was seen idle, beyond its two turns' ends, in a turn whose answer
/// stalls 20 s halfway and a turn whose bash call runs 20 s; none when the two turns did not both
/// run, so the figure cannot read 0 for nothing measured.
fn false_idles(rig: &Rig) -> Option<usize> {
    rig.model.push(Reply::stall(20, "A slow answer, at last."));
    rig.model.push(Reply::shell("sleep 20"));
    rig.model.push(Reply::text("Slept."));
    let id = rig.start(&["--grace", "0s"], &["answer slowly"]);
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

/// How many times of `KILLS` a pi agent killed with SIGKILL is started again with its
/// conversation: the model's next request holds its first prompt and the resume's message.
fn resumes(rig: &Rig) -> usize {
    rig.model.push(Reply::text("First answer."));
    let id = rig.start(&["--on-dead", "resume*20:go on"], &["remember this"]);
    let mut last = rig.next_state(&id, 0, |s| *s == SessionState::Idle).expect("the first turn ends");
    let mut resumed = 0;
    for i in 0..KILLS {
        let now = rig.agent(&id);
        let Some(pid) = now.pid.filter(|_| now.restarts == i as u32) else {
            println!("bosun-bench: pi's generation {i} has no pid: {:?} {}", now.pid, now.restarts);
            break;
        };
        let asked = rig.model.main_requests().len();
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
            None => println!("bosun-bench: pi was not idle after resume {i}: {:?}", rig.agent(&id).state),
        }
        wait_secs(MISSED_AFTER, || (rig.agent(&id).pid.is_some() && rig.agent(&id).restarts > i as u32).then_some(()));
    }
    rig.bosun.ok(rig.repo.path(), &["kill", &id]);
    resumed
}
