//! `Tmux` against real tmux, each test on a private server that dies with it, with claudeless as
//! the agent where one is needed.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bosun_adapters::{AdapterError, Sessions, SpawnSpec, Tmux};
use bosun_core::{ExitStatus, SessionName, SessionSeen};
use bosun_testkit::poll::{wait_for, wait_until};
use bosun_testkit::tools::{claudeless, TmuxServer};

const TIMEOUT: Duration = Duration::from_secs(10);
const AGENT_TIMEOUT: Duration = Duration::from_secs(30);

fn name(s: &str) -> SessionName {
    SessionName::from_reported(s)
}

fn argv(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_owned()).collect()
}

fn spawn(
    tmux: &Tmux,
    session: &SessionName,
    cwd: &Path,
    env: &BTreeMap<String, String>,
    command: &[&str],
) -> Option<u32> {
    let command = argv(command);
    tmux.spawn(SpawnSpec::here(session, cwd, env, &command)).expect("spawn")
}

fn seen(tmux: &Tmux, session: &SessionName) -> Option<SessionSeen> {
    tmux.list().expect("list").into_iter().find(|s| &s.session == session)
}

/// The session's exit status, once tmux reports its process dead with a code or a signal.
fn wait_for_exit(tmux: &Tmux, session: &SessionName) -> ExitStatus {
    let known = |e: &ExitStatus| e.code.is_some() || e.signal.is_some();
    wait_for(TIMEOUT, || seen(tmux, session).and_then(|s| s.exit).filter(known))
        .unwrap_or_else(|| panic!("{session} did not exit: {:?}", seen(tmux, session)))
}

