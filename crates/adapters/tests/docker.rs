//! `DockerContainers` against a real Docker engine: the test process's own (`DockerEngine`),
//! with a busybox image made without a registry. Each test names its containers and labels
//! with a nonce of its own, so tests share the engine without seeing one another's containers.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bosun_adapters::sandbox::Mount;
use bosun_adapters::{AdapterError, ContainerSeen, ContainerSpec, Containers, DockerContainers};
use bosun_testkit::docker::DockerEngine;
use bosun_testkit::poll::{wait_for, wait_until};

const TIMEOUT: Duration = Duration::from_secs(30);
const LABEL: &str = "bosun.test";

/// A `ContainerSpec`'s values, owned.
struct Run {
    name: String,
    image: String,
    command: Vec<String>,
    cwd: PathBuf,
    env: BTreeMap<String, String>,
    binds: Vec<Mount>,
    user: Option<(u32, u32)>,
    network: bool,
    labels: BTreeMap<String, String>,
}

impl Run {
    /// `sh -c script sh args…` in the test image, labelled `LABEL=<name>`, as root, no network.
    fn sh(name: &str, script: &str, args: &[&Path]) -> Run {
        let name = format!("{name}-{}", fastrand::u32(..));
        let mut command = vec!["sh".to_owned(), "-c".to_owned(), script.to_owned(), "sh".to_owned()];
        command.extend(args.iter().map(|a| a.display().to_string()));
        Run {
            image: image(),
            command,
            cwd: PathBuf::from("/tmp"),
            env: BTreeMap::new(),
            binds: Vec::new(),
            user: None,
            network: false,
            labels: BTreeMap::from([(LABEL.to_owned(), name.clone())]),
            name,
        }
    }

    fn spec(&self) -> ContainerSpec<'_> {
        ContainerSpec {
            name: &self.name,
            image: &self.image,
            command: &self.command,
            cwd: &self.cwd,
            env: &self.env,
            binds: &self.binds,
            volumes: &[],
            user: self.user,
            network: self.network,
            cpus_milli: Some(500),
            memory_bytes: Some(256 << 20),
            labels: &self.labels,
        }
    }
}

/// `path` bound at its own path inside.
fn bind(path: &Path, writable: bool) -> Mount {
    Mount::Bind { from: path.to_owned(), to: path.to_owned(), writable }
}

fn engine() -> &'static DockerEngine {
    DockerEngine::start()
}

fn image() -> String {
    engine().image("bosun-adapters-test:1", &[])
}

fn containers() -> DockerContainers {
    DockerContainers::new(Some(engine().host())).expect("adapter")
}

/// The containers labelled as `run`'s.
fn listed(docker: &DockerContainers, run: &Run) -> Vec<ContainerSeen> {
    docker.list(LABEL, &run.name).expect("list")
}

/// A temp dir any user may write into (the containers run as other users).
fn shared_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).expect("chmod");
    dir
}

/// The text of `path` once it exists (the containers write a file under another name, then
/// rename it).
fn wait_for_file(path: &Path) -> String {
    wait_for(TIMEOUT, || fs::read_to_string(path).ok())
        .unwrap_or_else(|| panic!("{} did not appear within {TIMEOUT:?}", path.display()))
}

