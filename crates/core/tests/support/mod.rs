//! Shared helpers for the core's tests: a tiny driver that feeds inputs through `decide` and
//! `apply` with a fake clock, keeping every recorded event.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use bosun_core::{
    apply, decide, AgentId, AgentSpec, Decision, Effect, Event, Input, MessageId, MessageState, Name, Nonce, Rejection,
    State, Timestamp, WorkspaceId, WorkspaceKind,
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
        let Decision { events, effects } = decide(&self.state, &input, self.clock)?;
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
        let queued = |m: &MessageId| self.state.messages.get(m).is_some_and(|m| m.state == MessageState::Queued);
        let mut v: Vec<MessageId> = self.sent.iter().copied().filter(queued).collect();
        v.dedup();
        v
    }

    pub fn ok(&mut self, input: Input) -> Vec<Effect> {
        self.feed(input).expect("input accepted")
    }

    /// Starts agent number `n` (a worktree in /repo) and returns its ids.
    pub fn start(&mut self, n: u64) -> (AgentId, WorkspaceId) {
        let spec = spec(n);
        let ids = (AgentId::new(&spec.nonce), WorkspaceId::new(&spec.name, &spec.nonce));
        self.ok(Input::StartAgent(spec));
        ids
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
        kind: WorkspaceKind::Worktree {
            repo: PathBuf::from("/repo"),
            branch: nonce.default_branch(),
            base_ref: "HEAD".into(),
            base: "c0ffee".into(),
        },
        nonce,
        workspaces_root: PathBuf::from("/state/workspaces"),
        settings_from: None,
        command: vec!["claude".into()],
        env: BTreeMap::new(),
    }
}