/// Waits for `line` in the hook log. Calls `list` meanwhile, as the daemon's slow poll does:
/// tmux before 3.5 can miss a pane's exit, and `list` makes it notice (and fire the hook).
fn wait_for_hook(tmux: &Tmux, log: &Path, line: &str) {
    let fired = wait_until(TIMEOUT, || {
        tmux.list().expect("list");
        read(log).lines().any(|l| l == line)
    });
    assert!(fired, "no {line:?} in hooks.log: {:?}", read(log));
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn spawn_returns_the_pid_and_list_shows_the_session_alive() {
    let server = TmuxServer::new();
    let tmux = server.tmux();
    let s = name("alive");
    let pid = spawn(tmux, &s, server.dir(), &BTreeMap::new(), &["sleep", "600"]).expect("a pid");
    assert!(Path::new(&format!("/proc/{pid}")).exists(), "process {pid} is not running");
    assert_eq!(seen(tmux, &s), Some(SessionSeen { session: s.clone(), pid: Some(pid), exit: None }));
}

#[test]
fn an_exit_code_shows_in_list() {
    let server = TmuxServer::new();
    let s = name("exits");
    spawn(server.tmux(), &s, server.dir(), &BTreeMap::new(), &["sh", "-c", "exit 3"]);
    assert_eq!(wait_for_exit(server.tmux(), &s), ExitStatus { code: Some(3), signal: None });
}

#[test]
fn a_message_typed_into_a_pane_whose_program_ended_is_not_delivered() {
    let server = TmuxServer::new();
    let s = name("ended");
    spawn(server.tmux(), &s, server.dir(), &BTreeMap::new(), &["sh", "-c", "exit 0"]);
    wait_for_exit(server.tmux(), &s);
    // The pane is kept (remain-on-exit) and takes keys, but nothing reads them.
    let err = server.tmux().send_text(&s, "hello").expect_err("not delivered");
    assert!(matches!(&err, AdapterError::NoSession(m) if m.contains("ended")), "{err:?}");
}

#[test]
fn a_killing_signal_shows_in_list() {
    let server = TmuxServer::new();
    let s = name("signalled");
    spawn(server.tmux(), &s, server.dir(), &BTreeMap::new(), &["sh", "-c", "kill -9 $$"]);
    assert_eq!(wait_for_exit(server.tmux(), &s), ExitStatus { code: None, signal: Some(9) });
}

#[test]
fn spawn_is_idempotent_on_an_existing_name() {
    let server = TmuxServer::new();
    let tmux = server.tmux();
    let s = name("twice");
    let first = spawn(tmux, &s, server.dir(), &BTreeMap::new(), &["sleep", "600"]);
    let second = spawn(tmux, &s, server.dir(), &BTreeMap::new(), &["sleep", "700"]);
    assert!(first.is_some());
    assert_eq!(first, second);
    assert_eq!(tmux.list().expect("list").len(), 1);
}

#[test]
fn env_and_cwd_reach_a_session_on_an_already_running_server() {
    let server = TmuxServer::new();
    let tmux = server.tmux();
    spawn(tmux, &name("first"), server.dir(), &BTreeMap::new(), &["sleep", "600"]);
    let cwd = server.dir().join("work");
    fs::create_dir(&cwd).expect("mkdir");
    let env = BTreeMap::from([("BOSUN_TEST_VALUE".to_owned(), "it's here".to_owned())]);
    let script = r#"printf '%s' "$BOSUN_TEST_VALUE" > out.txt"#;
    spawn(tmux, &name("second"), &cwd, &env, &["sh", "-c", script]);
    let out = cwd.join("out.txt");
    assert!(wait_until(TIMEOUT, || read(&out) == "it's here"), "out.txt holds {:?}", read(&out));
}

#[test]
fn capture_trims_trailing_blank_lines_and_keeps_colours_when_asked() {
    let server = TmuxServer::new();
    let tmux = server.tmux();
    let s = name("screen");
    let script = r"printf 'plain\n\033[31mred\033[0m\n'; sleep 600";
    spawn(tmux, &s, server.dir(), &BTreeMap::new(), &["sh", "-c", script]);
    let screen = wait_for(TIMEOUT, || {
        let screen = tmux.capture(&s, false).expect("capture");
        screen.contains("red").then_some(screen)
    })
    .expect("the output appears");
    assert_eq!(screen, "plain\nred");
    let coloured = tmux.capture(&s, true).expect("capture with colours");
    assert!(coloured.contains("\u{1b}[31mred"), "{coloured:?}");
}

#[test]
fn send_text_prompts_claudeless_and_capture_shows_the_answer() {
    let server = TmuxServer::new();
    let tmux = server.tmux();
    let dir = server.dir();
    let scenario = dir.join("scenario.toml");
    let scenario_text = "[claude]\ntrusted = true\n\n[[responses]]\non = { contains = \"ping\" }\nsay = \"pong\"\n";
    fs::write(&scenario, scenario_text).expect("write scenario");
    let config_dir = dir.join("claude");
    fs::create_dir(&config_dir).expect("mkdir");
    let env = BTreeMap::from([("CLAUDE_CONFIG_DIR".to_owned(), config_dir.display().to_string())]);
    let program: PathBuf = claudeless();
    let (program, scenario) = (program.display().to_string(), scenario.display().to_string());
    let s = name("agent");
    spawn(tmux, &s, dir, &env, &[&program, "--scenario", &scenario]);

    let ready = wait_until(AGENT_TIMEOUT, || tmux.capture(&s, false).is_ok_and(|sc| sc.contains('❯')));
    assert!(ready, "claudeless shows no input line:\n{}", tmux.capture(&s, false).unwrap_or_default());
    tmux.send_text(&s, "say ping").expect("send_text");
    let answered = wait_until(AGENT_TIMEOUT, || tmux.capture(&s, false).is_ok_and(|sc| sc.contains("pong")));
    assert!(answered, "no answer on screen:\n{}", tmux.capture(&s, false).unwrap_or_default());
}

#[test]
fn kill_removes_exactly_that_session_and_a_missing_one_is_ok() {
    let server = TmuxServer::new();
    let tmux = server.tmux();
    let (short, long) = (name("job"), name("job-2"));
    spawn(tmux, &long, server.dir(), &BTreeMap::new(), &["sleep", "600"]);
    spawn(tmux, &short, server.dir(), &BTreeMap::new(), &["sleep", "600"]);
    tmux.kill(&short).expect("kill");
    assert!(seen(tmux, &short).is_none());
    assert!(seen(tmux, &long).is_some(), "killing {short} also killed {long}");
    tmux.kill(&short).expect("killing it again");
    tmux.kill(&name("never-was")).expect("killing a missing session");
    assert!(matches!(tmux.send_text(&short, "hi"), Err(AdapterError::NoSession(_))));
    assert!(matches!(tmux.capture(&name("jo"), false), Err(AdapterError::NoSession(_))));
}

#[test]
fn no_server_means_no_sessions() {
    let server = TmuxServer::new();
    let tmux = server.tmux();
    assert_eq!(tmux.list().expect("list"), Vec::new());
    tmux.kill(&name("any")).expect("kill without a server");
    assert!(!server.socket().exists(), "a server was started");
}

/// A server that holds no session answers "no current target" rather than "can't find session"
/// (one that a `new-session` has just started is like that for a moment): the session is gone.
#[test]
fn a_server_holding_no_session_has_none_to_kill() {
    let server = TmuxServer::new();
    let tmux = server.tmux();
    let status = std::process::Command::new(bosun_testkit::tools::tmux())
        .arg("-S")
        .arg(server.socket())
        .args(["-f", "/dev/null", "start-server", ";", "set", "-g", "exit-empty", "off"])
        .status()
        .expect("run tmux");
    assert!(status.success(), "an empty server did not start");
    assert!(server.socket().exists(), "no server is listening");
    tmux.kill(&name("any")).expect("kill on an empty server");
    assert!(matches!(tmux.capture(&name("any"), false), Err(AdapterError::NoSession(_))));
}

#[test]
fn check_available_fails_for_a_missing_program() {
    let server = TmuxServer::new();
    server.tmux().check_available().expect("tmux is available");
    let missing = server.tmux().clone().with_program(server.dir().join("no-such-tmux"));
    assert!(matches!(missing.check_available(), Err(AdapterError::TmuxMissing(_))));
    assert!(matches!(missing.list(), Err(AdapterError::TmuxMissing(_))));
}

/// A hook prefix that appends its arguments, each in brackets, as one line to `log`. Its first
/// argument holds a `#`, which tmux must not take for a format.
fn logging_prefix(log: &Path) -> String {
    format!(r#"sh -c 'printf "[%s]" "$@" >> {0}; echo >> {0}' hook 'a#b'"#, log.display())
}

#[test]
fn hooks_set_on_a_running_server_report_an_exit_code_and_the_closing() {
    let server = TmuxServer::new();
    let tmux = server.tmux();
    spawn(tmux, &name("before"), server.dir(), &BTreeMap::new(), &["sleep", "600"]);
    let log = server.dir().join("hooks.log");
    tmux.write_config(Some(&logging_prefix(&log))).expect("write_config");

    let s = name("hooked");
    spawn(tmux, &s, server.dir(), &BTreeMap::new(), &["sh", "-c", "exit 3"]);
    wait_for_hook(tmux, &log, "[a#b][pane-died][hooked][3][]");
    tmux.kill(&s).expect("kill");
    wait_for_hook(tmux, &log, "[a#b][session-closed][hooked]");
}

#[test]
fn hooks_configured_before_the_server_starts_report_a_signal() {
    let server = TmuxServer::new();
    let tmux = server.tmux();
    let log = server.dir().join("hooks.log");
    tmux.write_config(Some(&logging_prefix(&log))).expect("write_config");
    spawn(tmux, &name("killed"), server.dir(), &BTreeMap::new(), &["sh", "-c", "kill -9 $$"]);
    wait_for_hook(tmux, &log, "[a#b][pane-died][killed][][9]");
}

#[test]
fn attach_command_targets_the_session_exactly_on_bosuns_socket() {
    let server = TmuxServer::new();
    let command = server.tmux().attach_command(&name("x"));
    assert_eq!(command[1..], argv(&["-S", &server.socket().display().to_string(), "attach-session", "-t", "=x"]));
}

#[test]
fn a_sessions_output_is_copied_to_its_output_file_from_the_first_byte() {
    let server = TmuxServer::new();
    let output = server.dir().join("out dir's").join("output.log");
    std::fs::create_dir_all(output.parent().unwrap()).unwrap();
    let session = SessionName::from_reported("piped");
    let command: Vec<String> = ["sh", "-c", "echo first words; exec sleep 60"].map(String::from).to_vec();
    let env = BTreeMap::new();
    let spec = SpawnSpec {
        session: &session,
        cwd: server.dir(),
        env: &env,
        command: &command,
        output: Some(&output),
        backend: Default::default(),
        place: &bosun_core::Place::Here,
        files: &[],
        channel: None,
    };
    server.tmux().spawn(spec).expect("spawn");
    let copied = wait_for(Duration::from_secs(10), || {
        std::fs::read_to_string(&output).ok().filter(|t| t.contains("first words"))
    });
    assert!(copied.is_some(), "output copied");
}

#[test]
fn a_session_started_just_as_the_last_one_ends_still_starts() {
    // Ending the last session makes the server exit; a start racing that exit must still work.
    let server = TmuxServer::new();
    let env = BTreeMap::new();
    let command: Vec<String> = ["sleep", "60"].map(String::from).to_vec();
    for i in 0..20 {
        let old = SessionName::from_reported(&format!("old-{i}"));
        let new = SessionName::from_reported(&format!("new-{i}"));
        let spec = |s| SpawnSpec::here(s, server.dir(), &env, &command);
        server.tmux().spawn(spec(&old)).expect("spawn old");
        server.tmux().kill(&old).expect("kill old");
        server.tmux().spawn(spec(&new)).expect("spawn new as the server winds down");
        server.tmux().kill(&new).expect("kill new");
    }
}

#[test]
fn a_path_with_tmux_formats_in_it_is_only_a_path() {
    let server = TmuxServer::new();
    let trap = tempfile::tempdir().unwrap();
    let pwned = trap.path().join("pwned");
    // A directory whose name tmux would run as a command, or expand, were it a format.
    let cwd = server.dir().join(format!("w.#(touch {}).#{{session_name}}", pwned.display()));
    fs::create_dir_all(&cwd).unwrap();
    let output = cwd.join("output.log");
    let session = name("bosun-fmt");
    let command = argv(&["sh", "-c", "pwd > where.txt; echo printed-line; exec sleep 30"]);
    let spec = SpawnSpec {
        session: &session,
        cwd: &cwd,
        env: &BTreeMap::new(),
        command: &command,
        output: Some(&output),
        backend: Default::default(),
        place: &bosun_core::Place::Here,
        files: &[],
        channel: None,
    };
    server.tmux().spawn(spec).expect("spawn");
    let wrote = wait_for(TIMEOUT, || fs::read_to_string(cwd.join("where.txt")).ok());
    assert_eq!(wrote.as_deref().map(str::trim), Some(cwd.to_str().unwrap()), "it runs in that very directory");
    server.tmux().send_text(&session, "echo typed-line").expect("send");
    assert!(
        wait_until(TIMEOUT, || fs::read_to_string(&output).is_ok_and(|t| t.contains("typed-line"))),
        "its output goes to the path as named"
    );
    assert!(!pwned.exists(), "a format in a path ran a command");
}

#[test]
fn pressed_keys_reach_the_program_as_a_terminal_sends_them() {
    use bosun_core::TermKey;
    let server = TmuxServer::new();
    let tmux = server.tmux();
    let s = name("keys");
    // `cat -v` shows each byte as it comes, once the terminal hands them over raw.
    let script = "stty raw -echo; echo ready; cat -v";
    spawn(tmux, &s, server.dir(), &BTreeMap::new(), &["sh", "-c", script]);
    let ready = wait_until(TIMEOUT, || tmux.capture(&s, false).is_ok_and(|t| t.contains("ready")));
    assert!(ready, "the program is ready: {:?}", tmux.capture(&s, false));
    let keys = [TermKey::Alt('x'), TermKey::F(5), TermKey::Delete, TermKey::PageUp, TermKey::Text("|".into())];
    tmux.press(&s, &keys).expect("press");
    let shown = wait_for(TIMEOUT, || tmux.capture(&s, false).ok().filter(|t| t.contains('|')))
        .unwrap_or_else(|| panic!("the keys reached the program: {:?}", tmux.capture(&s, false)));
    assert!(shown.contains("^[x^[[15~^[[3~^[[5~|"), "{shown}");
}

#[test]
fn a_session_never_starts_in_an_empty_relative_or_missing_directory() {
    let server = TmuxServer::new();
    let gone = server.dir().join("gone");
    let command = argv(&["sh", "-c", "pwd > started-nowhere.txt; exec sleep 30"]);
    for (cwd, why) in [
        (Path::new(""), "it is empty"),
        (Path::new("relative/dir"), "it is not an absolute path"),
        (gone.as_path(), "it is not a directory"),
    ] {
        let session = name("bosun-nowhere");
        let spec = SpawnSpec {
            session: &session,
            cwd,
            env: &BTreeMap::new(),
            command: &command,
            output: None,
            backend: Default::default(),
            place: &bosun_core::Place::Here,
            files: &[],
            channel: None,
        };
        let refused = server.tmux().spawn(spec);
        assert!(matches!(&refused, Err(AdapterError::BadCwd { why: w, .. }) if *w == why), "{cwd:?}: {refused:?}");
        assert!(seen(server.tmux(), &session).is_none(), "no session started for {cwd:?}");
    }
    assert!(!Path::new("started-nowhere.txt").exists(), "nothing ran in the test's own directory");
}
