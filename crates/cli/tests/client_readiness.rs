//! A Claude Code or Codex that is not installed, does not run, or is not logged in is refused at
//! `bosun agent start` (and at `bosun run` of a job whose agent runs it) with one line saying what
//! to do, a non-zero exit, and nothing left behind; one that authenticates by a key in its
//! environment or a provider of its own starts; a version that cannot be read is a warning.
//! The clients here are scripts standing in for `claude` and `codex` on a `PATH` of the test's.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use support::*;

/// A stand-in for a client: `--version` prints `version` (exits `version_code`), its login check
/// (`auth status`, `login status`) prints `login` and exits `login_code`; run as an agent, it
/// leaves a mark beside itself and waits.
struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    fn new(name: &str, version: &str, version_code: i32, login: &str, login_code: i32) -> Fake {
        let dir = tempfile::tempdir().unwrap();
        let mark = dir.path().join("ran-as-agent");
        let script = format!(
            "#!/bin/sh\ncase \"$1 $2\" in\n  \"--version \") printf '%s\\n' '{version}'; exit {version_code} ;;\n  \"auth \
             status\"|\"login status\"|\"--list-sessions --skip-trust\"|\"--list-models --offline\") printf '%s\\n' '{login}'; exit {login_code} ;;\nesac\ntouch '{}'\nexec sleep \
             600\n",
            mark.display()
        );
        let path = dir.path().join(name);
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        Fake { dir }
    }

    /// Whether it was started as an agent.
    fn ran(&self) -> bool {
        self.dir.path().join("ran-as-agent").exists()
    }

    /// Forgets that it was.
    fn reset(&self) {
        let _ = std::fs::remove_file(self.dir.path().join("ran-as-agent"));
    }
}

/// The clients bosun probes, by their programs' names.
const CLIENTS: [&str; 5] = ["claude", "codex", "gemini", "pi", "opencode"];

/// The test's `PATH` without any directory that holds a client of `CLIENTS`, after `first`.
fn path_with(first: Option<&Path>) -> String {
    let rest = std::env::var("PATH").unwrap_or_default();
    let kept = std::env::split_paths(&rest).filter(|d| CLIENTS.iter().all(|c| !d.join(c).exists()));
    let all: Vec<std::path::PathBuf> = first.map(Path::to_path_buf).into_iter().chain(kept).collect();
    std::env::join_paths(all).unwrap().to_string_lossy().into_owned()
}

/// A bosun whose agents find `fake` first on `PATH`, with no key for either client and a Codex
/// home of their own (with `codex_config` in it).
fn bosun_with(fake: Option<&Fake>, codex_config: Option<&str>) -> (Bosun, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    if let Some(config) = codex_config {
        std::fs::write(home.path().join("config.toml"), config).unwrap();
    }
    let mut bosun =
        bosun().with_path(path_with(fake.map(|f| f.dir.path()))).with_env("CODEX_HOME", home.path().to_str().unwrap());
    for key in [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "OPENAI_API_KEY",
        "CODEX_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_USE_GCA",
    ] {
        bosun = bosun.with_env(key, "");
    }
    (bosun, home)
}

