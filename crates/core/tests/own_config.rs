//! A confined agent's program (a sandbox's, a container's) is given a config of its own, in its
//! directory, never the user's: what it may write, where its program is told to look, what its
//! restart and its fork find there. A local agent keeps the user's.

mod support;

use std::path::{Path, PathBuf};

use bosun_core::driver::Driver;
use bosun_core::{Container, Effect, Input, OwnConfig, Place, Runtime};
use support::*;

/// The user's config, as a start records it from their environment.
fn users(spec: &mut bosun_core::AgentSpec) {
    for (k, v) in [("HOME", "/home/u"), ("CLAUDE_CONFIG_DIR", "/home/u/.claude-work"), ("CODEX_HOME", "/home/u/.cx")] {
        spec.env.insert(k.into(), v.into());
    }
}

/// The session spawned when its workspace is made.
fn spawned(sim: &mut Sim, spec: bosun_core::AgentSpec) -> (bosun_core::AgentId, Effect) {
    let (a, w) = sim.start_with(spec);
    let effects = sim.ok(Input::WorkspaceCreated { id: w });
    let spawn = effects.into_iter().find(|e| matches!(e, Effect::SpawnSession { .. })).expect("a session spawned");
    (a, spawn)
}

fn docker() -> Runtime {
    Runtime::Docker(Container { image: "i".into(), cpus_milli: None, memory_bytes: None, network: false, volume: None })
}

#[test]
fn a_confined_agents_program_writes_a_config_of_its_own_never_the_users() {
    for (driver, var) in [
        (Driver::Claude { session_id: "00000000-0000-0000-0000-000000000001".into() }, "CLAUDE_CONFIG_DIR"),
        (Driver::Codex, "CODEX_HOME"),
        (Driver::Gemini { session_id: "00000000-0000-0000-0000-000000000002".into() }, "GEMINI_CLI_HOME"),
        (Driver::Pi { session_id: "00000000-0000-0000-0000-000000000003".into() }, "PI_CODING_AGENT_DIR"),
    ] {
        for runtime in [Runtime::Sandbox { network: true }, docker()] {
            let mut sim = Sim::new();
            let mut spec = bosun_core::AgentSpec { driver: driver.clone(), runtime: runtime.clone(), ..spec(1) };
            users(&mut spec);
            let (a, spawn) = spawned(&mut sim, spec);
            let agent = sim.state.agents[&a].clone();
            let own = agent.dir.join("config");
            let Effect::SpawnSession { env, config, place, .. } = spawn else { unreachable!() };
            let what = format!("{} in {}", driver.kind().name(), runtime.label());
            assert_eq!(config.as_ref().map(|c| c.dir.clone()), Some(own.clone()), "{what}: made for it");
            assert_eq!(env.get(var).map(PathBuf::from), Some(own.clone()), "{what}: its program looks there");
            // A container has no home of the user's: its own config is its home there.
            let home = if runtime == docker() { own.clone() } else { PathBuf::from("/home/u") };
            assert_eq!(env.get("HOME").map(PathBuf::from), Some(home), "{what}: its home");
            let user = config.and_then(|c| c.user).unwrap();
            assert!(user.starts_with("/home/u"), "{what}: made from the user's {user:?}");
            let sandbox = match place {
                Place::Sandbox(s) | Place::Container { sandbox: s, .. } => s,
                other => panic!("{what}: {other:?}"),
            };
            assert!(sandbox.writable.contains(&own), "{what}: it writes its own: {sandbox:?}");
            let shown: Vec<&PathBuf> = sandbox.writable.iter().chain(&sandbox.read_only).collect();
            assert!(!shown.iter().any(|p| p.starts_with("/home/u")), "{what}: nothing of the user's: {shown:?}");
            // Its directory, which holds its config, is bound before it.
            let at = |p: &Path| sandbox.read_only.iter().chain(&sandbox.writable).position(|q| q == p);
            assert!(at(&agent.dir) < at(&own), "{what}: {sandbox:?}");
        }
    }
}

