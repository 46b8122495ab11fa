//! Shared helpers for the core's tests: a tiny driver that feeds inputs through `decide` and
//! `apply` with a fake clock, keeping every recorded event.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use bosun_core::driver::Driver;
use bosun_core::WorkBranch;
use bosun_core::{
    apply, decide, AgentId, AgentSpec, Decision, Effect, Event, Input, ItemId, JobId, JobSpec, MessageId, MessageState,
    Name, Next, Nonce, Observation, Policy, Rejection, Source, State, StepRun, StepSpec, Timestamp, WorkspaceId,
    WorkspaceKind,
};

pub struct Sim {
    pub state: State,
    pub log: Vec<Event>,
    pub clock: Timestamp,
    /// Every message a `SendText` effect was emitted for, in order, repeats included.
    pub sent: Vec<MessageId>,
}

impl Sim {
    pub fn new() -> Self {
        Self { state: State::default(), log: Vec::new(), clock: Timestamp::from_millis(1_000), sent: Vec::new() }
    }

    /// Feeds one input; returns the effects, or the rejection.
    pub fn feed(&mut self, input: Input) -> Result<Vec<Effect>, Rejection> {
        self.clock = Timestamp::from_millis(self.clock.as_millis() + 10);
        let Decision { events, effects, .. } = decide(&self.state, &input, self.clock)?;
        // A session starts in a directory named in full, never in whatever the daemon's is.
        for e in &effects {
            if let Effect::SpawnSession { agent, cwd, .. } = e {
                assert!(cwd.is_absolute(), "agent {agent}'s session would start in {cwd:?}, not an absolute path");
            }
        }
        for e in &events {
            apply(&mut self.state, e);
        }
        self.log.extend(events);
        self.sent.extend(effects.iter().filter_map(|e| match e {
            Effect::SendText { message, .. } => Some(*message),
            _ => None,
        }));
        Ok(effects)
    }

    /// Messages being typed: sent, and neither delivered nor failed yet.
    pub fn in_flight(&self) -> Vec<MessageId> {
        self.state.messages.values().filter(|m| m.state == MessageState::Sending).map(|m| m.id).collect()
    }

    /// Reports `observation` about agent `a` from `source`.
    pub fn see(&mut self, a: &AgentId, source: Source, observation: Observation) -> Vec<Effect> {
        self.ok(Input::Observed { agent: a.clone(), source, observation, log: None, generation: None })
    }

    /// Fires every timer due by now, in order; returns their effects.
    pub fn fire_due(&mut self) -> Vec<Effect> {
        let due: Vec<_> = self.state.timers.values().filter(|t| t.at <= self.clock).map(|t| t.id).collect();
        due.into_iter().flat_map(|id| self.ok(Input::TimerFired { id })).collect()
    }

    /// Feeds an input that must be accepted; returns its effects but the bookkeeping ones
    /// (following logs, setting timers).
    pub fn ok(&mut self, input: Input) -> Vec<Effect> {
        let effects = self.feed(input).expect("input accepted");
        effects
            .into_iter()
            .filter(|e| {
                !matches!(
                    e,
                    Effect::WatchLog { .. }
                        | Effect::WatchWorkspace { .. }
                        | Effect::UnwatchLogs { .. }
                        | Effect::SetTimer { .. }
                )
            })
            .collect()
    }

    /// Starts agent number `n` (a worktree in /repo) and returns its ids.
    pub fn start(&mut self, n: u64) -> (AgentId, WorkspaceId) {
        self.start_with(spec(n))
    }

    pub fn start_with(&mut self, spec: AgentSpec) -> (AgentId, WorkspaceId) {
        let ids = (AgentId::new(&spec.nonce), WorkspaceId::new(&spec.name, &spec.nonce));
        self.ok(Input::StartAgent(Box::new(spec)));
        ids
    }

    /// Moves the fake clock on.
    pub fn advance(&mut self, ms: u64) {
        self.clock = Timestamp::from_millis(self.clock.as_millis() + ms);
    }

    /// Starts agent `n` and brings it to Running.
    pub fn running(&mut self, n: u64) -> (AgentId, WorkspaceId) {
        let (a, w) = self.start(n);
        self.ok(Input::WorkspaceCreated { id: w.clone() });
        self.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(100 + n as u32) });
        (a, w)
    }
}

pub fn spec(n: u64) -> AgentSpec {
    let nonce = Nonce::from_bits(n);
    AgentSpec {
        name: Name::parse("agent").unwrap(),
        kind: WorkspaceKind::Worktree(WorkBranch {
            repo: PathBuf::from("/repo"),
            branch: nonce.default_branch(),
            base_ref: "HEAD".into(),
            base: "c0ffee".into(),
        }),
        nonce,
        workspaces_root: PathBuf::from("/state/workspaces"),
        settings_from: None,
        settings_folder: None,
        command: vec!["agent".into()],
        env: BTreeMap::new(),
        inherits: Vec::new(),
        agents_root: PathBuf::from("/state/agents"),
        driver: Driver::Generic { patterns: Default::default() },
        policy: Policy::default(),
        prompt: None,
        hook_command: "bosun hook".into(),
        pool: None,
        backend: Default::default(),
        runtime: Default::default(),
    }
}

/// The texts of the `SendText` effects among `effects`, in order.
pub fn sent_texts(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::SendText { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// Agent `n` as a Claude agent (hooks, session log) with `policy`.
pub fn claude(n: u64, policy: Policy) -> AgentSpec {
    AgentSpec {
        command: vec!["claude".into()],
        driver: Driver::Claude { session_id: format!("00000000-0000-0000-0000-{n:012}") },
        policy,
        ..spec(n)
    }
}

/// The daemon's part: a job made for a worker's item or a cron's turn, one shell step `fix`.
pub fn shell_job(id: JobId, run: &str, item: Option<(ItemId, BTreeMap<String, String>)>) -> JobSpec {
    JobSpec {
        id,
        name: "fix".into(),
        vars: BTreeMap::new(),
        steps: vec![StepSpec {
            name: "fix".into(),
            run: StepRun::Shell(run.into()),
            on_done: Some(Next::Done),
            on_fail: None,
            on_cancel: None,
            attempts: 1,
            backoff_ms: 0,
        }],
        on_done: None,
        on_fail: None,
        max_step_visits: 5,
        budget: None,
        runbook_hash: "h".into(),
        locals: BTreeMap::new(),
        cwd: "/repo".into(),
        workspace: None,
        logs: "/logs".into(),
        agents: BTreeMap::new(),
        agents_root: "/agents".into(),
        hook_command: "bosun hook".into(),
        item,
        children: BTreeMap::new(),
        parent: None,
        notify: Default::default(),
        plan: None,
    }
}
