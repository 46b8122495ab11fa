//! The private Docker engine and its small images: the engine starts on a socket of its own,
//! containers from an image made without a registry run with no network, see a bind-mounted host
//! directory and are gone after, and the engine dies with the test process that started it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bosun_testkit::docker::DockerEngine;
use bosun_testkit::poll;

/// The small image every test here uses: busybox only.
fn small_image(engine: &DockerEngine) -> String {
    engine.image("bosun-test/busybox:1", &[])
}

#[test]
fn the_engine_answers_on_its_own_socket() {
    let engine = DockerEngine::start();
    eprintln!("dockerd answered after {:?}", engine.started_in());
    let version = engine.run(&["version", "--format", "{{.Server.APIVersion}}"]);
    assert!(!version.trim().is_empty(), "no API version in {version:?}");
    assert!(engine.socket().starts_with(engine.dir()));
    assert_ne!(engine.socket(), Path::new("/var/run/docker.sock"));
    assert!(engine.socket().as_os_str().len() < 108, "{} is too long for a socket", engine.socket().display());
    let root = engine.run(&["info", "--format", "{{.DockerRootDir}} {{.Driver}}"]);
    assert!(root.starts_with(&engine.dir().display().to_string()), "the engine's data root is {root}");
}

#[test]
fn a_container_without_network_runs_busybox_echo() {
    let engine = DockerEngine::start();
    let image = small_image(engine);
    let out = engine.run(&["run", "--rm", "--network", "none", &image, "busybox", "echo", "hi"]);
    assert_eq!(out, "hi\n");
    // The applets are on PATH, and there is no network but the loopback.
    let links = engine.run(&["run", "--rm", "--network", "none", &image, "ls", "/sys/class/net"]);
    assert_eq!(links.split_whitespace().collect::<Vec<_>>(), ["lo"]);

    let mut times = Vec::new();
    for _ in 0..5 {
        let began = Instant::now();
        engine.run(&["run", "--rm", "--network", "none", &image, "true"]);
        times.push(began.elapsed());
    }
    times.sort();
    eprintln!("docker run --rm of the busybox image: {times:?} (median {:?})", times[times.len() / 2]);
}

#[test]
fn a_bind_mounted_host_directory_is_writable_from_the_container() {
    let engine = DockerEngine::start();
    let image = small_image(engine);
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("in"), "from the host\n").expect("write");
    let volume = format!("{}:/work", dir.path().display());
    let script = "cat /work/in && echo from the container > /work/out && mkdir /work/sub";
    let out =
        engine.run(&["run", "--rm", "--network", "none", "-v", &volume, "-w", "/work", &image, "sh", "-c", script]);
    assert_eq!(out, "from the host\n");
    assert_eq!(std::fs::read_to_string(dir.path().join("out")).expect("read out"), "from the container\n");
    assert!(dir.path().join("sub").is_dir());
}

#[test]
fn a_container_is_gone_after_it_ran() {
    let engine = DockerEngine::start();
    let image = small_image(engine);
    let name = format!("bosun-test-gone-{}", std::process::id());
    let gone = || {
        let listed = engine.run(&["ps", "--all", "--quiet", "--filter", &format!("name=^/{name}$")]);
        listed.trim().is_empty() && !engine.output(&["container", "inspect", &name]).status.success()
    };

    engine.run(&["run", "--rm", "--name", &name, "--network", "none", &image, "true"]);
    assert!(gone(), "{name} is still there after docker run --rm");

    // Without --rm it stays until removed.
    let ran = engine.output(&["run", "--name", &name, "--network", "none", &image, "sh", "-c", "exit 3"]);
    assert_eq!(ran.status.code(), Some(3), "docker run gives the container's exit code");
    let state = engine.run(&["container", "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", &name]);
    assert_eq!(state.trim(), "exited 3");
    engine.run(&["rm", &name]);
    assert!(gone(), "{name} is still there after docker rm");
}

#[test]
fn an_extra_host_binary_runs_with_its_shared_libraries() {
    let engine = DockerEngine::start();
    let git = which("git");
    let image = engine.image("bosun-test/busybox-git:1", &[&git]);
    let host = Command::new(&git).arg("--version").output().expect("git --version");
    let inside = engine.run(&["run", "--rm", "--network", "none", &image, "git", "--version"]);
    assert_eq!(inside, String::from_utf8_lossy(&host.stdout));
    // Made once: asking again returns the same image.
    assert_eq!(engine.image("bosun-test/busybox-git:1", &[&git]), image);
}

/// Run by `the_engine_dies_with_its_test_process` in a child process: starts an engine, says
/// where it is, then waits to be killed (or for its stdin to end, when the parent test failed).
#[test]
fn engine_of_a_child_process() {
    if std::env::var_os("BOSUN_TEST_DOCKER_CHILD").is_none() {
        return;
    }
    let engine = DockerEngine::start();
    let image = small_image(engine);
    let started = engine.run(&["run", "--detach", "--network", "none", &image, "sleep", "1000"]);
    // libtest prints the test's name on the same line first.
    println!("child-engine: {} {} {}", engine.dockerd_pid(), engine.dir().display(), started.trim());
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut std::io::stdin(), &mut rest);
}

#[test]
fn the_engine_dies_with_its_test_process() {
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", "engine_of_a_child_process", "--nocapture", "--test-threads=1"])
        .env("BOSUN_TEST_DOCKER_CHILD", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run the test binary");
    let stdout = child.stdout.take().expect("stdout");
    let line = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .find_map(|line| line.split_once("child-engine: ").map(|(_, words)| words.to_string()))
        .expect("the child names its engine");
    let mut words = line.split_whitespace();
    let pid: u32 = words.next().and_then(|w| w.parse().ok()).expect("dockerd pid");
    let dir = PathBuf::from(words.next().expect("engine dir"));
    let container = words.next().expect("container id").to_string();
    let sleeping = || container_process_runs(&container);
    assert!(running(pid) && dir.is_dir() && sleeping(), "the child's engine runs");

    child.kill().expect("SIGKILL the child");
    child.wait().expect("wait for the child");
    let began = Instant::now();
    let cleaned = poll::wait_until(Duration::from_secs(60), || !running(pid) && !dir.exists() && !sleeping());
    eprintln!("the engine was gone {:?} after its test process was killed", began.elapsed());
    assert!(!running(pid), "dockerd {pid} outlived its test process");
    assert!(!sleeping(), "container {container} outlived its engine");
    assert!(!dir.exists(), "{} outlived its engine", dir.display());
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    assert!(!mounts.contains(&dir.display().to_string()), "mounts under {} remain", dir.display());
    assert!(cleaned);
}

fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')))
}

/// Whether a process of container `id` still runs: its shim (which names it) or a process in its
/// cgroup.
fn container_process_runs(id: &str) -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else { return false };
    procs.flatten().any(|entry| {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { return false };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cgroup = std::fs::read_to_string(entry.path().join("cgroup")).unwrap_or_default();
        (String::from_utf8_lossy(&cmdline).contains(id) || cgroup.contains(id)) && running(pid)
    })
}

fn which(program: &str) -> PathBuf {
    let path = std::env::var_os("PATH").expect("PATH");
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| p.is_file()).expect("on PATH")
}
