//! The host's process: starts the program in a pseudo-terminal, feeds what it writes to the
//! screen, the output log and any attached client, and answers requests on its socket, one
//! thread per connection. It never decides anything about the agent: it runs, shows, types and
//! reports.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bosun_core::{ExitStatus, SavedWork, TermKey};
use bosun_wire::{read_frame, write_frame};
use portable_pty::{native_pty_system, CommandBuilder, MasterPty, PtySize};

use crate::conn::HostConn;
use crate::listen::{Listen, Listener};
use crate::output_log::RotatingLog;
use crate::protocol::{HostRequest, HostResponse, HostStatus};
use crate::screen::Screen;
use crate::{HostError, SaveTo};

/// How long a request may take to arrive once connected, and an attached client to take a
/// write, before it is dropped.
const CLIENT_WAIT: Duration = Duration::from_secs(5);
/// How long a killed program has after SIGHUP and SIGTERM before SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// How often the host makes sure its socket (or address file) is still there: one removed (its
/// state directory wiped) leaves it unreachable, and it ends with its program rather than linger.
const SOCKET_CHECK: Duration = Duration::from_secs(10);

pub struct HostOptions {
    /// Where to listen: a Unix socket, or TCP with a token.
    pub listen: Listen,
    /// The session's name, as the daemon knows it.
    pub session: String,
    pub command: Vec<String>,
    /// The file the program's output is appended to, rotated at `output_max` bytes.
    pub output: Option<PathBuf>,
    pub output_max: u64,
    pub cols: u16,
    pub rows: u16,
    /// The daemon's socket, told at once when the program exits.
    pub daemon: Option<PathBuf>,
    /// Where the workspace's branch is saved, for a host whose workspace lives only here: a
    /// remote `Save` pushes to, or the daemon, which seeds it before the program starts and
    /// takes it back as a bundle once the program ended.
    pub save: Option<SaveTo>,
    /// When set, the host ends with its program: it saves (when it has somewhere to: a push,
    /// or waiting until the daemon fetched its bundle), writes an `Ended` as JSON to this file
    /// (a pod's termination message, which its cluster reports) and exits with the program's
    /// status.
    pub exit_file: Option<PathBuf>,
    /// Where the agent's hooks find a daemon's socket: the host listens there and relays their
    /// reports to the daemon that follows it.
    pub relay: Option<PathBuf>,
    /// A variable holding files to write before the program starts, as a JSON object of
    /// absolute path to content (the agent's settings, shipped in its pod's secret). The
    /// program does not inherit it.
    pub files_var: Option<String>,
}

impl HostOptions {
    /// A host for `command` on `listen`, with an 80×24 terminal and nothing else: no output
    /// log, no daemon to tell, nowhere to save, no exit file, no relay, no files.
    pub fn new(listen: Listen, session: impl Into<String>, command: Vec<String>) -> Self {
        Self {
            listen,
            session: session.into(),
            command,
            output: None,
            output_max: 0,
            cols: 80,
            rows: 24,
            daemon: None,
            save: None,
            exit_file: None,
            relay: None,
            files_var: None,
        }
    }
}

struct Host {
    session: String,
    save: Option<SaveTo>,
    exit_file: Option<PathBuf>,
    pid: Option<u32>,
    screen: Mutex<Screen>,
    exit: Mutex<Option<ExitStatus>>,
    input: Mutex<Box<dyn Write + Send>>,
    master: Mutex<Box<dyn MasterPty + Send>>,
    attached: Mutex<Vec<HostConn>>,
    relay: Option<Arc<crate::Relay>>,
    /// For a host that saves by bundle: what became of its work, once its client said.
    fetched: Mutex<Option<SavedWork>>,
    fetched_now: Condvar,
    /// Held while a bundle is given: one at a time.
    giving: Mutex<()>,
}

impl Host {
    fn set_fetched(&self, saved: SavedWork) {
        *lock(&self.fetched) = Some(saved);
        self.fetched_now.notify_all();
    }