#[test]
fn a_container_writes_into_its_bound_dir_as_the_given_user_with_its_env_intact_then_is_gone() {
    let docker = containers();
    let dir = shared_dir();
    let mut run = Run::sh("writer", r#"printf %s "$V" >"$1/out.tmp" && mv "$1/out.tmp" "$1/out""#, &[dir.path()]);
    let value = "a'b\"c $(touch /tmp/pwned) `id`; echo x | cat && exit 3 & * ? ~ \\ \n$HOME %s\t=";
    run.env.insert("V".to_owned(), value.to_owned());
    run.binds.push(bind(dir.path(), true));
    // The test's own user; when that is root, an unprivileged one, so the owner proves the
    // user was applied.
    let (uid, gid) = match (nix::unistd::getuid().as_raw(), nix::unistd::getgid().as_raw()) {
        (0, _) => (54321, 54322),
        ids => ids,
    };
    run.user = Some((uid, gid));

    let id = docker.run(run.spec()).expect("run");
    assert!(!id.is_empty());

    let out = dir.path().join("out");
    assert_eq!(wait_for_file(&out), value);
    let meta = fs::metadata(&out).expect("stat");
    assert_eq!((meta.uid(), meta.gid()), (uid, gid));
    assert!(
        wait_until(TIMEOUT, || listed(&docker, &run).is_empty()),
        "the container was not removed once it exited: {:?}",
        listed(&docker, &run)
    );
}

#[test]
fn a_read_only_bind_refuses_writes_even_to_root() {
    let docker = containers();
    let (ro, w) = (shared_dir(), shared_dir());
    let script =
        r#"if touch "$1/x" 2>/dev/null; then r=wrote; else r=refused; fi; echo $r >"$2/r.tmp" && mv "$2/r.tmp" "$2/r""#;
    let mut run = Run::sh("readonly", script, &[ro.path(), w.path()]);
    run.binds.push(bind(ro.path(), false));
    run.binds.push(bind(w.path(), true));

    docker.run(run.spec()).expect("run");

    assert_eq!(wait_for_file(&w.path().join("r")).trim(), "refused");
    assert!(!ro.path().join("x").exists());
}

/// The interfaces `/proc/net/dev` lists.
fn interfaces(proc_net_dev: &str) -> Vec<String> {
    let mut names: Vec<String> =
        proc_net_dev.lines().skip(2).filter_map(|l| l.split_once(':')).map(|(n, _)| n.trim().to_owned()).collect();
    names.sort();
    names
}

#[test]
fn without_network_a_container_sees_only_loopback_and_with_it_the_hosts() {
    let docker = containers();
    let dir = shared_dir();
    let script = r#"cat /proc/net/dev >"$1/$2.tmp" && mv "$1/$2.tmp" "$1/$2""#;
    for network in [false, true] {
        let file = if network { "host" } else { "none" };
        let mut run = Run::sh("net", script, &[dir.path(), Path::new(file)]);
        run.binds.push(bind(dir.path(), true));
        run.network = network;
        docker.run(run.spec()).expect("run");
    }

    assert_eq!(interfaces(&wait_for_file(&dir.path().join("none"))), ["lo"]);
    let host = fs::read_to_string("/proc/net/dev").expect("host's /proc/net/dev");
    assert_eq!(interfaces(&wait_for_file(&dir.path().join("host"))), interfaces(&host));
}

#[test]
fn labelled_containers_are_listed_until_removed_and_a_running_one_counts_as_started() {
    let docker = containers();
    let mut run = Run::sh("sleeper", "exec sleep 300", &[]);
    run.labels.insert("bosun.job".to_owned(), "j = 1; $(x)".to_owned());
    let id = docker.run(run.spec()).expect("run");

    let seen = wait_for(TIMEOUT, || listed(&docker, &run).into_iter().find(|c| c.running)).expect("listed, running");
    assert_eq!(
        seen,
        ContainerSeen { name: run.name.clone(), id: id.clone(), running: true, labels: run.labels.clone() }
    );
    assert_eq!(docker.run(run.spec()).expect("run again"), id);

    docker.remove(&run.name).expect("remove");
    assert!(wait_until(TIMEOUT, || listed(&docker, &run).is_empty()), "still listed after remove");
    docker.remove(&run.name).expect("remove again");
}

#[test]
fn removing_an_unknown_container_is_fine() {
    containers().remove(&format!("bosun-never-made-{}", fastrand::u32(..))).expect("remove");
}

#[test]
fn a_stopped_container_of_that_name_is_made_again_without_the_images_entrypoint() {
    let docker = containers();
    let dir = shared_dir();
    let mut run = Run::sh("again", r#"echo ran >"$1/r.tmp" && mv "$1/r.tmp" "$1/r""#, &[dir.path()]);
    run.binds.push(bind(dir.path(), true));
    // A container of that name that was made but never started, and an image whose entrypoint
    // would fail whatever it is given.
    let old = engine().run(&["create", "--name", &run.name, &run.image, "true"]).trim().to_owned();
    let tag = format!("bosun-entrypoint-{}:1", fastrand::u32(..));
    engine().run(&["commit", "--change", r#"ENTRYPOINT ["/bin/false"]"#, &run.name, &tag]);
    run.image = tag;

    let id = docker.run(run.spec()).expect("run");

    assert_ne!(id, old);
    assert_eq!(wait_for_file(&dir.path().join("r")).trim(), "ran");
}

#[test]
fn an_unknown_image_is_named_in_the_error() {
    let mut run = Run::sh("noimage", "true", &[]);
    run.image = "bosun-no-such-image:7".to_owned();
    let e = containers().run(run.spec()).expect_err("an unknown image");
    assert!(matches!(e, AdapterError::NoImage(_)), "{e:?}");
    assert!(e.to_string().contains("bosun-no-such-image:7"), "{e}");
}

#[test]
fn an_engine_that_does_not_answer_is_told_apart_with_what_to_do() {
    containers().check_available().expect("the test's engine answers");

    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("missing.sock");
    let e = DockerContainers::new(Some(format!("unix://{}", missing.display())))
        .expect("adapter")
        .check_available()
        .expect_err("no socket");
    let text = e.to_string();
    assert!(matches!(e, AdapterError::Docker(_)), "{e:?}");
    assert!(text.contains("no Docker engine") && text.contains("install"), "{text}");

    // A socket file that nothing listens on any more.
    let stale = dir.path().join("stale.sock");
    drop(std::os::unix::net::UnixListener::bind(&stale).expect("bind"));
    let e = DockerContainers::new(Some(format!("unix://{}", stale.display())))
        .expect("adapter")
        .check_available()
        .expect_err("nothing listens");
    assert!(e.to_string().contains("not running (connection refused)"), "{e}");
}

#[test]
fn calls_work_from_a_runtimes_blocking_threads_and_the_adapter_drops_inside_one() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime");
    runtime.block_on(async {
        let docker = std::sync::Arc::new(containers());
        let from_blocking = std::sync::Arc::clone(&docker);
        tokio::task::spawn_blocking(move || from_blocking.check_available()).await.expect("join").expect("available");
        drop(docker);
    });
}

#[test]
fn how_long_run_takes_to_return() {
    let docker = containers();
    let mut times: Vec<Duration> = (0..10)
        .map(|_| {
            let run = Run::sh("timed", "true", &[]);
            let began = Instant::now();
            docker.run(run.spec()).expect("run");
            began.elapsed()
        })
        .collect();
    times.sort();
    let median = (times[4] + times[5]) / 2;
    println!("DockerContainers::run returned in {median:?} (median of 10; {:?} to {:?})", times[0], times[9]);
}