fn claude_in_sandbox(n: u64) -> bosun_core::AgentSpec {
    let on_dead = bosun_core::Chain(vec!["resume:go on".parse().unwrap()]);
    let policy = bosun_core::Policy { on_dead, ..bosun_core::Policy::default() };
    let mut spec = bosun_core::AgentSpec { runtime: Runtime::Sandbox { network: true }, ..claude(n, policy) };
    users(&mut spec);
    spec
}

fn hook(a: &bosun_core::AgentId, transcript: &Path) -> Input {
    let raw = serde_json::json!({"hook_event_name": "Stop", "transcript_path": transcript}).to_string();
    let report = bosun_core::driver::DriverKind::Claude.behaviour().take_report("Stop", &raw);
    Input::Report { agent: a.clone(), generation: None, spooled_at: None, report }
}

/// Its transcript is read where its own config keeps it (a report naming one in the user's
/// config is not its); restarted, it is pointed at the same config again, which a fork's copy
/// of its transcript goes into, for the fork's own.
#[test]
fn its_transcript_is_in_its_own_config_which_its_restart_finds_and_its_fork_gets_a_copy_in_its_own() {
    let mut sim = Sim::new();
    let (a, _) = spawned(&mut sim, claude_in_sandbox(1));
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(3) });
    let own = sim.state.agents[&a].dir.join("config");
    let name = "00000000-0000-0000-0000-000000000001.jsonl";
    sim.ok(hook(&a, &Path::new("/home/u/.claude-work/projects/-w").join(name)));
    assert_eq!(sim.state.agents[&a].log, None, "a transcript in the user's config is not its");
    let transcript = own.join("projects/-w").join(name);
    sim.ok(hook(&a, &transcript));
    assert_eq!(sim.state.agents[&a].log.as_ref(), Some(&transcript), "its own");

    let effects = sim.ok(Input::SessionExited { session: a.session(), status: bosun_core::ExitStatus::code(1) });
    let resumed = effects.iter().find_map(|e| match e {
        Effect::SpawnSession { env, config, command, .. } => Some((env.clone(), config.clone(), command.clone())),
        _ => None,
    });
    let (env, config, command) = resumed.expect("resumed");
    assert!(command.contains(&"--resume".to_owned()), "{command:?}");
    assert_eq!(config.map(|c| c.dir), Some(own.clone()), "its config again (made once: found there)");
    assert_eq!(env.get("CLAUDE_CONFIG_DIR").map(PathBuf::from), Some(own.clone()));

    let fork = claude_in_sandbox(2);
    let w = bosun_core::WorkspaceId::new(&fork.name, &fork.nonce);
    sim.ok(Input::ForkAgent { spec: Box::new(fork), from: a.clone() });
    let effects = sim.ok(Input::WorkspaceCreated { id: w });
    let Some(Effect::SpawnSession { agent: f, copies, config, .. }) =
        effects.into_iter().find(|e| matches!(e, Effect::SpawnSession { .. }))
    else {
        panic!("the fork spawned")
    };
    let forked = &sim.state.agents[&f];
    let theirs = forked.dir.join("config");
    assert_eq!(config.map(|c| c.dir), Some(theirs.clone()));
    let project = forked.cwd.display().to_string().replace(['/', '.'], "-");
    assert_eq!(copies, vec![(transcript, theirs.join("projects").join(project).join(name))]);
}

#[test]
fn a_codex_fork_gets_a_copy_of_the_rollout_in_its_own_config() {
    let mut sim = Sim::new();
    let codex = |n| {
        let mut spec = bosun_core::AgentSpec { driver: Driver::Codex, runtime: docker(), ..spec(n) };
        users(&mut spec);
        spec
    };
    let (a, _) = spawned(&mut sim, codex(1));
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(3) });
    let rollout = sim.state.agents[&a]
        .dir
        .join("config/sessions/2026/11/22/rollout-2026-11-22T01-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl");
    let found = bosun_core::Observation::Activity { heartbeat: bosun_core::Heartbeat::LogWrite };
    let source = bosun_core::Source::Log;
    sim.ok(Input::Observed {
        agent: a.clone(),
        source,
        observation: found,
        log: Some(rollout.clone()),
        generation: None,
    });

    let fork = codex(2);
    let w = bosun_core::WorkspaceId::new(&fork.name, &fork.nonce);
    sim.ok(Input::ForkAgent { spec: Box::new(fork), from: a.clone() });
    let effects = sim.ok(Input::WorkspaceCreated { id: w });
    let Some(Effect::SpawnSession { agent: f, copies, command, .. }) =
        effects.into_iter().find(|e| matches!(e, Effect::SpawnSession { .. }))
    else {
        panic!("the fork spawned")
    };
    assert_eq!(&command[1..3], ["fork", "0199a213-81c0-7800-8aa1-bbab2a035a53"], "{command:?}");
    let theirs = sim.state.agents[&f].dir.join("config/sessions/2026/11/22").join(rollout.file_name().unwrap());
    assert_eq!(copies, vec![(rollout, theirs)]);
}

