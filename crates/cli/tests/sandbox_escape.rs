//! A hostile agent in `--runtime sandbox` (with the network and without; spoken to as Claude
//! Code, its config where `CLAUDE_CONFIG_DIR` says or in its home, and as Codex) tries every way
//! out it knows, in one script: bosun's daemon through whatever socket its hooks are shown,
//! bosun's tmux server, another agent's session host, the daemon's and another agent's
//! processes, bosun's state directory (the event log, other workspaces, other agents' files), the
//! hook spool as another agent (live and kept for a daemon's restart), the repository's config,
//! hooks, info and its worktree's links back to it, a repository nested in its worktree whose
//! config names programs for bosun's own git to run, the user's Claude and Codex config (a hook
//! in their settings, an MCP server in `.claude.json`, a `notify` program in Codex's
//! `config.toml`: each would run on the host at the user's next start of the program), its home
//! and the other homes, and links out of its workspace that bosun would follow when it cleans up.
//! Every verdict is read on the host, by what happened: a file that must not appear (each escape
//! would make one), processes that must still run, files that must be as they were. Its commits,
//! its own branch and its own config (the one bosun made for its program) still work.
//!
//! The state directory, the repository and the user's files are outside `/tmp` (as a user's
//! are, in their home): the sandbox's private `/tmp` hides nothing of them by itself.

mod support;

use bosun_testkit::poll::wait_for;
use bosun_testkit::tools;
use support::*;

/// The hostile agent. Each probe is noted in `probe.log` (in its workspace); what it runs on the
/// host would leave a file in `$MARK`, which it cannot write itself.
const HOSTILE: &str = r#"
LOG=$PWD/probe.log
note() { printf '%s\n' "$*" >> "$LOG"; }
try() { name=$1; shift; if "$@" </dev/null >/dev/null 2>&1; then note "$name: done"; else note "$name: refused"; fi; }

