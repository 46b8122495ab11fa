//! Timers are state: a deadline recorded by an event, re-armed by the daemon after a restart.

use serde::{Deserialize, Serialize};

use crate::{AgentId, JobId, MessageId, Timestamp, Trigger};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TimerId(pub u64);

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timer {
    pub id: TimerId,
    pub at: Timestamp,
    pub kind: TimerKind,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "timer", rename_all = "snake_case")]
pub enum TimerKind {
    /// A recovery step waits out its cooldown before acting; `class` names the idle class whose
    /// own chain it is.
    Cooldown {
        agent: AgentId,
        trigger: Trigger,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        class: Option<crate::TurnClass>,
    },
    /// Without hooks, idle must last this long before `on_idle` fires; also, an agent that
    /// nothing came of its chain's last step for (see `recovery::again`) has its chain act again
    /// where it stands (idle, at a dialog, failed) once this passes.
    Grace { agent: AgentId },
    /// A message was typed when `seq` events had been applied: if the agent has not changed state
    /// since and is not working, press Enter once more.
    Confirm { agent: AgentId, message: MessageId, seq: u64, again: bool },
    /// The agent started but has not reported in: look at its screen for a start-up dialog.
    Startup { agent: AgentId, checks: u32 },
    /// A generic agent printed something: if it prints nothing more for a while, it is idle.
    Quiet { agent: AgentId },
    /// Its client reported its start before its input takes what is typed (Gemini CLI's
    /// `SessionStart`): no message is typed into it until this fires.
    InputSettling { agent: AgentId },
    /// A rate-limited agent (a `wait` step) is woken with `message` once its limit has reset.
    Wake {
        agent: AgentId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// A new agent's start waits while another agent of its account waits out a rate limit.
    HeldStart { agent: AgentId },
    /// An agent paused at its budget while working is looked at again: still working (its
    /// client did not take the interrupt key, read with what came before it on a starved
    /// core), the key is pressed again, `left` more times at most.
    Interrupt { agent: AgentId, left: u32 },
    /// The rate limit of an account an agent was moved off (`switch`) resets: until then the
    /// account's agents get no nudge of bosun's and none starts on it.
    Window { account: crate::Account },
    /// A job's failed step waits out its backoff before its next try.
    Backoff { job: JobId },
    /// A cron's next turn.
    Cron { name: String },
    /// A worker lists its external queue again.
    Poll { worker: String },
}

impl TimerKind {
    /// The agent the timer is about, if it is about one.
    pub fn agent(&self) -> Option<&AgentId> {
        Some(match self {
            Self::Cooldown { agent, .. }
            | Self::Grace { agent }
            | Self::Confirm { agent, .. }
            | Self::Startup { agent, .. }
            | Self::Quiet { agent }
            | Self::InputSettling { agent }
            | Self::Wake { agent, .. }
            | Self::HeldStart { agent }
            | Self::Interrupt { agent, .. } => agent,
            Self::Backoff { .. } | Self::Cron { .. } | Self::Poll { .. } | Self::Window { .. } => return None,
        })
    }
}
