//! Talking to the daemon: connect to its socket, starting it in the background when it does
//! not run, and exchange one request for one response.

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use bosun_wire::{read_frame, write_frame, Envelope, Request, Response, StateDir, WireError, VERSION};

/// How long to wait for a daemon we started to accept connections.
const START_DEADLINE: Duration = Duration::from_secs(10);

pub struct Client {
    pub dirs: StateDir,
}

impl Client {
    pub fn new(dirs: StateDir) -> Self {
        Self { dirs }
    }

    /// Sends `request`, starting the daemon first if it does not run. A daemon-side error
    /// becomes an `Err` carrying its `WireError`.
    pub fn request(&self, request: Request) -> Result<Response> {
        let stream = match self.connect() {
            Some(s) => s,
            None => {
                self.start_daemon()?;
                self.connect().context("the daemon started but does not accept connections")?
            }
        };
        exchange(stream, request)
    }

    /// Sends `request` only if a daemon runs.
    pub fn request_if_running(&self, request: Request) -> Result<Option<Response>> {
        match self.connect() {
            Some(s) => exchange(s, request).map(Some),
            None => Ok(None),
        }
    }

    /// Whether a daemon process holds the state directory's lock (it may not listen yet, or
    /// any more).
    pub fn daemon_alive(&self) -> bool {
        std::fs::File::open(self.dirs.pid_file()).is_ok_and(|f| f.try_lock_shared().is_err())
    }

    pub fn connect(&self) -> Option<UnixStream> {
        UnixStream::connect(self.dirs.socket()).ok()
    }

    /// Starts `bosun daemon run` in the background and waits until it accepts connections.
    pub fn start_daemon(&self) -> Result<()> {
        let root = self.dirs.root();
        std::fs::create_dir_all(root).with_context(|| format!("cannot create state directory {}", root.display()))?;
        let log_path = self.dirs.log();
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .with_context(|| format!("cannot open {}", log_path.display()))?;
        let exe = std::env::current_exe().context("cannot find the bosun executable")?;
        let mut child = bosun_adapters::private::as_user(&mut Command::new(exe))
            .arg("--state-dir")
            .arg(root)
            .args(["daemon", "run", "--detach"])
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .context("cannot start the bosun daemon")?;
        let deadline = Instant::now() + START_DEADLINE;
        loop {
            if self.connect().is_some() {
                return Ok(());
            }
            // Our daemon exits at once when another command's daemon won the lock: wait for that one.
            if let Some(status) = child.try_wait()?.filter(|_| !self.daemon_alive()) {
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

fn exchange(mut stream: UnixStream, request: Request) -> Result<Response> {
    let envelope = Envelope { version: VERSION.to_owned(), request };
    write_frame(&mut stream, &envelope).context("cannot send the request to the daemon")?;
    let response: Response = read_frame(&mut stream).context("the daemon did not answer (see `bosun daemon logs`)")?;
    match response {
        Response::Error(e) => Err(anyhow::Error::new(e)),
        other => Ok(other),
    }
}

/// The error the daemon sent, if `err` is one.
pub fn wire_error(err: &anyhow::Error) -> Option<&WireError> {
    err.downcast_ref::<WireError>()
}

fn last_line(path: &std::path::Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    BufReader::new(file).lines().map_while(Result::ok).filter(|l| !l.trim().is_empty()).last()
}
