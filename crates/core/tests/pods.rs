//! Agents in pods: the pod's end brings what its host's save did. A safe save ends the agent,
//! releases its workspace clean and deletes its pod; an unsafe one keeps the pod and asks a
//! person; a save told again changes nothing; a kill first ends the agent, and its save decides
//! what becomes of its pod.

mod support;

use bosun_core::{
    Effect, Event, ExitStatus, Input, Place, Pod, PodSource, Runtime, SavedWork, SessionBackend, WorkspaceKind,
    WorkspaceState,
};
use bosun_core::{PodClone, WorkBranch};
use support::*;

fn in_pod(n: u64) -> bosun_core::AgentSpec {
    in_pod_with(n, None)
}

/// An agent in a pod whose workspace is on `claim` when given.
fn in_pod_with(n: u64, claim: Option<&str>) -> bosun_core::AgentSpec {
    let mut base = spec(n);
    base.env.insert("HOME".into(), "/home/me".into());
    base.inherits = vec!["SECRET".into()];
    let branch = base.kind.branch().unwrap().to_owned();
    let source = PodSource {
        remote: Some("git://example/repo".into()),
        repo: "/r".into(),
        base: "c0ffee".into(),
        branch: branch.clone(),
    };
    let pod = Pod { source: Some(Box::new(source)), claim: claim.map(str::to_owned), ..Pod::new("agents", "agent:1") };
    bosun_core::AgentSpec {
        kind: WorkspaceKind::Pod(PodClone {
            git: WorkBranch { repo: "/repo".into(), branch, base_ref: "HEAD".into(), base: "c0ffee".into() },
            remote: Some("git://example/repo".into()),
            claim: claim.map(|name| bosun_core::PodClaim { namespace: "agents".into(), name: name.into() }),
        }),
        runtime: Runtime::K8s(pod),
        ..base
    }
}

fn saved(pushed: bool, dirty: bool) -> Option<SavedWork> {
    Some(SavedWork { pushed, dirty, said: "To git://example/repo".into() })
}

fn kills(effects: &[Effect]) -> bool {
    effects.iter().any(|e| matches!(e, Effect::KillSession { .. }))
}

#[test]
fn a_pod_whose_work_is_saved_ends_its_agent_releases_its_workspace_clean_and_goes() {
    let mut sim = Sim::new();
    let (a, w) = sim.start_with(in_pod(1));
    let spawned = sim.ok(Input::WorkspaceCreated { id: w.clone() });
    let pod = spawned.iter().find_map(|e| match e {
        Effect::SpawnSession { place, backend, .. } => Some((place.clone(), *backend)),
        _ => None,
    });
    assert!(matches!(pod, Some((Place::Pod(_), SessionBackend::Host))), "its session is a host in its pod: {pod:?}");
    let given = spawned.iter().find_map(|e| match e {
        Effect::SpawnSession { env, inherit, .. } => Some((env.clone(), inherit.clone())),
        _ => None,
    });
    let (env, inherit) = given.unwrap();
    assert!(inherit.is_none(), "a pod inherits nothing of this machine's environment");
    assert!(env.contains_key("BOSUN_AGENT_ID") && !env.contains_key("HOME"), "{env:?}");
    let at = |k: &str| env.get(k).map(String::as_str);
    assert_eq!(at("BOSUN_WORKSPACE"), Some(bosun_core::POD_WORKSPACE), "its workspace as its pod sees it");
    assert_eq!(
        (at("CLAUDE_CONFIG_DIR"), at("CODEX_HOME")),
        (Some(bosun_core::POD_CONFIG), Some(bosun_core::POD_CONFIG))
    );
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: None });
    let session = sim.state.agents[&a].session.clone();
    let effects =
        sim.ok(Input::PodEnded { session: session.clone(), status: ExitStatus::code(0), saved: saved(true, false) });
    assert!(sim.state.agents[&a].state.is_dead());
    assert_eq!(sim.state.workspaces[&w].state, WorkspaceState::Ready, "released clean");
    assert!(kills(&effects), "its pod goes");
    assert!(!effects.iter().any(|e| matches!(e, Effect::InspectWorkspace { .. })), "nothing here to inspect");
    let again = sim.ok(Input::PodEnded { session, status: ExitStatus::code(0), saved: saved(true, false) });
    assert!(again.is_empty(), "told again, nothing new: {again:?}");
}

