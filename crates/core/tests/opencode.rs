//! An opencode agent, as the core drives it: its plugin written into its own config and named in
//! its environment (the user's config left where it is), its first prompt on its command line,
//! its reports read into its states, and a resume that continues the session its plugin named,
//! its message typed.

mod support;

use bosun_core::driver::{Driver, DriverKind};
use bosun_core::{AgentError, AgentId, Effect, Input, MessageState, Policy, SessionState, Step};
use support::{spec, Sim};

const SESSION: &str = "ses_ddf9bd9f8ffe2mXtUj9tIhl7d9";

fn report(a: &AgentId, event: &str, payload: &str) -> Input {
    let report = DriverKind::Opencode.behaviour().take_report(event, payload);
    Input::Report { agent: a.clone(), generation: None, spooled_at: None, report }
}

fn opencode(policy: Policy) -> bosun_core::AgentSpec {
    let mut spec = bosun_core::AgentSpec {
        command: vec!["opencode".into(), "--model".into(), "fake/m".into()],
        driver: Driver::Opencode { session: None },
        prompt: Some("fix it".into()),
        policy,
        ..spec(1)
    };
    spec.env.insert("HOME".into(), "/home/u".into());
    spec
}

#[test]
fn an_opencode_agent_runs_with_bosuns_plugin_reports_its_turns_and_resumes_its_session() {
    let mut sim = Sim::new();
    let on_dead = bosun_core::Chain(vec!["resume:go on".parse::<Step>().unwrap()]);
    let (a, w) = sim.start_with(opencode(Policy { on_dead, ..Policy::default() }));
    let effects = sim.ok(Input::WorkspaceCreated { id: w });
    let Some(Effect::SpawnSession { command, env, files, .. }) =
        effects.into_iter().find(|e| matches!(e, Effect::SpawnSession { .. }))
    else {
        panic!("spawned")
    };
    assert_eq!(command, ["opencode", "--model", "fake/m", "--prompt", "fix it"]);
    let plugin = "/state/agents/10000000/config/bosun-plugin.js";
    let content: serde_json::Value = serde_json::from_str(&env["OPENCODE_CONFIG_CONTENT"]).unwrap();
    assert_eq!(content, serde_json::json!({"plugin": [plugin]}));
    assert_eq!(env.get("XDG_CONFIG_HOME"), None, "the user's config is read where it is");
    let (path, code) = files.iter().find(|(p, _)| p.ends_with("bosun-plugin.js")).expect("its plugin");
    assert_eq!(path.display().to_string(), plugin);
    assert_eq!(files.len(), 1, "here its config directory is the user's, which bosun leaves alone: {files:?}");
    assert!(code.starts_with("const HOOK = \"bosun hook report opencode 10000000 --generation 0\";"), "{code}");
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });

    sim.ok(report(&a, "started", r#"{"type":"started"}"#));
    assert_eq!(sim.state.agents[&a].state, SessionState::Running, "its prompt runs from the start");
    let busy = format!(r#"{{"type":"session.status","sessionID":"{SESSION}","status":{{"type":"busy"}}}}"#);
    sim.ok(report(&a, "session.status", &busy));
    let log = format!("/state/agents/10000000/config/sessions/{SESSION}.jsonl");
    assert_eq!(sim.state.agents[&a].log.as_ref().map(|p| p.display().to_string()), Some(log));
    let retry = format!(
        r#"{{"type":"session.status","sessionID":"{SESSION}","status":{{"type":"retry","attempt":1,"message":"rate limit"}}}}"#
    );
    sim.ok(report(&a, "session.status", &retry));
    assert_eq!(sim.state.agents[&a].state, SessionState::Error { error: AgentError::RateLimited });
    sim.ok(report(&a, "session.status", &busy));
    assert_eq!(sim.state.agents[&a].state, SessionState::Running, "its retry got through");
    let idle = format!(r#"{{"type":"session.idle","sessionID":"{SESSION}","said":"All fixed."}}"#);
    sim.ok(report(&a, "session.idle", &idle));
    let agent = &sim.state.agents[&a];
    assert_eq!((agent.state.clone(), agent.said.as_deref()), (SessionState::Idle, Some("All fixed.")));

    // Killed, it is started again in its session; the resume's message is typed once it is up.
    let exited = bosun_core::ExitStatus { code: None, signal: Some(9) };
    let effects = sim.ok(Input::SessionExited { session: a.session(), status: exited });
    let resumed = effects.iter().find_map(|e| match e {
        Effect::SpawnSession { command, .. } => Some(command.clone()),
        _ => None,
    });
    assert_eq!(resumed.expect("resumed"), ["opencode", "--model", "fake/m", "--session", SESSION]);
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(8) });
    let typed = sim.ok(report(&a, "started", r#"{"type":"started"}"#));
    assert!(typed.iter().any(|e| matches!(e, Effect::SendText { text, .. } if text.contains("go on"))), "{typed:?}");
    assert!(sim.state.messages.values().any(|m| m.text.contains("go on") && m.state == MessageState::Sending));
}

#[test]
fn a_failed_turn_stays_an_error_and_the_policy_answers_a_permission() {
    let mut sim = Sim::new();
    let policy = Policy { deny: vec!["bash(rm *)".parse().unwrap()], ..Policy::default() };
    let (a, w) = sim.start_with(opencode(policy));
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    let error = format!(
        r#"{{"type":"session.error","sessionID":"{SESSION}","error":{{"name":"APIError","message":"invalid x-api-key","statusCode":401}}}}"#
    );
    sim.ok(report(&a, "session.error", &error));
    sim.ok(report(&a, "session.idle", &format!(r#"{{"type":"session.idle","sessionID":"{SESSION}"}}"#)));
    assert_eq!(sim.state.agents[&a].state, SessionState::Error { error: AgentError::Unauthorized });
    let asked = format!(
        r#"{{"type":"permission.asked","sessionID":"{SESSION}","request":{{"id":"per_1","permission":"bash","patterns":["rm -rf /"]}}}}"#
    );
    sim.ok(report(&a, "permission.asked", &asked));
    let answered = &sim.state.agents[&a].permissions;
    assert_eq!(
        answered.iter().map(|p| (p.answer.allows(), p.answer.rule())).collect::<Vec<_>>(),
        [(false, "bash(rm *)")]
    );
    assert_eq!(sim.state.agents[&a].state, SessionState::Running, "no dialog shows");
}

/// A prompt its own command gives (`-- opencode --prompt …`) is a turn that runs from the start,
/// never idle before it, and is not given again on a resume.
#[test]
fn a_prompt_in_its_own_command_runs_from_the_start_and_is_not_given_again() {
    let mut sim = Sim::new();
    let on_dead = bosun_core::Chain(vec!["resume:go on".parse::<Step>().unwrap()]);
    let mut spec = opencode(Policy { on_dead, ..Policy::default() });
    spec.prompt = None;
    spec.command = vec!["opencode".into(), "--prompt".into(), "fix it".into()];
    let (a, w) = sim.start_with(spec);
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    sim.ok(report(&a, "started", r#"{"type":"started"}"#));
    assert_eq!(sim.state.agents[&a].state, SessionState::Running, "not idle before its turn");
    let exited = bosun_core::ExitStatus { code: None, signal: Some(9) };
    let effects = sim.ok(Input::SessionExited { session: a.session(), status: exited });
    let resumed = effects.iter().find_map(|e| match e {
        Effect::SpawnSession { command, .. } => Some(command.clone()),
        _ => None,
    });
    assert_eq!(resumed.expect("resumed"), ["opencode"], "its prompt is not given again");
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(8) });
    sim.ok(report(&a, "started", r#"{"type":"started"}"#));
    assert_eq!(sim.state.agents[&a].state, SessionState::Idle, "resumed, it waits for its message");
}

/// Confined (a sandbox), its home the user's and read-only, it reads its config and writes its
/// data, state and cache in its own config directory; here it uses the user's.
#[test]
fn a_confined_opencode_writes_its_data_in_its_own_config_and_one_here_the_users() {
    for (runtime, own) in [(bosun_core::Runtime::Sandbox { network: true }, true), (bosun_core::Runtime::Local, false)]
    {
        let mut sim = Sim::new();
        let (_, w) = sim.start_with(bosun_core::AgentSpec { runtime, ..opencode(Policy::default()) });
        let effects = sim.ok(Input::WorkspaceCreated { id: w });
        let Some(Effect::SpawnSession { env, .. }) =
            effects.into_iter().find(|e| matches!(e, Effect::SpawnSession { .. }))
        else {
            panic!("spawned")
        };
        let config = "/state/agents/10000000/config";
        let homes = [("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state")];
        for (var, dir) in homes.into_iter().chain([("XDG_CACHE_HOME", "cache")]) {
            let want = own.then(|| format!("{config}/{dir}"));
            assert_eq!(env.get(var).cloned(), want, "{var}");
        }
        assert!(env["OPENCODE_CONFIG_CONTENT"].contains(config), "its plugin, here or confined");
    }
}
