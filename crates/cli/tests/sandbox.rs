//! `--runtime sandbox`: the agent runs in bubblewrap, writing its workspace (and committing to
//! its branch) but nothing else, with a private /tmp and, with `--no-network`, loopback only;
//! without bubblewrap the start is refused and nothing is made.

mod support;

use bosun_testkit::poll::{wait_for, wait_until};
use bosun_testkit::tools;
use support::*;

/// The network interfaces `/proc/net/dev` lists, as one line.
const INTERFACES: &str = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ' '";

fn interfaces_here() -> String {
    let out = std::process::Command::new("sh").args(["-c", INTERFACES]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn a_sandboxed_agent_writes_its_workspace_and_commits_but_writes_nothing_else() {
    tools::bwrap();
    let bosun = bosun();
    let repo = TempRepo::new();
    // Seen by the sandbox, read-only (the root is); a test's /tmp is not seen at all.
    let visible = tempfile::tempdir_in("/var/tmp").unwrap();
    let hidden = tempfile::tempdir().unwrap();
    std::fs::write(hidden.path().join("secret.txt"), "hidden").unwrap();
    let script = format!(
        "echo in > inside.txt && echo wrote-inside; \
         echo out > {v}/x.txt || echo outside-refused; \
         cat {h}/secret.txt || echo tmp-hidden; \
         git add inside.txt && git commit -qm sandboxed && echo committed; \
         echo script-over; sleep 600",
        v = visible.path().display(),
        h = hidden.path().display()
    );
    let id = bosun.start(repo.path(), &["--runtime", "sandbox", "--", "sh", "-c", &script]);
    let screen = bosun.wait_screen(&id, "script-over");
    for said in ["wrote-inside", "outside-refused", "Read-only file system", "tmp-hidden", "committed"] {
        assert!(screen.contains(said), "{said:?} not on its screen:\n{screen}");
    }
    assert!(!visible.path().join("x.txt").exists(), "nothing written outside");
    let ws = bosun.show(&id).workspace.unwrap();
    assert!(ws.path.join("inside.txt").exists(), "its workspace written");
    let log = repo.git(&["log", "--oneline", ws.kind.branch().unwrap()]);
    assert!(log.contains("sandboxed"), "its commit is on its branch: {log}");
}

#[test]
fn no_network_leaves_the_agent_only_loopback() {
    tools::bwrap();
    let bosun = bosun();
    let repo = TempRepo::new();
    let script = format!("{INTERFACES}; echo; echo listed; sleep 600");
    let cut = bosun.start(repo.path(), &["--runtime", "sandbox", "--no-network", "--", "sh", "-c", &script]);
    let open = bosun.start(repo.path(), &["--runtime", "sandbox", "--", "sh", "-c", &script]);
    let first_line = |id: &str| bosun.wait_screen(id, "listed").lines().next().unwrap_or_default().trim().to_owned();
    assert_eq!(first_line(&cut), "lo", "loopback only");
    assert_eq!(first_line(&open), interfaces_here(), "the machine's network when not cut");
}

#[test]
fn without_bubblewrap_a_sandbox_start_is_refused_and_nothing_is_made() {
    let stubs = tempfile::tempdir().unwrap();
    for tool in ["git", "sh", "sleep"] {
        let found = std::process::Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().unwrap();
        let path = String::from_utf8_lossy(&found.stdout).trim().to_owned();
        std::os::unix::fs::symlink(path, stubs.path().join(tool)).unwrap();
    }
    std::os::unix::fs::symlink(tools::tmux(), stubs.path().join("tmux")).unwrap();
    let bosun = bosun().with_path(stubs.path().display().to_string());
    let repo = TempRepo::new();
    let err = bosun.fails(repo.path(), &["agent", "start", "--runtime", "sandbox", "--", "sleep", "600"]);
    assert!(err.contains("bubblewrap is not installed") && err.contains("apt-get install bubblewrap"), "{err}");
    assert!(bosun.list().agents.is_empty(), "no agent recorded");
    assert!(!repo.git(&["branch", "--list"]).contains("ws-"), "no branch made");
    let err = bosun.fails(repo.path(), &["agent", "start", "--no-network", "--", "sleep", "600"]);
    assert!(err.contains("--no-network applies to --runtime sandbox"), "{err}");
}

/// A sandboxed Claude agent (a script spoken to as one): it writes the config bosun made for it
/// (in its own directory), never the user's it was started with, sees none of the other home
/// directories (the test's own home among them), and leaves work not committed; its fork runs
/// sandboxed too, in a worktree holding that work.
#[test]
fn a_sandboxed_agent_writes_its_own_config_not_the_users_sees_no_other_home_and_its_fork_is_sandboxed() {
    tools::bwrap();
    let bosun = bosun();
    let repo = TempRepo::new();
    let real_home = std::env::var("HOME").expect("a HOME");
    let other = tempfile::Builder::new().prefix(".bosun-test-").tempdir_in(&real_home).unwrap();
    std::fs::write(other.path().join("secret.txt"), "hidden").unwrap();
    let own_home = tempfile::tempdir_in("/var/tmp").unwrap();
    let config = tempfile::tempdir_in("/var/tmp").unwrap();
    std::fs::write(config.path().join("settings.json"), "{\"model\": \"opus\"}\n").unwrap();
    let script = format!(
        "if [ -e mine.txt ]; then echo \"found: $(cat mine.txt)\"; sleep 600; fi; \
         echo noted > \"$CLAUDE_CONFIG_DIR/note.txt\" && echo config-written; \
         grep -q opus \"$CLAUDE_CONFIG_DIR/settings.json\" && echo settings-copied; \
         echo '{{}}' > {c}/settings.json || echo users-config-refused; \
         cat {o}/secret.txt || echo other-home-hidden; \
         echo mine > mine.txt; echo script-over; sleep 600",
        o = other.path().display(),
        c = config.path().display()
    );
    let (home_env, config_env) =
        (format!("HOME={}", own_home.path().display()), format!("CLAUDE_CONFIG_DIR={}", config.path().display()));
    let args = ["--runtime", "sandbox", "--env", &home_env, "--env", &config_env, "--driver", "claude"];
    let mut all = args.to_vec();
    all.extend(["--prompt", "work", "--", "sh", "-c", &script]);
    let id = bosun.start(repo.path(), &all);
    let screen = bosun.wait_screen(&id, "script-over");
    for said in ["config-written", "settings-copied", "users-config-refused", "other-home-hidden"] {
        assert!(screen.contains(said), "{said:?} not on its screen:\n{screen}");
    }
    let own = bosun.agent(&id).dir.join("config");
    assert_eq!(std::fs::read_to_string(own.join("note.txt")).unwrap(), "noted\n", "its own config is written");
    assert!(!config.path().join("note.txt").exists(), "the user's config is not");
    let settings = std::fs::read_to_string(config.path().join("settings.json")).unwrap();
    assert_eq!(settings, "{\"model\": \"opus\"}\n", "the user's settings are as they were");

    let out = bosun.ok(repo.path(), &["fork", &id, "--prompt", "again", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let fork = v["agent"].as_str().unwrap().to_owned();
    bosun.wait_screen(&fork, "found: mine");
    assert_eq!(bosun.agent(&fork).runtime.label(), "sandbox", "the fork runs sandboxed too");
    let (mine, theirs) = (bosun.show(&id).workspace.unwrap().path, bosun.show(&fork).workspace.unwrap().path);
    assert_ne!(mine, theirs, "in a worktree of its own");
    assert!(mine.join("mine.txt").exists(), "the agent forked keeps its work");
}

/// The pids of this machine's processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let line = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&line).contains(marker)
        })
        .collect()
}

/// A sandboxed agent has processes of its own (a namespace of its own: it sees none of this
/// machine's), in either session kind: how its program ended is told (its exit status through
/// bubblewrap), and a kill of its session ends every process in its sandbox, a background one too.
#[test]
fn a_sandboxed_agents_processes_are_its_own_its_exit_is_told_and_a_kill_ends_them_all() {
    tools::bwrap();
    let bosun = bosun();
    let repo = TempRepo::new();
    for session in ["tmux", "host"] {
        let marker = format!("77{}", if session == "tmux" { "1001" } else { "2002" });
        let script = format!(
            "sleep {marker} & echo \"seen: $(ls /proc | grep -c '^[0-9]')\"; echo running; sleep {marker}; exit 0"
        );
        let long = bosun.start(repo.path(), &["--runtime", "sandbox", "--session", session, "--", "sh", "-c", &script]);
        let screen = bosun.wait_screen(&long, "running");
        let seen: usize = screen.split("seen: ").nth(1).and_then(|r| r.lines().next()?.trim().parse().ok()).unwrap();
        assert!(seen < 10, "{session}: it sees this machine's processes ({seen})");
        let ours = wait_for(PATIENCE, || Some(processes_with(&marker)).filter(|p| p.len() >= 2));
        assert!(ours.is_some(), "{session}: its two sleeps run");
        bosun.ok(repo.path(), &["kill", &long]);
        let ended = wait_for(PATIENCE, || processes_with(&marker).is_empty().then_some(()));
        assert!(ended.is_some(), "{session}: its processes outlived its kill: {:?}", processes_with(&marker));

        let crashing =
            bosun.start(repo.path(), &["--runtime", "sandbox", "--session", session, "--", "sh", "-c", "exit 3"]);
        bosun.wait_state(&crashing, "dead(crashed:3)");
    }
}

/// A sandboxed Claude agent's hooks reach the daemon through its own report channel: it goes
/// idle by them; its turn's end, made while no daemon runs, is kept in its own spool and told, as
/// its own, by the next daemon, whose new socket its sandbox then reaches.
#[test]
fn a_sandboxed_claude_agents_hooks_reach_the_daemon_through_its_channel_across_a_restart() {
    use bosun_core::{Event, Source};
    tools::bwrap();
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("tools"));
    let args = ["--runtime", "sandbox", "--no-network", "--prompt", "slow build", "--", &cl, "--scenario", &sc];
    let id = bosun.start(repo.path(), &args);
    let ws = bosun.show(&id).workspace.unwrap().path;
    assert!(wait_until(PATIENCE, || ws.join("tool-started").exists()), "its tool runs");
    assert_eq!(bosun.agent(&id).state.label(), "running");
    let by_hook = |events: &[Event]| {
        let own = |a: &bosun_core::AgentId| a.to_string() == id;
        events.iter().any(|e| matches!(e, Event::AgentObserved { id: a, source: Source::Hook, .. } if own(a)))
    };
    assert!(by_hook(&bosun.events()), "its hooks reached the daemon from inside the sandbox");

    bosun.kill_daemon_hard();
    let spool = bosun.state_dir().join(format!("reports/{id}/spool/hooks.spool"));
    let kept = wait_for(PATIENCE, || std::fs::read_to_string(&spool).ok().filter(|s| s.contains("Stop")));
    assert!(kept.is_some(), "its Stop, made while no daemon ran, was kept in its own spool");
    bosun.list(); // a new daemon
    bosun.wait_state(&id, "idle");
    assert!(!spool.exists(), "the spool was told and dropped");

    let before = bosun.events().len();
    bosun.ok(repo.path(), &["send", &id, "anything"]);
    bosun.wait_screen(&id, "Understood.");
    let heard = wait_for(PATIENCE, || by_hook(&bosun.events()[before..]).then_some(()));
    assert!(heard.is_some(), "its hooks reach the new daemon's socket through its channel");
}