#[test]
fn a_pod_whose_work_is_not_all_saved_is_kept_and_a_person_is_asked() {
    for (pushed, dirty) in [(false, false), (true, true)] {
        let mut sim = Sim::new();
        let (a, w) = sim.start_with(in_pod(2));
        sim.ok(Input::WorkspaceCreated { id: w.clone() });
        sim.ok(Input::SessionSpawned { agent: a.clone(), pid: None });
        let session = sim.state.agents[&a].session.clone();
        let effects = sim.ok(Input::PodEnded { session, status: ExitStatus::code(1), saved: saved(pushed, dirty) });
        assert!(!kills(&effects), "its pod is kept");
        assert_eq!(sim.state.workspaces[&w].state, WorkspaceState::Dirty);
        assert!(sim.log.iter().any(|e| matches!(e, Event::EscalationRaised { .. })), "a person is asked");
    }
}

#[test]
fn on_a_claim_unsaved_work_stays_on_the_claim_the_pod_goes_and_a_resume_carries_on_there() {
    let mut sim = Sim::new();
    let (a, w) = sim.start_with(in_pod_with(5, Some("bosun-a-work")));
    sim.ok(Input::WorkspaceCreated { id: w.clone() });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: None });
    let session = sim.state.agents[&a].session.clone();
    let effects = sim.ok(Input::PodEnded { session, status: ExitStatus::code(1), saved: saved(true, true) });
    assert!(kills(&effects), "the pod goes: its claim holds the work");
    assert_eq!(sim.state.workspaces[&w].state, WorkspaceState::Dirty, "kept until removed with --force");
    let asked = sim.log.iter().find_map(|e| match e {
        Event::EscalationRaised { escalation } => Some(escalation.reason.clone()),
        _ => None,
    });
    assert!(asked.is_some_and(|r| r.contains("claim agents/bosun-a-work")), "a person is told where it is");

    // Resumed, the agent carries on with its work on the claim: no one is asked.
    let mut sim = Sim::new();
    let on_dead = bosun_core::Chain(vec!["resume".parse::<bosun_core::Step>().unwrap()]);
    let policy = bosun_core::Policy { on_dead, ..Default::default() };
    let (a, w) = sim.start_with(bosun_core::AgentSpec { policy, ..in_pod_with(6, Some("bosun-b-work")) });
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: None });
    let session = sim.state.agents[&a].session.clone();
    let effects = sim.ok(Input::PodEnded { session, status: ExitStatus::code(1), saved: saved(true, true) });
    let resumed = effects
        .iter()
        .any(|e| matches!(e, Effect::SpawnSession { place: Place::Pod(p), .. } if p.claim.as_deref() == Some("bosun-b-work")));
    assert!(resumed, "resumed in a new pod on the same claim: {effects:?}");
    assert!(!sim.log.iter().any(|e| matches!(e, Event::EscalationRaised { .. })), "no one is asked");
}

#[test]
fn a_killed_agent_in_a_pod_is_released_dirty_until_its_save_says_otherwise() {
    let mut sim = Sim::new();
    let (a, w) = sim.start_with(in_pod(3));
    sim.ok(Input::WorkspaceCreated { id: w.clone() });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: None });
    sim.ok(Input::KillAgent { agent: a.clone() });
    sim.ok(Input::SessionKilled { agent: a.clone() });
    assert_eq!(sim.state.workspaces[&w].state, WorkspaceState::Dirty, "its save is not known yet");
    let session = sim.state.agents[&a].session.clone();
    let effects = sim.ok(Input::PodEnded { session, status: ExitStatus::code(143), saved: saved(true, false) });
    assert_eq!(sim.state.workspaces[&w].state, WorkspaceState::Ready, "its save says it is safe");
    assert!(kills(&effects), "now its pod goes");
}

