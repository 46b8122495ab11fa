//! `budget`: issue 29's figures for budgets and the ledger. With the real Claude Code against
//! the fake Anthropic API, an agent given a budget its first answer spends: the time from that
//! answer's last byte to the agent recorded paused, and how late after the crossing any model
//! request started (its next request, sent as the tool ran, is cut by the interrupt). And `bosun
//! usage --json` over a ledger of 100,000 recorded responses.

use std::path::Path;
use std::time::{Duration, Instant, UNIX_EPOCH};

use bosun_core::usage::{Tokens, Used};
use bosun_core::{Event, Timestamp};
use bosun_testkit::bosun::Bosun;
use bosun_testkit::clients::{ClaudeConfig, WriteOrPanic as _};
use bosun_testkit::fake_model::{FakeModel, Reply};
use bosun_testkit::history::History;
use bosun_testkit::repo::TempRepo;

use crate::{show, wait_secs, Figure};

const CROSSINGS: usize = 10;
const RESPONSES: usize = 100_000;
const AGENTS: usize = 100;

pub fn figures(bin: &Path) -> Vec<Figure> {
    let mut figures = match bosun_testkit::tools::claude_code() {
        Some(claude) => crossings(bin, &claude),
        None => {
            println!("bosun-bench: Claude Code could not be installed; the budget crossing is left out");
            Vec::new()
        }
    };
    figures.push(usage_json(bin));
    figures
}

/// `CROSSINGS` agents, each paused by its first answer.
fn crossings(bin: &Path, claude: &Path) -> Vec<Figure> {
    let (mut paused, mut written, mut latest) = (Vec::new(), Vec::new(), Duration::ZERO);
    let mut after = 0usize;
    for _ in 0..CROSSINGS {
        let model = FakeModel::anthropic();
        let dir = tempfile::tempdir().expect("temp dir");
        let repo = TempRepo::new();
        let env = ClaudeConfig::new(&model, dir.path())
            .trust(repo.path().canonicalize().expect("repo"))
            .accept_bypass_permissions()
            .write();
        let bosun = Bosun::new(bin);
        model.push(Reply::shell("touch made"));
        model.push(Reply::Stall { secs: 60, text: "Never ends.".into() });
        let client = claude.display().to_string();
        let args = ["--budget", "5ktok", "--", client.as_str(), "--dangerously-skip-permissions", "make it"];
        let id = bosun.start_with(repo.path(), &args, |cmd| {
            env.apply(cmd);
        });
        // When Claude's transcript holds the first answer's usage (its line), seen from here.
        let transcript = wait_secs(60, || show(bosun.state_dir(), &id).and_then(|a| a.log));
        let seen = wait_secs(60, || {
            let text = std::fs::read_to_string(&transcript).ok()?;
            let at = text.find("\"usage\"")?;
            // Its whole line: Claude ends each with a newline.
            text[at..].contains('\n').then(std::time::SystemTime::now)
        });
        let pause = wait_secs(60, || show(bosun.state_dir(), &id).and_then(|a| a.paused));
        let crossing = UNIX_EPOCH + Duration::from_millis(pause.at.as_millis());
        // Its turn stopped: idle again.
        wait_secs(60, || show(bosun.state_dir(), &id).filter(|a| a.state.label() == "idle"));
        let main = model.main_requests();
        let answered = main[0].answered.expect("its first answer");
        paused.push(crossing.duration_since(answered).unwrap_or_default());
        written.push(seen.duration_since(answered).unwrap_or_default());
        for r in &main {
            if let Ok(late) = r.time.duration_since(crossing) {
                after += 1;
                latest = latest.max(late);
            }
        }
        let _ = bosun.run(repo.path(), &["kill", &id]);
    }
    vec![
        Figure::new("budget crossed (the answer's last byte) → agent paused", paused, "< 1000 ms", ""),
        Figure::new("  of which: the answer's last byte → its usage in Claude's transcript", written, "", ""),
        Figure::value(
            format!("budget: model requests started after the crossing, in {CROSSINGS} runs"),
            format!("{after}, latest {} ms after", latest.as_millis()),
            "none > 1000 ms",
            "",
        ),
    ]
}

/// A state of `AGENTS` agents and `RESPONSES` recorded responses, then `bosun usage --json`.
fn usage_json(bin: &Path) -> Figure {
    let bosun = Bosun::new(bin);
    let mut history = History::new();
    let mut events = Vec::new();
    while history.state().agents.len() < AGENTS {
        events.extend(history.next_input());
    }
    let ids: Vec<_> = history.state().agents.keys().cloned().collect();
    for i in 0..RESPONSES {
        let tokens = Tokens { input: 1_000 + i as u64 % 7, output: 200, cache_write: 50, cache_read: 9_000 };
        let used = Used {
            response: format!("msg_{i}"),
            at: None,
            model: Some(if i % 3 == 0 { "claude-sonnet-5-5" } else { "claude-opus-5-5" }.into()),
            tokens,
            cache_write_1h: 0,
            cost: Some(12_345),
        };
        events.push(Event::UsageRecorded {
            id: ids[i % ids.len()].clone(),
            used,
            at: Timestamp::from_millis(i as u64),
        });
    }
    let mut store = bosun_daemon::Store::open(&bosun.state_dir().join("bosun.db")).expect("open");
    for chunk in events.chunks(1_000) {
        store.append(Timestamp::from_millis(0), chunk).expect("append");
    }
    drop(store);
    let dir = bosun.state_dir().to_owned();
    bosun.ok(&dir, &["usage", "--json"]); // the daemon started, warm
    let samples = (0..20)
        .map(|_| {
            let started = Instant::now();
            bosun.ok(&dir, &["usage", "--json"]);
            started.elapsed()
        })
        .collect();
    Figure::new(format!("`bosun usage --json` over {RESPONSES} recorded responses"), samples, "< 100 ms", "")
}
