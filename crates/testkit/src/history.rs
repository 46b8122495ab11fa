//! A realistic, deterministic event history made by the core itself: agents are started, their
//! workspaces made and sessions spawned, they work and idle in turn for a while and are killed,
//! a new one starting every two hundred inputs or so; each input goes through `decide` and `apply` with a
//! fake clock, and its events are one append's worth.

use std::collections::BTreeMap;
use std::path::Path;

use bosun_core::driver::Driver;
use bosun_core::WorkBranch;
use bosun_core::{
    apply, decide, AgentId, AgentSpec, Event, Input, Name, Nonce, Observation, Policy, Source, State, Timestamp,
    WorkspaceId, WorkspaceKind,
};

/// How many work/idle turns an agent takes before it is killed.
const TURNS: u64 = 100;

pub struct History {
    state: State,
    clock: Timestamp,
    /// The agent being driven, and how far its script has got.
    agent: u64,
    step: u64,
}

impl Default for History {
    fn default() -> Self {
        Self::new()
    }
}

impl History {
    pub fn new() -> Self {
        Self { state: State::default(), clock: Timestamp::from_millis(1_700_000_000_000), agent: 0, step: 0 }
    }

    /// The state after every event handed out so far.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The events of the next accepted input (never empty).
    pub fn next_input(&mut self) -> Vec<Event> {
        loop {
            let input = self.script();
            self.clock = Timestamp::from_millis(self.clock.as_millis() + 1_500);
            if let Ok(decision) = decide(&self.state, &input, self.clock) {
                for event in &decision.events {
                    apply(&mut self.state, event);
                }
                if !decision.events.is_empty() {
                    return decision.events;
                }
            }
        }
    }

    /// The next `n` events, one at a time.
    pub fn events(&mut self, n: usize) -> Vec<Event> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            out.extend(self.next_input());
        }
        out.truncate(n);
        out
    }

    fn script(&mut self) -> Input {
        let n = self.agent;
        let agent = AgentId::new(&Nonce::from_bits(n));
        let observed = |observation| Input::Observed {
            agent: agent.clone(),
            source: Source::Hook,
            observation,
            log: None,
            generation: None,
        };
        let step = self.step;
        self.step += 1;
        match step {
            0 => Input::StartAgent(Box::new(spec(n))),
            1 => Input::WorkspaceCreated { id: workspace(n) },
            2 => Input::SessionSpawned { agent, pid: Some(10_000 + n as u32) },
            s if s < 3 + 2 * TURNS => observed(if s % 2 == 1 { Observation::Working } else { Observation::Idle }),
            s if s == 3 + 2 * TURNS => Input::KillAgent { agent },
            _ => {
                self.agent += 1;
                self.step = 0;
                Input::SessionKilled { agent }
            }
        }
    }
}

fn workspace(n: u64) -> WorkspaceId {
    WorkspaceId::new(&name(), &Nonce::from_bits(n))
}

fn name() -> Name {
    Name::parse("history").unwrap_or_else(|e| panic!("a valid name: {e}"))
}

fn spec(n: u64) -> AgentSpec {
    let nonce = Nonce::from_bits(n);
    AgentSpec {
        name: name(),
        kind: WorkspaceKind::Worktree(WorkBranch {
            repo: "/home/dev/src/project".into(),
            branch: nonce.default_branch(),
            base_ref: "HEAD".into(),
            base: "4b825dc642cb6eb9a060e54bf8d69288fbee4904".into(),
        }),
        nonce,
        workspaces_root: "/home/dev/.local/state/bosun/workspaces".into(),
        settings_from: Some("/home/dev/src/project/.claude/settings.json".into()),
        settings_folder: None,
        command: vec!["claude".into(), "--model".into(), "sonnet".into()],
        env: BTreeMap::from([("CLAUDE_CONFIG_DIR".into(), "/home/dev/.claude".into())]),
        inherits: Vec::new(),
        agents_root: Path::new("/home/dev/.local/state/bosun/agents").to_owned(),
        driver: Driver::Generic { patterns: Default::default() },
        policy: Policy::default(),
        prompt: Some(format!("Fix issue #{n}: the parser drops the last line of a file without a newline.")),
        hook_command: "'/usr/local/bin/bosun' --state-dir '/home/dev/.local/state/bosun' hook".into(),
        pool: None,
        backend: Default::default(),
        runtime: Default::default(),
    }
}