#[test]
fn an_agent_whose_pod_ended_is_resumed_in_a_new_pod_whose_end_counts_anew() {
    let mut sim = Sim::new();
    let on_dead = bosun_core::Chain(vec!["resume*2".parse::<bosun_core::Step>().unwrap()]);
    let policy = bosun_core::Policy { on_dead, ..Default::default() };
    let (a, w) = sim.start_with(bosun_core::AgentSpec { policy, ..in_pod(4) });
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: None });
    let first = sim.state.agents[&a].session.clone();
    let effects =
        sim.ok(Input::PodEnded { session: first.clone(), status: ExitStatus::code(1), saved: saved(true, false) });
    let replaced = effects.iter().find_map(|e| match e {
        Effect::SpawnSession { replace, place, .. } => Some((replace.clone(), matches!(place, Place::Pod(_)))),
        _ => None,
    });
    assert_eq!(replaced, Some((Some(first.clone()), true)), "resumed in a new pod that replaces the old one");
    assert!(!kills(&effects), "no kill that would end the resumed agent: {effects:?}");
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: None });
    assert!(sim.state.agents[&a].state.is_up());
    let second = sim.state.agents[&a].session.clone();
    assert_ne!(second, first);
    sim.ok(Input::PodEnded { session: second, status: ExitStatus::code(1), saved: saved(true, true) });
    let saves = sim.log.iter().filter(|e| matches!(e, Event::WorkSaved { .. })).count();
    assert_eq!(saves, 2, "the new pod's save is its own");
}

#[test]
fn after_a_restart_a_pods_workspace_is_not_stale_for_its_path_missing_here() {
    let mut sim = Sim::new();
    let (a, w) = sim.start_with(in_pod(5));
    sim.ok(Input::WorkspaceCreated { id: w.clone() });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: None });
    let session = sim.state.agents[&a].session.clone();
    sim.ok(Input::PodEnded { session, status: ExitStatus::code(0), saved: saved(true, false) });
    let reality = bosun_core::Reality { sessions: Vec::new(), missing_dirs: vec![w.clone()], slots: Vec::new() };
    sim.ok(Input::Reconcile(reality));
    assert_eq!(sim.state.workspaces[&w].state, WorkspaceState::Ready, "its path was never on this disk");
}

#[test]
fn an_agent_in_a_pod_is_given_its_files_and_hooks_as_its_pod_sees_them() {
    let mut sim = Sim::new();
    let claude = bosun_core::AgentSpec {
        command: vec!["claude".into()],
        driver: bosun_core::driver::Driver::Claude { session_id: "00000000-0000-0000-0000-000000000007".into() },
        ..in_pod(7)
    };
    let (a, w) = sim.start_with(claude);
    let effects = sim.ok(Input::WorkspaceCreated { id: w });
    let (command, files) = effects
        .iter()
        .find_map(|e| match e {
            Effect::SpawnSession { command, files, .. } => Some((command.clone(), files.clone())),
            _ => None,
        })
        .expect("its session is started");
    let settings = std::path::Path::new(bosun_core::POD_AGENT_DIR).join("settings.json");
    assert!(command.windows(2).any(|w| w[0] == "--settings" && w[1] == settings.to_str().unwrap()), "{command:?}");
    assert_eq!(files.len(), 2, "its settings, and Claude's own state: {files:?}");
    assert_eq!(files[0].0, settings, "written in the pod, not here");
    assert!(files[1].0.starts_with(bosun_core::POD_CONFIG), "{:?}", files[1].0);
    let hook = format!("'bosun' --state-dir '{}' hook claude {a} 0", bosun_core::POD_STATE_DIR);
    assert!(files[0].1.contains(&hook), "its hooks report to its host's relay: {}", files[0].1);
    assert!(!files[0].1.contains("/state/"), "no path of this machine's: {}", files[0].1);

    // Codex's notify program too.
    let mut sim = Sim::new();
    let codex =
        bosun_core::AgentSpec { command: vec!["codex".into()], driver: bosun_core::driver::Driver::Codex, ..in_pod(8) };
    let (_, w) = sim.start_with(codex);
    let effects = sim.ok(Input::WorkspaceCreated { id: w });
    let command = effects
        .iter()
        .find_map(|e| match e {
            Effect::SpawnSession { command, .. } => Some(command.join(" ")),
            _ => None,
        })
        .expect("its session is started");
    assert!(command.contains("'bosun' --state-dir '/bosun/state' hook codex"), "{command}");
}

