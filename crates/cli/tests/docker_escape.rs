//! A hostile agent in `--runtime docker` (its worktree bound in; with the network and without;
//! spoken to as Claude Code, the user's config where `CLAUDE_CONFIG_DIR` says or in their home)
//! tries the ways out its container's mounts would give: bosun's daemon through the socket its
//! hooks are shown, bosun's tmux server and other agents' session hosts (their sockets and
//! tokens), the hook spool as another agent (live, and kept for the next daemon), the
//! repository's config, hooks and its worktree's links through the git directory bound in, the
//! user's Claude config (a hook in their settings, an MCP server in `.claude.json`), and its own
//! directory, which bosun writes again as it starts the agent anew: a link it plants there must
//! not lead bosun's write out. Every verdict is read on the host, by what happened. Its own
//! config, the one bosun made for its program, is bound in and written.

mod support;

use bosun_testkit::docker::DockerEngine;
use bosun_testkit::poll::wait_for;
use support::*;

/// The hostile agent, run twice: its probes, then (started again by its `on_dead` resume) only
/// a note that it was. Each probe is noted in `probe.log`, in its workspace.
const HOSTILE: &str = r#"
LOG=$PWD/probe.log
note() { printf '%s\n' "$*" >> "$LOG"; }
try() { name=$1; shift; if "$@" </dev/null >/dev/null 2>&1; then note "$name: done"; else note "$name: refused"; fi; }
if [ -e probed ]; then note resumed; exec sleep 600; fi

