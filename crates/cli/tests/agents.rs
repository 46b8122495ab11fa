//! An agent's life through the CLI, against real git, real tmux and claudeless.

mod support;

use support::*;

#[test]
fn an_agent_writes_a_file_through_a_tool_call_into_its_worktree_and_nowhere_else() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("writer"));
    let id = bosun.start(repo.path(), &["--name", "writer", "--", &cl, "--scenario", &sc, "-p", "write the notes"]);
    bosun.wait_state(&id, "dead(completed)");

    let detail = bosun.show(&id);
    let ws = detail.workspace.expect("workspace");
    let notes = std::fs::read_to_string(ws.path.join("NOTES.md")).expect("NOTES.md in the worktree");
    assert!(notes.starts_with("# Plan"), "{notes}");
    assert!(find_files(repo.path(), "NOTES.md").is_empty(), "nothing in the repository's own checkout");
    assert_eq!(find_files(bosun.state_dir(), "NOTES.md"), vec![ws.path.join("NOTES.md")]);
    assert_eq!(repo.git(&["status", "--porcelain"]), "", "the main checkout is untouched");
    let dirty = bosun_testkit::poll::wait_until(PATIENCE, || {
        bosun.show(&id).workspace.is_some_and(|w| w.state == bosun_core::WorkspaceState::Dirty)
    });
    assert!(dirty, "the new file makes the workspace dirty once it is checked");
}

#[test]
fn send_delivers_a_prompt_that_claudeless_answers_and_peek_shows_the_answer() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("chat"));
    let id = bosun.start(repo.path(), &["--", &cl, "--scenario", &sc]);
    bosun.wait_state(&id, "idle");
    let before = bosun.wait_screen(&id, "for shortcuts");
    assert!(!before.contains("pong"), "no answer before the prompt:\n{before}");

    let out = bosun.ok(repo.path(), &["send", &id[..4], "ping", "please"]);
    assert!(out.starts_with("delivered"), "{out}");
    let screen = bosun.wait_screen(&id, "pong");
    assert!(screen.contains("ping please"), "the prompt shows too:\n{screen}");
    let messages = bosun.show(&id).messages;
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].state, bosun_core::MessageState::Delivered);
}

#[test]
fn kill_gives_dead_killed_and_ends_the_session() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("chat"));
    let id = bosun.start(repo.path(), &["--", &cl, "--scenario", &sc]);
    bosun.wait_up(&id);
    assert_eq!(bosun.sessions(), vec![format!("bosun-{id}")]);

    let out = bosun.ok(repo.path(), &["kill", &id]);
    assert_eq!(out.trim(), format!("{id} dead(killed)"));
    assert_eq!(bosun.agent(&id).state.label(), "dead(killed)");
    assert!(bosun.sessions().is_empty(), "session gone: {:?}", bosun.sessions());
    let err = bosun.fails(repo.path(), &["kill", &id]);
    assert!(err.contains("already dead(killed)"), "{err}");
}

#[test]
fn a_command_that_exits_with_3_gives_crashed_3() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = bosun.start(repo.path(), &["--", "sh", "-c", "exit 3"]);
    let agent = bosun.wait_state(&id, "dead(crashed:3)");
    assert_eq!(agent.state, bosun_core::SessionState::Dead { reason: bosun_core::DeathReason::Crashed { code: 3 } });
}

#[test]
fn a_dead_agents_last_screen_stays_readable() {
    let bosun = bosun();
    let repo = TempRepo::new();
    // tmux 3.3 drops the output of a process that exits the instant it writes; this agent, like
    // a real one, lives a moment after its last words.
    let id = bosun.start(repo.path(), &["--", "sh", "-c", "echo last words; sleep 0.2; exit 1"]);
    bosun.wait_state(&id, "dead(crashed:1)");
    let screen = bosun.ok(repo.path(), &["peek", &id]);
    assert!(screen.contains("last words"), "{screen}");
}

#[test]
fn a_command_that_exits_0_completes_and_its_clean_workspace_is_ready() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = bosun.start(repo.path(), &["--", "true"]);
    bosun.wait_state(&id, "dead(completed)");
    let ok = support::PATIENCE;
    let ready = bosun_testkit::poll::wait_until(ok, || {
        bosun.show(&id).workspace.is_some_and(|w| w.state == bosun_core::WorkspaceState::Ready)
    });
    assert!(ready, "workspace not ready: {:?}", bosun.show(&id).workspace);
}

