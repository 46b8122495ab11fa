//! `GitDaemon`: `git daemon` serving a repository's parent directory on a free port of
//! 127.0.0.1, pushes allowed: the `origin` a pod clones from and pushes back to. Killed when
//! dropped.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::poll::wait_for;

pub struct GitDaemon {
    child: Child,
    port: u16,
}

impl GitDaemon {
    pub fn serve(repo: &Path) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let base = repo.parent().expect("a repository in a directory");
        let child = Command::new("git")
            .args(["daemon", "--reuseaddr", "--export-all", "--listen=127.0.0.1", "--enable=receive-pack"])
            .arg(format!("--port={port}"))
            .arg(format!("--base-path={}", base.display()))
            .arg(base)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("git daemon");
        let up =
            wait_for(std::time::Duration::from_secs(20), || std::net::TcpStream::connect(("127.0.0.1", port)).ok());
        assert!(up.is_some(), "git daemon never listened");
        Self { child, port }
    }

    /// The URL of `repo` (a directory beside the one served) through this daemon.
    pub fn url(&self, repo: &Path) -> String {
        format!("git://127.0.0.1:{}/{}", self.port, repo.file_name().unwrap_or_default().to_string_lossy())
    }
}

impl Drop for GitDaemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
