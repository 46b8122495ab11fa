//! What a failed call to the Docker engine becomes: an engine that cannot be reached is told
//! apart (not running, not there, not permitted) with what to do about it; an engine's refusal
//! keeps its own message.

use std::error::Error as _;
use std::io;

use bollard::errors::Error;

use crate::AdapterError;

/// The engine's HTTP status of a refusal, if `e` is one.
pub(super) fn status(e: &Error) -> Option<u16> {
    match e {
        Error::DockerResponseServerError { status_code, .. } => Some(*status_code),
        _ => None,
    }
}

/// `e`, from doing `what` on the engine at `host`.
pub(super) fn failed(host: &str, what: &str, e: Error) -> AdapterError {
    match e {
        Error::DockerResponseServerError { message, status_code } => {
            AdapterError::Docker(format!("{what}: the engine refused ({status_code}): {}", message.trim()))
        }
        Error::RequestTimeoutError => {
            AdapterError::Docker(format!("{what}: the engine at {host} did not answer in time"))
        }
        e => match unreachable(host, &e) {
            Some(err) => err,
            None => AdapterError::Docker(format!("{what}: {e}")),
        },
    }
}

/// Why the engine at `host` cannot be reached, when `e` says it cannot.
pub(super) fn unreachable(host: &str, e: &Error) -> Option<AdapterError> {
    const START: &str = "start it (`sudo systemctl start docker`, or `dockerd`), install one \
                         (`sudo apt-get install docker.io`), or point DOCKER_HOST at an engine that runs";
    let why = match e {
        Error::SocketNotFoundError(path) => format!("no Docker engine at {host}: {path} does not exist; {START}"),
        Error::UnsupportedURISchemeError { uri } => {
            format!("cannot use DOCKER_HOST {uri:?}: give unix:///path/to/docker.sock or tcp://host:port")
        }
        _ => match io_kind(e)? {
            io::ErrorKind::PermissionDenied => format!(
                "permission denied on the Docker engine at {host}: add your user to the `docker` group \
                 (`sudo usermod -aG docker $USER`, then log in again), or run bosun as a user that may use it"
            ),
            io::ErrorKind::ConnectionRefused => {
                format!("the Docker engine at {host} is not running (connection refused); {START}")
            }
            io::ErrorKind::NotFound => format!("no Docker engine at {host}: the socket does not exist; {START}"),
            _ => format!("cannot reach the Docker engine at {host} ({}); {START}", chain(e)),
        },
    };
    Some(AdapterError::Docker(why))
}

/// The kind of the I/O error somewhere in `e`'s chain of causes.
fn io_kind(e: &Error) -> Option<io::ErrorKind> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<io::Error>() {
            return Some(io.kind());
        }
        cause = c.source();
    }
    None
}

/// `e` and its causes on one line.
fn chain(e: &Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}
