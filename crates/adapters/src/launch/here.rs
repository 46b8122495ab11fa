//! `HereLauncher`: a session on this machine, as it is: in tmux on bosun's own server, or in
//! bosun's session host (`--session host`).

use std::sync::Arc;

use bosun_core::SessionBackend;

use super::Launcher;
use crate::{AdapterError, HostSessions, Sessions, SpawnSpec};

#[derive(Clone)]
pub struct HereLauncher {
    pub tmux: Arc<dyn Sessions>,
    pub host: Arc<HostSessions>,
}

impl Launcher<()> for HereLauncher {
    fn launch(&self, spec: SpawnSpec<'_>, _here: &()) -> Result<Option<u32>, AdapterError> {
        match spec.backend {
            SessionBackend::Tmux => self.tmux.spawn(spec),
            SessionBackend::Host => self.host.spawn(spec),
        }
    }
}
