//! The account an agent's client signs in with, as far as bosun can tell: its client and the
//! config directory its credentials live in (`CLAUDE_CONFIG_DIR` or `~/.claude`, `CODEX_HOME`
//! or `~/.codex`; for a confined agent, the user's directory its own config is made from).
//! Agents on one account share its rate limits. A client whose config bosun does not know (a
//! generic agent) has none: it shares nothing.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::driver::DriverKind;
use crate::{Agent, OwnConfig};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    pub client: DriverKind,
    pub config: PathBuf,
}

impl Account {
    pub fn of(a: &Agent) -> Option<Self> {
        let config = match OwnConfig::of(a) {
            Some(own) => own.user?,
            None => a.driver.behaviour().user_config(&a.env)?.dir?,
        };
        Some(Self { client: a.driver.kind(), config })
    }
}
