//! The real programs tests drive — tmux, claudeless, bubblewrap, the Docker engine and busybox, and the real
//! Claude Code and Codex from the npm registry — found or, when missing, installed once per
//! machine; and `TmuxServer`, a private tmux server that dies with its test.

use std::env;
use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use bosun_adapters::Tmux;
use tempfile::TempDir;

/// The claudeless version the tests are written against.
pub const CLAUDELESS_VERSION: &str = "0.4.0";

/// The path of the tmux binary, installing it with `apt-get` when it is missing.
pub fn tmux() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| from_apt("tmux", "tmux")).clone()
}

/// The path of `dockerd`, the Docker engine, installing Debian's `docker.io` (which brings
/// `docker`, `containerd` and `runc` too) with `apt-get` when it is missing. Starting it needs
/// root; `docker::DockerEngine` runs a private one.
pub fn dockerd() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| from_apt("dockerd", "docker.io")).clone()
}

/// The path of the `docker` client, installing `docker.io` when it is missing. Any client that
/// speaks the engine's API version (1.41 for Debian 12's engine) will do: the newer static client
/// some machines have in /usr/local/bin negotiates down.
pub fn docker() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| from_apt("docker", "docker.io")).clone()
}

/// The path of `busybox`, installing `busybox-static` when it is missing (a dynamic busybox
/// from the `busybox` package does as well: the test images copy the libraries it needs).
pub fn busybox() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| from_apt("busybox", "busybox-static")).clone()
}

/// The path of `bwrap` (bubblewrap), which `--runtime sandbox` runs agents in, installing
/// `bubblewrap` when it is missing.
pub fn bwrap() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| from_apt("bwrap", "bubblewrap")).clone()
}

/// `program` found on `PATH` (or in an sbin directory), else installed once per machine with
/// `apt-get install -y <package>` (after `apt-get update` when the plain install fails).
fn from_apt(program: &str, package: &str) -> PathBuf {
    if let Some(path) = find_program(program) {
        return path;
    }
    locked(package, || {
        if let Some(path) = find_program(program) {
            return path;
        }
        let install =
            || run(Command::new("apt-get").args(["install", "-y", package]).env("DEBIAN_FRONTEND", "noninteractive"));
        if !install() {
            run(Command::new("apt-get").arg("update"));
            if !install() {
                panic!(
                    "{program} is missing and `apt-get install -y {package}` failed: install {package} and run the \
                     tests again"
                );
            }
        }
        find_program(program)
            .unwrap_or_else(|| panic!("`apt-get install -y {package}` succeeded but {program} is not on PATH"))
    })
}

/// `program` on `PATH`, else in the sbin directories a user's `PATH` often lacks.
fn find_program(program: &str) -> Option<PathBuf> {
    on_path(program).or_else(|| {
        ["/usr/local/sbin", "/usr/sbin", "/sbin"]
            .iter()
            .map(|dir| Path::new(dir).join(program))
            .find(|p| is_executable(p))
    })
}

/// The path of the claudeless binary: `$CLAUDELESS_BIN`, else on `PATH`, else in
/// `~/.cargo/bin`, else installed with `cargo install` (which takes minutes).
pub fn claudeless() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        if let Some(path) = find_claudeless() {
            return path;
        }
        locked("claudeless", || {
            if let Some(path) = find_claudeless() {
                return path;
            }
            let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let installed =
                run(Command::new(cargo).args(["install", "--locked", "claudeless", "--version", CLAUDELESS_VERSION]));
            if !installed {
                panic!(
                    "claudeless is missing and `cargo install --locked claudeless --version {CLAUDELESS_VERSION}` \
                     failed: install it, or point $CLAUDELESS_BIN at it"
                );
            }
            find_claudeless()
                .unwrap_or_else(|| panic!("claudeless was installed but is not on PATH nor in ~/.cargo/bin"))
        })
    })
    .clone()
}

fn find_claudeless() -> Option<PathBuf> {
    let from_env = env::var_os("CLAUDELESS_BIN").map(PathBuf::from).filter(|p| p.is_file());
    let in_cargo_home = || {
        let home = env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
        Some(home.join("bin").join("claudeless")).filter(|p| p.is_file())
    };
    from_env.or_else(|| on_path("claudeless")).or_else(in_cargo_home)
}

