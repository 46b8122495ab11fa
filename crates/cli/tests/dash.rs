//! `bosun dash` end to end, in real tmux: the dashboard runs in a session of a tmux server of
//! the test's own (not bosun's), beside a claudeless agent and an echoing one; the test types
//! keys (`send-keys`) and reads the screen (`capture-pane`): both listed, the selection moved
//! between them, a workspace view (its window sized to the panel, its pull request as `gh`
//! tells it), a message typed into each agent and its answer in the panel, a file written in
//! its workspace in the sidebar, the focus moved, back to the list, an agent killed while
//! viewed seen to end; then quit (or `Ctrl+]`, which leaves the dashboard for a full-screen
//! attach) with the terminal restored.

mod support;

use bosun_testkit::poll::wait_for;
use bosun_testkit::screen::Screen;
use support::*;

#[test]
fn the_dashboard_lists_agents_opens_their_workspaces_types_into_them_and_leaves_by_ctrl_bracket() {
    dash_end_to_end("tmux");
}

#[test]
fn the_dashboard_works_the_same_on_agents_in_bosuns_own_session_host_and_quits_with_q() {
    dash_end_to_end("host");
}

fn dash_end_to_end(session: &str) {
    // A `gh` that knows a pull request for any branch (the real one cannot reach a server here).
    let stubs = tempfile::tempdir().unwrap();
    let gh = stubs.path().join("gh");
    std::fs::write(&gh, "#!/bin/sh\necho '{\"number\":7,\"state\":\"OPEN\"}'\n").unwrap();
    std::fs::set_permissions(&gh, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", stubs.path().display(), std::env::var("PATH").unwrap_or_default());
    let bosun = bosun().with_path(path);
    let repo = TempRepo::new();
    // An agent that answers each line it is given.
    let echo = "while read l; do echo \"got: $l\"; done";
    let id = bosun.start(repo.path(), &["--name", "echoer", "--session", session, "--", "sh", "-c", echo]);
    bosun.wait_state(&id, "running");
    // A claudeless agent beside it, newer, so listed first.
    let (cl, sc) = (claudeless(), scenario("chat"));
    let args = claude_args(&cl, &sc, &["--name", "claudy", "--session", session, "--prompt", "hello"]);
    let claudy = bosun.start(repo.path(), &args);
    bosun.wait_state(&claudy, "idle");
    let screen = Screen::bosun(&bosun, "dash", (120, 30), "echo dashboard-gone; sleep 600");

    let list = screen.shows("echoer");
    assert!(list.contains("bosun — 2 agent(s)") && list.contains(&id) && list.contains(&claudy), "{list}");
    assert!(list.find("claudy").unwrap() < list.find("echoer").unwrap(), "the newest first: {list}");
    // The selection moves down to the echoing agent, whose view opens.
    screen.keys(&["j"]);
    let width = || match session {
        "host" => {
            let host = bosun_host::HostClient::new(bosun.state_dir().join("h").join(format!("bosun-{id}")));
            host.status().map(|s| s.cols.to_string()).unwrap_or_default()
        }
        _ => {
            let out = bosun.tmux(&["display-message", "-p", "-t", &format!("=bosun-{id}:"), "#{window_width}"]);
            String::from_utf8_lossy(&out.stdout).trim().to_owned()
        }
    };
    let before = width();
    screen.keys(&["w"]);
    screen.shows("Ctrl+\\:sidebar  Ctrl+]:fullscreen");
    screen.shows(&format!("echoer ({id})"));
    screen.shows("Status: working   ● live");
    screen.shows("PR: #7 open");
    // 70 % of 120 columns, inside the panel's border.
    wait_for(PATIENCE, || (width() == "82").then_some(())).expect("the agent's window fits the panel");

    // Typed into the agent through the panel, answered in it.
    screen.keys(&["-l", "hello dash"]);
    screen.keys(&["Enter"]);
    screen.shows("got: hello dash");

    // A file written in the workspace shows in the sidebar's files, without waiting 10 s.
    let path = bosun.show(&id).workspace.expect("its workspace").path;
    screen.shows("(no changes)");
    std::fs::write(path.join("notes.txt"), "a change\n").unwrap();
    screen.shows("A notes.txt");

    screen.keys(&["C-\\"]);
    screen.shows("Tab:terminal  Esc:dashboard");
    screen.keys(&["Tab"]);
    screen.shows("Ctrl+\\:sidebar");
    screen.keys(&["C-\\"]);
    screen.shows("Tab:terminal");
    screen.keys(&["Escape"]);
    screen.shows("q:quit");
    wait_for(PATIENCE, || (width() == before).then_some(())).expect("its size given back");

    // Up to the claudeless agent: typed into, it answers in the panel; killed from outside
    // while viewed, its session is seen to end.
    screen.keys(&["k"]);
    screen.keys(&["w"]);
    screen.shows(&format!("claudy ({claudy})"));
    screen.keys(&["-l", "ping"]);
    screen.keys(&["Enter"]);
    screen.shows("pong");
    bosun.ok(repo.path(), &["kill", &claudy]);
    let ended = screen.shows("[Session ended]");
    assert!(ended.contains("✗ dead"), "{ended}");
    screen.keys(&["C-\\"]);
    screen.keys(&["Escape"]);
    screen.shows("q:quit");

    if session == "host" {
        screen.keys(&["q"]);
        let after = screen.shows("dashboard-gone");
        assert!(!after.contains("q:quit"), "the dashboard's screen is gone: {after}");
    } else {
        // Ctrl+] leaves the dashboard for the agent's session, full screen; a detach ends there.
        screen.keys(&["j"]);
        screen.keys(&["w"]);
        screen.shows(&format!("echoer ({id})"));
        screen.keys(&["C-]"]);
        screen.until(|shown| shown.contains("got: hello dash") && !shown.contains("Ctrl+\\:sidebar"));
        screen.keys(&["C-b", "d"]);
        let after = screen.shows("dashboard-gone");
        assert!(!after.contains("q:quit"), "no dashboard to come back to: {after}");
    }
    assert_eq!(screen.format("#{alternate_on}"), "0", "the terminal is back from the alternate screen");
}