#[test]
fn a_pod_workspace_with_no_remote_keeps_its_branch_here_when_it_holds_commits_and_deletes_it_else() {
    for (ahead, kept) in [(2, true), (0, false)] {
        let mut sim = Sim::new();
        let mut spec = in_pod(1);
        if let WorkspaceKind::Pod(PodClone { remote, .. }) = &mut spec.kind {
            *remote = None;
        }
        let (a, w) = sim.start_with(spec);
        sim.ok(Input::WorkspaceCreated { id: w.clone() });
        sim.ok(Input::SessionSpawned { agent: a.clone(), pid: None });
        let session = sim.state.agents[&a].session.clone();
        sim.ok(Input::PodEnded { session, status: ExitStatus::code(0), saved: saved(true, false) });
        let probe = bosun_core::WorkspaceProbe { dirty: false, commits_ahead: ahead };
        let effects = sim.ok(Input::RemoveWorkspace { id: w.clone(), force: false, probe });
        let delete_branch = effects.iter().find_map(|e| match e {
            Effect::RemoveWorkspace { delete_branch, .. } => Some(*delete_branch),
            _ => None,
        });
        assert_eq!(delete_branch, Some(!kept), "{ahead} commits ahead: {effects:?}");
    }
}

/// The files the agent's session is started with, by path.
fn files_given(effects: &[Effect]) -> std::collections::BTreeMap<String, String> {
    let files = effects.iter().find_map(|e| match e {
        Effect::SpawnSession { files, .. } => Some(files.clone()),
        _ => None,
    });
    files.expect("a spawn").into_iter().map(|(p, c)| (p.display().to_string(), c)).collect()
}

/// A Claude agent in a pod whose workspace is on `claim` when given, with `policy`.
fn claude_in_pod(n: u64, claim: Option<&str>, policy: bosun_core::Policy) -> bosun_core::AgentSpec {
    let claude = claude(n, policy);
    bosun_core::AgentSpec {
        driver: claude.driver,
        command: claude.command,
        policy: claude.policy,
        ..in_pod_with(n, claim)
    }
}

#[test]
fn a_claude_agents_pod_config_is_bosuns_and_trusts_its_workspace_in_the_form_claude_reads() {
    let state_file = format!("{}/.claude.json", bosun_core::POD_CONFIG);
    let mut sim = Sim::new();
    let (_, w) = sim.start_with(claude_in_pod(1, None, bosun_core::Policy::default()));
    let files = files_given(&sim.ok(Input::WorkspaceCreated { id: w }));
    let state: serde_json::Value = serde_json::from_str(&files[&state_file]).expect("JSON");
    assert_eq!(state["projects"][bosun_core::POD_WORKSPACE]["hasTrustDialogAccepted"], true, "{state}");
    assert_eq!(state["hasCompletedOnboarding"], true);
    assert!(files.keys().any(|p| p.starts_with(bosun_core::POD_AGENT_DIR)), "its settings too: {files:?}");

    // Leaving the trust dialog to a person: no trust is recorded for it.
    let mut sim = Sim::new();
    let policy = bosun_core::Policy { accept_trust: false, ..bosun_core::Policy::default() };
    let (_, w) = sim.start_with(claude_in_pod(2, None, policy));
    let files = files_given(&sim.ok(Input::WorkspaceCreated { id: w }));
    let state: serde_json::Value = serde_json::from_str(&files[&state_file]).expect("JSON");
    assert_eq!(state["projects"], serde_json::json!({}), "{state}");

    // Not a pod: the config is the user's own, and bosun writes none of it.
    let mut sim = Sim::new();
    let (_, w) = sim.start_with(claude(3, bosun_core::Policy::default()));
    let files = files_given(&sim.ok(Input::WorkspaceCreated { id: w }));
    assert!(!files.keys().any(|p| p.ends_with(".claude.json")), "{files:?}");
}

#[test]
fn on_a_claim_claudes_own_state_is_written_at_the_first_launch_and_kept_after() {
    let state_file = format!("{}/.claude.json", bosun_core::POD_CONFIG);
    let mut sim = Sim::new();
    let policy = bosun_core::Policy {
        on_dead: "resume:go on".parse().map(|s| bosun_core::Chain(vec![s])).unwrap(),
        ..Default::default()
    };
    let (a, w) = sim.start_with(claude_in_pod(4, Some("bosun-a-work"), policy));
    assert!(files_given(&sim.ok(Input::WorkspaceCreated { id: w })).contains_key(&state_file));
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: None });
    let session = sim.state.agents[&a].session.clone();
    let resumed = sim.ok(Input::PodEnded { session, status: ExitStatus::code(1), saved: saved(true, true) });
    let files = files_given(&resumed);
    assert!(!files.contains_key(&state_file), "the claim keeps what Claude and a person made of it: {files:?}");
}

