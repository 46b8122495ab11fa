//! A private Docker engine for tests, and small test images made without a registry.
//!
//! `DockerEngine::start()` starts one `dockerd` for the test process that calls it first, shared
//! by every test of that process (a `OnceLock`); a second test binary, or each test of a binary
//! under `cargo nextest` (which runs every test in a process of its own), gets an engine of its
//! own. Why one per process and not one per machine behind a file lock: an engine shared by
//! processes needs someone to stop it when the last of them ends — reference counts kept in files
//! go wrong when nextest kills a test process — and tests would see one another's containers and
//! images. A private engine costs little — it answers 0.3 to 1.5 s after it is started and stops
//! in about two — and nextest runs only as many test processes at once as the machine has cores.
//!
//! Everything lives in one short temp dir (`/tmp/bosun-dk-XXXXXX`: Unix socket paths are limited
//! to 108 bytes, and containerd's socket is nested inside the exec root): the data root `d/`, the
//! exec root `x/`, the API socket `docker.sock`, the pid file, an empty daemon configuration (so
//! the machine's `/etc/docker/daemon.json` is never read) and the logs. The engine listens only on
//! that socket; the clients `DockerEngine::docker()` makes are pointed at it with `DOCKER_HOST`
//! and a private `DOCKER_CONFIG`, so the system's `/var/run/docker.sock` is never touched.
//!
//! The engine never outlives the test process, however it ends: `dockerd` runs under a small
//! shell supervisor in a process group of its own (so signals nextest sends to the test's group do
//! not kill it halfway), whose stdin is a pipe only the test process holds. When that process
//! exits — normally, by a panic, or killed with SIGKILL — the kernel closes the pipe, the
//! supervisor reads end-of-file, kills the engine's containers with `runc` (a test's containers are
//! disposable, and `dockerd` would give each ten seconds to stop), stops `dockerd` with SIGTERM
//! (about a second), kills it if it is still there after 30 s, then kills what a killed engine
//! leaves — containers and their shims —, unmounts what is mounted under the temp dir and removes
//! it. No output of the engine reaches the test's stdout or stderr, so nextest sees no leaked
//! pipes. One limit: `dockerd` 20.10 uses the system's containerd instead of starting its own when
//! `/run/containerd/containerd.sock` exists; containers then still die with the engine, but their
//! shims are the system containerd's to reap.
//!
//! `DockerEngine::image` makes a small image once per tag: busybox and its applets, `/tmp`,
//! `/etc/passwd` and `/etc/group`, plus the host binaries a test names, each at its host path
//! with the shared libraries `ldd` lists, and the host directory trees it names (a Node.js
//! client's package), imported with `tar -c | docker import`.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::{poll, tools};

mod image;

/// How long `dockerd` may take to answer on its socket.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How long `dockerd` waits for containers when it is stopped, in seconds (the supervisor kills
/// them first).
const SHUTDOWN_TIMEOUT_SECS: u32 = 2;

/// Runs `dockerd` until its stdin ends or it is told to stop (TERM, INT, HUP), then kills its
/// containers, stops it (SIGTERM, SIGKILL after 30 s) and removes every trace. Positional parameters: the engine's dir, the exec root, `dockerd`, then
/// `dockerd`'s arguments.
const SUPERVISOR: &str = r#"
base=$1 exec_root=$2 dockerd=$3
shift 3
"$dockerd" "$@" </dev/null >>"$base/dockerd.log" 2>&1 &
pid=$!
echo "$pid" >"$base/dockerd.pid.new" && mv "$base/dockerd.pid.new" "$base/dockerd.pid"

running() {
    set -- $(cat "/proc/$1/stat" 2>/dev/null)
    [ -n "$3" ] && [ "$3" != Z ]
}

mounted() {
    awk -v b="$base" '$5 == b || index($5, b "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

# Kills every container of the engine (a test's containers are disposable): dockerd would give
# each ten seconds to stop.
kill_containers() {
    runc_root=$exec_root/runtime-runc/moby
    [ -d "$runc_root" ] && command -v runc >/dev/null || return 0
    for id in $(runc --root "$runc_root" list -q 2>/dev/null); do
        runc --root "$runc_root" kill "$id" KILL 2>/dev/null
        [ -z "$1" ] || runc --root "$runc_root" delete -f "$id" 2>/dev/null
    done
}

stop() {
    trap '' TERM INT HUP
    kill_containers
    kill -TERM "$pid" 2>/dev/null
    tries=0
    while running "$pid" && [ "$tries" -lt 300 ]; do
        sleep 0.1
        tries=$((tries + 1))
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    # What a killed dockerd leaves: containers, their shims, mounts.
    kill_containers delete
    for proc in /proc/[0-9]*; do
        case $(tr '\0' ' ' <"$proc/cmdline" 2>/dev/null) in
            *"-address $exec_root/containerd/containerd.sock "*) kill -KILL "${proc#/proc/}" 2>/dev/null ;;
        esac
    done
    for round in 1 2 3; do
        for mount in $(mounted); do umount -l "$mount" 2>/dev/null; done
    done
    rm -rf "$base"
}

