//! The engine loop with fake adapters: durability before acknowledgement, effects carried out
//! and fed back, the log rebuilding the same state, inputs waiting together recorded in one
//! transaction, and snapshots taken as it goes.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bosun_core::WorkBranch;
use bosun_core::{
    AgentId, AgentSpec, DeathReason, ExitStatus, Input, Name, Nonce, SessionState, State, WorkspaceKind, WorkspaceState,
};
use bosun_daemon::engine::{self, EngineHandle};
use bosun_daemon::executor::Executor;
use bosun_daemon::{EngineError, Store};
use bosun_testkit::fakes::{FakeSessions, FakeWorkspaces};

mod support;

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
        Self::with_store(|s| s)
    }

    fn with_store(f: impl FnOnce(Store) -> Store) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("bosun.db");
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let (sessions, workspaces) = (Arc::new(FakeSessions::default()), Arc::new(FakeWorkspaces::default()));
        let store = f(Store::open(&db).unwrap());
        let fakes = support::Fakes { sessions: sessions.clone(), workspaces: workspaces.clone(), ..Default::default() };
        let dirs = bosun_wire::StateDir::new(dir.path().to_owned()).unwrap();
        let channels = Arc::new(bosun_daemon::channels::Channels::new(dirs.clone(), runtime.handle().clone()));
        let nonces = Arc::new(bosun_daemon::nonces::Nonces::new(None, 0));
        let executor = Executor::new(&fakes.parts(), runtime.handle(), &dirs, "true", &nonces, &channels);
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
        pool: None,
        backend: Default::default(),
        runtime: Default::default(),
        name: Name::parse("fake").unwrap(),
        kind: WorkspaceKind::Worktree(WorkBranch {
            repo: "/repo".into(),
            branch: nonce.default_branch(),
            base_ref: "HEAD".into(),
            base: "c0ffee".into(),
        }),
        nonce,
        workspaces_root: "/state/workspaces".into(),
        settings_from: None,
        settings_folder: None,
        command: vec!["agent".into()],
        env: BTreeMap::new(),
        inherits: Vec::new(),
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

impl Rig {
    /// Holds the engine thread until the returned sender is dropped, so that what is submitted
    /// meanwhile waits in its channel together.
    fn hold(&self) -> std::sync::mpsc::Sender<()> {
        let (entered_tx, entered) = std::sync::mpsc::channel();
        let (release, released) = std::sync::mpsc::channel::<()>();
        let engine = self.engine().clone();
        self.runtime.spawn(async move {
            engine
                .query(move |_, _| {
                    entered_tx.send(()).unwrap();
                    let _ = released.recv();
                })
                .await
        });
        entered.recv().unwrap();
        release
    }

    /// `(seq, tx_end)` of every recorded event.
    fn rows(&self) -> Vec<(u64, bool)> {
        let conn = rusqlite::Connection::open(&self.db).unwrap();
        let mut stmt = conn.prepare("SELECT seq, tx_end FROM events ORDER BY seq").unwrap();
        stmt.query_map([], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?))).unwrap().map(Result::unwrap).collect()
    }
}

#[test]
fn inputs_waiting_together_are_recorded_in_one_transaction_each_decided_on_the_state_the_earlier_left() {
    let rig = Rig::new();
    let agent = AgentId::new(&Nonce::from_bits(2));
    let start = || Input::StartAgent(Box::new(spec(2, rig._dir.path())));
    let release = rig.hold();
    let replies = [
        rig.engine().submit(Input::KillAgent { agent: agent.clone() }),
        rig.engine().submit(start()),
        rig.engine().submit(start()),
        rig.engine().submit(Input::KillAgent { agent: agent.clone() }),
    ];
    drop(release);
    let [unknown, started, again, killed] = replies.map(|r| rig.runtime.block_on(r));
    assert!(matches!(unknown, Err(EngineError::Rejected(_))), "no agent 2 yet: {unknown:?}");
    let started = started.unwrap();
    assert!(matches!(again, Err(EngineError::Rejected(_))), "agent 2 exists by now: {again:?}");
    let killed = killed.unwrap();
    assert!(!killed.is_empty(), "the kill was decided on the state the start left");

    let n = (started.len() + killed.len()) as u64;
    let batch: Vec<_> = rig.rows().into_iter().take_while(|&(seq, _)| seq <= n).collect();
    let one_transaction: Vec<_> = (1..=n).map(|seq| (seq, seq == n)).collect();
    assert_eq!(batch, one_transaction, "readable at once, and one append whose last event ends it");
}

