//! The fault harness: a seeded workload of jobs whose claudeless agents are nudged, restarted
//! and finish, while bosun's daemon is killed with SIGKILL again and again — at its own crash
//! points (`BOSUN_FAULT`: just before an effect runs, or just after, before its outcome is
//! recorded) and at random moments. Then the checks: no acknowledged fact lost, every job
//! ends as it would have without the kills, no agent started twice, no message typed twice,
//! nothing left behind. The same seed gives the same schedule of kills.

use std::collections::BTreeMap;
use std::fmt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use bosun_core::{Job, MessageKind, MessageState};
use bosun_wire::{read_frame, write_frame, Envelope, Request, Response};

use crate::bosun::Bosun;
use crate::repo::TempRepo;
use crate::tools;

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub jobs: usize,
    pub kills: usize,
    pub seed: u64,
}

/// How one kill came.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kill {
    /// The daemon killed itself as its nth effect was about to run.
    Before(u64),
    /// The daemon killed itself once its nth effect had run, before recording the outcome.
    After(u64),
    /// The harness killed the daemon this long after starting it.
    Timed(Duration),
}

impl fmt::Display for Kill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Before(n) => write!(f, "before effect {n}"),
            Self::After(n) => write!(f, "after effect {n}"),
            Self::Timed(d) => write!(f, "at {} ms", d.as_millis()),
        }
    }
}

/// What a run did.
#[derive(Debug)]
pub struct Report {
    pub schedule: Vec<Kill>,
    /// Crash points the daemon never reached (the workload was quiet): killed from outside.
    pub unreached: usize,
    pub elapsed: Duration,
    pub events: u64,
    pub spawns: usize,
    pub nudges: usize,
    /// Messages bosun gave up on because a crash cut off their typing (never typed twice).
    pub cut_off: usize,
}

/// How long a daemon killed from outside may take to let go of its lock.
const GONE: Duration = Duration::from_secs(10);
/// How long the jobs get to finish once the kills are over.
const FINISH: Duration = Duration::from_secs(240);
/// How long a crash point may take to be reached before the harness kills from outside (the
/// workload is quiet then): short, so that the last kills land while the last job still runs.
const REACH: Duration = Duration::from_secs(1);

/// How long each of the agents' turns takes: long enough for the kills to land while they work.
const TURN_MS: u64 = 2_000;

/// The agents' `on_idle` chain, step by step: every message differs, so each can be counted.
const CHAIN: [(&str, &str); 4] =
    [("nudge", "status one"), ("nudge", "status two"), ("resume", "ping again"), ("nudge", "status three")];

/// The kills a seed draws, in order.
pub fn kills(seed: u64) -> impl Iterator<Item = Kill> {
    let mut rng = fastrand::Rng::with_seed(seed);
    std::iter::from_fn(move || {
        Some(match rng.u8(0..3) {
            0 => Kill::Before(rng.u64(1..=20)),
            1 => Kill::After(rng.u64(1..=20)),
            _ => Kill::Timed(Duration::from_millis(rng.u64(20..=400))),
        })
    })
}