/// A sandboxed Claude agent (claudeless) keeps its conversation in the config bosun made for it,
/// never in the user's: killed, it is resumed there, into the same conversation, and the
/// user's config holds none of it.
#[test]
fn a_sandboxed_claude_agent_killed_is_resumed_into_its_conversation_kept_in_its_own_config() {
    tools::bwrap();
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("chat"));
    let args = ["--runtime", "sandbox", "--no-network", "--prompt", "hello", "--on-dead", "resume:ping"];
    let id = bosun.start(repo.path(), &claude_args(&cl, &sc, &args));
    bosun.wait_state(&id, "idle");
    let log = wait_for(PATIENCE, || bosun.agent(&id).log).expect("its transcript is known from its hooks");
    let own = bosun.agent(&id).dir.join("config");
    assert!(log.starts_with(own.join("projects")), "its transcript is in its own config: {}", log.display());
    let before = std::fs::read_to_string(&log).unwrap().lines().count();

    let pid = bosun.agent(&id).pid.expect("its pid");
    assert!(std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap().success());
    let resumed = wait_for(PATIENCE, || Some(bosun.agent(&id)).filter(|a| a.restarts == 1 && a.state.is_up()));
    let agent = resumed.unwrap_or_else(|| panic!("not resumed: {:#?}\n{}", bosun.show(&id), bosun.log()));
    assert_eq!(agent.runtime.label(), "sandbox (no network)");
    bosun.wait_screen(&id, "pong");
    let grew = wait_until(PATIENCE, || std::fs::read_to_string(&log).unwrap().lines().count() > before);
    assert!(grew, "its conversation goes on in the same transcript");
    assert!(std::fs::read_to_string(&log).unwrap().contains("\"ping\""), "the resume's message went into it");
    let users: Vec<_> = std::fs::read_dir(bosun.claude_config()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(users.is_empty(), "the user's config holds nothing of it: {users:?}");
}

