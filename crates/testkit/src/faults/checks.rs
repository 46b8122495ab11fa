//! The harness's checks: what must hold once every job is over, and what the daemon
//! acknowledged, which must never be lost.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use bosun_core::{Job, MessageKind, MessageState};

use super::harness::Harness;
use super::{Kill, Report, CHAIN, FINISH, GONE};

impl Harness {
    /// The checks once every job is over.
    pub(super) fn check_end(&self, jobs: &[String], schedule: Vec<Kill>, unreached: usize) -> Result<Report, String> {
        let b = &self.bosun;
        let over = crate::poll::wait_for(FINISH, || {
            let out = b.command(self.repo.path(), &["job", "ls", "--json"]).output().ok()?;
            let all: Vec<Job> = serde_json::from_slice(&out.stdout).ok()?;
            all.iter().all(|j| j.state.is_over()).then_some(all)
        });
        let all = over.ok_or_else(|| format!("jobs still running after {FINISH:?}:\n{}", self.told()))?;
        for id in jobs {
            let job = all.iter().find(|j| j.spec.id.as_str() == id).ok_or(format!("acknowledged job {id} is gone"))?;
            if job.state.label() != "done" {
                return Err(format!("job {id} ended {:?}, not done as it does without kills", job.state));
            }
        }
        if all.len() != jobs.len() {
            return Err(format!("{} jobs, {} submitted", all.len(), jobs.len()));
        }

        // Every agent started once and resumed once: one launch each with --session-id and --resume.
        let spawns = std::fs::read_to_string(self.files.path().join("spawns.log")).unwrap_or_default();
        let mut launches: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        for line in spawns.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            for w in words.windows(2) {
                match w[0] {
                    "--session-id" => launches.entry(w[1].to_owned()).or_default().0 += 1,
                    "--resume" => launches.entry(w[1].to_owned()).or_default().1 += 1,
                    _ => {}
                }
            }
        }
        let resumes = CHAIN.iter().filter(|(a, _)| *a == "resume").count();
        if launches.len() != jobs.len() || launches.values().any(|c| *c != (1, resumes)) {
            return Err(format!("launches per conversation (fresh, resumed) should be (1, {resumes}): {launches:?}"));
        }

        // No message typed twice: bosun's records and the conversations agree.
        let list = b.list();
        let (mut nudges, mut cut_off) = (0, 0);
        for a in &list.agents {
            let detail = b.show(a.id.as_str());
            let delivered = |kind: MessageKind| {
                detail.messages.iter().filter(|m| m.kind == kind && m.state == MessageState::Delivered).count()
            };
            let nudge_steps = CHAIN.iter().filter(|(a, _)| *a == "nudge").count();
            if delivered(MessageKind::Nudge) > nudge_steps {
                return Err(format!("agent {} was nudged {} times", a.id, delivered(MessageKind::Nudge)));
            }
            nudges += delivered(MessageKind::Nudge);
            cut_off += detail.messages.iter().filter(|m| matches!(m.state, MessageState::Failed { .. })).count();
            if let Some(log) = &detail.agent.log {
                let text = std::fs::read_to_string(log).unwrap_or_default();
                for (_, said) in CHAIN {
                    let times = user_prompts(&text, said);
                    if times > 1 {
                        return Err(format!("agent {} was told {said:?} {times} times ({})", a.id, log.display()));
                    }
                }
            }
        }

        // Every job's shell step ran once: neither lost nor run again after a crash.
        let marks = std::fs::read_to_string(self.files.path().join("marks")).unwrap_or_default();
        let mut marked: Vec<usize> = marks.lines().filter_map(|l| l.trim().parse().ok()).collect();
        marked.sort_unstable();
        if marked != (0..jobs.len()).collect::<Vec<_>>() {
            return Err(format!("each job's shell step should have run once: {marked:?}"));
        }

        // Nothing left behind: no leftovers, no agent process still running.
        let out = b.command(self.repo.path(), &["doctor", "--json"]).output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("leftovers: {}", String::from_utf8_lossy(&out.stdout)));
        }
        let scenario = self.files.path().join("scenario.toml");
        let alive = crate::poll::wait_for(GONE, || running(&scenario).is_empty().then_some(()));
        if alive.is_none() {
            return Err(format!("agent processes still running: {:?}", running(&scenario)));
        }
        let events = self.facts().map_or(0, |f| f.events);
        let spawns = launches.values().map(|(f, r)| f + r).sum();
        Ok(Report { schedule, unreached, elapsed: Duration::ZERO, events, spawns, nudges, cut_off })
    }
}

/// How many user prompts in a Claude conversation log say `text`.
fn user_prompts(log: &str, text: &str) -> usize {
    log.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "user")
        .filter(|v| {
            let content = &v["message"]["content"];
            content.as_str().is_some_and(|s| s.contains(text))
                || content
                    .as_array()
                    .is_some_and(|parts| parts.iter().any(|p| p["text"].as_str().is_some_and(|s| s.contains(text))))
        })
        .count()
}

/// The pids of processes whose command line names `scenario`.
fn running(scenario: &Path) -> Vec<String> {
    let out = Command::new("pgrep").arg("-f").arg(scenario).output();
    out.map(|o| String::from_utf8_lossy(&o.stdout).lines().map(str::to_owned).collect()).unwrap_or_default()
}