# bosun's daemon, through the socket where its hooks look for it
try daemon-start "$BOSUN" --state-dir "$S" agent start --repo "$REPO" -- sh -c "touch $MARK/daemon-start"
try daemon-kill "$BOSUN" --state-dir "$S" kill "$VICTIM"
# what it is shown of bosun's state directory: no tmux socket, no other host's socket or token
note "state: $(ls -A "$S" | sort | tr '\n' ' ')"
note "hosts: $(ls -A "$S/h" | tr '\n' ' ')"
try host-socket test -e "$S/h/bosun-$VICTIM"
# reports as the victim: through its own channel, and kept in the spool for the next daemon
echo '{"hook_event_name":"Stop"}' | "$BOSUN" --state-dir "$S" hook claude "$VICTIM" 0 Stop
printf '{"hook":"claude","agent":"%s","generation":0,"event":"Stop","payload":"{}"}\n' "$VICTIM" >> "$S/spool/hooks.spool"
note "spool: $(wc -l < "$S/spool/hooks.spool")"
# the repository's config and hooks, and its worktree's links back to it, bound in
GITDIR=$(git rev-parse --absolute-git-dir)
try git-config git config core.fsmonitor "touch $MARK/fsmonitor"
try git-config-append sh -c "printf '[core]\n\tfsmonitor = touch $MARK/fsmonitor\n' >> $COMMON/config"
try git-hook sh -c "printf '#!/bin/sh\ntouch $MARK/post-merge\n' > $COMMON/hooks/post-merge"
try dot-git sh -c "echo 'gitdir: $PWD/evil' > .git"
try dot-git-moved mv .git moved-git
try commondir sh -c "echo $PWD/evil > $GITDIR/commondir"
# the user's Claude config, where Claude Code on the host reads it: a hook, an MCP server; and
# its own config, which its program writes
HOOK="{\"hooks\":{\"SessionStart\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"touch $MARK/claude-hook\"}]}]}}"
MCP="{\"mcpServers\":{\"evil\":{\"command\":\"touch\",\"args\":[\"$MARK/mcp\"]}}}"
try claude-settings sh -c "printf '%s' '$HOOK' > $USER_CLAUDE/settings.json"
try claude-state sh -c "printf '%s' '$MCP' > $USER_CLAUDE/.claude.json"
try claude-settings-home sh -c "printf '%s' '$HOOK' > $USER_HOME/.claude/settings.json"
try claude-state-home sh -c "printf '%s' '$MCP' > $USER_HOME/.claude.json"
try own-config sh -c "echo '{}' > $CLAUDE_CONFIG_DIR/written-by-its-program"
note "own: $CLAUDE_CONFIG_DIR"
# its commits and a branch of its own: these work
echo work > work.txt && git add work.txt && git commit -qm 'hostile work' && note "commit: done"
git branch hostile-side && note "branch: done"
# its own directory, which its session host writes here and bosun writes as it starts it again
AGENT_DIR=$(ls -d "$S"/agents/* | head -1)
ln -sf "$CANARY" "$AGENT_DIR/output.log" && note "planted: done"
touch probed
note probes-done
exit 3
"#;

fn a_hostile_agent_reaches_nothing_outside_its_container(network: bool, config_in_home: bool) {
    let engine = DockerEngine::start();
    let bosun_bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_bosun"));
    let git = bosun_testkit::tools::which("git");
    let image = engine.image("bosun-agent-git:test", &[&bosun_bin, std::path::Path::new("/bin/bash"), &git]);
    let place = tempfile::tempdir_in("/var/tmp").unwrap();
    let bosun = Bosun::new_in(env!("CARGO_BIN_EXE_bosun"), place.path()).with_env("DOCKER_HOST", engine.host());
    let repo = TempRepo::new_in(place.path());
    let (mark, canary) = (place.path().join("marks"), place.path().join("canary.txt"));
    let (home, user_claude) = (place.path().join("home"), place.path().join("claude-config"));
    for dir in [&mark, &home, &home.join(".claude"), &user_claude] {
        std::fs::create_dir(dir).unwrap();
    }
    std::fs::write(&canary, "the user's own file\n").unwrap();
    // The user's Claude config, which its own is made from.
    for dir in [&user_claude, &home.join(".claude")] {
        std::fs::write(dir.join("settings.json"), "{\"model\": \"opus\"}\n").unwrap();
    }
    for state in [user_claude.join(".claude.json"), home.join(".claude.json")] {
        std::fs::write(state, "{\"customApiKeyResponses\": {\"approved\": []}}\n").unwrap();
    }
    let common = repo.path().join(".git");
    let kept = [
        common.join("config"),
        common.join("hooks"),
        canary.clone(),
        user_claude.clone(),
        home.join(".claude"),
        home.join(".claude.json"),
    ];
    let before = snapshot(&kept);
    let victim = start_victim(&bosun, &repo, place.path(), &mark, "SECRET-5e1d");

    let env = [
        ("BOSUN", env!("CARGO_BIN_EXE_bosun").to_owned()),
        ("S", bosun.state_dir().display().to_string()),
        ("REPO", repo.path().display().to_string()),
        ("MARK", mark.display().to_string()),
        ("VICTIM", victim.id.clone()),
        ("COMMON", common.display().to_string()),
        ("CANARY", canary.display().to_string()),
        ("USER_CLAUDE", user_claude.display().to_string()),
        ("USER_HOME", home.display().to_string()),
        ("HOME", home.display().to_string()),
        // The user's config where Claude Code would look (empty: in their home).
        ("CLAUDE_CONFIG_DIR", if config_in_home { String::new() } else { user_claude.display().to_string() }),
    ];
    let mut args: Vec<String> =
        ["--runtime", "docker", "--image", &image, "--name", "hostile", "--on-dead", "resume", "--driver", "claude"]
            .map(String::from)
            .to_vec();
    if !network {
        args.push("--no-network".into());
    }
    for (k, v) in &env {
        args.extend(["--env".into(), format!("{k}={v}")]);
    }
    // A prompt of its own: a Claude agent's command would otherwise give its script as the prompt.
    args.extend(["--prompt".into(), "work".into(), "--".into(), "sh".into(), "-c".into(), HOSTILE.into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let hostile = bosun.start(repo.path(), &args);
    let ws = bosun.show(&hostile).workspace.expect("its workspace");
    let read_log = || std::fs::read_to_string(ws.path.join("probe.log")).unwrap_or_default();
    // Its probes, and its start anew (bosun writing its files again); or as far as it got.
    let log = wait_for(PATIENCE, || Some(read_log()).filter(|l| l.contains("resumed"))).unwrap_or_else(read_log);

    assert_eq!(marks(&mark), Vec::<String>::new(), "ran on the host; its probes:\n{log}");
    assert_eq!(
        snapshot(&kept),
        before,
        "the repository's config or hooks, the user's config or the canary changed:\n{log}"
    );
    let output = std::fs::read_to_string(bosun.agent(&hostile).output_log()).unwrap_or_default();
    assert!(log.contains("resumed"), "it was not started anew:\n{log}\n{output}\n{}", bosun.log());
    for probe in [
        "daemon-start",
        "daemon-kill",
        "host-socket",
        "git-config",
        "git-config-append",
        "git-hook",
        "dot-git",
        "claude-settings",
        "claude-state",
        "claude-settings-home",
        "claude-state-home",
    ] {
        assert!(log.contains(&format!("{probe}: refused")), "{probe} was not refused:\n{log}");
    }
    let own = bosun.agent(&hostile).dir.join("config");
    assert!(log.contains(&format!("own: {}\n", own.display())), "its program is pointed at its own config:\n{log}");
    assert!(log.contains("own-config: done") && own.join("written-by-its-program").is_file(), "{log}");
    for probe in ["dot-git-moved", "commondir"] {
        assert!(log.contains(&format!("{probe}: refused")), "{probe} was not refused:\n{log}");
    }
    assert!(log.contains("state: agents h run spool workspaces \n"), "it saw more of the state directory:\n{log}");
    assert!(log.contains(&format!("hosts: bosun-{hostile}.d \n")), "it saw other hosts' sockets or tokens:\n{log}");
    assert!(pid_alive(victim.pid), "the victim was signalled");
    assert_eq!(bosun.list().agents.len(), 2, "no agent was started through the daemon");
    for done in ["commit: done", "branch: done", "planted: done", "spool: 1"] {
        assert!(log.contains(done), "{done:?} missing:\n{log}");
    }
    let branch = ws.kind.branch().unwrap().to_owned();
    assert!(repo.git(&["log", "--format=%s", &branch]).contains("hostile work"), "its commit is on its branch");
    assert!(!repo.git(&["branch", "--list", "hostile-side"]).is_empty(), "its own branch was made");
    let gitdir = common.join("worktrees").join(ws.id.to_string());
    assert_eq!(std::fs::read_to_string(gitdir.join("commondir")).unwrap().trim(), "../..", "its link back");

    // Its reports as the victim, live and spooled (told by the next daemon): none is the victim's.
    bosun.kill_daemon_hard();
    bosun.ok(repo.path(), &["ls"]);
    victim.nudged_only_by_its_own_report(&bosun, &mark);
    assert_eq!(snapshot(&kept), before, "a restart followed a link out");
}

#[test]
fn a_hostile_agent_in_a_container_with_the_network_reaches_nothing_outside() {
    a_hostile_agent_reaches_nothing_outside_its_container(true, false);
}

#[test]
fn a_hostile_agent_in_a_container_without_the_network_reaches_nothing_outside() {
    a_hostile_agent_reaches_nothing_outside_its_container(false, true);
}