/// The test-only driver's program keeps a config of its own (`ECHO_CONFIG_DIR`), which its
/// driver's one file describes: sandboxed, its agent is pointed at a config bosun made of the
/// user's (its `login` copied, its `settings` the user's with its workspace trusted), writes that
/// one, and cannot write the user's.
#[test]
fn a_sandboxed_test_only_drivers_agent_gets_the_own_config_its_driver_describes() {
    tools::bwrap();
    let bosun = bosun();
    let repo = TempRepo::new();
    let config = tempfile::tempdir_in("/var/tmp").unwrap();
    std::fs::write(config.path().join("login"), "token-1\n").unwrap();
    std::fs::write(config.path().join("settings"), "theme dark\n").unwrap();
    let script = format!(
        "[ \"$ECHO_CONFIG_DIR\" != {c} ] && echo pointed-elsewhere; \
         grep -q token-1 \"$ECHO_CONFIG_DIR/login\" && echo login-copied; \
         grep -q 'theme dark' \"$ECHO_CONFIG_DIR/settings\" && grep -q \"trust $PWD\" \"$ECHO_CONFIG_DIR/settings\" \
         && echo settings-made; \
         echo noted > \"$ECHO_CONFIG_DIR/note\" && echo config-written; \
         echo x > {c}/login || echo users-config-refused; \
         echo script-over; sleep 600",
        c = config.path().display()
    );
    let config_env = format!("ECHO_CONFIG_DIR={}", config.path().display());
    let args = ["--runtime", "sandbox", "--env", &config_env, "--driver", "echo", "--", "sh", "-c", &script];
    let id = bosun.start(repo.path(), &args);
    let screen = bosun.wait_screen(&id, "script-over");
    for said in ["pointed-elsewhere", "login-copied", "settings-made", "config-written", "users-config-refused"] {
        assert!(screen.contains(said), "{said:?} not on its screen:\n{screen}");
    }
    let own = bosun.agent(&id).dir.join("config");
    assert_eq!(std::fs::read_to_string(own.join("note")).unwrap(), "noted\n", "its own config is written");
    assert_eq!(std::fs::read_to_string(config.path().join("login")).unwrap(), "token-1\n", "the user's is not");
    assert!(!config.path().join("note").exists());
}