/// A Gemini CLI agent's home in its pod holds bosun's extension and trusts the pod's workspace
/// in the form Gemini CLI reads (`trustedFolders.json`), as its own config trusts its workspace
/// here; left to a person, nothing is trusted for it.
#[test]
fn a_gemini_agents_pod_home_trusts_its_workspace_and_holds_bosuns_extension() {
    let trusted = format!("{}/.gemini/trustedFolders.json", bosun_core::POD_CONFIG);
    let extension = format!("{}/.gemini/extensions/bosun/hooks/hooks.json", bosun_core::POD_CONFIG);
    let gemini = |n: u64, policy: bosun_core::Policy| bosun_core::AgentSpec {
        driver: bosun_core::driver::Driver::Gemini { session_id: "00000000-0000-0000-0000-00000000000a".into() },
        command: vec!["gemini".into()],
        policy,
        ..in_pod_with(n, None)
    };
    let mut sim = Sim::new();
    let (_, w) = sim.start_with(gemini(5, bosun_core::Policy::default()));
    let files = files_given(&sim.ok(Input::WorkspaceCreated { id: w }));
    let folders: serde_json::Value = serde_json::from_str(&files[&trusted]).expect("JSON");
    assert_eq!(folders, serde_json::json!({ bosun_core::POD_WORKSPACE: "TRUST_FOLDER" }));
    assert!(files.contains_key(&extension), "{files:?}");

    let mut sim = Sim::new();
    let policy = bosun_core::Policy { accept_trust: false, ..bosun_core::Policy::default() };
    let (_, w) = sim.start_with(gemini(6, policy));
    let files = files_given(&sim.ok(Input::WorkspaceCreated { id: w }));
    assert!(!files.contains_key(&trusted) && files.contains_key(&extension), "{files:?}");
}

/// A pod's Gemini home has none of the user's settings: the sign-in its `--env` chooses is
/// written there (Gemini CLI in a terminal opens its sign-in dialog without one, even with
/// `GEMINI_API_KEY` set), and none when it chooses none (its dialog then says how).
#[test]
fn a_gemini_agents_pod_home_signs_in_as_its_environment_chooses() {
    let settings = format!("{}/.gemini/settings.json", bosun_core::POD_CONFIG);
    let gemini = |n: u64, env: &[(&str, &str)]| bosun_core::AgentSpec {
        driver: bosun_core::driver::Driver::Gemini { session_id: "00000000-0000-0000-0000-00000000000b".into() },
        command: vec!["gemini".into()],
        env: env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        ..in_pod_with(n, None)
    };
    let chosen = |n: u64, env: &[(&str, &str)]| {
        let mut sim = Sim::new();
        let (_, w) = sim.start_with(gemini(n, env));
        let files = files_given(&sim.ok(Input::WorkspaceCreated { id: w }));
        files.get(&settings).map(|text| {
            let made: serde_json::Value = serde_json::from_str(text).expect("JSON");
            made["security"]["auth"]["selectedType"].as_str().expect("a method").to_owned()
        })
    };
    assert_eq!(chosen(7, &[("GEMINI_API_KEY", "AIza-test")]).as_deref(), Some("gemini-api-key"));
    let vertex = [("GOOGLE_GENAI_USE_VERTEXAI", "true"), ("GEMINI_API_KEY", "AIza-test")];
    assert_eq!(chosen(8, &vertex).as_deref(), Some("vertex-ai"), "in Gemini CLI's own order");
    assert_eq!(chosen(9, &[("GOOGLE_GENAI_USE_VERTEXAI", "false")]), None);
    assert_eq!(chosen(10, &[]), None);
}

