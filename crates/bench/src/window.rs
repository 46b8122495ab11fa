//! Issue 29's shared-window figure, with the real Codex against bosun's fake OpenAI server:
//! twenty agents on one account (one `CODEX_HOME`), each nudged by bosun 2 s after every turn
//! (`--on-idle nudge*forever --grace 2s`: Codex has no hook that says it is idle), so that each
//! calls the model again and again. The server is then limited until 30 s on; the first agent limited waits, and bosun gives the account's other
//! agents no nudge until the reset. The figure counts the model requests of the twenty between
//! the first limited one and the reset: those in flight as it was limited (each limited too, and
//! waiting on its own), and those started after bosun recorded the limit (the target: none).

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bosun_core::SessionState;
use bosun_testkit::bosun::Bosun;
use bosun_testkit::clients::{CodexConfig, WriteOrPanic as _};
use bosun_testkit::fake_model::{FakeModel, Logged, Reply};
use bosun_testkit::repo::TempRepo;

use crate::{show, Figure};

const AGENTS: usize = 20;
const RESET_IN: u64 = 30;

pub fn figures(bin: &Path) -> Vec<Figure> {
    let Some(codex) = bosun_testkit::tools::codex() else {
        println!("bosun-bench: Codex could not be installed; the shared-window figure is left out");
        return Vec::new();
    };
    let model = FakeModel::openai();
    let repo = TempRepo::new();
    let bosun = Bosun::new(bin);
    let dir = tempfile::tempdir().expect("temp dir");
    let trusted = repo.path().canonicalize().expect("repo");
    let env = CodexConfig::new(&model, dir.path()).trust(trusted).write();
    let client = codex.display().to_string();
    let ids: Vec<String> = (0..AGENTS)
        .map(|i| {
            let task = format!("task {i}");
            let args = ["--on-idle", "nudge*forever:Carry on", "--grace", "2s", "--", &client, &task];
            bosun.start_with(repo.path(), &args, |cmd| {
                env.apply(cmd);
            })
        })
        .collect();
    // Every agent has called the model at least three times (its task, then nudges).
    let started = std::time::Instant::now() + Duration::from_secs(180);
    while (0..AGENTS).any(|i| requests_of(&model, i) < 3) && std::time::Instant::now() < started {
        std::thread::sleep(Duration::from_millis(200));
    }
    let before = model.main_requests().len();
    println!("bosun-bench: {AGENTS} agents made {before} requests before the limit");
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_secs() + RESET_IN;
    let reset = UNIX_EPOCH + Duration::from_secs(secs);
    model.usage_limit_until(reset);
    let limited = |r: &Logged| matches!(r.reply, Some(Reply::Limited(_)));
    while SystemTime::now() < reset + Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(200));
    }
    let main = model.main_requests();
    let Some(first) = main.iter().filter(|r| limited(r)).map(|r| r.time).min() else {
        println!("bosun-bench: no agent was limited ({} requests in all)", main.len());
        return Vec::new();
    };
    // When bosun recorded the first limit: the earliest failure of the twenty.
    let recorded = first_error(&bosun).unwrap_or(first);
    let between: Vec<_> = main.iter().filter(|r| r.time >= first && r.time < reset).collect();
    // A request that starts after the record comes of a nudge queued before it (typed, and
    // on its way), or after it (one the window should have held).
    let queued = nudges(&bosun, &ids);
    let task_of = |r: &Logged| (0..AGENTS).find(|i| r.messages().iter().any(|(_, t)| *t == format!("task {i}")));
    let late: Vec<_> = between.iter().filter(|r| r.time > recorded).collect();
    let held_late = late
        .iter()
        .filter(|r| task_of(r).is_some_and(|i| queued[i].iter().any(|q| *q > recorded && *q <= r.time)))
        .count();
    let after_reset = main.iter().filter(|r| r.time >= reset).count();
    let still = ids.iter().filter_map(|id| show(bosun.state_dir(), id)).filter(|a| is_limited(&a.state)).count();
    vec![
        Figure::value(
            format!("Codex: {AGENTS} agents on one account, one limited: requests until the reset"),
            format!(
                "{}: {} before the record, {} after (of nudges queued after it: {held_late})",
                between.len(),
                between.len() - late.len(),
                late.len()
            ),
            "0 queued after",
            "-",
        ),
        Figure::value(
            format!("Codex: the {AGENTS} after the reset: requests in 10 s; still limited"),
            format!("{after_reset}; {still}"),
            "> 0; 0",
            "-",
        ),
    ]
}

/// When each agent's messages were queued, by agent.
fn nudges(bosun: &Bosun, ids: &[String]) -> Vec<Vec<SystemTime>> {
    let mut queued = vec![Vec::new(); ids.len()];
    for e in bosun.events() {
        if let bosun_core::Event::MessageQueued { message } = e {
            if let Some(i) = ids.iter().position(|id| id == message.agent.as_str()) {
                queued[i].push(UNIX_EPOCH + Duration::from_millis(message.at.as_millis()));
            }
        }
    }
    queued
}

/// How many main-loop requests agent `i` (told `task i` first) made.
fn requests_of(model: &FakeModel, i: usize) -> usize {
    let task = format!("task {i}");
    model.main_requests().iter().filter(|r| r.messages().iter().any(|(_, t)| *t == task)).count()
}

fn is_limited(state: &SessionState) -> bool {
    matches!(state, SessionState::Error { .. })
}

/// When an agent was first recorded failed, if one was.
fn first_error(bosun: &Bosun) -> Option<SystemTime> {
    bosun.events().into_iter().find_map(|e| match e {
        bosun_core::Event::AgentObserved { state: SessionState::Error { .. }, at, .. } => {
            Some(UNIX_EPOCH + Duration::from_millis(at.as_millis()))
        }
        _ => None,
    })
}