#[test]
fn a_local_or_generic_agent_has_no_own_config_and_keeps_its_env() {
    for (driver, runtime) in [
        (Driver::Claude { session_id: "00000000-0000-0000-0000-000000000001".into() }, Runtime::Local),
        (Driver::Generic { patterns: Default::default() }, Runtime::Sandbox { network: false }),
    ] {
        let mut sim = Sim::new();
        let mut spec = bosun_core::AgentSpec { driver, runtime, ..spec(1) };
        users(&mut spec);
        let (_, spawn) = spawned(&mut sim, spec);
        let Effect::SpawnSession { env, config, .. } = spawn else { unreachable!() };
        assert_eq!(config, None);
        assert_eq!(env.get("CLAUDE_CONFIG_DIR").map(String::as_str), Some("/home/u/.claude-work"));
    }
}

/// claudeless reads its own variable before Claude's: it is pointed at the agent's config too.
#[test]
fn claudeless_is_pointed_at_the_own_config_too() {
    let mut sim = Sim::new();
    let mut spec =
        bosun_core::AgentSpec { runtime: Runtime::Sandbox { network: true }, ..claude(1, Default::default()) };
    spec.env.insert("CLAUDELESS_CONFIG_DIR".into(), "/home/u/.cl".into());
    let (a, spawn) = spawned(&mut sim, spec);
    let Effect::SpawnSession { env, .. } = spawn else { unreachable!() };
    let own = sim.state.agents[&a].dir.join("config").display().to_string();
    assert_eq!(env.get("CLAUDELESS_CONFIG_DIR"), Some(&own));
    assert_eq!(OwnConfig::of(&sim.state.agents[&a]).unwrap().user, Some(PathBuf::from("/home/u/.cl")));
}

/// Gemini CLI runs headless (one turn, no shell tool, then exit) under `CI=true` or
/// `GITHUB_ACTIONS=true`: an agent started from a CI job is told otherwise, wherever it runs,
/// unless its own `--env` names the variable. Other clients keep what they inherit.
#[test]
fn a_gemini_started_from_a_ci_job_is_told_it_runs_in_a_terminal() {
    let gemini = || Driver::Gemini { session_id: "00000000-0000-0000-0000-000000000002".into() };
    for runtime in [Runtime::Local, Runtime::Sandbox { network: false }] {
        let mut sim = Sim::new();
        let spec = bosun_core::AgentSpec { driver: gemini(), runtime, ..spec(1) };
        let (_, spawn) = spawned(&mut sim, spec);
        let Effect::SpawnSession { env, .. } = spawn else { unreachable!() };
        assert_eq!(env.get("CI").map(String::as_str), Some("false"), "{env:?}");
        assert_eq!(env.get("GITHUB_ACTIONS").map(String::as_str), Some("false"), "{env:?}");
    }
    let mut sim = Sim::new();
    let mut spec = bosun_core::AgentSpec { driver: gemini(), ..spec(1) };
    spec.env.insert("CI".into(), "true".into());
    let (_, spawn) = spawned(&mut sim, spec);
    let Effect::SpawnSession { env, .. } = spawn else { unreachable!() };
    assert_eq!(env.get("CI").map(String::as_str), Some("true"), "its own --env wins");
    let (_, spawn) = spawned(&mut Sim::new(), claude(1, Default::default()));
    let Effect::SpawnSession { env, .. } = spawn else { unreachable!() };
    assert_eq!(env.get("CI"), None, "Claude is given nothing of the kind");
}
