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
        // `git daemon` starts `git-daemon` and is not it: killed, it would leave the server
        // running (serving the whole temp directory, pushes allowed). So the server itself.
        let exec_path = Command::new("git").arg("--exec-path").output().expect("git --exec-path");
        let exec_path = String::from_utf8_lossy(&exec_path.stdout).trim().to_owned();
        let child = Command::new(Path::new(&exec_path).join("git-daemon"))
            .args(["--reuseaddr", "--export-all", "--listen=127.0.0.1", "--enable=receive-pack"])
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Dropped, nothing of it serves any more: no server is left behind on its port.
    #[test]
    fn a_dropped_daemon_leaves_no_server_behind() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        let daemon = GitDaemon::serve(&repo);
        let port = daemon.port;
        assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
        drop(daemon);
        let gone = wait_for(std::time::Duration::from_secs(20), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_err().then_some(())
        });
        assert!(gone.is_some(), "a git daemon still serves port {port}");
    }
}
