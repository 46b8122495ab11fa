//! `bosun doctor --clients`: the self-test a person runs after a client update, run as a person
//! runs it — the clients found on `PATH`, the person's own home, Claude config, bosun state and
//! API keys in the environment — and what it leaves: nothing (no process, no temp directory), and
//! the person's files as they were. The pinned real clients (`scripts/real-clients`) pass every
//! check; a client whose version cannot be read, none at all, a client named but missing, and a
//! client that is not what it says (claudeless posing as Claude Code) each exit 1.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use bosun_testkit::clients::{processes_using, run_within};
use bosun_testkit::poll::{wait_for, wait_until};

/// Longer than the self-test's own deadline at `--patience 3` (three times 75 s for the checks,
/// 110 s for opencode's, then the take-down).
const RUN_LIMIT: Duration = Duration::from_secs(400);
/// What a person has that the self-test must never touch or use.
const USER_KEY: &str = "sk-ant-api03-the-users-own-key";

/// One person's machine: a `PATH` with only the clients a test puts there (and every other tool),
/// a temp dir (`TMPDIR`) the self-test makes its place in, and the person's own files.
struct Machine {
    bin: tempfile::TempDir,
    tmp: tempfile::TempDir,
    user: tempfile::TempDir,
}

impl Machine {
    fn new() -> Self {
        bosun_testkit::tools::tmux();
        let machine = Self { bin: tempdir(), tmp: tempdir(), user: tempdir() };
        for dir in ["home", "claude", "codex"] {
            std::fs::create_dir(machine.user.path().join(dir)).unwrap();
        }
        std::fs::write(machine.user.path().join("claude/.claude.json"), "{\"the user's\": true}\n").unwrap();
        std::fs::write(machine.user.path().join("codex/config.toml"), "model = \"the-users-own\"\n").unwrap();
        machine
    }

    /// Puts `target` on `PATH` as `name`.
    fn install(&self, name: &str, target: &Path) {
        std::os::unix::fs::symlink(target, self.bin.path().join(name)).unwrap();
    }

    /// Puts a script on `PATH` as `name`.
    fn script(&self, name: &str, text: &str) {
        let path = self.bin.path().join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// `bosun doctor --clients ARGS`, as the person runs it.
    fn doctor(&self, args: &[&str]) -> Output {
        run_within(&mut self.doctor_command(args), RUN_LIMIT)
    }

    fn doctor_command(&self, args: &[&str]) -> Command {
        let user = self.user.path();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_bosun"));
        cmd.args(["doctor", "--clients"])
            .args(args)
            .env("PATH", self.path())
            .env("TMPDIR", self.tmp.path())
            .env("HOME", user.join("home"))
            .env("CLAUDE_CONFIG_DIR", user.join("claude"))
            .env("CODEX_HOME", user.join("codex"))
            .env("BOSUN_STATE_DIR", user.join("state"))
            .env("ANTHROPIC_API_KEY", USER_KEY)
            .env("OPENAI_API_KEY", USER_KEY)
            // As CI runs it, wherever it runs (Gemini CLI goes headless under CI=true).
            .env("CI", "true")
            .env_remove("TMUX")
            .env_remove("BOSUN_LOG");
        cmd
    }

    /// This machine's `PATH`: the clients put there, then the test's own `PATH` without any
    /// directory that holds a client.
    fn path(&self) -> String {
        let own = std::env::var_os("PATH").unwrap_or_default();
        let rest = std::env::split_paths(&own)
            .filter(|d| ["claude", "codex", "gemini", "pi"].iter().all(|c| !d.join(c).exists()));
        std::env::join_paths(std::iter::once(self.bin.path().to_owned()).chain(rest)).unwrap().into_string().unwrap()
    }

    /// Nothing of the self-test is left, and the person's files are as they were.
    fn assert_nothing_left(&self) {
        let left: Vec<PathBuf> = std::fs::read_dir(self.tmp.path()).unwrap().flatten().map(|e| e.path()).collect();
        assert!(left.is_empty(), "left in the temp dir: {left:?}");
        let running = processes_using(self.tmp.path());
        assert!(running.is_empty(), "processes still name the self-test's temp dir: {running:?}");
        let user = self.user.path();
        assert!(!user.join("state").exists(), "the person's bosun state was made");
        assert_eq!(names(&user.join("home")), Vec::<String>::new(), "the person's home was written");
        assert_eq!(names(&user.join("claude")), [".claude.json"], "the person's Claude config was written");
        assert_eq!(std::fs::read_to_string(user.join("claude/.claude.json")).unwrap(), "{\"the user's\": true}\n");
        assert_eq!(names(&user.join("codex")), ["config.toml"], "the person's Codex config was written");
    }
}

fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("st-").tempdir_in("/tmp").unwrap()
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The check lines of `stdout` (✓ or ✗) of `client`.
fn check_lines<'a>(stdout: &'a str, client: &str) -> Vec<&'a str> {
    stdout
        .lines()
        .filter(|l| (l.starts_with("✓ ") || l.starts_with("✗ ")) && l[4..].trim_start().starts_with(client))
        .collect()
}