/// A pi agent in its pod: bosun's extension is written in the pod's agent directory and named on
/// pi's command line, reporting to its host's relay, deciding the project's trust as the policy
/// says; pi's config directory is the pod's (`PI_CODING_AGENT_DIR`, the claim's when there is
/// one), where bosun writes nothing (its key and provider are the pod's, its trust the
/// extension's), and nothing of this machine's reaches it.
#[test]
fn a_pi_agents_pod_config_is_the_pods_and_its_extension_is_in_the_pods_agent_directory() {
    let extension = format!("{}/bosun-pi.js", bosun_core::POD_AGENT_DIR);
    let pi = |n: u64, policy: bosun_core::Policy| {
        let mut spec = bosun_core::AgentSpec {
            driver: bosun_core::driver::Driver::Pi { session_id: "00000000-0000-0000-0000-00000000000b".into() },
            command: vec!["pi".into()],
            policy,
            ..in_pod_with(n, Some("bosun-pi-work"))
        };
        spec.env.insert("PI_CODING_AGENT_DIR".into(), "/home/me/.pi/work".into());
        spec.env.insert("PI_CODING_AGENT_SESSION_DIR".into(), "/home/me/pi-sessions".into());
        spec
    };
    let mut sim = Sim::new();
    let (a, w) = sim.start_with(pi(9, bosun_core::Policy::default()));
    let effects = sim.ok(Input::WorkspaceCreated { id: w });
    let Some(Effect::SpawnSession { command, env, files, config, .. }) =
        effects.iter().find(|e| matches!(e, Effect::SpawnSession { .. }))
    else {
        panic!("its session is started: {effects:?}")
    };
    assert!(command.windows(2).any(|w| w[0] == "-e" && w[1] == extension), "{command:?}");
    let written: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
    assert_eq!(written, std::slice::from_ref(&extension), "its extension, and nothing in its config: {written:?}");
    let source = &files[0].1;
    let hook = format!("'bosun' --state-dir '{}' hook report pi {a} --generation 0", bosun_core::POD_STATE_DIR);
    assert!(source.contains(&hook), "it reports to its host's relay: {source}");
    assert!(source.contains("const TRUST = true"), "it trusts the project, as the policy says");
    assert_eq!(env.get("PI_CODING_AGENT_DIR").map(String::as_str), Some(bosun_core::POD_CONFIG));
    assert_eq!(env.get("PI_CODING_AGENT_SESSION_DIR"), None, "its sessions are in its config, on the claim");
    assert!(!env.values().any(|v| v.contains("/home/me")), "nothing of this machine's: {env:?}");
    assert!(config.is_none(), "no config of bosun's making: the pod's is its own");

    let mut sim = Sim::new();
    let policy = bosun_core::Policy { accept_trust: false, ..bosun_core::Policy::default() };
    let (_, w) = sim.start_with(pi(10, policy));
    let files = files_given(&sim.ok(Input::WorkspaceCreated { id: w }));
    assert!(files[&extension].contains("const TRUST = false"), "left to a person: pi asks");
}