#[test]
fn the_agent_gets_the_callers_environment_and_extra_env() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = bosun.start(
        repo.path(),
        &[
            "--env",
            "GREETING=hello there",
            "--",
            "sh",
            "-c",
            "echo \"$GREETING/$BOSUN_AGENT_ID/$CLAUDE_CONFIG_DIR\" > env.txt",
        ],
    );
    bosun.wait_state(&id, "dead(completed)");
    let path = bosun.show(&id).workspace.expect("workspace").path.join("env.txt");
    let text = std::fs::read_to_string(path).expect("env.txt");
    assert_eq!(text.trim(), format!("hello there/{id}/{}", bosun.claude_config().display()));
}

#[test]
fn ls_and_show_report_agents_and_workspaces_by_unique_prefix() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = bosun.start(repo.path(), &["--name", "lister", "--branch", "feature/x", "--", "sleep", "600"]);
    bosun.wait_state(&id, "running");
    let text = bosun.ok(repo.path(), &["ls"]);
    assert!(
        text.contains(&id) && text.contains("lister") && text.contains("running") && text.contains("feature/x"),
        "{text}"
    );
    let list = bosun.list();
    assert_eq!(list.agents.len(), 1);
    assert_eq!(list.workspaces.len(), 1);
    assert_eq!(list.workspaces[0].branch(), Some("feature/x"));
    let shown = bosun.ok(repo.path(), &["show", &id[..3]]);
    assert!(shown.contains("feature/x") && shown.contains("sleep 600"), "{shown}");
    let shown = bosun.ok(repo.path(), &["show", "lister"]);
    assert!(shown.contains(&id), "{shown}");
}

#[test]
fn attach_puts_a_terminal_in_the_agents_session_even_from_inside_tmux() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("chat"));
    let id = bosun.start(repo.path(), &["--", &cl, "--scenario", &sc, "say ping"]);
    bosun.wait_screen(&id, "pong");

    // A terminal of the user's own: a pane on another tmux server, where $TMUX is set.
    let outer = bosun_testkit::tools::TmuxServer::new();
    let socket = outer.socket().display().to_string();
    let tmux = |args: &[&str]| {
        std::process::Command::new(bosun_testkit::tools::tmux())
            .args(["-S", &socket])
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("tmux")
    };
    let state = format!("BOSUN_STATE_DIR={}", bosun.state_dir().display());
    let bin = bosun.bin().display().to_string();
    let started =
        tmux(&["new-session", "-d", "-s", "user", "-x", "120", "-y", "40", "-e", &state, &bin, "attach", &id]);
    assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));
    let seen = bosun_testkit::poll::wait_for(PATIENCE, || {
        let screen = String::from_utf8_lossy(&tmux(&["capture-pane", "-p", "-t", "user"]).stdout).into_owned();
        screen.contains("pong").then_some(screen)
    });
    assert!(seen.is_some(), "the user's terminal shows the agent's screen");
    let clients = bosun.tmux(&["list-clients", "-F", "#{session_name}"]);
    assert_eq!(String::from_utf8_lossy(&clients.stdout).trim(), format!("bosun-{id}"), "one client, on the agent");
}

#[test]
fn the_output_log_rotates_at_its_limit_and_show_says_where_it_is() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let started = bosun.command(repo.path(), &["daemon", "start"]).env("BOSUN_OUTPUT_LOG_MAX", "4096").output();
    assert!(started.unwrap().status.success());
    let script = "i=0; while [ $i -lt 400 ]; do echo line-$i-xxxxxxxxxxxxxxxxxxxxxxxx; i=$((i+1)); done; \
                  echo FINISHED; exec sleep 600";
    let id = bosun.start(repo.path(), &["--", "sh", "-c", script]);
    let show = bosun.ok(repo.path(), &["show", &id]);
    let log = show.lines().find_map(|l| l.strip_prefix("output     ")).expect("show names the output log");
    let log = std::path::PathBuf::from(log.trim());
    let rotated = bosun_testkit::poll::wait_until(PATIENCE, || {
        std::fs::read_to_string(&log).is_ok_and(|t| t.contains("FINISHED"))
            && bosun_adapters::output_log::previous(&log).exists()
    });
    assert!(rotated, "no rotation: {:?}", std::fs::metadata(&log));
    assert!(std::fs::metadata(&log).unwrap().len() <= 4096);
    assert!(std::fs::metadata(bosun_adapters::output_log::previous(&log)).unwrap().len() <= 4096);
    bosun.ok(repo.path(), &["kill", &id]);
}
