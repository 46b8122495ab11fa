//! `ContainerLauncher`: a session whose host runs in a container of the engine (`Containers`),
//! bosun's own binary bound in, and with it what the agent's `Sandbox` shows; found on its Unix
//! socket, or, with the network, over TCP with a token made before the container starts.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bosun_core::{Container, Sandbox};

use super::Launcher;
use crate::host::{SESSION_LABEL, START_WAIT, STATE_LABEL};
use crate::sandbox::Mount;
use crate::{AdapterError, ContainerSpec, HostSessions, SpawnSpec};

pub struct ContainerLauncher {
    pub host: Arc<HostSessions>,
}

impl<'a> Launcher<(&'a Container, &'a Sandbox)> for ContainerLauncher {
    fn launch(&self, spec: SpawnSpec<'_>, place: &(&'a Container, &'a Sandbox)) -> Result<Option<u32>, AdapterError> {
        let (host, (container, sandbox)) = (&*self.host, *place);
        if let Some(serving) = host.serving(&spec)? {
            return Ok(serving);
        }
        run_in_container(host, &spec, container, sandbox)?;
        let deadline = Instant::now() + START_WAIT;
        loop {
            // A TCP host is found once it wrote its address.
            if let Ok(status) = host.status(spec.session) {
                return Ok(status.pid);
            }
            if Instant::now() >= deadline {
                if let Some((engine, _)) = &host.containers {
                    let _ = engine.remove(spec.session.as_str());
                }
                host.dir.forget(spec.session);
                return Err(AdapterError::Command {
                    command: format!("bosun host in container {}", spec.session),
                    stderr: format!("it did not serve its session within {} s", START_WAIT.as_secs()),
                });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Starts the session's host in a container: bosun's own binary bound in read-only, what
/// the sandbox shows (`sandbox::binds`: its paths, what a commit writes in its repository,
/// its agent's report channel where the daemon's socket and the spool would be) and the
/// host's own directory of the hosts' (`HostDir::confine`), run as this user. With the
/// network it listens on TCP, its token made (in its 0600 file) before the container starts.
fn run_in_container(
    host: &HostSessions,
    spec: &SpawnSpec<'_>,
    container: &Container,
    sandbox: &Sandbox,
) -> Result<(), AdapterError> {
    let Some((engine, state)) = &host.containers else {
        return Err(AdapterError::Command {
            command: "bosun host in a container".into(),
            stderr: "this daemon has no container engine".into(),
        });
    };
    let own = host.dir.confine(spec.session).map_err(|e| AdapterError::io("making a host's directory", e))?;
    if container.network {
        host.dir.make_token(spec.session).map_err(|e| crate::host::error(spec.session, e))?;
    }
    let mut command = vec![host.program.display().to_string()];
    command.extend(host.serve_args(spec, container.network));
    // The channel's directory where the daemon's socket's is: its new socket shows there
    // after a restart (a socket bound by itself would stay the old one).
    let channel = match (spec.channel, host.daemon.parent(), &host.spool) {
        (Some(dir), Some(socket_dir), Some(spool)) => Some(crate::sandbox::Channel { dir, socket_dir, spool }),
        _ => None,
    };
    let mut binds = crate::sandbox::binds(sandbox, spec.cwd, channel);
    binds.extend([Mount::write(&own), Mount::read(&host.program)]);
    let labels =
        BTreeMap::from([(STATE_LABEL.to_owned(), state.clone()), (SESSION_LABEL.to_owned(), spec.session.to_string())]);
    let volumes: Vec<(String, PathBuf)> =
        container.volume.iter().map(|v| (v.clone(), spec.cwd.to_path_buf())).collect();
    let user = (nix::unistd::getuid().as_raw(), nix::unistd::getgid().as_raw());
    let ran = engine.run(ContainerSpec {
        name: spec.session.as_str(),
        image: &container.image,
        command: &command,
        cwd: spec.cwd,
        env: spec.env,
        binds: &binds,
        volumes: &volumes,
        user: Some(user),
        network: container.network,
        cpus_milli: container.cpus_milli,
        memory_bytes: container.memory_bytes,
        labels: &labels,
    });
    if ran.is_err() {
        host.dir.forget(spec.session);
    }
    ran.map(drop)
}