/// claudeless posing as the tested Claude Code.
fn claudeless_posing(machine: &Machine) -> bosun_core::client_version::Version {
    let claudeless = bosun_testkit::tools::claudeless();
    let tested = bosun_core::client_version::tested("@anthropic-ai/claude-code").unwrap();
    machine.script(
        "claude",
        &format!(
            "#!/bin/sh\n[ \"$1\" = --version ] && {{ echo '{tested} (Claude Code)'; exit 0; }}\nexec '{}' \"$@\"\n",
            claudeless.display()
        ),
    );
    tested
}

const CLAUDE_CHECKS: [&str; 6] = [
    "start → turn end → idle",
    "a shell tool call runs",
    "a permission request answered by a policy",
    "a 429 → error(rate_limited)",
    "kill -9 → resume with the conversation",
    "the folder-trust dialog, fresh config",
];
const CODEX_CHECKS: [&str; 6] = [
    "start → turn end → idle",
    "a shell tool call runs",
    "an approval dialog → prompt(permission)",
    "a 429 → error(rate_limited)",
    "kill -9 → resume with the conversation",
    "the folder-trust dialog, fresh config",
];
const GEMINI_CHECKS: [&str; 6] = [
    "start → turn end → idle",
    "a shell tool call runs",
    "an approval dialog → prompt(permission)",
    "a 429 → error(rate_limited)",
    "kill -9 → resume with the conversation",
    "a folder new to it: no trust dialog",
];
/// opencode has no folder-trust dialog: no check of one.
const OPENCODE_CHECKS: [&str; 5] = [
    "start → turn end → idle",
    "a shell tool call runs",
    "an approval dialog → prompt(permission)",
    "a 429 → error(rate_limited)",
    "kill -9 → resume with the conversation",
];

const PI_CHECKS: [&str; 6] = [
    "start → turn end → idle",
    "a shell tool call runs",
    "a tool call answered by a policy",
    "a 429 → error(rate_limited)",
    "kill -9 → resume with the conversation",
    "project resources: trusted by its extension",
];

/// The versions bosun was tested with, of these packages.
fn tested(package: &str) -> String {
    bosun_core::client_version::tested(package).unwrap().to_string()
}

/// Each pinned client is tested apart, so that the suite runs them beside other tests rather
/// than one long test at its end. Patient: the suite runs other tests beside them
/// (`--patience 3`: each check three times its time).
#[test]
fn the_pinned_claude_code_and_codex_pass_every_check_and_nothing_is_left_behind() {
    let (Some(claude), Some(codex)) = (bosun_testkit::tools::claude_code(), bosun_testkit::tools::codex()) else {
        return;
    };
    let machine = Machine::new();
    machine.install("claude", &claude);
    machine.install("codex", &codex);
    let out = machine.doctor(&["claude", "codex", "--patience", "3"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let (claude_v, codex_v) = (tested("@anthropic-ai/claude-code"), tested("@openai/codex"));
    let (gemini_v, opencode_v) = (tested("@google/gemini-cli"), tested("opencode-ai"));
    let pi_v = tested("@earendil-works/pi-coding-agent");
    let bin = machine.bin.path().display();
    assert!(
        stdout.contains(&format!("  claude {claude_v} at {bin}/claude: the version bosun was tested with\n")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("  codex  {codex_v} at {bin}/codex: the version bosun was tested with\n")),
        "{stdout}"
    );
    for (client, checks) in [("claude", CLAUDE_CHECKS), ("codex", CODEX_CHECKS)] {
        let lines = check_lines(&stdout, client);
        assert_eq!(lines.len(), 6, "{stdout}");
        for (line, title) in lines.iter().zip(checks) {
            assert!(line.starts_with("✓ ") && line.contains(title), "{title}: {line}\n{stdout}");
            assert!(line.contains(" ms  "), "a latency: {line}");
        }
    }
    assert!(stdout.contains("it said \"Hello from bosun's self-test.\""), "{stdout}");
    assert!(stdout.contains("12 of 12 checks right in "), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "tested with: Claude Code {claude_v}, Codex {codex_v}, Gemini CLI {gemini_v}, pi {pi_v}, opencode {opencode_v}"
        )),
        "the tested versions: {stdout}"
    );
    machine.assert_nothing_left();
}

