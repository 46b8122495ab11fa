//! Reaching a session host, by its Unix socket or by TCP with its token: one request and its
//! answer per connection, or an attach that turns the connection into the terminal.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use bosun_wire::{read_frame, write_frame, FrameError};

use crate::conn::HostConn;
use crate::protocol::{HostHello, HostRequest, HostResponse, HostStatus, DETACH_KEY};
use crate::{HostEndpoint, HostError};

/// How long a host has to answer (a kill waits for the program's grace, so longer).
const ANSWER_WAIT: Duration = Duration::from_secs(10);
/// How long a TCP connection may take to be made.
const CONNECT_WAIT: Duration = Duration::from_secs(5);

#[derive(Clone, Debug)]
pub struct HostClient {
    endpoint: HostEndpoint,
}

impl HostClient {
    pub fn new(endpoint: impl Into<HostEndpoint>) -> Self {
        Self { endpoint: endpoint.into() }
    }

    pub fn endpoint(&self) -> &HostEndpoint {
        &self.endpoint
    }

    /// The host's Unix socket, when it is reached by one.
    pub fn socket(&self) -> Option<&Path> {
        self.endpoint.socket()
    }

    fn gone(&self) -> HostError {
        HostError::Gone(self.endpoint.to_string())
    }

    fn connect(&self) -> Result<HostConn, HostError> {
        let mut conn = match &self.endpoint {
            HostEndpoint::Unix(path) => HostConn::Unix(UnixStream::connect(path).map_err(|_| self.gone())?),
            HostEndpoint::Tcp { addr, .. } => {
                HostConn::Tcp(TcpStream::connect_timeout(addr, CONNECT_WAIT).map_err(|_| self.gone())?)
            }
        };
        let _ = conn.set_read_timeout(Some(ANSWER_WAIT));
        let _ = conn.set_write_timeout(Some(ANSWER_WAIT));
        if let HostEndpoint::Tcp { token, .. } = &self.endpoint {
            let hello = HostHello::Hello { token: token.reveal().to_owned() };
            write_frame(&mut conn, &hello).map_err(|e| self.frame_error(e))?;
            match read_frame(&mut conn) {
                Ok(HostResponse::Ok) => {}
                Ok(other) => return Err(self.unexpected(other)),
                // It closes on a hello it does not take, saying nothing.
                Err(FrameError::Closed) | Err(FrameError::Io(_)) => {
                    return Err(self.refused("it took no hello (a wrong token?)"));
                }
                Err(e) => return Err(self.frame_error(e)),
            }
        }
        Ok(conn)
    }

    fn refused(&self, message: impl Into<String>) -> HostError {
        HostError::Refused { at: self.endpoint.to_string(), message: message.into() }
    }

    fn frame_error(&self, e: FrameError) -> HostError {
        match e {
            // It went away mid-answer (killed, or gone with its machine).
            FrameError::Closed => self.gone(),
            source => HostError::Frame { at: self.endpoint.to_string(), source },
        }
    }

    /// Sends `request` and returns the answer; a host's refusal is an error.
    pub fn ask(&self, request: &HostRequest) -> Result<HostResponse, HostError> {
        let mut conn = self.connect()?;
        write_frame(&mut conn, request).map_err(|e| self.frame_error(e))?;
        match read_frame(&mut conn).map_err(|e| self.frame_error(e))? {
            HostResponse::Error { message } => Err(self.refused(message)),
            answer => Ok(answer),
        }
    }

    /// Asks the host to push its workspace's branch (see `HostRequest::Save`), waiting as long
    /// as a push may take: whether it was pushed, whether work is left uncommitted, what git said.
    pub fn save(&self) -> Result<(bool, bool, String), HostError> {
        let mut conn = self.connect()?;
        let _ = conn.set_read_timeout(Some(crate::save::SAVE_WAIT + ANSWER_WAIT));
        write_frame(&mut conn, &HostRequest::Save).map_err(|e| self.frame_error(e))?;
        match read_frame(&mut conn).map_err(|e| self.frame_error(e))? {
            HostResponse::Saved { pushed, dirty, said } => Ok((pushed, dirty, said)),
            HostResponse::Error { message } => Err(self.refused(message)),
            other => Err(self.unexpected(other)),
        }
    }

    pub fn status(&self) -> Result<HostStatus, HostError> {
        match self.ask(&HostRequest::Status)? {
            HostResponse::Status(s) => Ok(s),
            other => Err(self.unexpected(other)),
        }
    }

    pub fn unexpected(&self, answer: HostResponse) -> HostError {
        self.refused(format!("unexpected answer {answer:?}"))
    }

    /// Follows the agent's hook reports, from a host that relays them.
    pub fn reports(&self) -> Result<Reports, HostError> {
        let mut conn = self.connect()?;
        write_frame(&mut conn, &HostRequest::Reports).map_err(|e| self.frame_error(e))?;
        match read_frame(&mut conn).map_err(|e| self.frame_error(e))? {
            HostResponse::Ok => {
                // A beat comes every `BEAT`: three missed, and the host is taken for gone.
                let _ = conn.set_read_timeout(Some(crate::relay::BEAT * 3));
                Ok(Reports { client: self.clone(), conn })
            }
            HostResponse::Error { message } => Err(self.refused(message)),
            other => Err(self.unexpected(other)),
        }
    }

    /// The connection as the terminal, once the host took the attach.
    pub fn attach(&self) -> Result<HostConn, HostError> {
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

/// The hook reports of a host's agent, as they come; each is answered before the next.
pub struct Reports {
    client: HostClient,
    conn: HostConn,
}

impl Reports {
    /// The next report; an error once the host is gone or says something else.
    pub fn next_report(&mut self) -> Result<bosun_wire::HookEvent, HostError> {
        loop {
            match read_frame(&mut self.conn).map_err(|e| self.client.frame_error(e))? {
                HostResponse::Ok => continue,
                HostResponse::Report { hook } => return Ok(hook),
                other => return Err(self.client.unexpected(other)),
            }
        }
    }

    /// Answers the last report: what its hook prints, if anything.
    pub fn answer(&mut self, stdout: Option<String>) -> Result<(), HostError> {
        write_frame(&mut self.conn, &HostRequest::Answered { stdout }).map_err(|e| self.client.frame_error(e))
    }
}