trap 'stop; exit 0' TERM INT HUP
while read -r _; do :; done
stop
"#;

/// A `dockerd` of the test process's own; see the module doc.
pub struct DockerEngine {
    dir: PathBuf,
    socket: PathBuf,
    docker: PathBuf,
    dockerd_pid: u32,
    started_in: Duration,
    /// The images made so far, by tag, with the extra binaries and trees each was made with.
    images: Mutex<HashMap<String, Vec<PathBuf>>>,
    /// The supervisor, whose stdin's write end it holds: never written, closed by the kernel
    /// when this process exits, which stops the engine. Never waited for: it outlives us.
    _supervisor: Child,
}

impl DockerEngine {
    /// The engine of this test process, started on first use (installing `docker.io` when
    /// `dockerd` is missing). Panics, with the end of the engine's log, when it cannot start —
    /// most often because the tests do not run as root.
    pub fn start() -> &'static DockerEngine {
        static ENGINE: OnceLock<DockerEngine> = OnceLock::new();
        ENGINE.get_or_init(Self::launch)
    }

    fn launch() -> DockerEngine {
        let began = Instant::now();
        let dockerd = tools::dockerd();
        let docker = tools::docker();
        let dir = short_temp_dir();
        let data_root = dir.join("d");
        let exec_root = dir.join("x");
        let socket = dir.join("docker.sock");
        let config = dir.join("daemon.json");
        fs::write(&config, "{}\n").unwrap_or_else(|e| panic!("cannot write {}: {e}", config.display()));
        let log = dir.join("supervisor.log");
        let log = File::create(&log).unwrap_or_else(|e| panic!("cannot create {}: {e}", log.display()));
        let mut supervisor = Command::new("sh");
        supervisor
            .arg("-c")
            .arg(SUPERVISOR)
            .arg("bosun-dockerd-supervisor")
            .arg(&dir)
            .arg(&exec_root)
            .arg(&dockerd)
            .args(dockerd_args(&dir, &data_root, &exec_root, &socket, &config))
            .env("PATH", path_with_sbin())
            .stdin(Stdio::piped())
            .stdout(log.try_clone().unwrap_or_else(|e| panic!("cannot duplicate a file handle: {e}")))
            .stderr(log)
            .process_group(0);
        let child = supervisor.spawn().unwrap_or_else(|e| panic!("cannot run sh to start dockerd: {e}"));
        let mut engine = DockerEngine {
            dockerd_pid: 0,
            started_in: Duration::ZERO,
            images: Mutex::new(HashMap::new()),
            _supervisor: child,
            dir,
            socket,
            docker,
        };
        engine.dockerd_pid = engine.wait_until_answering();
        engine.started_in = began.elapsed();
        engine
    }

    /// Polls until the engine answers `docker version` on its socket; the pid of `dockerd`.
    fn wait_until_answering(&self) -> u32 {
        let pid_file = self.dir.join("dockerd.pid");
        let answered = poll::wait_for(START_TIMEOUT, || {
            let pid: u32 = fs::read_to_string(&pid_file).ok()?.trim().parse().ok()?;
            if !running(pid) {
                panic!("dockerd exited while starting; the end of its log:\n{}", self.log_tail());
            }
            if !self.socket.exists() {
                return None;
            }
            let out = self.docker().args(["version", "--format", "{{.Server.Version}}"]).output().ok()?;
            out.status.success().then_some(pid)
        });
        answered.unwrap_or_else(|| {
            panic!(
                "dockerd did not answer on {} within {START_TIMEOUT:?}; the end of its log:\n{}",
                self.socket.display(),
                self.log_tail()
            )
        })
    }

    /// A `docker` client command pointed at this engine (its subcommand and arguments to add).
    pub fn docker(&self) -> Command {
        let mut cmd = Command::new(&self.docker);
        cmd.env("DOCKER_HOST", self.host())
            .env("DOCKER_CONFIG", self.dir.join("client"))
            .env_remove("DOCKER_CONTEXT")
            .env_remove("DOCKER_TLS_VERIFY")
            .env_remove("DOCKER_CERT_PATH");
        cmd
    }

    /// Runs `docker <args>` against this engine and returns its stdout; panics with its stderr
    /// when it fails.
    pub fn run(&self, args: &[&str]) -> String {
        let out = self.output(args);
        if !out.status.success() {
            panic!("`docker {}` failed ({}): {}", args.join(" "), out.status, String::from_utf8_lossy(&out.stderr));
        }
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs `docker <args>` against this engine, whatever it answers.
    pub fn output(&self, args: &[&str]) -> Output {
        self.docker().args(args).output().unwrap_or_else(|e| panic!("cannot run {}: {e}", self.docker.display()))
    }

    /// The engine's address as `DOCKER_HOST` spells it: `unix:///tmp/bosun-dk-…/docker.sock`.
    pub fn host(&self) -> String {
        format!("unix://{}", self.socket.display())
    }

    /// The engine's API socket.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The engine's temp dir (removed when the engine stops).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The process id of `dockerd`.
    pub fn dockerd_pid(&self) -> u32 {
        self.dockerd_pid
    }

    /// How long the engine took to answer, from the call that started it.
    pub fn started_in(&self) -> Duration {
        self.started_in
    }

    /// The tag of a small image made once per tag in this engine (see `image::build_root`):
    /// busybox, and each of `extra_binaries` (absolute host paths) at its host path with its
    /// shared libraries. Panics when the same tag is asked for with other binaries.
    pub fn image(&self, tag: &str, extra_binaries: &[&Path]) -> String {
        self.image_with_trees(tag, extra_binaries, &[])
    }

    /// As `image`, with each of `trees` (absolute host directories: a Node.js client's package)
    /// at its host path as it is, its links kept.
    pub fn image_with_trees(&self, tag: &str, extra_binaries: &[&Path], trees: &[&Path]) -> String {
        let wanted: Vec<PathBuf> = extra_binaries.iter().chain(trees).map(|p| p.to_path_buf()).collect();
        let mut images = self.images.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(made) = images.get(tag) {
            assert_eq!(made, &wanted, "image {tag} was made with other binaries");
            return tag.to_string();
        }
        let root = tempfile::Builder::new()
            .prefix("image-")
            .tempdir_in(&self.dir)
            .unwrap_or_else(|e| panic!("cannot create a temp dir in {}: {e}", self.dir.display()));
        let env = image::build_root(root.path(), &tools::busybox(), extra_binaries, trees);
        image::import(self.docker(), root.path(), tag, &env);
        images.insert(tag.to_string(), wanted);
        tag.to_string()
    }

    fn log_tail(&self) -> String {
        let mut text = String::new();
        for name in ["dockerd.log", "supervisor.log"] {
            let mut content = String::new();
            let _ = File::open(self.dir.join(name)).and_then(|mut f| f.read_to_string(&mut content));
            let lines: Vec<&str> = content.lines().collect();
            let tail = &lines[lines.len().saturating_sub(20)..];
            text.push_str(&format!("--- {name}\n{}\n", tail.join("\n")));
        }
        text
    }
}