/// Runs the workload under the kills; `Err` says which promise was broken.
pub fn run(bin: &Path, plan: &Plan) -> Result<Report, String> {
    let started = Instant::now();
    let h = Harness::new(bin)?;
    let mut seen = Facts::default();
    let mut jobs = Vec::new();
    // The jobs come one every few kills, so that the last of them still runs when the last
    // kills land, however fast or slow the machine.
    let every = (plan.kills / plan.jobs.max(1)).max(1);
    let (mut schedule, mut unreached) = (Vec::new(), 0);
    let mut draw = kills(plan.seed);
    while schedule.len() < plan.kills {
        if schedule.len() % every == 0 && jobs.len() < plan.jobs {
            h.bosun.ok(h.repo.path(), &["daemon", "start"]);
            jobs.push(h.submit(jobs.len())?);
            let now = h.facts().ok_or("the daemon does not answer")?;
            seen.check_kept(&now).map_err(|e| format!("after {} kills: {e}", schedule.len()))?;
            seen = now;
            h.bosun.ok(h.repo.path(), &["daemon", "stop"]);
        }
        let kill = draw.next().ok_or("no more kills")?;
        schedule.push(kill);
        let fault = match kill {
            Kill::Before(n) => Some(format!("before:{n}")),
            Kill::After(n) => Some(format!("after:{n}")),
            Kill::Timed(_) => None,
        };
        h.start_daemon(fault.as_deref());
        if let Some(now) = h.facts() {
            seen.check_kept(&now).map_err(|e| format!("after {} kills: {e}", schedule.len() - 1))?;
            seen = now;
        }
        if jobs.len() == plan.jobs && seen.jobs.values().all(|over| *over) {
            return Err(format!(
                "the jobs ended after {} of the {} kills: make the workload longer\n{}",
                schedule.len() - 1,
                plan.kills,
                h.told()
            ));
        }
        let reached = match kill {
            Kill::Timed(after) => {
                std::thread::sleep(after);
                if let Some(now) = h.facts() {
                    seen = now;
                }
                true
            }
            _ => h.wait_daemon_gone(REACH),
        };
        if !reached {
            unreached += 1;
        }
        let label = if reached { "" } else { " (not reached: killed from outside)" };
        eprintln!("{:>6.1}s kill {:>2}: {kill}{label}", started.elapsed().as_secs_f64(), schedule.len());
        h.kill_daemon();
    }
    h.start_daemon(None);
    let now = h.facts().ok_or("the daemon does not answer after the last kill")?;
    seen.check_kept(&now).map_err(|e| format!("after the last kill ({:?}): {e}", schedule.last()))?;
    let report = h.check_end(&jobs, schedule, unreached)?;
    Ok(Report { elapsed: started.elapsed(), ..report })
}

struct Harness {
    bosun: Bosun,
    repo: TempRepo,
    /// The scenario, the wrapper that logs every launch, and the log of launches.
    files: tempfile::TempDir,
}