#[test]
fn a_batch_whose_append_fails_is_not_acknowledged_and_leaves_the_state_the_disk_has() {
    let rig = Rig::new();
    let poisoned = {
        let mut spec = spec(2, rig._dir.path());
        spec.prompt = Some("poison".into());
        Input::StartAgent(Box::new(spec))
    };
    rusqlite::Connection::open(&rig.db)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.body LIKE '%poison%'
             BEGIN SELECT RAISE(ABORT, 'refused'); END;",
        )
        .unwrap();
    let mut events = rig.engine().subscribe();
    let release = rig.hold();
    let replies =
        [rig.engine().submit(Input::StartAgent(Box::new(spec(1, rig._dir.path())))), rig.engine().submit(poisoned)];
    drop(release);
    for reply in replies {
        let reply = rig.runtime.block_on(reply);
        assert!(matches!(reply, Err(EngineError::Store(_))), "{reply:?}");
    }
    assert_eq!(rig.state(), State::default(), "agent 1 was applied, then undone");
    assert_eq!(Store::open(&rig.db).unwrap().load().unwrap(), State::default());
    assert!(rig.rows().is_empty());

    let agent = AgentId::new(&Nonce::from_bits(3));
    let recorded =
        rig.runtime.block_on(rig.engine().submit(Input::StartAgent(Box::new(spec(3, rig._dir.path()))))).unwrap();
    rig.wait("running", |s| s.agents.get(&agent).is_some_and(|a| a.state == SessionState::Running));
    assert_eq!(*events.try_recv().unwrap(), recorded[0], "nothing of the failed batch was broadcast");
    assert_eq!(rig.workspaces.state().created.len(), 1, "only agent 3's effects were carried out");
}

#[test]
fn the_engine_takes_snapshots_as_it_goes() {
    let mut rig = Rig::with_store(|s| s.snapshot_every(3));
    for n in 1..=4 {
        rig.runtime.block_on(rig.engine().submit(Input::StartAgent(Box::new(spec(n, rig._dir.path()))))).unwrap();
    }
    let before =
        rig.wait("all running", |s| s.agents.values().filter(|a| a.state == SessionState::Running).count() == 4);
    rig.engine = None;
    let conn = rusqlite::Connection::open(&rig.db).unwrap();
    let snapshots: i64 = conn.query_row("SELECT COUNT(*) FROM snapshots", [], |r| r.get(0)).unwrap();
    assert_eq!(snapshots, 2, "taken, and all but the newest two dropped");
    assert_eq!(Store::open(&rig.db).unwrap().load().unwrap(), before);
}

#[test]
fn on_a_full_disk_each_input_is_refused_the_state_stays_the_logs_and_the_engine_keeps_answering() {
    let rig = Rig::with_store(|s| s.max_pages(8).unwrap());
    let push = |n: usize| Input::QueuePush {
        queue: "bugs".into(),
        data: BTreeMap::from([("title".to_owned(), format!("{n}-{}", "x".repeat(2000)))]),
        retry: 0,
    };
    let submit = |n: usize| rig.runtime.block_on(rig.engine().submit(push(n)));
    let mut n = 0;
    while submit(n).is_ok() {
        n += 1;
        assert!(n < 1000, "the capped database never filled");
    }
    for again in n..n + 3 {
        let refused = submit(again).expect_err("no room yet");
        assert!(refused.to_string().contains("is full: free some space; nothing was recorded"), "{refused}");
        assert_eq!(rig.state().items.len(), n, "the refused push is not in the state");
    }
    assert_eq!(rig.state(), Store::open(&rig.db).unwrap().load().unwrap(), "the state is the log's");
}
