//! Issue 14's figures against the testkit's fake API server (its pods on a private Docker
//! engine): how long an agent takes to run in a pod, what the daemon keeps per agent (memory,
//! threads) and what each costs at rest: API calls per minute (the watch is one long call for
//! all) and the daemon's CPU time. `BOSUN_BENCH_PODS` sets how many (20 by default).

use std::path::Path;
use std::time::{Duration, Instant};

use bosun_testkit::bosun::Bosun;
use bosun_testkit::docker::DockerEngine;
use bosun_testkit::git_daemon::GitDaemon;
use bosun_testkit::kube::FakeCluster;
use bosun_testkit::repo::TempRepo;

use crate::supervise::status_kib;
use crate::{wait_secs, Figure};

const AGENTS: usize = 20;
const REST: Duration = Duration::from_secs(60);

/// The daemon's CPU time so far (user and system), from `/proc/<pid>/stat`.
fn cpu_time(pid: i32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    // After the command's name (in parentheses, which may hold spaces): fields 14 and 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<u64> = rest.split_whitespace().filter_map(|f| f.parse().ok()).collect();
    let ticks = fields.get(10).copied().unwrap_or(0) + fields.get(11).copied().unwrap_or(0);
    // The kernel's USER_HZ is 100 on every Linux bosun runs on.
    Duration::from_millis(ticks * 10)
}

pub fn figures(bin: &Path) -> Vec<Figure> {
    let agents: usize = std::env::var("BOSUN_BENCH_PODS").ok().and_then(|n| n.parse().ok()).unwrap_or(AGENTS);
    let engine = DockerEngine::start();
    let cluster = FakeCluster::start(engine);
    let git = bosun_testkit::tools::which("git");
    let image = engine.image("bosun-bench:pod", &[bin, &git]);
    let repo = TempRepo::new();
    let origin = GitDaemon::serve(repo.path());
    repo.git(&["remote", "add", "origin", &origin.url(repo.path())]);
    let kubeconfig = cluster.kubeconfig().display().to_string();
    let bosun = Bosun::new(bin).with_env("KUBECONFIG", &kubeconfig);
    bosun.ok(repo.path(), &["daemon", "start"]);
    let pid = bosun.daemon_pid().expect("a daemon");
    let rss_before = status_kib(pid, "VmRSS:");
    let exe = bin.display().to_string();
    let mut running = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..agents {
        let t0 = Instant::now();
        let args = ["--runtime", "k8s", "--image", &image, "--bosun-in-image", &exe, "--", "sleep", "600"];
        let id = bosun.start(repo.path(), &args);
        wait_secs(120, || (bosun.agent(&id).state.label() == "running").then_some(()));
        running.push(t0.elapsed());
        ids.push(id);
    }
    let rss_after = status_kib(pid, "VmRSS:");
    let threads = status_kib(pid, "Threads:");
    let calls = || cluster.requests().iter().filter(|r| !r.is_watch()).count();
    let (before, cpu_before) = (calls(), cpu_time(pid));
    std::thread::sleep(REST);
    let (at_rest, cpu) = (calls() - before, cpu_time(pid).saturating_sub(cpu_before));
    let per_agent_minute = at_rest as f64 / agents as f64 / (REST.as_secs_f64() / 60.0);
    let cpu_share = cpu.as_secs_f64() / REST.as_secs_f64() * 100.0;
    for id in &ids {
        bosun.ok(repo.path(), &["kill", id]);
    }
    vec![
        Figure::new(
            format!("--runtime k8s: agent running after `agent start` (fake cluster, n={agents})"),
            running,
            "-",
            "-",
        ),
        Figure::value(
            format!("API calls per agent per minute at rest ({agents} agents, {} s)", REST.as_secs()),
            format!("{per_agent_minute:.2} (besides one watch per namespace)"),
            "no per-agent polling",
            "-",
        ),
        Figure::value(
            format!("daemon memory per agent in a pod ({agents} agents)"),
            format!(
                "{:.0} KiB (RSS {} → {} KiB)",
                (rss_after.saturating_sub(rss_before)) as f64 / agents as f64,
                rss_before,
                rss_after
            ),
            "-",
            "-",
        ),
        Figure::value(
            format!("daemon CPU at rest ({agents} agents in pods, {} s)", REST.as_secs()),
            format!("{cpu_share:.2} % of one core ({} ms); {threads} threads", cpu.as_millis()),
            "-",
            "-",
        ),
    ]
}
