//! Reaching a session host: one request and its answer per connection, or an attach that
//! turns the connection into the terminal.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bosun_wire::{read_frame, write_frame, FrameError};

use crate::protocol::{HostRequest, HostResponse, HostStatus, DETACH_KEY};
use crate::HostError;

/// How long a host has to answer (a kill waits for the program's grace, so longer).
const ANSWER_WAIT: Duration = Duration::from_secs(10);

#[derive(Clone, Debug)]
pub struct HostClient {
    socket: PathBuf,
}

impl HostClient {
    pub fn new(socket: impl Into<PathBuf>) -> Self {
        Self { socket: socket.into() }
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    fn connect(&self) -> Result<UnixStream, HostError> {
        let conn = UnixStream::connect(&self.socket).map_err(|_| HostError::Gone(self.socket.clone()))?;
        let _ = conn.set_read_timeout(Some(ANSWER_WAIT));
        let _ = conn.set_write_timeout(Some(ANSWER_WAIT));
        Ok(conn)
    }

    fn frame_error(&self, e: FrameError) -> HostError {
        match e {
            // It went away mid-answer (killed, or gone with its machine).
            FrameError::Closed => HostError::Gone(self.socket.clone()),
            source => HostError::Frame { socket: self.socket.clone(), source },
        }
    }

    /// Sends `request` and returns the answer; a host's refusal is an error.
    pub fn ask(&self, request: &HostRequest) -> Result<HostResponse, HostError> {
        let mut conn = self.connect()?;
        write_frame(&mut conn, request).map_err(|e| self.frame_error(e))?;
        match read_frame(&mut conn).map_err(|e| self.frame_error(e))? {
            HostResponse::Error { message } => Err(HostError::Refused { socket: self.socket.clone(), message }),
            answer => Ok(answer),
        }
    }

    pub fn status(&self) -> Result<HostStatus, HostError> {
        match self.ask(&HostRequest::Status)? {
            HostResponse::Status(s) => Ok(s),
            other => Err(self.unexpected(other)),
        }
    }

    pub fn unexpected(&self, answer: HostResponse) -> HostError {
        HostError::Refused { socket: self.socket.clone(), message: format!("unexpected answer {answer:?}") }
    }

    /// The connection as the terminal, once the host took the attach.
    pub fn attach(&self) -> Result<UnixStream, HostError> {
        let mut conn = self.connect()?;
        write_frame(&mut conn, &HostRequest::Attach).map_err(|e| self.frame_error(e))?;
        match read_frame(&mut conn).map_err(|e| self.frame_error(e))? {
            HostResponse::Ok => {
                let _ = conn.set_read_timeout(None);
                let _ = conn.set_write_timeout(None);
                Ok(conn)
            }
            other => Err(self.unexpected(other)),
        }
    }
}

/// Copies `input` to the host and the host's output to `output` until `DETACH_KEY` is typed or
/// the host goes. The caller puts the terminal in raw mode around it.
pub fn attach(
    client: &HostClient,
    mut input: impl Read + Send + 'static,
    mut output: impl Write,
) -> Result<(), HostError> {
    let conn = client.attach()?;
    let mut to_host = conn.try_clone().map_err(|e| HostError::io("attaching", e))?;
    std::thread::spawn(move || {
        let mut buf = [0u8; 1024];
        loop {
            let n = match input.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let typed = &buf[..n];
            let (before, detach) = match typed.iter().position(|b| *b == DETACH_KEY) {
                Some(at) => (&typed[..at], true),
                None => (typed, false),
            };
            if to_host.write_all(before).is_err() || detach {
                break;
            }
        }
        let _ = to_host.shutdown(std::net::Shutdown::Both);
    });
    let mut from_host = conn;
    let mut buf = [0u8; 64 * 1024];
    loop {
        match from_host.read(&mut buf) {
            Ok(0) | Err(_) => return Ok(()),
            Ok(n) => {
                output.write_all(&buf[..n]).map_err(|e| HostError::io("writing to the terminal", e))?;
                output.flush().map_err(|e| HostError::io("writing to the terminal", e))?;
            }
        }
    }
}
