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

    /// Sends `request` and returns the answer; a host's refusal is an error, and so is one
    /// that waits for its seed.
    pub fn ask(&self, request: &HostRequest) -> Result<HostResponse, HostError> {
        match self.ask_any(request)? {
            HostResponse::Seeding => Err(self.refused("its workspace waits for its seed: no program runs yet")),
            answer => Ok(answer),
        }
    }

    fn ask_any(&self, request: &HostRequest) -> Result<HostResponse, HostError> {
        let mut conn = self.connect()?;
        write_frame(&mut conn, request).map_err(|e| self.frame_error(e))?;
        match read_frame(&mut conn).map_err(|e| self.frame_error(e))? {
            HostResponse::Error { message } => Err(self.refused(message)),
            answer => Ok(answer),
        }
    }

    /// Whether the host waits for its seed (`seed`), rather than running its program.
    pub fn needs_seed(&self) -> Result<bool, HostError> {
        match self.ask_any(&HostRequest::Status)? {
            HostResponse::Seeding => Ok(true),
            HostResponse::Status(_) => Ok(false),
            other => Err(self.unexpected(other)),
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

    /// Gives a host that saves by bundle its workspace: `len` bytes of a git bundle of its
    /// branch, read from `bundle`; returns once it checked the branch out.
    pub fn seed(&self, bundle: &mut impl Read, len: u64) -> Result<(), HostError> {
        let mut conn = self.connect()?;
        let _ = conn.set_write_timeout(Some(crate::save::SAVE_WAIT));
        write_frame(&mut conn, &HostRequest::Seed { len }).map_err(|e| self.frame_error(e))?;
        let sent = match std::io::copy(&mut bundle.take(len), &mut conn) {
            Ok(sent) => sent,
            // A host that refuses the seed may say why and close before it took it all.
            Err(e) => {
                let _ = conn.set_read_timeout(Some(ANSWER_WAIT));
                return match read_frame(&mut conn) {
                    Ok(HostResponse::Error { message }) => Err(self.refused(message)),
                    _ => Err(HostError::io("sending a seed", e)),
                };
            }
        };
        if sent != len {
            return Err(self.refused(format!("the seed had {sent} of its {len} bytes")));
        }
        let _ = conn.set_read_timeout(Some(crate::save::SAVE_WAIT + ANSWER_WAIT));
        match read_frame(&mut conn).map_err(|e| self.frame_error(e))? {
            HostResponse::Ok => Ok(()),
            HostResponse::Error { message } => Err(self.refused(message)),
            other => Err(self.unexpected(other)),
        }
    }

    /// Asks a host that saves by bundle, whose program ended, for its branch less what the
    /// commits of `have` reach. The bundle is read from what is returned, which is then told
    /// what came of it.
    pub fn bundle(&self, have: Vec<String>) -> Result<GivenBundle, HostError> {
        let mut conn = self.connect()?;
        let _ = conn.set_read_timeout(Some(crate::save::SAVE_WAIT + ANSWER_WAIT));
        write_frame(&mut conn, &HostRequest::Bundle { have }).map_err(|e| self.frame_error(e))?;
        match read_frame(&mut conn).map_err(|e| self.frame_error(e))? {
            HostResponse::Bundle { len, tip, dirty } => {
                if len > crate::BUNDLE_MOST {
                    return Err(self.refused(format!("its bundle of {len} bytes is more than {}", crate::BUNDLE_MOST)));
                }
                Ok(GivenBundle { client: self.clone(), conn, len, tip, dirty })
            }
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

/// A bundle a host gives (`HostClient::bundle`): `len` bytes to read, its branch's `tip`, and
/// whether its workspace holds work not committed.
pub struct GivenBundle {
    client: HostClient,
    conn: HostConn,
    pub len: u64,
    pub tip: String,
    pub dirty: bool,
}

impl GivenBundle {
    /// Copies the bundle's bytes to `out`.
    pub fn read_to(&mut self, out: &mut impl Write) -> Result<(), HostError> {
        let got = std::io::copy(&mut Read::by_ref(&mut self.conn).take(self.len), out)
            .map_err(|e| HostError::io("reading a bundle", e))?;
        if got != self.len {
            return Err(self.client.refused(format!("its bundle ended after {got} of its {} bytes", self.len)));
        }
        Ok(())
    }

    /// Tells the host what came of its bundle: whether the work is safe with it now, and what
    /// git said. The host then ends.
    pub fn fetched(mut self, fetched: bool, said: String) -> Result<(), HostError> {
        write_frame(&mut self.conn, &HostRequest::Fetched { fetched, said }).map_err(|e| self.client.frame_error(e))?;
        match read_frame(&mut self.conn).map_err(|e| self.client.frame_error(e))? {
            HostResponse::Ok => Ok(()),
            HostResponse::Error { message } => Err(self.client.refused(message)),
            other => Err(self.client.unexpected(other)),
        }
    }
}

/// What a follower of a host's reports hears next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Heard {
    /// A report of its agent's hook, to be answered.
    Report(bosun_wire::HookEvent),
    /// The program ended, and the host waits for its branch to be fetched as a bundle.
    Exited(bosun_core::ExitStatus),
}

/// The hook reports of a host's agent, as they come; each is answered before the next.
pub struct Reports {
    client: HostClient,
    conn: HostConn,
}

impl Reports {
    /// The next report, or word that the program ended; an error once the host is gone or
    /// says something else.
    pub fn hear(&mut self) -> Result<Heard, HostError> {
        loop {
            match read_frame(&mut self.conn).map_err(|e| self.client.frame_error(e))? {
                HostResponse::Ok => continue,
                HostResponse::Report { hook } => return Ok(Heard::Report(hook)),
                HostResponse::Exited { exit } => return Ok(Heard::Exited(exit)),
                other => return Err(self.client.unexpected(other)),
            }
        }
    }

    /// The next report, skipping any word of the program's end (for a follower that fetches
    /// nothing).
    pub fn next_report(&mut self) -> Result<bosun_wire::HookEvent, HostError> {
        loop {
            if let Heard::Report(hook) = self.hear()? {
                return Ok(hook);
            }
        }
    }

    /// Answers the last report: what its hook prints, if anything.
    pub fn answer(&mut self, stdout: Option<String>) -> Result<(), HostError> {
        write_frame(&mut self.conn, &HostRequest::Answered { stdout }).map_err(|e| self.client.frame_error(e))
    }
}