/// An opencode agent's plugin is written in its pod's config (the claim's), naming the report
/// command as the pod runs it, and opencode finds it there: `OPENCODE_CONFIG_CONTENT` names it
/// (a content given with `--env` kept), and its config, data, state and cache are there too
/// (its home in the pod is the image's).
#[test]
fn an_opencode_agents_pod_config_holds_bosuns_plugin_which_its_environment_names() {
    let plugin = format!("{}/bosun-plugin.js", bosun_core::POD_CONFIG);
    let mut spec = bosun_core::AgentSpec {
        driver: bosun_core::driver::Driver::Opencode { session: None },
        command: vec!["opencode".into()],
        ..in_pod_with(7, Some("bosun-a-work"))
    };
    spec.env.insert("OPENCODE_CONFIG_CONTENT".into(), r#"{"model":"a/b"}"#.into());
    let mut sim = Sim::new();
    let (a, w) = sim.start_with(spec);
    let spawned = sim.ok(Input::WorkspaceCreated { id: w });
    let files = files_given(&spawned);
    let code = files.get(&plugin).unwrap_or_else(|| panic!("its plugin in the pod's config: {files:?}"));
    assert!(code.contains(&format!("report opencode {a} --generation 0")), "{code}");
    assert!(code.contains(&format!("const SESSIONS = \"{}/sessions\"", bosun_core::POD_CONFIG)), "{code}");
    assert!(!files.keys().any(|f| !f.starts_with(bosun_core::POD_CONFIG)), "nothing elsewhere: {files:?}");
    // Its config directory there has its plugin package's place filled: opencode installs none
    // from the npm registry before it loads bosun's plugin.
    let config = format!("{}/config/opencode", bosun_core::POD_CONFIG);
    let manifest: serde_json::Value = serde_json::from_str(&files[&format!("{config}/package.json")]).unwrap();
    assert_eq!(manifest["dependencies"]["@opencode-ai/plugin"], "*");
    let lock: serde_json::Value = serde_json::from_str(&files[&format!("{config}/package-lock.json")]).unwrap();
    assert_eq!(lock["packages"][""]["dependencies"], manifest["dependencies"], "its lock names what it needs");
    assert!(files.contains_key(&format!("{config}/node_modules/.package-lock.json")), "{files:?}");
    let env = spawned
        .iter()
        .find_map(|e| match e {
            Effect::SpawnSession { env, .. } => Some(env.clone()),
            _ => None,
        })
        .expect("a spawn");
    let content: serde_json::Value = serde_json::from_str(&env["OPENCODE_CONFIG_CONTENT"]).unwrap();
    assert_eq!(content, serde_json::json!({"model": "a/b", "plugin": [plugin]}));
    for (var, dir) in [("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state")] {
        assert_eq!(env.get(var).cloned(), Some(format!("{}/{dir}", bosun_core::POD_CONFIG)), "{var}");
    }
}

/// An opencode agent's session is in its pod (its plugin's file with it), out of bosun's reach:
/// the session its plugin's reports name is kept in its record, and a resume in a new pod
/// continues it (`--session`), its message typed once it is up.
#[test]
fn a_resumed_opencode_agent_in_a_pod_continues_the_session_its_plugin_named() {
    const SESSION: &str = "ses_ddf9bd9f8ffe2mXtUj9tIhl7d9";
    let report = |a: &bosun_core::AgentId, event: &str, payload: &str| {
        let report = bosun_core::driver::DriverKind::Opencode.behaviour().take_report(event, payload);
        Input::Report { agent: a.clone(), generation: None, spooled_at: None, report }
    };
    let policy = bosun_core::Policy {
        on_dead: "resume:go on".parse().map(|s| bosun_core::Chain(vec![s])).unwrap(),
        ..Default::default()
    };
    let spec = bosun_core::AgentSpec {
        driver: bosun_core::driver::Driver::Opencode { session: None },
        command: vec!["opencode".into()],
        prompt: Some("fix it".into()),
        policy,
        ..in_pod_with(8, Some("bosun-a-work"))
    };
    let mut sim = Sim::new();
    let (a, w) = sim.start_with(spec);
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: None });
    sim.ok(report(&a, "started", r#"{"type":"started"}"#));
    let busy = format!(r#"{{"type":"session.status","sessionID":"{SESSION}","status":{{"type":"busy"}}}}"#);
    sim.ok(report(&a, "session.status", &busy));
    let agent = &sim.state.agents[&a];
    assert_eq!(agent.log, None, "its session's file is in the pod");
    assert_eq!(agent.driver.found(), Some(SESSION), "the session its plugin named is kept");
    let found = sim.log.iter().filter(|e| matches!(e, Event::AgentConversationFound { .. })).count();
    sim.ok(report(&a, "session.idle", &format!(r#"{{"type":"session.idle","sessionID":"{SESSION}","said":"Done."}}"#)));
    let again = sim.log.iter().filter(|e| matches!(e, Event::AgentConversationFound { .. })).count();
    assert_eq!((found, again), (1, 1), "recorded once");

    let session = sim.state.agents[&a].session.clone();
    let resumed = sim.ok(Input::PodEnded { session, status: ExitStatus::code(137), saved: saved(true, true) });
    let command = resumed.iter().find_map(|e| match e {
        Effect::SpawnSession { command, place: Place::Pod(_), .. } => Some(command.clone()),
        _ => None,
    });
    assert_eq!(command.expect("resumed in a new pod"), ["opencode", "--session", SESSION]);
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: None });
    let typed = sim.ok(report(&a, "started", r#"{"type":"started"}"#));
    assert!(typed.iter().any(|e| matches!(e, Effect::SendText { text, .. } if text.contains("go on"))), "{typed:?}");
}