    /// Waits until the client said what it made of the bundle.
    fn wait_fetched(&self) -> SavedWork {
        let mut fetched = lock(&self.fetched);
        loop {
            if let Some(saved) = fetched.clone() {
                return saved;
            }
            fetched = self.fetched_now.wait(fetched).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs the host until it is killed. Returns once the socket cannot be served any more.
pub fn serve(opts: HostOptions) -> Result<(), HostError> {
    let listener = Listener::bind(&opts.listen)?;
    if let Some(SaveTo::Bundle { branch }) = &opts.save {
        let dir = std::env::current_dir().map_err(|e| HostError::io("reading its workspace's path", e))?;
        if !crate::bundle::seeded(&dir, branch) {
            take_seed(&listener, &dir, branch, opts.exit_file.as_deref());
        }
    }
    if let Some(var) = &opts.files_var {
        crate::files::write_from(var)?;
    }
    let relay = match &opts.relay {
        Some(path) => {
            let relay = Arc::new(crate::Relay::default());
            relay.listen(path)?;
            Some(relay)
        }
        None => None,
    };
    let size = PtySize { rows: opts.rows, cols: opts.cols, pixel_width: 0, pixel_height: 0 };
    let spawn_err = |reason: String| HostError::Spawn { command: opts.command.clone(), reason };
    let pty = native_pty_system().openpty(size).map_err(|e| spawn_err(e.to_string()))?;
    let (program, args) = opts.command.split_first().ok_or_else(|| spawn_err("no command".into()))?;
    let mut cmd = CommandBuilder::new(program);
    cmd.args(args);
    if let crate::Listen::Tcp { token, .. } = &opts.listen {
        if let Some(name) = token.hidden_var() {
            cmd.env_remove(name);
        }
    }
    if let Some(var) = &opts.files_var {
        cmd.env_remove(var);
    }
    // Where it was started, or nowhere: a PTY given no directory starts in the home directory.
    let cwd = std::env::current_dir().map_err(|e| spawn_err(format!("its working directory is gone: {e}")))?;
    cmd.cwd(cwd);
    let mut child = pty.slave.spawn_command(cmd).map_err(|e| spawn_err(e.to_string()))?;
    drop(pty.slave);
    let reader = pty.master.try_clone_reader().map_err(|e| spawn_err(e.to_string()))?;
    let input = pty.master.take_writer().map_err(|e| spawn_err(e.to_string()))?;
    let host = Arc::new(Host {
        session: opts.session.clone(),
        save: opts.save.clone(),
        exit_file: opts.exit_file.clone(),
        pid: child.process_id(),
        screen: Mutex::new(Screen::new(opts.cols, opts.rows)),
        exit: Mutex::new(None),
        input: Mutex::new(input),
        master: Mutex::new(pty.master),
        attached: Mutex::new(Vec::new()),
        relay,
        fetched: Mutex::new(None),
        fetched_now: Condvar::new(),
        giving: Mutex::new(()),
    });
    let log = match &opts.output {
        Some(path) => Some(RotatingLog::open(path, opts.output_max).map_err(|e| HostError::io("output log", e))?),
        None => None,
    };
    let output = std::thread::spawn({
        let host = host.clone();
        move || copy_output(&host, reader, log)
    });
    std::thread::spawn({
        let (host, daemon) = (host.clone(), opts.daemon.clone());
        move || {
            let status = child.wait().map(|s| exit_of(&s)).unwrap_or(ExitStatus::UNKNOWN);
            // Its last output is on the screen before anyone hears it ended.
            let _ = output.join();
            *lock(&host.exit) = Some(status);
            if let Some(daemon) = daemon {
                tell_daemon(&daemon, &host.session, status);
            }
            if let Some(path) = &host.exit_file {
                let saved = save_as_it_ends(&host, status);
                end_with_program(path, status, saved);
            }
        }
    });
    let marker = listener.marker().to_owned();
    std::thread::spawn({
        let (host, marker) = (host.clone(), marker.clone());
        let bound = inode(&marker);
        move || loop {
            std::thread::sleep(SOCKET_CHECK);
            if inode(&marker) != bound {
                kill(&host);
                std::process::exit(0);
            }
        }
    });
    listener.run(move |conn| answer(&host, conn, &marker));
    Ok(())
}

/// Serves one connection at a time until a `Seed` made the workspace `dir` a clone on
/// `branch`: no program runs before. A `Kill` ends the host (nothing ran, so nothing is lost).
fn take_seed(listener: &Listener, dir: &Path, branch: &str, exit_file: Option<&Path>) {
    loop {
        let Some(mut conn) = listener.accept() else {
            // Refused, or the listener failing: never a spin.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        let _ = conn.set_read_timeout(Some(CLIENT_WAIT));
        let _ = conn.set_write_timeout(Some(CLIENT_WAIT));
        let Ok(request) = read_frame::<_, HostRequest>(&mut conn) else { continue };
        let answer = match request {
            HostRequest::Seed { len } => match crate::bundle::seed(&mut conn, dir, branch, len) {
                Ok(()) => {
                    let _ = write_frame(&mut conn, &HostResponse::Ok);
                    return;
                }
                Err(e) => HostResponse::Error { message: e.to_string() },
            },
            HostRequest::Kill => {
                let _ = write_frame(&mut conn, &HostResponse::Ok);
                let said = "it ended before its workspace came: there was no work".to_owned();
                let unseeded = SavedWork { pushed: true, dirty: false, said };
                match exit_file {
                    Some(path) => end_with_program(path, ExitStatus { code: None, signal: Some(15) }, Some(unseeded)),
                    None => std::process::exit(1),
                }
            }
            _ => HostResponse::Seeding,
        };
        let _ = write_frame(&mut conn, &answer);
    }
}

/// What the host does with its work as it ends with its program: pushes it, or tells its
/// followers and waits until one fetched its bundle. None when it has nowhere to save.
fn save_as_it_ends(host: &Host, exit: ExitStatus) -> Option<SavedWork> {
    match (&host.save, std::env::current_dir()) {
        (Some(SaveTo::Remote { remote, branch }), Ok(dir)) => {
            Some(crate::save::saved_of(crate::save::push(remote, branch, &dir)))
        }
        (Some(SaveTo::Bundle { .. }), _) => {
            if let Some(relay) = &host.relay {
                relay.exited(exit);
            }
            Some(host.wait_fetched())
        }
        (Some(_), Err(e)) => {
            Some(SavedWork { pushed: false, dirty: true, said: format!("cannot tell its workspace: {e}") })
        }
        (None, _) => None,
    }
}

/// Writes how the program ended and what became of its work to `path`, and exits as the
/// program did.
fn end_with_program(path: &Path, exit: ExitStatus, saved: Option<SavedWork>) -> ! {
    let ended = crate::Ended { exit, saved };
    if let Err(e) = std::fs::write(path, ended.to_message()) {
        tracing::warn!("cannot write {}: {e}", path.display());
    }
    let code = exit.code.or(exit.signal.map(|s| 128 + s)).unwrap_or(1);
    std::process::exit(code);
}

/// Gives the workspace's branch as a bundle (see `bundle`), once the program ended; what the
/// client made of it ends the host. A bundle that cannot be made ends it too, its work left
/// for a person; a client gone midway leaves it waiting for the next.
fn give_bundle(host: &Host, mut conn: HostConn, have: &[String]) {
    let refuse = |conn: &mut HostConn, message: &str| {
        let _ = write_frame(conn, &HostResponse::Error { message: message.to_owned() });
    };
    let Some(SaveTo::Bundle { branch }) = &host.save else {
        return refuse(&mut conn, "this host gives no bundle: it saves by push, or not at all");
    };
    if let Err(e) = crate::bundle::check_have(have) {
        return refuse(&mut conn, &e.to_string());
    }
    if lock(&host.exit).is_none() {
        return refuse(&mut conn, "its program still runs: its branch is given once it ended");
    }
    let _one = lock(&host.giving);
    if lock(&host.fetched).is_some() {
        return refuse(&mut conn, "its branch was fetched already");
    }
    let _ = conn.set_write_timeout(Some(crate::save::SAVE_WAIT));
    let made = std::env::current_dir()
        .map_err(crate::bundle::BundleError::Workspace)
        .and_then(|dir| crate::bundle::make(&dir, branch, have));
    match made {
        Err(e) => {
            let message = e.to_string();
            refuse(&mut conn, &message);
            host.set_fetched(SavedWork { pushed: false, dirty: true, said: message });
        }
        Ok(given) => {
            if let Some((fetched, said)) = crate::bundle::give(&mut conn, &given) {
                host.set_fetched(SavedWork { pushed: fetched, dirty: given.dirty, said });
            }
        }
    }
}

/// The inode of the file at `path`, if there is one.
fn inode(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).ok().map(|m| m.ino())
}

/// Everything the program writes: to the screen, the output log and each attached client.
fn copy_output(host: &Host, mut reader: Box<dyn Read + Send>, mut log: Option<RotatingLog>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        lock(&host.screen).feed(chunk);
        if let Some(l) = log.as_mut() {
            if let Err(e) = l.write(chunk) {
                tracing::warn!("cannot write the output log: {e}");
                log = None;
            }
        }
        // A client that cannot take it within its wait is dropped, never waited on for long.
        lock(&host.attached).retain_mut(|c| c.write_all(chunk).is_ok());
    }
}

/// Answers one request; `marker` (the socket or address file) goes with a killed host.
fn answer(host: &Host, mut conn: HostConn, marker: &Path) {
    let _ = conn.set_read_timeout(Some(CLIENT_WAIT));
    let _ = conn.set_write_timeout(Some(CLIENT_WAIT));
    let Ok(request) = read_frame::<_, HostRequest>(&mut conn) else { return };
    let response = match request {
        HostRequest::Status => HostResponse::Status(status(host)),
        HostRequest::Screen { colors, scrollback } => {
            HostResponse::Screen { text: lock(&host.screen).text(colors, scrollback) }
        }
        HostRequest::Press { keys } => match TermKey::check(&keys) {
            Err(e) => HostResponse::Error { message: e.to_string() },
            Ok(()) => match type_keys(host, &keys) {
                Ok(()) => HostResponse::Ok,
                Err(e) => HostResponse::Error { message: format!("cannot type into the terminal: {e}") },
            },
        },
        HostRequest::Resize { cols, rows } => match bosun_core::check_size(cols, rows) {
            Err(e) => HostResponse::Error { message: e.to_string() },
            Ok(()) => {
                let before = lock(&host.screen).size();
                let size = PtySize { rows, cols, pixel_width: 0, pixel_height: 0 };
                match lock(&host.master).resize(size) {
                    Ok(()) => {
                        lock(&host.screen).resize(cols, rows);
                        HostResponse::Resized { before }
                    }
                    Err(e) => HostResponse::Error { message: format!("cannot resize the terminal: {e}") },
                }
            }
        },
        // A host that ends with its program saves first: its exit thread ends it, maybe before
        // an answer written after the kill would be.
        HostRequest::Kill if host.exit_file.is_some() => {
            let _ = write_frame(&mut conn, &HostResponse::Ok);
            kill(host);
            return;
        }
        HostRequest::Kill => {
            kill(host);
            let _ = write_frame(&mut conn, &HostResponse::Ok);
            let _ = std::fs::remove_file(marker);
            std::process::exit(0);
        }
        HostRequest::Save => match (&host.save, std::env::current_dir()) {
            (Some(SaveTo::Remote { remote, branch }), Ok(dir)) => {
                let _ = conn.set_write_timeout(Some(crate::save::SAVE_WAIT));
                crate::save::push(remote, branch, &dir)
            }
            (Some(SaveTo::Bundle { .. }), _) => HostResponse::Error {
                message: "this host pushes nowhere: its branch is given as a bundle once its program ended".into(),
            },
            (None, _) => HostResponse::Error { message: "this host has nowhere to save to".into() },
            (_, Err(e)) => HostResponse::Error { message: format!("cannot tell its workspace: {e}") },
        },
        HostRequest::Seed { .. } => HostResponse::Error { message: "this host takes no seed now".into() },
        HostRequest::Bundle { have } => return give_bundle(host, conn, &have),
        HostRequest::Fetched { .. } => HostResponse::Error { message: "no bundle was given".into() },
        HostRequest::Reports => match &host.relay {
            Some(relay) => return relay.follow(conn),
            None => HostResponse::Error { message: "this host relays no reports".into() },
        },
        HostRequest::Answered { .. } => HostResponse::Error { message: "no report was sent".into() },
        HostRequest::Attach => {
            if write_frame(&mut conn, &HostResponse::Ok).is_err() {
                return;
            }
            return attached(host, conn);
        }
    };
    let _ = write_frame(&mut conn, &response);
}

fn status(host: &Host) -> HostStatus {
    let (cols, rows) = lock(&host.screen).size();
    HostStatus { session: host.session.clone(), pid: host.pid, exit: *lock(&host.exit), cols, rows }
}

/// The bytes a terminal sends for `keys`.
fn type_keys(host: &Host, keys: &[TermKey]) -> std::io::Result<()> {
    // Held for the whole request: no other request's keys slip between its strokes.
    let mut input = lock(&host.input);
    for (i, stroke) in bosun_core::strokes(keys).enumerate() {
        if i > 0 {
            std::thread::sleep(std::time::Duration::from_millis(bosun_core::STROKES_APART_MS));
        }
        let application = lock(&host.screen).application_cursor();
        let bytes: Vec<u8> = stroke.iter().flat_map(|k| k.bytes(application)).collect();
        input.write_all(&bytes)?;
        input.flush()?;
    }
    Ok(())
}

/// The client is the terminal now: it gets the screen, then all output; what it sends is typed.
fn attached(host: &Host, mut conn: HostConn) {
    let _ = conn.set_read_timeout(None);
    {
        // Under the clients' lock: no output slips between the redraw and the stream.
        let mut clients = lock(&host.attached);
        let redraw = lock(&host.screen).redraw();
        let Ok(copy) = conn.try_clone() else { return };
        if copy.try_clone().and_then(|mut c| c.write_all(&redraw)).is_err() {
            return;
        }
        clients.push(copy);
    }
    let mut buf = [0u8; 4096];
    loop {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let mut input = lock(&host.input);
                if input.write_all(&buf[..n]).and_then(|()| input.flush()).is_err() {
                    break;
                }
            }
        }
    }
    let _ = conn.shutdown(std::net::Shutdown::Both);
}

