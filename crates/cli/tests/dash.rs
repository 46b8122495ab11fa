//! `bosun dash` end to end, in real tmux: the dashboard runs in a session of a tmux server of
//! the test's own (not bosun's), beside an agent; the test types keys (`send-keys`) and reads
//! the screen (`capture-pane`): the agent listed, its workspace view (its window sized to the
//! panel, its pull request as `gh` tells it), a message typed into the agent and its answer in
//! the panel, a file written in its workspace in the sidebar, the focus moved, back to the
//! list, and quit with the terminal restored.

mod support;

use bosun_testkit::poll::wait_for;
use bosun_testkit::screen::Screen;
use support::*;

#[test]
fn the_dashboard_lists_an_agent_opens_its_workspace_types_into_it_and_quits_cleanly() {
    dash_end_to_end("tmux");
}

#[test]
fn the_dashboard_works_the_same_on_an_agent_in_bosuns_own_session_host() {
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
    let screen = Screen::bosun(&bosun, "dash", (120, 30), "echo dashboard-gone; sleep 600");

    let list = screen.shows("echoer");
    assert!(list.contains("bosun — 1 agent(s)") && list.contains(&id), "{list}");
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
    screen.shows("Status: running");
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

    screen.keys(&["q"]);
    let after = screen.shows("dashboard-gone");
    assert!(!after.contains("q:quit"), "the dashboard's screen is gone: {after}");
    assert_eq!(screen.format("#{alternate_on}"), "0", "the terminal is back from the alternate screen");
}
