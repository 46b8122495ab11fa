//! opencode's figures (`scripts/bench opencode`, also in `scripts/bench clients`), against the
//! model server's Anthropic API through a provider of its config: turn end to idle, permission
//! dialog to prompt(permission), 429 to error(rate_limited), false idles in a stalled stream and
//! a long tool call, and resumes with history after kill -9.

use std::path::Path;
use std::time::Duration;

use bosun_core::SessionState;
use bosun_testkit::bosun::Bosun;
use bosun_testkit::clients::{OpencodeConfig, WriteOrPanic as _};
use bosun_testkit::fake_model::{FakeModel, Reply};
use bosun_testkit::repo::TempRepo;

use super::{bosun_bin, Rig, BIN, DIALOGS, ERRORS, KILLS, MISSED_AFTER};
use crate::{show, wait_secs, Figure};

/// How long opencode's first turn may take: a new config directory has it install its plugin
/// package from the npm registry first.
const FIRST_TURN_SECS: u64 = 90;

fn rig(opencode: &Path, configure: impl FnOnce(OpencodeConfig) -> OpencodeConfig) -> Rig {
    let model = FakeModel::anthropic();
    let dir = tempfile::tempdir().expect("temp dir");
    let env = configure(OpencodeConfig::new(&model, dir.path())).write();
    let client = opencode.display().to_string();
    Rig { bosun: Bosun::new(bosun_bin()), repo: TempRepo::new(), model, env, client, _dir: dir }
}

/// opencode's figures alone (`scripts/bench opencode`).
pub fn opencode(bin: &Path) -> Vec<Figure> {
    let _ = BIN.set(bin.to_owned());
    match bosun_testkit::tools::opencode() {
        Some(opencode) => figures(&opencode),
        None => {
            println!("bosun-bench: opencode could not be installed; its figures are left out");
            Vec::new()
        }
    }
}

/// Waits for agent `id`'s first turn to end.
fn first_idle(rig: &Rig, id: &str) -> bosun_core::Agent {
    wait_secs(FIRST_TURN_SECS, || show(rig.bosun.state_dir(), id).filter(|a| a.state == SessionState::Idle))
}

fn figures(opencode: &Path) -> Vec<Figure> {
    let rig = rig(opencode, OpencodeConfig::asking);
    rig.model.push(Reply::text("Ready."));
    let id = rig.start(&["--prompt", "get ready"], &[]);
    first_idle(&rig, &id);
    // Turn end: a plain answer, then idle (its plugin's session.idle).
    let (turns, mut last) = rig.turns(&id);
    let target = format!("={}:", last.session);
    // Permission dialogs: a shell call; once the dialog shows "Allow once" selected (its
    // background coloured), Enter allows it (a person's key: the bench times bosun's reading).
    let mut dialogs = Vec::new();
    for i in 0..DIALOGS {
        rig.model.push(Reply::shell(format!("touch file-{i}")));
        rig.model.push(Reply::text("Made it."));
        rig.send(&id, &format!("make file {i}"));
        let prompt = rig
            .next_state(&id, last.state_seq, |s| matches!(s, SessionState::Prompt { .. }))
            .expect("a permission prompt");
        dialogs.push(rig.since_answer(&prompt));
        wait_secs(MISSED_AFTER, || {
            let out = rig.bosun.tmux(&["capture-pane", "-e", "-p", "-t", &target]);
            String::from_utf8_lossy(&out.stdout).contains("\u{1b}[48;5;215m \u{1b}[38;5;232mAllow once").then_some(())
        });
        rig.bosun.tmux(&["send-keys", "-t", &target, "Enter"]);
        last = rig.next_state(&id, prompt.state_seq, |s| *s == SessionState::Idle).expect("idle after the tool");
    }
    // A 429: rate limited while opencode waits to try again; its next try is answered.
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
        last = rig.next_state(&id, last.state_seq, |s| *s == SessionState::Idle).unwrap_or_else(|| rig.agent(&id));
    }
    rig.bosun.ok(rig.repo.path(), &["kill", &id]);
    let resumed = resumes(opencode);
    let false_idles = false_idles(opencode);
    vec![
        Figure::new(
            format!("opencode: turn end (last byte) to Idle (n={})", turns.len()),
            turns,
            "p50<100",
            "before: never",
        ),
        Figure::new(
            format!("opencode: permission dialog answer to prompt(permission) (n={DIALOGS})"),
            dialogs,
            "<500",
            "before: never",
        ),
        Figure::new(format!("opencode: 429 to error(rate_limited) (n={ERRORS})"), errors, "<1000", "before: never"),
        Figure::value("opencode: API errors missed", format!("{missed} of {ERRORS}"), "none", "before: all"),
        Figure::value(
            "opencode: false idle in a 20 s stalled stream and a 20 s tool call",
            false_idles.map_or_else(|| "unmeasured".to_owned(), |n| n.to_string()),
            "0",
            "before: never",
        ),
        Figure::value(
            "opencode: kill -9 to resumed with its history",
            format!("{resumed} of {KILLS}"),
            "all",
            "before: never",
        ),
    ]
}

/// How many times an opencode agent was seen idle, beyond its two turns' ends, in a turn whose
/// answer stalls 20 s halfway and a turn whose shell call runs 20 s; none when the two turns did
/// not both run, so the figure cannot read 0 for nothing measured.
fn false_idles(opencode: &Path) -> Option<usize> {
    let rig = rig(opencode, |c| c);
    rig.model.push(Reply::stall(20, "A slow answer, at last."));
    rig.model.push(Reply::shell("sleep 20"));
    rig.model.push(Reply::text("Slept."));
    let id = rig.start(&["--grace", "0s", "--prompt", "answer slowly"], &[]);
    let first = first_idle(&rig, &id);
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

/// How many times of `KILLS` an opencode agent killed with SIGKILL is started again in its
/// session: the model's next request holds its first prompt and the resume's message.
fn resumes(opencode: &Path) -> usize {
    let rig = rig(opencode, |c| c);
    rig.model.push(Reply::text("First answer."));
    let id = rig.start(&["--on-dead", "resume*20:go on", "--prompt", "remember this"], &[]);
    let mut last = first_idle(&rig, &id);
    let mut resumed = 0;
    for i in 0..KILLS {
        let now = rig.agent(&id);
        let Some(pid) = now.pid.filter(|_| now.restarts == i as u32) else {
            println!("bosun-bench: opencode's generation {i} has no pid: {:?} {}", now.pid, now.restarts);
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
            None => println!("bosun-bench: opencode was not idle after resume {i}: {:?}", rig.agent(&id).state),
        }
        wait_secs(MISSED_AFTER, || (rig.agent(&id).pid.is_some() && rig.agent(&id).restarts > i as u32).then_some(()));
    }
    rig.bosun.ok(rig.repo.path(), &["kill", &id]);
    resumed
}
