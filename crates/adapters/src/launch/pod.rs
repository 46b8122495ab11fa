//! `PodLauncher`: a session whose host runs in a Kubernetes pod (`crate::host::pod::PodHosts`
//! makes its secret and pod), reached over TCP once it serves; its reports are followed from
//! then on.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bosun_core::Pod;

use super::Launcher;
use crate::host::{no_cluster, START_WAIT};
use crate::{AdapterError, HostSessions, SpawnSpec};

pub struct PodLauncher {
    pub host: Arc<HostSessions>,
}

impl Launcher<Pod> for PodLauncher {
    fn launch(&self, spec: SpawnSpec<'_>, pod: &Pod) -> Result<Option<u32>, AdapterError> {
        let host = &self.host;
        if let Some(serving) = host.serving(&spec)? {
            return Ok(serving);
        }
        let pods = host.pods.as_ref().ok_or_else(no_cluster)?;
        pods.start(&host.dir, &spec, pod)?;
        let deadline = Instant::now() + START_WAIT;
        loop {
            if let Ok(status) = host.status(spec.session) {
                pods.follow(&host.dir, spec.session);
                return Ok(status.pid);
            }
            // Each call may be a port-forward through the API server: not 50 a second.
            std::thread::sleep(Duration::from_millis(180));
            if Instant::now() >= deadline {
                pods.remove(&host.dir, spec.session, &pod.namespace);
                return Err(AdapterError::Command {
                    command: format!("bosun host in pod {}", spec.session),
                    stderr: format!("it did not serve its session within {} s", START_WAIT.as_secs()),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
