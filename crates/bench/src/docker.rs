//! Issue 13's container figure, on a private Docker engine the bench starts (as the tests do):
//! from `bosun agent start --runtime docker` to the agent's process running in its container,
//! seen by the file it writes first into its worktree.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bosun_testkit::bosun::Bosun;
use bosun_testkit::docker::DockerEngine;
use bosun_testkit::repo::TempRepo;

use crate::{wait, Figure};

const STARTS: usize = 10;

pub fn figures(bin: &Path) -> Vec<Figure> {
    let engine = DockerEngine::start();
    let image = engine.image("bosun-bench:agent", &[bin]);
    let bosun = Bosun::new(bin).with_env("DOCKER_HOST", engine.host());
    let repo = TempRepo::new();
    bosun.ok(repo.path(), &["daemon", "start"]);
    let mut running = Vec::new();
    for _ in 0..STARTS {
        let t0 = Instant::now();
        let args = ["--runtime", "docker", "--image", &image, "--", "sh", "-c", "touch started; exec sleep 600"];
        let id = bosun.start(repo.path(), &args);
        let ws: PathBuf = bosun.show(&id).workspace.expect("its workspace").path;
        wait(|| ws.join("started").exists().then_some(()));
        running.push(t0.elapsed());
        bosun.ok(repo.path(), &["kill", &id]);
    }
    let run_alone = docker_run(engine, &image);
    vec![
        Figure::new(
            format!("--runtime docker: agent process running after `agent start` (n={STARTS})"),
            running,
            "< 500 ms",
            "-",
        ),
        Figure::new(format!("for scale: `docker run --rm` of the same image (n={STARTS})"), run_alone, "-", "-"),
    ]
}

/// How long the engine itself takes to run a container of `image` to its end.
fn docker_run(engine: &DockerEngine, image: &str) -> Vec<Duration> {
    (0..STARTS)
        .map(|_| {
            let t0 = Instant::now();
            engine.run(&["run", "--rm", "--network", "none", image, "true"]);
            t0.elapsed()
        })
        .collect()
}
