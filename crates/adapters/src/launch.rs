//! Starting an agent's session where its `Place` says. One `Launcher` per place, each in its
//! own file — `here` (tmux, or bosun's session host), `sandbox` (the same, its command under
//! bubblewrap), `container` (a session host in a container), `pod` (one in a Kubernetes pod) —
//! each given its own place's data, and routed by one match (`Launchers::launch`). A new place
//! to run in is its `Place` in core, one launcher file here, and one arm of that match.

mod container;
mod here;
mod pod;
mod sandbox;

use std::sync::Arc;

use bosun_core::Place;
use bosun_wire::StateDir;

use crate::{AdapterError, HostSessions, Sessions, SpawnSpec};

/// Starts sessions in one kind of place, given that place's own data (`P`).
pub trait Launcher<P: ?Sized>: Send + Sync {
    /// Starts the session `spec` asks for there; the pid of its program when known.
    fn launch(&self, spec: SpawnSpec<'_>, place: &P) -> Result<Option<u32>, AdapterError>;
}

/// The launcher of each place.
pub struct Launchers {
    here: here::HereLauncher,
    sandbox: sandbox::SandboxLauncher,
    container: container::ContainerLauncher,
    pod: pod::PodLauncher,
}

impl Launchers {
    /// Launchers that start sessions in `tmux` or in bosun's session hosts (`host`, which knows
    /// the container engine and the cluster), for the daemon of `dirs`.
    pub fn new(tmux: Arc<dyn Sessions>, host: Arc<HostSessions>, dirs: StateDir) -> Self {
        let here = here::HereLauncher { tmux, host: host.clone() };
        Self {
            sandbox: sandbox::SandboxLauncher { here: here.clone(), dirs },
            here,
            container: container::ContainerLauncher { host: host.clone() },
            pod: pod::PodLauncher { host },
        }
    }

    /// Starts `spec`'s session where its place says: the one place a `Place` is routed.
    pub fn launch(&self, spec: SpawnSpec<'_>) -> Result<Option<u32>, AdapterError> {
        spec.check_cwd()?;
        match spec.place {
            Place::Here => self.here.launch(spec, &()),
            Place::Sandbox(sandbox) => self.sandbox.launch(spec, sandbox),
            Place::Container { container, sandbox } => self.container.launch(spec, &(container, sandbox)),
            Place::Pod(pod) => self.pod.launch(spec, pod),
        }
    }
}