/// Ends the program's process group: SIGHUP and SIGTERM, then SIGKILL after a grace.
fn kill(host: &Host) {
    use nix::sys::signal::{killpg, Signal};
    use nix::unistd::Pid;
    let Some(pid) = host.pid.and_then(|p| i32::try_from(p).ok()) else { return };
    let group = Pid::from_raw(pid);
    if lock(&host.exit).is_some() {
        // Ended already; whatever it left running in its group goes too.
        let _ = killpg(group, Signal::SIGKILL);
        return;
    }
    let _ = killpg(group, Signal::SIGHUP);
    let _ = killpg(group, Signal::SIGTERM);
    let deadline = std::time::Instant::now() + KILL_GRACE;
    while std::time::Instant::now() < deadline && lock(&host.exit).is_none() {
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = killpg(group, Signal::SIGKILL);
}

fn exit_of(status: &portable_pty::ExitStatus) -> ExitStatus {
    match status.signal() {
        Some(name) => ExitStatus { code: None, signal: signal_number(name) },
        None => ExitStatus::code(i32::try_from(status.exit_code()).unwrap_or(i32::MAX)),
    }
}

/// The number of a signal portable-pty names (`"Killed"`, `"Terminated"`, …); 9 when unknown.
fn signal_number(name: &str) -> Option<i32> {
    use nix::sys::signal::Signal;
    let known = [
        ("Hangup", Signal::SIGHUP),
        ("Interrupt", Signal::SIGINT),
        ("Quit", Signal::SIGQUIT),
        ("Aborted", Signal::SIGABRT),
        ("Killed", Signal::SIGKILL),
        ("Segmentation fault", Signal::SIGSEGV),
        ("Terminated", Signal::SIGTERM),
    ];
    let found = known.iter().find(|(n, _)| name.starts_with(n)).map(|(_, s)| *s as i32);
    Some(found.unwrap_or(Signal::SIGKILL as i32))
}

/// Tells the daemon the program exited, as tmux's pane-died hook does; a daemon that is down
/// finds it out from the host's status when it starts.
fn tell_daemon(daemon: &Path, session: &str, status: ExitStatus) {
    let request = bosun_wire::Request::Hook(bosun_wire::HookEvent::PaneDied {
        session: session.to_owned(),
        status: status.code,
        signal: status.signal,
    });
    let envelope = bosun_wire::Envelope { version: bosun_wire::VERSION.to_owned(), request, id: None };
    let Ok(mut conn) = UnixStream::connect(daemon) else { return };
    let _ = conn.set_read_timeout(Some(CLIENT_WAIT));
    let _ = conn.set_write_timeout(Some(CLIENT_WAIT));
    if write_frame(&mut conn, &envelope).is_ok() {
        let _ = read_frame::<_, bosun_wire::Response>(&mut conn);
    }
}
