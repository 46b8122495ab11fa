//! `HostDir`: where the session hosts of one directory (`<state>/h`) are found. A local host
//! (or one in a container without the network) by its Unix socket, `<dir>/<session>`; a TCP
//! host (in a container with the network) by the address file it writes, `<dir>/<session>.addr`,
//! and the token the daemon made for it before it started, `<dir>/<session>.token` (0600). The
//! token is read from its file when a host is reached; only the file's path is ever passed on.
//! A host in a container keeps its socket, address and token in a directory of its own,
//! `<dir>/<session>.d/` (`s`, `addr`, `token`), the only one of this directory its container is
//! shown: it sees no other agent's host, nor its token.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use bosun_core::SessionName;
use bosun_host::{HostEndpoint, HostError, HostToken};

const ADDRESS: &str = ".addr";
const TOKEN: &str = ".token";
/// The directory of a host in a container, and its socket, address and token there.
const CONFINED: &str = ".d";
const CONFINED_SOCKET: &str = "s";
const CONFINED_ADDRESS: &str = "addr";
const CONFINED_TOKEN: &str = "token";
/// Beside a TCP host in a pod: the pod's namespace (its name is the session's).
const POD: &str = ".pod";
/// Beside a host in a pod of a repository with no remote: where its branch comes back to.
const BUNDLE_TO: &str = ".bundle-to";
/// Where a bundle to or from such a pod is written on its way.
const BUNDLE: &str = ".bundle";

/// Where the branch of a pod whose repository has no remote comes back to: the daemon's own
/// record, never the pod's word.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BundleTo {
    pub repo: PathBuf,
    pub branch: String,
}

#[derive(Clone, Debug)]
pub struct HostDir {
    dir: PathBuf,
}

/// A host found in the directory: its session's name (from its file's) and how to reach it.
#[derive(Debug)]
pub struct FoundHost {
    pub session: String,
    pub endpoint: Result<HostEndpoint, HostError>,
}

impl HostDir {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The directory of the session's host when it runs in a container (see `confine`).
    pub fn confined(&self, session: &SessionName) -> PathBuf {
        self.dir.join(format!("{session}{CONFINED}"))
    }