/// Runs `f` holding an exclusive lock on installing `tool`, shared by every test process on this
/// machine, so only one of them installs it and the others wait, then find it installed.
fn locked<T>(tool: &str, f: impl FnOnce() -> T) -> T {
    let path = env::temp_dir().join(format!("bosun-testkit-install-{tool}.lock"));
    let file = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(false)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot create the lock file {}: {e}", path.display()));
    file.lock().unwrap_or_else(|e| panic!("cannot lock {}: {e}", path.display()));
    let value = f();
    drop(file);
    value
}

/// `program` in a directory of `$PATH`; panics, naming it, when there is none.
pub fn which(program: &str) -> PathBuf {
    on_path(program).unwrap_or_else(|| panic!("{program} is not on PATH"))
}

/// `program` found in a directory of `$PATH`.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH")?;
    env::split_paths(&path).map(|dir| dir.join(program)).find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs an installer, its output going to the test's output; whether it succeeded.
fn run(cmd: &mut Command) -> bool {
    eprintln!("testkit: running {cmd:?}");
    cmd.status().is_ok_and(|s| s.success())
}

/// A tmux server of its own for one test: a socket and configuration in a temp dir, and a
/// `Tmux` on them (configured without hooks). Dropping it kills the server, also when the test
/// panics.
pub struct TmuxServer {
    dir: TempDir,
    tmux: Tmux,
}

impl TmuxServer {
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("bosun-tmux-")
            .tempdir()
            .unwrap_or_else(|e| panic!("cannot create a temp dir: {e}"));
        let tmux = Tmux::new(dir.path().join("tmux.sock"), dir.path().join("tmux.conf")).with_program(tmux());
        tmux.write_config(None).unwrap_or_else(|e| panic!("cannot write the tmux configuration: {e}"));
        Self { dir, tmux }
    }

    pub fn tmux(&self) -> &Tmux {
        &self.tmux
    }

    /// The temp dir holding the socket; tests may keep their own files in it.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn socket(&self) -> &Path {
        self.tmux.socket()
    }
}

impl Default for TmuxServer {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        // Nothing to do when no server ever started; errors cannot be reported from a drop.
        let _ = Command::new(tmux())
            .arg("-S")
            .arg(self.tmux.socket())
            .arg("kill-server")
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .output();
    }
}

/// The real agent clients some tests drive, pinned in `scripts/real-clients`: one npm package a
/// line, `NAME VERSION`, `#` starting a comment.
const REAL_CLIENTS: &str = include_str!("../../../scripts/real-clients");

/// The packages and versions `scripts/real-clients` pins, in its order.
pub fn real_clients() -> Vec<(&'static str, &'static str)> {
    REAL_CLIENTS
        .lines()
        .map(|line| line.split('#').next().unwrap_or_default())
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            Some((words.next()?, words.next()?))
        })
        .collect()
}

/// The pinned version of an npm package of `scripts/real-clients`.
pub fn real_client_version(package: &str) -> Option<&'static str> {
    real_clients().into_iter().find(|(name, _)| *name == package).map(|(_, version)| version)
}

/// The real Claude Code (`claude`): `$BOSUN_CLAUDE_CODE_BIN`, else the cache `scripts/setup`
/// installs into, else installed there with npm. `None` only when the npm registry cannot be
/// reached, after printing why the test skips: write
/// `let Some(claude) = tools::claude_code() else { return };`.
pub fn claude_code() -> Option<PathBuf> {
    real_client("BOSUN_CLAUDE_CODE_BIN", "claude")
}

/// The real Codex CLI (`codex`), found or installed as `claude_code` is (`$BOSUN_CODEX_BIN`).
pub fn codex() -> Option<PathBuf> {
    real_client("BOSUN_CODEX_BIN", "codex")
}

/// The real Codex's native program, which the `codex` launcher (a Node.js script) runs: a
/// static binary named `codex` in the npm package of this platform (`@openai/codex-linux-x64`),
/// as the launcher finds it — nested in the launcher's package, beside it, or in its own
/// `vendor`. Needs nothing else to run, so a container without Node.js can hold it. `None` as
/// for `codex`; panics when the package was installed without it.
pub fn codex_native() -> Option<PathBuf> {
    let launcher = fs::canonicalize(codex()?).unwrap_or_else(|e| panic!("cannot resolve the codex launcher: {e}"));
    let (platform, triple) = match env::consts::ARCH {
        "aarch64" => ("codex-linux-arm64", "aarch64-unknown-linux-musl"),
        _ => ("codex-linux-x64", "x86_64-unknown-linux-musl"),
    };
    // `<node_modules>/@openai/codex/bin/codex.js`.
    let package = launcher.parent().and_then(Path::parent).unwrap_or_else(|| Path::new("/"));
    let vendors = [
        package.join("node_modules/@openai").join(platform).join("vendor"),
        package.with_file_name(platform).join("vendor"),
        package.join("vendor"),
    ];
    let binary = vendors.iter().map(|v| v.join(triple).join("bin/codex")).find(|p| is_executable(p));
    Some(
        binary
            .unwrap_or_else(|| panic!("no native codex binary beside {} (looked in {vendors:?})", launcher.display())),
    )
}