/// `dockerd`'s command line: no networking of its own (no iptables, no bridge: containers run
/// with `--network none` or the host's network), cgroupfs, overlay2, every path in `dir`.
fn dockerd_args(dir: &Path, data_root: &Path, exec_root: &Path, socket: &Path, config: &Path) -> Vec<String> {
    let path = |p: &Path| p.display().to_string();
    vec![
        "--iptables=false".into(),
        "--ip6tables=false".into(),
        "--bridge=none".into(),
        "--exec-opt".into(),
        "native.cgroupdriver=cgroupfs".into(),
        "--storage-driver=overlay2".into(),
        "--shutdown-timeout".into(),
        SHUTDOWN_TIMEOUT_SECS.to_string(),
        "--config-file".into(),
        path(config),
        "--data-root".into(),
        path(data_root),
        "--exec-root".into(),
        path(exec_root),
        "-H".into(),
        format!("unix://{}", path(socket)),
        "--pidfile".into(),
        path(&dir.join("docker.pid")),
    ]
}

/// A new temp dir with a short real path: in `$TMPDIR` when that is short, else in /tmp.
fn short_temp_dir() -> PathBuf {
    let tmp = std::env::temp_dir();
    let base = if tmp.as_os_str().len() <= 40 { tmp } else { PathBuf::from("/tmp") };
    let dir = tempfile::Builder::new()
        .prefix("bosun-dk-")
        .tempdir_in(&base)
        .unwrap_or_else(|e| panic!("cannot create a temp dir in {}: {e}", base.display()))
        .keep();
    fs::canonicalize(&dir).unwrap_or_else(|e| panic!("cannot resolve {}: {e}", dir.display()))
}

/// `$PATH` with the sbin directories (`runc`, `containerd`, `dockerd`) at its end.
fn path_with_sbin() -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    format!("{path}:/usr/local/sbin:/usr/sbin:/sbin")
}

/// Whether process `pid` runs (exists and is not a zombie).
fn running(pid: u32) -> bool {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    // `pid (comm) state …`; comm may hold spaces and parentheses, so read after the last ')'.
    let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start()).and_then(|rest| rest.chars().next());
    state.is_some_and(|s| s != 'Z')
}