    /// Makes the session's host one in a container: its files go in a directory of their own
    /// (0700), the one its container is shown of this directory.
    pub fn confine(&self, session: &SessionName) -> std::io::Result<PathBuf> {
        use std::os::unix::fs::DirBuilderExt;
        let dir = self.confined(session);
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir)?;
        Ok(dir)
    }

    fn is_confined(&self, session: &SessionName) -> bool {
        std::fs::symlink_metadata(self.confined(session)).is_ok_and(|m| m.is_dir())
    }

    pub fn socket(&self, session: &SessionName) -> PathBuf {
        match self.is_confined(session) {
            true => self.confined(session).join(CONFINED_SOCKET),
            false => self.dir.join(session.as_str()),
        }
    }

    pub fn address_file(&self, session: &SessionName) -> PathBuf {
        match self.is_confined(session) {
            true => self.confined(session).join(CONFINED_ADDRESS),
            false => self.dir.join(format!("{session}{ADDRESS}")),
        }
    }

    pub fn token_file(&self, session: &SessionName) -> PathBuf {
        match self.is_confined(session) {
            true => self.confined(session).join(CONFINED_TOKEN),
            false => self.dir.join(format!("{session}{TOKEN}")),
        }
    }

    pub fn pod_file(&self, session: &SessionName) -> PathBuf {
        self.dir.join(format!("{session}{POD}"))
    }

    /// The namespace of the pod the session's host runs in, if it runs in one.
    pub fn pod_namespace(&self, session: &SessionName) -> Option<String> {
        let text = std::fs::read_to_string(self.pod_file(session)).ok()?;
        Some(text.trim().to_owned()).filter(|ns| bosun_core::Pod::is_dns_label(ns))
    }

    /// Notes that the session's host runs in a pod of `namespace`.
    pub fn note_pod(&self, session: &SessionName, namespace: &str) -> std::io::Result<()> {
        std::fs::write(self.pod_file(session), namespace)
    }

    /// Notes where the branch of the session's pod comes back to.
    pub fn note_bundle_to(&self, session: &SessionName, to: &BundleTo) -> std::io::Result<()> {
        std::fs::write(self.dir.join(format!("{session}{BUNDLE_TO}")), serde_json::to_vec(to)?)
    }

    /// Where the branch of the session's pod comes back to, if it comes back as a bundle.
    pub fn bundle_to(&self, session: &SessionName) -> Option<BundleTo> {
        let text = std::fs::read(self.dir.join(format!("{session}{BUNDLE_TO}"))).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Where a bundle to or from the session's pod is written on its way.
    pub fn bundle_file(&self, session: &SessionName) -> PathBuf {
        self.dir.join(format!("{session}{BUNDLE}"))
    }

    /// Writes where the session's TCP host listens (a pod's address, which the daemon learns
    /// from its cluster), privately and whole.
    pub fn write_address(&self, session: &SessionName, addr: std::net::SocketAddr) -> std::io::Result<()> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let path = self.address_file(session);
        let partial = path.with_extension("addr.partial");
        let mut file =
            std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&partial)?;
        file.write_all(format!("{addr}\n").as_bytes())?;
        std::fs::rename(&partial, &path)
    }

    /// Whether the session's host is (to be) reached over TCP: its token was made.
    pub fn is_tcp(&self, session: &SessionName) -> bool {
        std::fs::symlink_metadata(self.token_file(session)).is_ok()
    }

    /// Whether a host of this directory holds the session (its socket or token is there).
    pub fn holds(&self, session: &SessionName) -> bool {
        self.is_tcp(session) || std::fs::symlink_metadata(self.socket(session)).is_ok_and(|m| m.file_type().is_socket())
    }

    /// Makes a new token for the session's TCP host, in its file, before the host starts; an
    /// address left from before is removed, so only the new host's is found.
    pub fn make_token(&self, session: &SessionName) -> Result<PathBuf, HostError> {
        let _ = std::fs::remove_file(self.address_file(session));
        let path = self.token_file(session);
        HostToken::generate()?.write(&path)?;
        Ok(path)
    }

    /// How the session's host is reached; `Gone` for a TCP host that has not said where yet.
    pub fn endpoint(&self, session: &SessionName) -> Result<HostEndpoint, HostError> {
        if !self.is_tcp(session) {
            return Ok(HostEndpoint::Unix(self.socket(session)));
        }
        let address = self.address_file(session);
        if std::fs::symlink_metadata(&address).is_err() {
            return Err(HostError::Gone(address.display().to_string()));
        }
        HostEndpoint::tcp_from_files(&address, &self.token_file(session))
    }

    /// Every host with a socket or an address file here.
    pub fn found(&self) -> Vec<FoundHost> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        let mut found = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(session) = name.strip_suffix(CONFINED).filter(|_| entry.file_type().is_ok_and(|t| t.is_dir())) {
                let named = SessionName::from_reported(session);
                let (socket, address) = (self.socket(&named), self.address_file(&named));
                if std::fs::symlink_metadata(&socket).is_ok_and(|m| m.file_type().is_socket()) {
                    found.push(FoundHost { session: session.to_owned(), endpoint: Ok(HostEndpoint::Unix(socket)) });
                } else if std::fs::symlink_metadata(&address).is_ok() {
                    let endpoint = HostEndpoint::tcp_from_files(&address, &self.token_file(&named));
                    found.push(FoundHost { session: session.to_owned(), endpoint });
                }
            } else if entry.file_type().is_ok_and(|t| t.is_socket()) {
                found.push(FoundHost { session: name, endpoint: Ok(HostEndpoint::Unix(entry.path())) });
            } else if let Some(session) = name.strip_suffix(ADDRESS) {
                let token = self.dir.join(format!("{session}{TOKEN}"));
                let endpoint = HostEndpoint::tcp_from_files(&entry.path(), &token);
                found.push(FoundHost { session: session.to_owned(), endpoint });
            }
        }
        found
    }

    /// The file whose presence says the session's address is a port-forward's (made by some
    /// daemon: only the one that made it may trust it).
    pub fn forward_file(&self, session: &SessionName) -> PathBuf {
        self.dir.join(format!("{session}.fwd"))
    }

    /// Removes the session's socket, address and token files, and what it noted of its pod's
    /// forward and bundles.
    pub fn forget(&self, session: &SessionName) {
        // What its container may have left there too.
        let _ = std::fs::remove_dir_all(self.confined(session));
        for path in [
            self.socket(session),
            self.address_file(session),
            self.token_file(session),
            self.forward_file(session),
            self.dir.join(format!("{session}{BUNDLE_TO}")),
            self.bundle_file(session),
        ] {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Removes the session's files when no host answers at its endpoint any more (a connection
    /// refused means none listens).
    pub fn forget_if_stale(&self, session: &SessionName, endpoint: &HostEndpoint) {
        let listens = match endpoint {
            HostEndpoint::Unix(path) => std::os::unix::net::UnixStream::connect(path).is_ok(),
            HostEndpoint::Tcp { addr, .. } => {
                std::net::TcpStream::connect_timeout(addr, std::time::Duration::from_secs(2)).is_ok()
            }
        };
        if !listens {
            self.forget(session);
        }
    }
}