/// The real Gemini CLI (`gemini`), found or installed as `claude_code` is
/// (`$BOSUN_GEMINI_CLI_BIN`).
pub fn gemini_cli() -> Option<PathBuf> {
    real_client("BOSUN_GEMINI_CLI_BIN", "gemini")
}

/// The real pi (`pi`): `$BOSUN_PI_BIN`, else the script `scripts/setup` writes in the cache,
/// `bin/pi`, which runs pi with the Node.js installed beside it (pi 1.6 needs Node.js 22.19 or
/// later: it does not load on Node.js 20), written here when missing. `None` as for
/// `claude_code`.
pub fn pi() -> Option<PathBuf> {
    if env::var_os("BOSUN_PI_BIN").is_some_and(|p| !p.is_empty()) {
        return real_client("BOSUN_PI_BIN", "pi");
    }
    real_client("BOSUN_PI_BIN", "pi")?;
    let cache = real_clients_installed()?;
    let script = cache.join("bin").join("pi");
    if !is_executable(&script) {
        let bin = cache.join("node_modules").join(".bin");
        let text = format!(
            "#!/bin/sh\n# pi run with the Node.js installed beside it (pi 1.6 needs Node.js 22.19 or later).\nexec \"{}\" \"{}\" \"$@\"\n",
            bin.join("node").display(),
            bin.join("pi").display()
        );
        let new = cache.join("bin").join(format!("pi.new-{}", std::process::id()));
        fs::create_dir_all(cache.join("bin")).unwrap_or_else(|e| panic!("cannot create {}/bin: {e}", cache.display()));
        fs::write(&new, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", new.display()));
        fs::set_permissions(&new, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap_or_else(|e| panic!("cannot make {} executable: {e}", new.display()));
        fs::rename(&new, &script).unwrap_or_else(|e| panic!("cannot write {}: {e}", script.display()));
    }
    Some(script)
}

/// The real opencode (`opencode`, a native program its npm package `opencode-ai` brings), found
/// or installed as `claude_code` is (`$BOSUN_OPENCODE_BIN`).
pub fn opencode() -> Option<PathBuf> {
    real_client("BOSUN_OPENCODE_BIN", "opencode")
}

/// Prints the one line a test prints when it skips.
pub fn skip(reason: &str) {
    eprintln!("testkit: skipping: {reason}");
}

fn real_client(var: &str, bin: &str) -> Option<PathBuf> {
    if let Some(path) = env::var_os(var).filter(|p| !p.is_empty()).map(PathBuf::from) {
        assert!(is_executable(&path), "${var} is {}, which is not an executable file", path.display());
        return Some(path);
    }
    let Some(cache) = real_clients_installed() else {
        let packages: Vec<String> = real_clients().iter().map(|(name, version)| format!("{name}@{version}")).collect();
        skip(&format!("the npm registry cannot be reached to install {}", packages.join(" ")));
        return None;
    };
    let path = cache.join("node_modules").join(".bin").join(bin);
    assert!(is_executable(&path), "{} is missing after installing the real clients", path.display());
    Some(path)
}

/// Seeds opencode's config directory `dir` with the plugin package opencode installs into every
/// config directory it reads once a plugin is configured (`@opencode-ai/plugin` at opencode's own
/// version), as a user's has it after the first run: opencode then starts without asking the
/// npm registry (and loads its plugins seconds sooner). The package is installed once per machine
/// beside the real clients; when that install fails nothing is seeded and opencode installs it
/// itself. Its version is that of the opencode the tests run (`$BOSUN_OPENCODE_BIN`, another
/// version under `scripts/test-clients`), else the pinned one.
pub fn seed_opencode_plugin(dir: &Path) {
    static VERSION: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let version = VERSION.get_or_init(|| {
        let bin = env::var_os("BOSUN_OPENCODE_BIN").filter(|p| !p.is_empty());
        let said = bin.and_then(|b| Command::new(b).arg("--version").output().ok());
        let said = said.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
        let plain = |v: &String| !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || ".-".contains(c));
        said.filter(plain).or_else(|| real_client_version("opencode-ai").map(str::to_owned))
    });
    let Some(version) = version.as_deref() else { return };
    let cache = real_clients_cache();
    let template = cache.parent().unwrap_or(&cache).join(format!("opencode-plugin-{version}"));
    let complete = template.join(".complete");
    if !complete.is_file() {
        let made = locked("opencode-plugin", || {
            if complete.is_file() {
                return true;
            }
            let Some(npm) = on_path("npm") else { return false };
            fs::create_dir_all(&template).unwrap_or_else(|e| panic!("cannot create {}: {e}", template.display()));
            // As opencode writes it: the exact version, which its check compares.
            let manifest =
                format!("{{\n  \"dependencies\": {{\n    \"@opencode-ai/plugin\": \"{version}\"\n  }}\n}}\n");
            fs::write(template.join("package.json"), manifest)
                .unwrap_or_else(|e| panic!("cannot write in {}: {e}", template.display()));
            let mut install = Command::new(npm);
            install.args(["install", "--prefix"]).arg(&template);
            install.args(["--no-audit", "--no-fund", "--loglevel=error", "--fetch-retries=1"]);
            run(&mut install) && fs::write(&complete, "").is_ok()
        });
        if !made {
            return;
        }
    }
    let copied = Command::new("cp")
        .arg("-a")
        .args(["package.json", "package-lock.json", "node_modules"].map(|f| template.join(f)))
        .arg(dir)
        .status();
    assert!(copied.is_ok_and(|s| s.success()), "cannot copy opencode's plugin package into {}", dir.display());
}

/// Where the real clients are installed: `${XDG_CACHE_HOME:-$HOME/.cache}/bosun/` and a name
/// made of their names and versions (`real-clients-claude-code-2.1.197-codex-0.169.0`), so a
/// change of versions installs afresh. `scripts/setup` uses the same directory.
pub fn real_clients_cache() -> PathBuf {
    let base = env::var_os("XDG_CACHE_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(env::temp_dir);
    let mut name = String::from("real-clients");
    for (package, version) in real_clients() {
        let short = package.rsplit('/').next().unwrap_or(package);
        name.push_str(&format!("-{short}-{version}"));
    }
    base.join("bosun").join(name)
}

/// The cache dir with every real client installed in it, installing them once per machine when
/// missing; `None` when `npm install` fails although the npm registry cannot be reached (any
/// other failure panics, and so does a missing npm).
fn real_clients_installed() -> Option<PathBuf> {
    static CACHE: OnceLock<Option<PathBuf>> = OnceLock::new();
    CACHE
        .get_or_init(|| {
            let cache = real_clients_cache();
            // Written last by every installer, so a half-done install is done again.
            let complete = cache.join(".complete");
            if complete.is_file() {
                return Some(cache);
            }
            locked("real-clients", || {
                if complete.is_file() {
                    return Some(cache.clone());
                }
                let npm = on_path("npm").unwrap_or_else(|| {
                    panic!(
                        "npm is missing, and the tests need it to install the real Claude Code and Codex: install \
                         Node.js 18 or later with npm (on Debian: apt-get install -y nodejs npm)"
                    )
                });
                fs::create_dir_all(&cache).unwrap_or_else(|e| panic!("cannot create {}: {e}", cache.display()));
                let mut install = Command::new(&npm);
                install
                    .args(["install", "--prefix"])
                    .arg(&cache)
                    .args(["--no-audit", "--no-fund", "--loglevel=error", "--fetch-retries=1"])
                    .args(["--fetch-retry-maxtimeout=10000"])
                    .args(real_clients().iter().map(|(name, version)| format!("{name}@{version}")));
                if run(&mut install) {
                    fs::write(&complete, "").unwrap_or_else(|e| panic!("cannot write {}: {e}", complete.display()));
                    return Some(cache.clone());
                }
                let ping = Command::new(&npm).args(["ping", "--fetch-retries=0", "--fetch-timeout=10000"]).output();
                if ping.is_ok_and(|out| out.status.success()) {
                    panic!(
                        "`npm install --prefix {} …` failed although the npm registry answers: see its output above",
                        cache.display()
                    );
                }
                None
            })
        })
        .clone()
}
