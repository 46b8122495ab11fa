//! Talking to the daemon: connect to its socket, starting it in the background when it does
//! not run, and exchange one request for one response.

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::{CliError, Kind};
use anyhow::{bail, Context, Result};
use bosun_core::replay::Recorded;
use bosun_core::RequestId;
use bosun_wire::{read_frame, write_frame, Envelope, EventsQuery, Request, Response, StateDir, WireError, VERSION};

/// How long to wait for a daemon we started to accept connections.
const START_DEADLINE: Duration = Duration::from_secs(10);
/// How many daemons one call starts when each is killed before it listens.
const START_TRIES: u32 = 3;
/// How long after the first try a request whose daemon died is sent again to a new one.
const RETRY_WINDOW: Duration = Duration::from_secs(60);
/// How long a daemon that dropped a connection may take to be gone (its lock free) for the
/// request to be sent again: one that lives on closed it on purpose.
const GONE_WAIT: Duration = Duration::from_secs(3);

pub struct Client {
    pub dirs: StateDir,
}

/// How an event stream ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamEnd {
    /// At the last event (without follow), or because the caller had seen enough.
    Done,
    /// The daemon was stopped on purpose (`bosun daemon stop`).
    Stopped,
}

impl Client {
    pub fn new(dirs: StateDir) -> Self {
        Self { dirs }
    }

    /// Sends `request`, starting the daemon first if it does not run. A daemon-side error
    /// becomes an `Err` carrying its `WireError`.
    ///
    /// When the daemon dies with the request unanswered, a new one is started and the request
    /// sent again, with the same id: one it had carried out already is answered with what it
    /// did, not carried out twice.
    pub fn request(&self, request: Request) -> Result<Response> {
        let retry = !matches!(request, Request::Shutdown);
        let id = (!request.only_looks()).then(|| RequestId(fastrand::u64(..)));
        let envelope = Envelope { version: VERSION.to_owned(), request, id };
        let deadline = Instant::now() + RETRY_WINDOW;
        loop {
            let stream = self.connect_or_start()?;
            match exchange(stream, &envelope) {
                Err(Lost(e)) if retry && Instant::now() < deadline && self.daemon_gone_within(GONE_WAIT) => {
                    tracing::debug!("the daemon died with the request unanswered ({e:#}): asking a new one");
                }
                Err(Lost(e)) => return Err(e.context(no_answer())),
                Ok(answer) => return answer,
            }
        }
    }

    /// A connection to the daemon, started first when it does not run.
    fn connect_or_start(&self) -> Result<UnixStream> {
        if let Some(s) = self.connect() {
            return Ok(s);
        }
        self.start_daemon().context(unavailable("the daemon is not running and could not be started"))?;
        self.connect()
            .context(unavailable("the daemon started but does not accept connections (see `bosun daemon logs`)"))
    }

    /// Streams the events `q` asks for to `each`, which stops the stream by answering false.
    /// When the daemon dies mid-stream, a new one is asked to go on from the event after the
    /// last one seen: none is missed or seen twice. A `from` of 0 means the next one recorded.
    /// A daemon stopped on purpose ends the stream (`StreamEnd::Stopped`); none is started.
    pub fn events(&self, mut q: EventsQuery, mut each: impl FnMut(Recorded) -> Result<bool>) -> Result<StreamEnd> {
        if q.from == 0 {
            q.from = self.last_seq()? + 1;
        }
        loop {
            let mut stream = self.connect_or_start()?;
            let envelope = Envelope { version: VERSION.to_owned(), request: Request::Events(q.clone()), id: None };
            write_frame(&mut stream, &envelope).context(no_answer())?;
            loop {
                match read_frame::<_, Response>(&mut stream) {
                    Ok(Response::Event(r)) => {
                        q.from = r.seq + 1;
                        if !each(*r)? {
                            return Ok(StreamEnd::Done);
                        }
                    }
                    Ok(Response::Ok) => return Ok(StreamEnd::Done),
                    Ok(Response::Stopped) => return Ok(StreamEnd::Stopped),
                    Ok(Response::Error(e)) => return Err(anyhow::Error::new(e)),
                    Ok(_) => return Err(no_answer().into()),
                    Err(_) => break,
                }
            }
            if !self.daemon_gone_within(GONE_WAIT) {
                return Err(no_answer().into());
            }
            tracing::debug!("the daemon died mid-stream: asking a new one from event {}", q.from);
        }
    }

    /// The seq of the last event recorded.
    pub fn last_seq(&self) -> Result<u64> {
        match self.request(Request::Status)? {
            Response::Status(status) => Ok(status.events),
            _ => Err(no_answer().into()),
        }
    }

