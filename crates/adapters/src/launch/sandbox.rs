//! `SandboxLauncher`: a session on this machine whose command runs under bubblewrap, let at
//! what its `Sandbox` says (`crate::sandbox`), its hooks shown a report channel of its own where
//! the daemon's socket and spool would be.

use std::path::Path;

use bosun_core::Sandbox;
use bosun_wire::StateDir;

use super::here::HereLauncher;
use super::Launcher;
use crate::{AdapterError, SpawnSpec};

pub struct SandboxLauncher {
    pub here: HereLauncher,
    /// bosun's state directory, which a sandbox hides but for the agent's report channel.
    pub dirs: StateDir,
}

impl Launcher<Sandbox> for SandboxLauncher {
    fn launch(&self, spec: SpawnSpec<'_>, sandbox: &Sandbox) -> Result<Option<u32>, AdapterError> {
        let (socket, spool) = (self.dirs.socket(), self.dirs.spool());
        let channel = spec.channel.map(|dir| crate::sandbox::Channel {
            dir,
            socket_dir: socket.parent().unwrap_or(Path::new("/")),
            spool: &spool,
        });
        let wrapped = crate::sandbox::wrapped(spec.command, sandbox, spec.cwd, self.dirs.root(), channel);
        self.here.launch(SpawnSpec { command: &wrapped, ..spec }, &())
    }
}