/// Runs `bosun ARGS`, which must be refused with exit 2 and one line, and checks that nothing
/// of it is left: no agent or workspace recorded, no branch, no worktree, no tmux session.
fn refused(bosun: &Bosun, repo: &TempRepo, args: &[&str]) -> String {
    let (branches, worktrees) = (repo.git(&["branch", "--list"]), repo.git(&["worktree", "list"]));
    let out = bosun.run(repo.path(), args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert_eq!(repo.git(&["branch", "--list"]), branches, "no branch made");
    assert_eq!(repo.git(&["worktree", "list"]), worktrees, "no worktree made");
    let listing = bosun.ok(repo.path(), &["ls", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&listing).unwrap();
    assert!(v["agents"].as_array().is_some_and(Vec::is_empty), "no agent recorded: {listing}");
    assert!(v["workspaces"].as_array().is_some_and(Vec::is_empty), "no workspace recorded: {listing}");
    let left: Vec<_> =
        std::fs::read_dir(bosun.state_dir().join("workspaces")).map(|d| d.flatten().collect()).unwrap_or_default();
    assert!(left.is_empty(), "no workspace directory: {left:?}");
    assert!(bosun.sessions().is_empty(), "no tmux session: {:?}", bosun.sessions());
    err
}

const CLAUDE_LOGGED_OUT: &str = r#"{"loggedIn": false, "authMethod": "none"}"#;

#[test]
fn a_client_that_is_not_installed_is_refused_in_one_line() {
    let repo = TempRepo::new();
    let (bosun, _home) = bosun_with(None, None);
    let packages = [
        ("claude", "@anthropic-ai/claude-code"),
        ("codex", "@openai/codex"),
        ("gemini", "@google/gemini-cli"),
        ("pi", "@earendil-works/pi-coding-agent"),
        ("opencode", "opencode-ai"),
    ];
    for (client, package) in packages {
        let err = refused(&bosun, &repo, &["agent", "start", "--", client]);
        assert!(
            err.contains(&format!("{client} is not found on PATH: install it (`npm install -g {package}`)")),
            "{err}"
        );
    }
}

/// Gemini CLI's own check (`gemini --list-sessions`) exits 41 saying so when it has no way to
/// sign in (as the real 0.61.0 does).
#[test]
fn a_gemini_with_no_way_to_sign_in_is_refused_unless_it_has_a_key() {
    let repo = TempRepo::new();
    let said = "Please set an Auth method in your /home/u/.gemini/settings.json or specify one of the following \
                environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA";
    let fake = Fake::new("gemini", "0.61.0", 0, said, 41);
    let (bosun, _home) = bosun_with(Some(&fake), None);
    let err = refused(&bosun, &repo, &["agent", "start", "--", "gemini", "fix it"]);
    assert!(err.contains("gemini is not logged in") && err.contains("--list-sessions"), "{err}");
    assert!(err.contains("GEMINI_API_KEY"), "says how to fix it: {err}");
    assert!(!fake.ran(), "never started as an agent");
    let id = bosun.start_with(repo.path(), &["--", "gemini", "fix it"], |cmd| {
        cmd.env("GEMINI_API_KEY", "AIza-test");
    });
    assert!(bosun_testkit::poll::wait_until(PATIENCE, || fake.ran()), "the agent runs");
    bosun.ok(repo.path(), &["kill", &id]);
}

/// pi 1.6 does not load on a Node.js older than 22.19: its `--version` fails as the real one does
/// on Node.js 20.20, and the start is refused before anything is made.
#[test]
fn a_pi_on_a_nodejs_too_old_for_it_is_refused_in_one_line() {
    let repo = TempRepo::new();
    let said = "SyntaxError: The requested module 'node:module' does not provide an export named 'enableCompileCache'";
    let fake = Fake::new("pi", said, 1, "", 0);
    let (bosun, _home) = bosun_with(Some(&fake), None);
    let err = refused(&bosun, &repo, &["agent", "start", "--", "pi", "fix it"]);
    assert!(err.contains("pi does not run") && err.contains("enableCompileCache"), "{err}");
    assert!(err.contains("npm install -g @earendil-works/pi-coding-agent"), "says how to fix it: {err}");
    assert!(!fake.ran(), "never started as an agent");
}

#[test]
fn a_client_that_does_not_run_is_refused_in_one_line_saying_to_install_it_again() {
    let repo = TempRepo::new();
    let fake = Fake::new("claude", "/usr/bin/env: node: No such file or directory", 127, "", 0);
    let (bosun, _home) = bosun_with(Some(&fake), None);
    let err = refused(&bosun, &repo, &["agent", "start", "--", "claude", "fix it"]);
    assert!(err.contains("claude does not run") && err.contains("exited 127") && err.contains("node"), "{err}");
    assert!(err.contains("npm install -g @anthropic-ai/claude-code"), "says how to fix it: {err}");
    assert!(!fake.ran(), "never started as an agent");
}

#[test]
fn a_claude_that_is_not_logged_in_is_refused_unless_it_has_a_key() {
    let repo = TempRepo::new();
    let fake = Fake::new("claude", "2.1.332 (Claude Code)", 0, CLAUDE_LOGGED_OUT, 1);
    let (bosun, _home) = bosun_with(Some(&fake), None);
    let err = refused(&bosun, &repo, &["agent", "start", "--", "claude", "fix it"]);
    assert!(err.contains("claude is not logged in") && err.contains("\"loggedIn\": false"), "{err}");
    assert!(err.contains("claude auth login") && err.contains("ANTHROPIC_API_KEY"), "says how to fix it: {err}");
    assert!(!fake.ran(), "never started as an agent");
    // An API key in the starter's environment: Claude uses it, whatever its check said.
    let id = bosun.start_with(repo.path(), &["--", "claude", "fix it"], |cmd| {
        cmd.env("ANTHROPIC_API_KEY", "sk-ant-test");
    });
    assert!(bosun_testkit::poll::wait_until(PATIENCE, || fake.ran()), "the agent runs");
    bosun.ok(repo.path(), &["kill", &id]);
}

#[test]
fn a_codex_that_is_not_logged_in_is_refused_unless_a_key_or_a_provider_of_its_own_stands_in() {
    let repo = TempRepo::new();
    let fake = Fake::new("codex", "codex-cli 0.171.0", 0, "Not logged in", 1);
    let (bosun, _home) = bosun_with(Some(&fake), None);
    let err = refused(&bosun, &repo, &["agent", "start", "--", "codex", "fix it"]);
    assert!(err.contains("codex is not logged in") && err.contains("Not logged in"), "{err}");
    assert!(err.contains("codex login") && err.contains("OPENAI_API_KEY"), "says how to fix it: {err}");
    assert!(!fake.ran());
    let id = bosun.start_with(repo.path(), &["--", "codex", "fix it"], |cmd| {
        cmd.env("OPENAI_API_KEY", "sk-test");
    });
    assert!(bosun_testkit::poll::wait_until(PATIENCE, || fake.ran()), "the agent runs");
    bosun.ok(repo.path(), &["kill", &id]);
    fake.reset();
    // A provider of its own in its config (a local model, a proxy, the tests' fake server).
    let provider = "model_provider = \"local\"\n[model_providers.local]\nbase_url = \"http://127.0.0.1:1/v1\"\n";
    let (bosun, _home) = bosun_with(Some(&fake), Some(provider));
    let id = bosun.start(repo.path(), &["--", "codex", "fix it"]);
    assert!(bosun_testkit::poll::wait_until(PATIENCE, || fake.ran()), "the agent runs");
    bosun.ok(repo.path(), &["kill", &id]);
}

#[test]
fn a_version_that_cannot_be_read_is_a_warning_and_the_agent_starts() {
    let repo = TempRepo::new();
    let fake = Fake::new("claude", "a wrapper of our own", 0, r#"{"loggedIn": true}"#, 0);
    let (bosun, _home) = bosun_with(Some(&fake), None);
    let out = bosun.run(repo.path(), &["agent", "start", "--json", "--", "claude", "fix it"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("cannot read the version of claude") && err.contains("a wrapper of our own"), "{err}");
    assert!(bosun_testkit::poll::wait_until(PATIENCE, || fake.ran()), "the agent runs");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    bosun.ok(repo.path(), &["kill", v["agent"].as_str().unwrap()]);
}

#[test]
fn a_job_whose_agent_runs_a_client_that_is_not_logged_in_is_refused_before_anything_is_made() {
    let fake = Fake::new("claude", "2.1.332 (Claude Code)", 0, CLAUDE_LOGGED_OUT, 1);
    let runbook = r#"
command "fix" {
  run = { agent = "fixer" }
}

agent "fixer" {
  run    = ["claude"]
  prompt = "fix it"
}
"#;
    let repo = repo_with_runbook("fix.hcl", runbook);
    let (bosun, _home) = bosun_with(Some(&fake), None);
    let err = refused(&bosun, &repo, &["run", "fix"]);
    assert!(err.contains("agent \"fixer\" of job") && err.contains("claude is not logged in"), "{err}");
    let jobs = bosun.ok(repo.path(), &["job", "ls", "--json"]);
    assert!(!jobs.contains("\"id\""), "no job recorded: {jobs}");
    assert!(!fake.ran());
}

/// A driver's login check is its own (`AgentDriver::client`): the test-only driver's program,
/// `echo-agent`, is probed as Claude Code and Codex are, refused while it is not logged in, and
/// started once its key is set. Its driver's one file says so; nothing else names it.
#[test]
fn the_test_only_drivers_program_is_refused_by_its_own_login_check_unless_its_key_is_set() {
    let repo = TempRepo::new();
    let fake = Fake::new("echo-agent", "1.0.0", 0, "Not logged in", 1);
    let (bosun, _home) = bosun_with(Some(&fake), None);
    let err = refused(&bosun, &repo, &["agent", "start", "--driver", "echo", "--", "echo-agent"]);
    assert!(err.contains("echo-agent is not logged in") && err.contains("Not logged in"), "{err}");
    assert!(err.contains("echo-agent login") && err.contains("ECHO_KEY"), "says how to fix it: {err}");
    assert!(!fake.ran(), "never started as an agent");
    let id = bosun.start_with(repo.path(), &["--driver", "echo", "--", "echo-agent"], |cmd| {
        cmd.env("ECHO_KEY", "k");
    });
    assert!(bosun_testkit::poll::wait_until(PATIENCE, || fake.ran()), "the agent runs");
    bosun.ok(repo.path(), &["kill", &id]);
}
