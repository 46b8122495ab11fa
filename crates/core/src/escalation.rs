//! Escalations: what bosun hands to a person when its policy runs out or says so.

use serde::{Deserialize, Serialize};

use crate::{AgentId, EscalationId, Timestamp, Trigger};

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
