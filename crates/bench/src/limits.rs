//! Issue 29's rate-limit figures, with the real Codex against bosun's fake OpenAI server (the
//! client that records when its limit resets): ten agents, each on an account of its own, hit a
//! plan's usage limit that resets 30 s later; bosun alone wakes each once the limit has reset.
//! The figure is the time from the reset to the start of each agent's first request after it
//! (the one carrying bosun's "the limit has reset" message), and how many started within the
//! reset + 5 s and before it; then the same with bosun's daemon SIGKILLed while it waits.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bosun_core::rate_limit::WOKEN_MESSAGE;
use bosun_core::SessionState;
use bosun_testkit::bosun::Bosun;
use bosun_testkit::clients::{ClientEnv, CodexConfig, WriteOrPanic as _};
use bosun_testkit::fake_model::FakeModel;
use bosun_testkit::repo::TempRepo;

use crate::{show, wait_secs, Figure};

const AGENTS: usize = 10;
const RESET_IN: u64 = 30;
const WITHIN: Duration = Duration::from_secs(5);

pub fn figures(bin: &Path) -> Vec<Figure> {
    let Some(codex) = bosun_testkit::tools::codex() else {
        println!("bosun-bench: Codex could not be installed; the rate-limit figures are left out");
        return Vec::new();
    };
    let mut figures = Vec::new();
    for killed in [false, true] {
        figures.extend(run(bin, &codex, killed));
    }
    figures
}

/// Ten Codex agents, each on an account of its own, idle; then limited until 30 s on.
fn run(bin: &Path, codex: &Path, killed: bool) -> Vec<Figure> {
    let model = FakeModel::openai();
    let repo = TempRepo::new();
    let bosun = Bosun::new(bin);
    let dirs: Vec<tempfile::TempDir> = (0..AGENTS).map(|_| tempfile::tempdir().expect("temp dir")).collect();
    let trusted = repo.path().canonicalize().expect("repo");
    let envs: Vec<ClientEnv> =
        dirs.iter().map(|d| CodexConfig::new(&model, d.path()).trust(trusted.clone()).write()).collect();
    let client = codex.display().to_string();
    let ids: Vec<String> = envs
        .iter()
        .map(|env| {
            bosun.start_with(repo.path(), &["--", &client], |cmd| {
                env.apply(cmd);
            })
        })
        .collect();
    for id in &ids {
        wait_secs(60, || show(bosun.state_dir(), id).filter(|a| a.state.label() == "idle").map(|_| ()));
    }
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_secs() + RESET_IN;
    let reset = UNIX_EPOCH + Duration::from_secs(secs);
    model.usage_limit_until(reset);
    for (i, id) in ids.iter().enumerate() {
        bosun.ok(repo.path(), &["send", id, &format!("task {i}")]);
    }
    // Each failed, its reset read and its wait timed (one decision), before any SIGKILL.
    let waiting = |a: &bosun_core::Agent| matches!(a.state, SessionState::Error { .. }) && a.limited_until.is_some();
    for id in &ids {
        wait_secs(30, || show(bosun.state_dir(), id).filter(waiting).map(|_| ()));
    }
    if killed {
        bosun.kill_daemon_hard();
        // Any command starts it again.
        bosun.ok(repo.path(), &["ls"]);
    }
    let woken = |i: usize| -> Vec<SystemTime> {
        let task = format!("task {i}");
        let mine = |r: &bosun_testkit::fake_model::Logged| r.messages().iter().any(|(_, t)| *t == task);
        let requests = model.main_requests().into_iter();
        requests.filter(|r| mine(r) && r.last_user_text().as_deref() == Some(WOKEN_MESSAGE)).map(|r| r.time).collect()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(RESET_IN + 60);
    while !(0..AGENTS).all(|i| !woken(i).is_empty()) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    let (mut samples, mut within, mut before, mut once) = (Vec::new(), 0, 0, 0);
    for (i, id) in ids.iter().enumerate() {
        let times = woken(i);
        let Some(&first) = times.iter().min() else {
            missed(&bosun, id);
            continue;
        };
        match first.duration_since(reset) {
            Ok(after) => {
                samples.push(after);
                within += usize::from(after <= WITHIN);
            }
            Err(_) => before += 1,
        }
        once += usize::from(times.len() == 1);
    }
    let how = if killed { " (daemon SIGKILLed while waiting)" } else { "" };
    let mut figures = Vec::new();
    if !samples.is_empty() {
        figures.push(Figure::new(
            format!("Codex: usage limit reset → resumed request{how} (n={AGENTS})"),
            samples,
            "< 5 s",
            "-",
        ));
    }
    figures.push(Figure::value(
        format!("Codex: resumed within reset + 5 s, before it, once{how}"),
        format!("{within} of {AGENTS}; {before}; {once} of {AGENTS}"),
        "all; 0; all",
        "-",
    ));
    drop(dirs);
    figures
}

/// Says what became of an agent that was not woken.
fn missed(bosun: &Bosun, id: &str) {
    let a = show(bosun.state_dir(), id);
    let state = a.map(|a| a.state.label_until(a.limited_until));
    println!("bosun-bench: agent {id} was not woken: it is {state:?}");
    for e in bosun.events() {
        let text = format!("{e:?}");
        if text.contains(id) && !matches!(e, bosun_core::Event::Heartbeat { .. }) {
            println!("  {}", text.chars().take(240).collect::<String>());
        }
    }
}
