//! Report channels. An agent in a sandbox or a container is shown no socket of bosun's, only a
//! channel of its own (`StateDir::channel`): a socket the daemon serves for that agent alone and
//! a spool, shown where its hooks look for the daemon's socket and spool. What arrives there is
//! that agent's, whatever it says (`server::Speaker::Agent`). A channel is opened as its agent's
//! session starts (again at a daemon's start, for each agent alive: a directory shows the new
//! socket), and closed, its directory removed, when its agent ends.

use std::collections::HashMap;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use bosun_core::AgentId;
use bosun_wire::StateDir;
use tokio::net::{UnixListener, UnixStream};
use tokio::runtime::Handle;
use tokio::sync::watch;

/// What serves a connection made on an agent's channel: the daemon's server, once it runs.
pub type Serve = Arc<dyn Fn(UnixStream, AgentId) + Send + Sync>;

pub struct Channels {
    dirs: StateDir,
    runtime: Handle,
    serve: watch::Sender<Option<Serve>>,
    open: Mutex<HashMap<AgentId, tokio::task::AbortHandle>>,
}

impl Channels {
    pub fn new(dirs: StateDir, runtime: Handle) -> Self {
        Self { dirs, runtime, serve: watch::Sender::new(None), open: Mutex::default() }
    }

    /// From now on, connections are served by `serve` (those made before wait for it).
    pub fn serve_with(&self, serve: Serve) {
        self.serve.send_replace(Some(serve));
    }

    /// Opens `agent`'s channel (once; again when its socket is gone) and returns its directory.
    pub fn open(&self, agent: &AgentId) -> std::io::Result<PathBuf> {
        let dir = self.dirs.channel(agent);
        let socket = self.dirs.channel_socket(agent);
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.get(agent).is_some_and(|task| !task.is_finished()) && socket.exists() {
            return Ok(dir);
        }
        if let Some(task) = open.remove(agent) {
            task.abort();
        }
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir.join("spool"))?;
        match std::fs::remove_file(&socket) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let listener = std::os::unix::net::UnixListener::bind(&socket)?;
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))?;
        listener.set_nonblocking(true)?;
        let listener = {
            let _inside = self.runtime.enter();
            UnixListener::from_std(listener)?
        };
        let task = self.runtime.spawn(accept(listener, agent.clone(), self.serve.subscribe()));
        open.insert(agent.clone(), task.abort_handle());
        Ok(dir)
    }

    /// Closes `agent`'s channel, if it has one, and removes its directory.
    pub fn close(&self, agent: &AgentId) {
        if let Some(task) = self.open.lock().unwrap_or_else(PoisonError::into_inner).remove(agent) {
            task.abort();
        }
        let dir = self.dirs.channel(agent);
        match std::fs::remove_dir_all(&dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                tracing::warn!(%agent, "cannot remove {}: {e}", dir.display())
            }
            _ => {}
        }
    }

    /// The agents that have a channel's directory (open or left by an earlier daemon).
    pub fn found(&self) -> Vec<AgentId> {
        let Ok(entries) = std::fs::read_dir(self.dirs.reports()) else { return Vec::new() };
        let mut found: Vec<AgentId> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| serde_json::from_value(e.file_name().to_str()?.into()).ok())
            .collect();
        found.sort();
        found
    }
}

/// Accepts connections on an agent's channel, each served as that agent's.
async fn accept(listener: UnixListener, agent: AgentId, mut serve: watch::Receiver<Option<Serve>>) {
    let Ok(serve) = serve.wait_for(Option::is_some).await.map(|s| s.clone()) else { return };
    let Some(serve) = serve else { return };
    loop {
        match listener.accept().await {
            Ok((stream, _)) => serve(stream, agent.clone()),
            Err(e) => {
                tracing::warn!(%agent, "accept failed on its channel: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    }
}