    /// Sends `request` only if a daemon runs.
    pub fn request_if_running(&self, request: Request) -> Result<Option<Response>> {
        let envelope = Envelope { version: VERSION.to_owned(), request, id: None };
        match self.connect() {
            Some(s) => match exchange(s, &envelope) {
                Ok(answer) => answer.map(Some),
                Err(Lost(e)) => Err(e.context(no_answer())),
            },
            None => Ok(None),
        }
    }

    /// Whether the daemon process is gone (its lock free), or goes within `wait`.
    fn daemon_gone_within(&self, wait: Duration) -> bool {
        let deadline = Instant::now() + wait;
        loop {
            if !self.daemon_alive() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Whether a daemon process holds the state directory's lock (it may not listen yet, or
    /// any more). A lock that cannot be looked at (another user's state directory) counts as
    /// held: it is never taken for a gone daemon.
    pub fn daemon_alive(&self) -> bool {
        match std::fs::File::open(self.dirs.pid_file()) {
            Ok(lock) => lock.try_lock_shared().is_err(),
            Err(e) => e.kind() != std::io::ErrorKind::NotFound,
        }
    }

    pub fn connect(&self) -> Option<UnixStream> {
        UnixStream::connect(self.dirs.socket()).ok()
    }

    /// Starts `bosun daemon run` in the background and waits until it accepts connections.
    /// A daemon killed by a signal while it started (by an OOM killer, or a person's `kill`) is
    /// started again, up to `START_TRIES` times; one that exits on its own is not: it said why.
    pub fn start_daemon(&self) -> Result<()> {
        let root = self.dirs.root();
        std::fs::create_dir_all(root).with_context(|| format!("cannot create state directory {}", root.display()))?;
        let log_path = self.dirs.log();
        let deadline = Instant::now() + START_DEADLINE;
        let mut tries = 0;
        'spawn: loop {
            tries += 1;
            let mut child = self.spawn_daemon(&log_path)?;
            loop {
                if self.connect().is_some() {
                    return Ok(());
                }
                // Our daemon exits at once when another command's daemon won the lock: wait for that one.
                if let Some(status) = child.try_wait()?.filter(|_| !self.daemon_alive()) {
                    if status.signal().is_some() && tries < START_TRIES {
                        tracing::debug!("the daemon started was killed ({status}): starting another");
                        continue 'spawn;
                    }
                    bail!(
                        "the daemon did not start ({status}): {}; its log is {}",
                        last_line(&log_path).unwrap_or_else(|| "no message".into()),
                        log_path.display()
                    );
                }
                if Instant::now() > deadline {
                    bail!("the daemon did not start within {START_DEADLINE:?}; its log is {}", log_path.display());
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }

    /// `bosun daemon run --detach` in the background, its output appended to `log_path`.
    fn spawn_daemon(&self, log_path: &Path) -> Result<std::process::Child> {
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(log_path)
            .with_context(|| format!("cannot open {}", log_path.display()))?;
        let exe = std::env::current_exe().context("cannot find the bosun executable")?;
        bosun_adapters::private::as_user(&mut Command::new(exe))
            .arg("--state-dir")
            .arg(self.dirs.root())
            .args(["daemon", "run", "--detach"])
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .context("cannot start the bosun daemon")
    }
}

fn unavailable(message: &str) -> CliError {
    CliError::new(Kind::DaemonUnavailable, message)
}

fn no_answer() -> CliError {
    unavailable("the daemon did not answer (see `bosun daemon logs`)")
}

/// The connection was lost before an answer came.
struct Lost(anyhow::Error);

/// Sends the request and reads its answer: the daemon's answer (an error it sent is an `Err`),
/// or `Lost` when none came.
fn exchange(mut stream: UnixStream, envelope: &Envelope) -> Result<Result<Response>, Lost> {
    write_frame(&mut stream, envelope).context("cannot send the request to the daemon").map_err(Lost)?;
    let response: Response = read_frame(&mut stream).map_err(|e| Lost(e.into()))?;
    Ok(match response {
        Response::Error(e) => Err(anyhow::Error::new(e)),
        other => Ok(other),
    })
}

/// The error the daemon sent, if `err` is one.
pub fn wire_error(err: &anyhow::Error) -> Option<&WireError> {
    err.downcast_ref::<WireError>()
}

fn last_line(path: &std::path::Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    BufReader::new(file).lines().map_while(Result::ok).filter(|l| !l.trim().is_empty()).last()
}