impl Harness {
    fn new(bin: &Path) -> Result<Self, String> {
        let bosun = Bosun::new(bin);
        let repo = TempRepo::new();
        let files = tempfile::Builder::new().prefix("bosun-faults-").tempdir().map_err(|e| e.to_string())?;
        let scenario = files.path().join("scenario.toml");
        let wrapper = files.path().join("agent");
        let write = |p: &Path, text: &str| std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display()));
        write(
            &scenario,
            &format!(
                "[claude]\ntrusted = true\n\n[[responses]]\non = {{ contains = \"ping\" }}\nsay = \"pong\"\n\
                 delay_ms = {TURN_MS}\n\n[[responses]]\non = {{ contains = \"status\" }}\nsay = \"All tests pass.\"\n\
                 delay_ms = {TURN_MS}\n\n[default]\nsay = \"Understood.\"\n"
            ),
        )?;
        let spawns = files.path().join("spawns.log");
        write(
            &wrapper,
            &format!(
                "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
                spawns.display(),
                tools::claudeless().display()
            ),
        )?;
        let chmod = Command::new("chmod").arg("+x").arg(&wrapper).status().map_err(|e| e.to_string())?;
        if !chmod.success() {
            return Err("chmod failed".into());
        }
        let runbook = format!(
            r#"
command "work" {{
  args = "<n>"
  run  = {{ job = "work" }}
}}

job "work" {{
  vars   = ["n"]
  source = "worktree"
  step "agent" {{
    run = {{ agent = "worker" }}
  }}
}}

agent "worker" {{
  run     = ["{wrapper}", "--scenario", "{scenario}"]
  driver  = "claude"
  prompt  = "task ${{var.n}}: ping"
  on_idle = [{chain}, "done"]
  grace   = "2s"
}}
"#,
            wrapper = wrapper.display(),
            scenario = scenario.display(),
            chain = CHAIN.map(|(a, m)| format!("{{ action = \"{a}\", message = \"{m}\" }}")).join(", "),
        );
        let dir = repo.path().join(".bosun/runbooks");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        write(&dir.join("faults.hcl"), &runbook)?;
        Ok(Self { bosun, repo, files })
    }

    fn submit(&self, n: usize) -> Result<String, String> {
        let out = self.bosun.ok(self.repo.path(), &["run", "--json", "work", &n.to_string()]);
        let v: serde_json::Value = serde_json::from_str(&out).map_err(|e| format!("bosun run: {e}: {out}"))?;
        v["job"].as_str().map(str::to_owned).ok_or_else(|| format!("bosun run gave no job: {out}"))
    }

    /// Starts the daemon (with a crash point); a start the crash point cuts short is fine.
    fn start_daemon(&self, fault: Option<&str>) {
        let mut cmd = self.bosun.command(self.repo.path(), &["daemon", "start"]);
        if let Some(f) = fault {
            cmd.env("BOSUN_FAULT", f);
        }
        let _ = cmd.output();
    }

    /// SIGKILL; gone once its lock on `daemon.pid` is released (a zombie may linger unreaped).
    fn kill_daemon(&self) {
        if let Some(pid) = self.bosun.daemon_pid() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            self.wait_daemon_gone(GONE);
        }
    }

    fn wait_daemon_gone(&self, within: Duration) -> bool {
        crate::poll::wait_until(within, || self.bosun.daemon_pid().is_none())
    }

    /// What the daemon acknowledges now; None when it does not answer (it died meanwhile).
    /// Asked over its socket: a CLI command would start a daemon that is down.
    fn facts(&self) -> Option<Facts> {
        let Response::Status(status) = self.ask(Request::Status)? else { return None };
        let Response::Jobs { jobs, .. } = self.ask(Request::JobList)? else { return None };
        let Response::List(list) = self.ask(Request::List)? else { return None };
        Some(Facts {
            events: status.events,
            jobs: jobs.into_iter().map(|j| (j.spec.id.to_string(), j.state.is_over())).collect(),
            agents: list.agents.into_iter().map(|a| a.id.to_string()).collect(),
        })
    }

    /// The jobs and agents as bosun shows them, and the daemon's log, for a failure message.
    fn told(&self) -> String {
        let show = |args: &[&str]| {
            let out = self.bosun.command(self.repo.path(), args).output();
            out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default()
        };
        let mut text = format!("{}\n{}\n{}", show(&["job", "ls"]), show(&["ls"]), show(&["escalations"]));
        if let Some(Response::List(list)) = self.ask(Request::List) {
            for a in list.agents.iter().filter(|a| !a.state.is_dead()) {
                text.push_str(&show(&["show", a.id.as_str()]));
            }
        }
        format!("{text}\n{}", self.bosun.log())
    }

    fn ask(&self, request: Request) -> Option<Response> {
        let mut s = UnixStream::connect(self.bosun.state_dir().join("bosun.sock")).ok()?;
        write_frame(&mut s, &Envelope { version: bosun_wire::VERSION.into(), request }).ok()?;
        read_frame::<_, Response>(&mut s).ok()
    }

    /// The checks once every job is over.
    fn check_end(&self, jobs: &[String], schedule: Vec<Kill>, unreached: usize) -> Result<Report, String> {
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

/// What the daemon acknowledged to a client: never to be lost.
#[derive(Debug, Default)]
struct Facts {
    events: u64,
    /// Job id, and whether it was over.
    jobs: BTreeMap<String, bool>,
    agents: Vec<String>,
}

impl Facts {
    /// Whether everything `self` held still holds in `now`.
    fn check_kept(&self, now: &Facts) -> Result<(), String> {
        if now.events < self.events {
            return Err(format!("{} events recorded, {} were acknowledged before", now.events, self.events));
        }
        for (id, over) in &self.jobs {
            match now.jobs.get(id) {
                None => return Err(format!("acknowledged job {id} is gone")),
                Some(false) if *over => return Err(format!("job {id} was over and runs again")),
                _ => {}
            }
        }
        if let Some(a) = self.agents.iter().find(|a| !now.agents.contains(a)) {
            return Err(format!("acknowledged agent {a} is gone"));
        }
        Ok(())
    }
}