#[test]
fn the_pinned_gemini_cli_passes_every_check_and_nothing_is_left_behind() {
    let Some(gemini) = bosun_testkit::tools::gemini_cli() else { return };
    let machine = Machine::new();
    machine.install("gemini", &gemini);
    let out = machine.doctor(&["gemini", "--patience", "3"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let (gemini_v, bin) = (tested("@google/gemini-cli"), machine.bin.path().display());
    assert!(
        stdout.contains(&format!("  gemini {gemini_v} at {bin}/gemini: the version bosun was tested with\n")),
        "{stdout}"
    );
    let lines = check_lines(&stdout, "gemini");
    assert_eq!(lines.len(), 6, "{stdout}");
    for (line, title) in lines.iter().zip(GEMINI_CHECKS) {
        assert!(line.starts_with("✓ ") && line.contains(title), "{title}: {line}\n{stdout}");
    }
    assert!(stdout.contains("6 of 6 checks right in "), "{stdout}");
    machine.assert_nothing_left();
}

/// pi as JSON: every check, with its latency.
#[test]
fn the_pinned_pi_passes_every_check_as_json_and_nothing_is_left_behind() {
    let Some(pi) = bosun_testkit::tools::pi() else { return };
    let machine = Machine::new();
    machine.install("pi", &pi);
    let out = machine.doctor(&["pi", "--json", "--patience", "3"]);
    let v = all_right(&out, &PI_CHECKS);
    let policy = v["checks"][2]["detail"].as_str().unwrap_or_default();
    assert!(policy.starts_with("bash(touch bosun-selftest-*) allowed bash"), "the policy answered: {policy}");
    assert_eq!(v["clients"][0]["version"], tested("@earendil-works/pi-coding-agent").as_str());
    machine.assert_nothing_left();
}

/// opencode as JSON (its every start taking seconds).
#[test]
fn the_pinned_opencode_passes_every_check_as_json_and_nothing_is_left_behind() {
    let Some(opencode) = bosun_testkit::tools::opencode() else { return };
    let machine = Machine::new();
    machine.install("opencode", &opencode);
    let opencode_v = tested("opencode-ai");
    let v = all_right(&machine.doctor(&["opencode", "--json", "--patience", "3"]), &OPENCODE_CHECKS);
    assert_eq!(v["clients"][0]["version"], opencode_v.as_str());
    let bin = machine.bin.path().display();
    let line = format!("opencode {opencode_v} at {bin}/opencode: the version bosun was tested with");
    assert_eq!(v["clients"][0]["line"], line.as_str());
    machine.assert_nothing_left();
}

/// The self-test's `--json` report of one client named: it passed, these checks each right with
/// its latency, the one client, not newer than tested.
fn all_right(out: &std::process::Output, titles: &[&str]) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(out.status.success() && v["ok"] == true, "{v:#}\n{}", text(out).1);
    let checks = v["checks"].as_array().unwrap();
    let seen: Vec<&str> = checks.iter().filter_map(|c| c["title"].as_str()).collect();
    assert_eq!(seen, titles, "{v:#}");
    let wrong: Vec<&serde_json::Value> =
        checks.iter().filter(|c| !(c["ok"] == true && c["took_ms"].is_u64() && c["latency_ms"].is_u64())).collect();
    assert!(wrong.is_empty(), "every check right, with its latency: {wrong:#?}");
    assert_eq!(v["clients"].as_array().map(Vec::len), Some(1), "the client named: {v:#}");
    assert_eq!(v["clients"][0]["newer_than_tested"], false);
    v
}

#[test]
fn a_client_whose_version_cannot_be_read_is_one_line_and_an_exit_1() {
    let machine = Machine::new();
    machine.script("claude", "#!/bin/sh\necho 'Claude Code, built today'\n");
    let out = machine.doctor(&["claude"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let said: Vec<&str> = stdout.lines().filter(|l| l.contains("claude")).collect();
    let line = format!(
        "✗ claude at {}/claude: its `--version` printed \"Claude Code, built today\", which is no version bosun can read",
        machine.bin.path().display()
    );
    assert_eq!(said.iter().filter(|l| l.starts_with("✗")).collect::<Vec<_>>(), [&line.as_str()], "{stdout}");
    assert!(check_lines(&stdout, "claude").len() == 1, "no check ran: {stdout}");
    machine.assert_nothing_left();
}

#[test]
fn no_client_installed_or_one_named_but_missing_is_an_exit_1() {
    let machine = Machine::new();
    let out = machine.doctor(&[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "- claude not installed (not on PATH): `npm install -g @anthropic-ai/claude-code` installs it; skipped"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("- codex  not installed (not on PATH): `npm install -g @openai/codex`"), "{stdout}");
    assert!(stdout.contains("no client to test"), "{stdout}");
    machine.assert_nothing_left();

    let out = machine.doctor(&["codex"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("✗ codex  not installed (not on PATH): `npm install -g @openai/codex` installs it\n"));
    assert!(!stdout.contains("claude "), "only the client named: {stdout}");
    machine.assert_nothing_left();
}

#[test]
fn a_client_that_is_not_what_it_says_fails_its_checks_and_leaves_nothing() {
    // claudeless posing as the tested Claude Code: it runs turns of its own and never asks the
    // model server.
    let machine = Machine::new();
    let tested = claudeless_posing(&machine);
    let out = machine.doctor(&["claude"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let lines = check_lines(&stdout, "claude");
    assert_eq!(lines.len(), 6, "{stdout}");
    let turn = lines[0];
    assert!(turn.starts_with("✗ ") && turn.contains(CLAUDE_CHECKS[0]), "{stdout}");
    assert!(lines.iter().all(|l| l.starts_with("✗ ")), "nothing it did is right: {stdout}");
    assert!(stdout.contains("bosun misreads what it checks of this version"), "{stdout}");
    let install =
        format!("  meanwhile the tested Claude Code is `npm install -g @anthropic-ai/claude-code@{tested}`\n");
    assert!(stdout.contains(&install) && stdout.contains("and open an issue"), "what to do: {stdout}");
    machine.assert_nothing_left();
}

#[test]
fn a_hostile_version_is_shown_escaped_and_cut_and_a_hanging_one_is_given_up_on() {
    let machine = Machine::new();
    // Terminal escapes (clear the screen, set the title) and 10 kB on one line. (One that floods
    // its pipe past what is read never ends: it is a `--version` that hangs, as codex's here.)
    machine.script(
        "claude",
        "#!/bin/sh\nprintf '\\033[2J\\033]0;pwned\\007'\nhead -c 10000 /dev/zero | tr '\\0' x\necho\n",
    );
    // A `--version` that never ends, and leaves a process behind if it can.
    machine.script("codex", "#!/bin/sh\nsleep 600 &\nexec sleep 600\n");
    let out = machine.doctor(&[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(!stdout.contains('\u{1b}') && !stdout.contains('\u{7}'), "escapes reach the terminal: {stdout:?}");
    let line = stdout.lines().find(|l| l.starts_with("✗ claude")).expect("a line for claude");
    assert!(line.contains("\\u{1b}[2J") && line.len() < 600, "shown escaped, cut short: {line}");
    let codex =
        format!("✗ codex  at {}/codex: `codex --version` failed or printed nothing", machine.bin.path().display());
    assert!(stdout.lines().any(|l| l == codex), "{stdout}");
    assert!(stdout.contains("no client to test"), "{stdout}");
    machine.assert_nothing_left();
}

#[test]
fn interrupted_with_agents_running_it_exits_130_and_leaves_nothing() {
    let machine = Machine::new();
    claudeless_posing(&machine);
    let mut child = machine.doctor_command(&["claude"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // Once an agent's session runs on the self-test's own tmux server.
    let running = wait_until(RUN_LIMIT, || {
        std::fs::read_dir(machine.tmp.path())
            .unwrap()
            .flatten()
            .any(|place| place.path().join("state/tmux.sock").exists() && !processes_using(&place.path()).is_empty())
    });
    assert!(running, "the self-test never started an agent");
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let status = wait_for(RUN_LIMIT, || child.try_wait().unwrap()).expect("it ends after the interrupt");
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stderr.contains("interrupted; everything the self-test made is removed"), "{stderr}");
    machine.assert_nothing_left();
}