# bosun's daemon, through the socket where its hooks look for it
try daemon-start "$BOSUN" --state-dir "$S" agent start --repo "$REPO" -- sh -c "touch $MARK/daemon-start"
try daemon-kill "$BOSUN" --state-dir "$S" kill "$VICTIM"
try daemon-rm "$BOSUN" --state-dir "$S" workspace rm --force "$VICTIM_WS_ID"
# bosun's tmux server (never one of its own: `new-session` would start one in the sandbox), and
# the victim's session host
try tmux-list "$TMUX_BIN" -S "$S/tmux.sock" list-sessions
try tmux-run "$TMUX_BIN" -S "$S/tmux.sock" run-shell "touch $MARK/tmux-run"
try tmux-window "$TMUX_BIN" -S "$S/tmux.sock" new-window "touch $MARK/tmux-window"
try host-attach sh -c "printf 'touch $MARK/host-attach\r' | $BOSUN host attach --socket $S/h/bosun-$VICTIM"
# the daemon's and the victim's processes
try kill-daemon kill -TERM "$DAEMON_PID"
try kill-victim kill -KILL "$VICTIM_PID"
try daemon-environ cat "/proc/$DAEMON_PID/environ"
note "processes: $(ls /proc | grep -c '^[0-9]')"
# bosun's state directory: the event log, other agents' workspaces and files
note "state: $(ls -A "$S" | sort | tr '\n' ' ')"
note "workspaces: $(ls -A "$S/workspaces" | tr '\n' ' ')"
note "secret-seen: $(cat "$S/bosun.db" "$S/daemon.log" "$S"/agents/*/* "$VICTIM_WS"/* 2>/dev/null | grep -c "$SECRET")"
try victim-workspace sh -c "echo pwned > $VICTIM_WS/pwned.txt"
# reports as the victim: through its own channel, and kept in the spool for the next daemon
echo '{"hook_event_name":"Stop"}' | "$BOSUN" --state-dir "$S" hook claude "$VICTIM" 0 Stop
printf '{"hook":"claude","agent":"%s","generation":0,"event":"Stop","payload":"{}"}\n' "$VICTIM" >> "$S/spool/hooks.spool"
note "spool: $(cat "$S/spool/hooks.spool" | wc -l)"
# the repository's config and hooks, and its worktree's links back to it
GITDIR=$(git rev-parse --absolute-git-dir)
try git-config git config core.fsmonitor "touch $MARK/fsmonitor"
try git-config-append sh -c "printf '[core]\n\tfsmonitor = touch $MARK/fsmonitor\n' >> $COMMON/config"
try git-hook sh -c "printf '#!/bin/sh\ntouch $MARK/post-merge\n' > $COMMON/hooks/post-merge"
try git-info sh -c "echo '* filter=evil' > $COMMON/info/attributes"
try git-other-worktree sh -c "echo evil > $COMMON/worktrees/$VICTIM_WT/HEAD"
try dot-git sh -c "echo 'gitdir: $PWD/evil' > .git"
try dot-git-moved mv .git moved-git
try commondir sh -c "echo $PWD/evil > $GITDIR/commondir"
try worktree-config sh -c "printf '[core]\n\tfsmonitor = touch $MARK/worktree-config\n' > $GITDIR/config.worktree"
# the user's Claude and Codex config, where their programs on the host read it: a hook, an MCP
# server, a notify program; and its own config, which its program writes
HOOK="{\"hooks\":{\"SessionStart\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"touch $MARK/claude-hook\"}]}]}}"
MCP="{\"mcpServers\":{\"evil\":{\"command\":\"touch\",\"args\":[\"$MARK/mcp\"]}}}"
try claude-settings sh -c "printf '%s' '$HOOK' > $USER_CLAUDE/settings.json"
try claude-state sh -c "printf '%s' '$MCP' > $USER_CLAUDE/.claude.json"
try claude-settings-home sh -c "printf '%s' '$HOOK' > $HOME/.claude/settings.json"
try claude-state-home sh -c "printf '%s' '$MCP' > $HOME/.claude.json"
try codex-config sh -c "printf 'notify = [\"touch\", \"$MARK/notify\"]\n' >> $HOME/.codex/config.toml"
try codex-config-moved sh -c "mv $HOME/.codex $HOME/codex-moved"
case $DRIVER in claude) OWN=$CLAUDE_CONFIG_DIR ;; *) OWN=$CODEX_HOME ;; esac
try own-config sh -c "echo '{}' > $OWN/written-by-its-program"
note "own: $OWN"
# its own files, which bosun writes again and follows: its output to the user's shell startup
AGENT_DIR=$(ls -d "$S"/agents/* | head -1)
try own-output ln -sf "$HOME/.bashrc" "$AGENT_DIR/output.log"
# its home, and the other homes
try home-write sh -c "echo 'touch $MARK/bashrc' >> $HOME/.bashrc"
note "other-home: $(ls -A /root 2>/dev/null | wc -l)"
# its commits and a branch of its own: these work
echo work > work.txt && git add work.txt && git commit -qm 'hostile work' && note "commit: done"
git branch hostile-side && note "branch: done"
# a repository nested in its worktree, committed, whose config names programs that would run
# wherever git looks into it
mkdir -p vendor/lib && cd vendor/lib && git init -q && git config filter.evil.clean "touch $MARK/nested-filter; cat" \
  && git config core.fsmonitor "touch $MARK/nested-fsmonitor" && echo '* filter=evil' > .gitattributes \
  && echo lib > lib.txt && git add -A && git -c user.name=h -c user.email=h@h commit -qm lib && cd ../.. && git add vendor/lib && git commit -qm vendor \
  && note "nested: done"
# links out of its workspace, which bosun removes (its own settings file is behind one now)
rm -rf .claude && ln -s "$CANARY" .claude && ln -s "$CANARY" canary-link
echo 'not committed' > uncommitted.txt
# last: the nested file's timestamps no longer match its index, so a `git status` there reads it
touch -d @1000000 vendor/lib/lib.txt
note probes-done
exec sleep 600
"#;

/// The program a hostile agent is spoken to as, and where the user's config of it is.
#[derive(Clone, Copy, PartialEq)]
enum Posing {
    /// Claude Code, the user's config where `CLAUDE_CONFIG_DIR` says.
    Claude,
    /// Claude Code, the user's config in their home (`~/.claude`, `~/.claude.json`).
    ClaudeInHome,
    /// Codex, the user's config in their home (`~/.codex`).
    Codex,
}

fn a_hostile_agent_reaches_nothing_outside_its_sandbox(network: bool, posing: Posing) {
    tools::bwrap();
    let place = tempfile::tempdir_in("/var/tmp").unwrap();
    let bosun = Bosun::new_in(env!("CARGO_BIN_EXE_bosun"), place.path());
    let repo = TempRepo::new_in(place.path());
    repo.commit_file(".claude/settings.json", "{}\n");
    let (mark, home, canary) = (place.path().join("marks"), place.path().join("home"), place.path().join("canary"));
    let user_claude = place.path().join("claude-config");
    let (home_claude, home_codex) = (home.join(".claude"), home.join(".codex"));
    for dir in [&mark, &home, &canary, &user_claude, &home_claude, &home_codex] {
        std::fs::create_dir(dir).unwrap();
    }
    std::fs::write(home.join(".bashrc"), "# the user's\n").unwrap();
    std::fs::write(canary.join("settings.local.json"), "the user's own file\n").unwrap();
    // The user's Claude and Codex config, which its own is made from.
    for dir in [&user_claude, &home_claude] {
        std::fs::write(dir.join("settings.json"), "{\"model\": \"opus\"}\n").unwrap();
    }
    std::fs::write(user_claude.join(".claude.json"), "{\"customApiKeyResponses\": {\"approved\": []}}\n").unwrap();
    std::fs::write(home.join(".claude.json"), "{\"customApiKeyResponses\": {\"approved\": []}}\n").unwrap();
    std::fs::write(home_codex.join("config.toml"), "model = \"gpt-5.5\"\n").unwrap();
    let script = place.path().join("hostile.sh");
    std::fs::write(&script, format!("#!/bin/sh\n{HOSTILE}")).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let common = repo.path().join(".git");
    let kept = [
        common.join("config"),
        common.join("hooks"),
        common.join("info"),
        home.join(".bashrc"),
        canary.clone(),
        user_claude.clone(),
        home_claude.clone(),
        home.join(".claude.json"),
        home_codex.clone(),
    ];
    let before = snapshot(&kept);

    let secret = "SECRET-7f3a9c1e";
    let victim = start_victim(&bosun, &repo, place.path(), &mark, secret);
    let (victim_pid, victim_ws) = (victim.pid, victim.workspace.clone());
    let daemon_pid = bosun.daemon_pid().expect("a daemon") as u32;

    let env = [
        ("BOSUN", env!("CARGO_BIN_EXE_bosun").to_owned()),
        ("S", bosun.state_dir().display().to_string()),
        ("REPO", repo.path().display().to_string()),
        ("MARK", mark.display().to_string()),
        ("VICTIM", victim.id.clone()),
        ("VICTIM_WS", victim_ws.path.display().to_string()),
        ("VICTIM_WS_ID", victim_ws.id.to_string()),
        ("VICTIM_WT", victim_ws.id.to_string()),
        ("VICTIM_PID", victim_pid.to_string()),
        ("DAEMON_PID", daemon_pid.to_string()),
        ("SECRET", secret.to_owned()),
        ("COMMON", common.display().to_string()),
        ("CANARY", canary.display().to_string()),
        ("HOME", home.display().to_string()),
        ("TMUX_BIN", tools::tmux().display().to_string()),
        ("USER_CLAUDE", user_claude.display().to_string()),
        ("DRIVER", if posing == Posing::Codex { "codex" } else { "claude" }.to_owned()),
        // The user's config where its program would look (empty: in its home).
        ("CLAUDE_CONFIG_DIR", if posing == Posing::Claude { user_claude.display().to_string() } else { String::new() }),
        ("CODEX_HOME", String::new()),
    ];
    let driver = if posing == Posing::Codex { "codex" } else { "claude" };
    let mut args: Vec<String> =
        ["--runtime", "sandbox", "--name", "hostile", "--driver", driver].map(String::from).to_vec();
    if !network {
        args.push("--no-network".into());
    }
    for (k, v) in &env {
        args.extend(["--env".into(), format!("{k}={v}")]);
    }
    args.extend(["--".into(), script.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let hostile = bosun.start(repo.path(), &args);
    let ws = bosun.show(&hostile).workspace.expect("its workspace");
    let read_log = || std::fs::read_to_string(ws.path.join("probe.log")).unwrap_or_default();
    // What it did, once done (or as far as it got, when one of its probes ended it).
    let log = wait_for(PATIENCE, || Some(read_log()).filter(|l| l.contains("probes-done"))).unwrap_or_else(read_log);

    // Nothing ran on the host, and everything it had no right to touch is as it was.
    assert_eq!(marks(&mark), Vec::<String>::new(), "ran on the host; its probes:\n{log}");
    assert!(log.contains("probes-done"), "its probes ended early:\n{log}");
    assert_eq!(
        snapshot(&kept),
        before,
        "the repository's config, hooks or info, the home, the user's Claude or Codex config or the canary changed"
    );
    for probe in [
        "daemon-start",
        "daemon-kill",
        "daemon-rm",
        "tmux-list",
        "tmux-run",
        "tmux-window",
        "host-attach",
        "kill-daemon",
        "kill-victim",
        "daemon-environ",
        "victim-workspace",
        "git-config",
        "git-config-append",
        "git-hook",
        "git-info",
        "git-other-worktree",
        "dot-git",
        "dot-git-moved",
        "commondir",
        "own-output",
        "home-write",
        "claude-settings",
        "claude-state",
        "claude-settings-home",
        "claude-state-home",
        "codex-config",
        "codex-config-moved",
    ] {
        assert!(log.contains(&format!("{probe}: refused")), "{probe} was not refused:\n{log}");
    }
    // Its program writes the config bosun made for it, in its own directory.
    let own = bosun.agent(&hostile).dir.join("config");
    assert!(log.contains(&format!("own: {}\n", own.display())), "its program is pointed at its own config:\n{log}");
    assert!(log.contains("own-config: done") && own.join("written-by-its-program").is_file(), "{log}");
    assert!(pid_alive(daemon_pid) && bosun.daemon_pid() == Some(daemon_pid as i32), "the daemon was signalled");
    assert!(pid_alive(victim_pid), "the victim was signalled");
    assert_eq!(bosun.agent(&victim.id).state.label(), "running", "the victim still runs, untouched");
    assert!(!victim_ws.path.join("pwned.txt").exists(), "the victim's workspace was written");
    assert!(log.contains("secret-seen: 0"), "it read another agent's secret:\n{log}");
    assert!(log.contains(&format!("workspaces: {} \n", ws.id)), "it saw other workspaces:\n{log}");
    assert!(log.contains("state: agents run spool workspaces \n"), "it saw more of the state directory:\n{log}");
    assert!(log.contains("other-home: 0"), "it saw another home:\n{log}");
    let processes: usize = log.split("processes: ").nth(1).and_then(|r| r.lines().next()?.parse().ok()).unwrap_or(0);
    assert!((1..10).contains(&processes), "it sees the machine's processes ({processes}):\n{log}");
    let gitdir = common.join("worktrees").join(ws.id.to_string());
    assert_eq!(std::fs::read_to_string(gitdir.join("commondir")).unwrap().trim(), "../..", "its link back");
    assert!(std::fs::read_to_string(ws.path.join(".git")).unwrap().contains(&gitdir.display().to_string()));
    assert_eq!(bosun.list().agents.len(), 2, "no agent was started through the daemon");
    assert!(bosun.ok(repo.path(), &["ls"]).contains("hostile"), "the daemon still answers");
    // Its own work: a commit on its branch and a branch of its own.
    for probe in ["commit: done", "branch: done", "nested: done"] {
        assert!(log.contains(probe), "{probe:?} missing:\n{log}");
    }
    let branch = ws.kind.branch().unwrap().to_owned();
    assert!(repo.git(&["log", "--format=%s", &branch]).contains("hostile work"), "its commit is on its branch");
    assert!(!repo.git(&["branch", "--list", "hostile-side"]).is_empty(), "its own branch was made");

    // Its reports as the victim, live and spooled (told by the next daemon): none is the
    // victim's. The victim's own idleness, told last, is nudged once: had either report been
    // taken as the victim's, its nudge would have been typed first and left a mark too.
    assert!(log.contains("spool: 1"), "{log}");
    bosun.kill_daemon_hard();
    bosun.ok(repo.path(), &["ls"]);
    victim.nudged_only_by_its_own_report(&bosun, &mark);

    // bosun's own git on its worktree (a diff, its work committed, merged into the user's
    // checkout, the workspace removed) runs nothing of the nested repository's, and follows no
    // link out of it.
    bosun.ok(repo.path(), &["kill", &hostile]);
    bosun.ok(repo.path(), &["diff", &hostile]);
    bosun.ok(repo.path(), &["merge", &hostile, "--commit"]);
    assert!(repo.path().join("work.txt").is_file() && repo.path().join("uncommitted.txt").is_file(), "merged");
    // Kept when bosun still takes it for dirty (issue 24's third point): removed here, forced.
    if ws.path.exists() {
        bosun.ok(repo.path(), &["workspace", "rm", "--force", ws.id.as_str()]);
    }
    assert!(!ws.path.exists(), "its workspace is removed");
    assert_eq!(marks(&mark), Vec::<String>::new(), "bosun's git ran what the agent planted");
    assert_eq!(snapshot(&kept), before, "bosun followed a link out of the workspace");
}

#[test]
fn a_hostile_sandboxed_claude_agent_with_the_network_reaches_nothing_outside() {
    a_hostile_agent_reaches_nothing_outside_its_sandbox(true, Posing::Claude);
}

#[test]
fn a_hostile_sandboxed_claude_agent_without_the_network_reaches_nothing_outside() {
    a_hostile_agent_reaches_nothing_outside_its_sandbox(false, Posing::ClaudeInHome);
}

#[test]
fn a_hostile_sandboxed_codex_agent_reaches_nothing_outside() {
    a_hostile_agent_reaches_nothing_outside_its_sandbox(true, Posing::Codex);
}
