//! Escalations: what bosun hands to a person when its policy runs out or says so.

use serde::{Deserialize, Serialize};

use crate::{AgentId, Timestamp, Trigger};

/// An escalation's number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EscalationId(pub u64);

impl std::fmt::Display for EscalationId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "e{}", self.0)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Escalation {
    pub id: EscalationId,
    pub agent: AgentId,
    pub trigger: Trigger,
    pub reason: String,
    pub at: Timestamp,
    pub resolved: Option<Resolution>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resolution {
    pub at: Timestamp,
    pub message: Option<String>,
}
