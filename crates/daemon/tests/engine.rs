//! The engine loop with fake adapters: durability before acknowledgement, effects carried out
//! and fed back, and the log rebuilding the same state.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bosun_core::{
    AgentId, AgentSpec, DeathReason, ExitStatus, Input, Name, Nonce, SessionState, State, WorkspaceKind, WorkspaceState,
};
use bosun_daemon::engine::{self, EngineHandle};
use bosun_daemon::executor::Executor;
use bosun_daemon::Store;
use bosun_testkit::fakes::{FakeSessions, FakeWorkspaces};

struct Rig {
    _dir: tempfile::TempDir,
    db: PathBuf,
    runtime: tokio::runtime::Runtime,
    sessions: Arc<FakeSessions>,
    workspaces: Arc<FakeWorkspaces>,
    engine: Option<EngineHandle>,
}

impl Rig {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("bosun.db");
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let (sessions, workspaces) = (Arc::new(FakeSessions::default()), Arc::new(FakeWorkspaces::default()));
        let store = Store::open(&db).unwrap();
        let executor = Executor {
            workspaces: workspaces.clone(),
            sessions: sessions.clone(),
            notifier: Arc::new(bosun_adapters::DesktopNotifier),
            runtime: runtime.handle().clone(),
            logs: Arc::default(),
            steps: Arc::default(),
            dirs: bosun_wire::StateDir::new(dir.path().to_owned()).unwrap(),
            hook_command: "true".into(),
        };
        let (engine, _thread) = engine::start(store, State::default(), executor, || {});
        Self { _dir: dir, db, runtime, sessions, workspaces, engine: Some(engine) }
    }

    fn engine(&self) -> &EngineHandle {
        self.engine.as_ref().unwrap()
    }

    fn state(&self) -> State {
        self.runtime.block_on(self.engine().query(|s, _| s.clone())).unwrap()
    }

    /// Polls the state until `f` holds, for at most ten seconds.
    fn wait(&self, what: &str, f: impl Fn(&State) -> bool) -> State {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let s = self.state();
            if f(&s) {
                return s;
            }
            assert!(std::time::Instant::now() < deadline, "never: {what}; state {s:#?}");
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

fn spec(n: u64, agents_root: &std::path::Path) -> AgentSpec {
    let nonce = Nonce::from_bits(n);
    AgentSpec {
        name: Name::parse("fake").unwrap(),
        kind: WorkspaceKind::Worktree {
            repo: "/repo".into(),
            branch: nonce.default_branch(),
            base_ref: "HEAD".into(),
            base: "c0ffee".into(),
        },
        nonce,
        workspaces_root: "/state/workspaces".into(),
        settings_from: None,
        command: vec!["agent".into()],
        env: BTreeMap::new(),
        agents_root: agents_root.to_owned(),
        driver: bosun_core::driver::Driver::Generic { patterns: Default::default() },
        policy: bosun_core::Policy::default(),
        prompt: None,
        hook_command: "true".into(),
    }
}

#[test]
fn events_are_on_disk_before_the_caller_hears_of_them() {
    let rig = Rig::new();
    let events =
        rig.runtime.block_on(rig.engine().submit(Input::StartAgent(Box::new(spec(1, rig._dir.path()))))).unwrap();
    assert_eq!(events.len(), 2, "{events:?}");
    let other_connection = Store::open(&rig.db).unwrap();
    // The effects that follow may have added more by now; the two acknowledged ones must be there.
    assert!(other_connection.count() >= 2, "both events readable from another connection at once");
}

#[test]
fn effects_are_carried_out_and_their_outcomes_fed_back() {
    let rig = Rig::new();
    let agent = AgentId::new(&Nonce::from_bits(1));
    rig.runtime.block_on(rig.engine().submit(Input::StartAgent(Box::new(spec(1, rig._dir.path()))))).unwrap();
    let s = rig.wait("running", |s| s.agents[&agent].state == SessionState::Running);
    assert_eq!(rig.sessions.state().spawns, vec![agent.session()], "spawned once");
    assert_eq!(rig.workspaces.state().created.len(), 1);
    assert_eq!(s.agents[&agent].pid, Some(1001));

    rig.sessions.exit(&agent.session(), ExitStatus::code(3));
    let sessions = rig.runtime.block_on(async { bosun_adapters::Sessions::list(&*rig.sessions) }).unwrap();
    rig.engine().submit_nowait(Input::SessionsObserved { sessions, as_of: s.seq });
    let s = rig.wait("crashed and released", |s| {
        s.workspaces.values().all(|w| w.state == WorkspaceState::Ready) && s.agents[&agent].state.is_dead()
    });
    assert_eq!(s.agents[&agent].state, SessionState::Dead { reason: DeathReason::Crashed { code: 3 } });
}

#[test]
fn the_log_rebuilds_the_state_the_engine_had() {
    let mut rig = Rig::new();
    let agent = AgentId::new(&Nonce::from_bits(1));
    rig.runtime.block_on(rig.engine().submit(Input::StartAgent(Box::new(spec(1, rig._dir.path()))))).unwrap();
    rig.runtime.block_on(rig.engine().submit(Input::StartAgent(Box::new(spec(2, rig._dir.path()))))).unwrap();
    rig.wait("both running", |s| s.agents.values().all(|a| a.state == SessionState::Running));
    rig.runtime.block_on(rig.engine().submit(Input::KillAgent { agent: agent.clone() })).unwrap();
    let before = rig.wait("killed and released", |s| {
        s.agents[&agent].state.is_dead() && s.workspaces.values().any(|w| w.state == WorkspaceState::Ready)
    });
    rig.engine = None;
    let rebuilt = Store::open(&rig.db).unwrap().load().unwrap();
    assert_eq!(rebuilt, before);
}
