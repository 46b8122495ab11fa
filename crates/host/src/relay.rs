//! The relay of an agent's hook reports, for a host where no daemon's socket can be reached (a
//! pod): the host listens on a Unix socket where the agent's hooks look for the daemon's (they
//! run `bosun hook` with the host's state directory), and passes each report to the daemon that
//! follows it (`HostRequest::Reports`), bringing back its answer (a permission decided by
//! policy). While no daemon follows, reports wait here, at most `QUEUE_MAX`, and the hook is
//! answered at once, as a spooled report is; those made after a daemon followed are marked as
//! kept (a daemon that comes back weighs them against what it saw since), while those made
//! before the first follower came are the start of the session, which its daemon waits for.

use std::collections::VecDeque;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use bosun_wire::{read_frame_within, write_frame, Envelope, HookEvent, Request, Response};

use crate::conn::HostConn;
use crate::protocol::{HostRequest, HostResponse};
use crate::HostError;

/// Reports kept while no daemon follows; the oldest go first beyond it, or beyond
/// `QUEUE_BYTES` of payload.
pub const QUEUE_MAX: usize = 256;
const QUEUE_BYTES: usize = 16 * 1024 * 1024;
/// The largest report frame a hook may send (a hook's payload is cut at 1 MiB).
const REPORT_MAX: usize = 2 * 1024 * 1024;
/// How long a hook waits for the following daemon's answer.
const ANSWER_WAIT: Duration = Duration::from_secs(10);
/// How long a hook has to send its report once connected.
const HOOK_WAIT: Duration = Duration::from_secs(5);
/// How often a follower with nothing to read is sent a beat, so each side sees the other gone.
pub const BEAT: Duration = Duration::from_secs(20);

struct Pending {
    hook: HookEvent,
    /// Where the hook waits for the daemon's answer; none once it was answered without one.
    answer: Option<SyncSender<Option<String>>>,
}

#[derive(Default)]
struct Queue {
    pending: VecDeque<Pending>,
    /// Bumped by each new follower: an older one stops.
    follower: u64,
    followed: bool,
    ever_followed: bool,
    /// How the program ended, once it did, for a host whose followers fetch its work then.
    exited: Option<bosun_core::ExitStatus>,
}

#[derive(Default)]
pub struct Relay {
    queue: Mutex<Queue>,
    changed: Condvar,
}

impl Relay {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Listens at `path` (mode 0600, in a directory made 0700) for the agent's hooks, each on
    /// a thread of its own.
    pub fn listen(self: &Arc<Self>, path: &Path) -> Result<(), HostError> {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        if let Some(dir) = path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| HostError::io("relay directory", e))?;
        }
        let _ = std::fs::remove_file(path);
        let listener = UnixListener::bind(path).map_err(|e| HostError::io("relay socket", e))?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| HostError::io("relay socket", e))?;
        let relay = self.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                match conn {
                    Ok(conn) => {
                        let relay = relay.clone();
                        std::thread::spawn(move || relay.hear(conn));
                    }
                    // Out of descriptors, say: wait rather than spin.
                    Err(_) => std::thread::sleep(Duration::from_millis(100)),
                }
            }
        });
        Ok(())
    }

    /// One hook's report: only a report of its own agent's program (any driver's) is
    /// taken; the answer is the daemon's, or `Ok` when none follows or it does not answer.
    fn hear(&self, mut conn: UnixStream) {
        let _ = conn.set_read_timeout(Some(HOOK_WAIT));
        let _ = conn.set_write_timeout(Some(HOOK_WAIT));
        let Ok(envelope) = read_frame_within::<_, Envelope>(&mut conn, REPORT_MAX) else { return };
        let hook = match envelope.request {
            Request::Hook(hook @ HookEvent::Report { .. }) => hook,
            _ => {
                let message = "a session host relays only the reports of its agent's hooks".to_owned();
                let refused = bosun_wire::WireError::new(bosun_wire::ErrorKind::BadRequest, message);
                let _ = write_frame(&mut conn, &Response::Error(refused));
                return;
            }
        };
        let answer = self.push(hook);
        let stdout = answer.and_then(|a| a.recv_timeout(ANSWER_WAIT).ok()).flatten();
        let response = stdout.map_or(Response::Ok, |stdout| Response::HookReply { stdout });
        let _ = write_frame(&mut conn, &response);
    }

    /// Queues `hook`; while a daemon follows, returns where its answer will come.
    fn push(&self, mut hook: HookEvent) -> Option<Receiver<Option<String>>> {
        let mut queue = self.lock();
        let answer = if queue.followed {
            let (tx, rx) = sync_channel(1);
            Some((tx, rx))
        } else {
            if queue.ever_followed {
                mark_kept(&mut hook);
            }
            None
        };
        let size = |h: &HookEvent| match h {
            HookEvent::Report { payload, .. } => payload.len(),
            _ => 0,
        };
        let mut bytes: usize = queue.pending.iter().map(|p| size(&p.hook)).sum::<usize>() + size(&hook);
        while !queue.pending.is_empty() && (queue.pending.len() >= QUEUE_MAX || bytes > QUEUE_BYTES) {
            if let Some(dropped) = queue.pending.pop_front() {
                bytes -= size(&dropped.hook);
            }
        }
        let (tx, rx) = answer.unzip();
        queue.pending.push_back(Pending { hook, answer: tx });
        self.changed.notify_all();
        rx
    }

    /// The connection follows the reports: each is written as `HostResponse::Report` and the
    /// follower answers `HostRequest::Answered`; a beat (`Ok`) goes when there is nothing to
    /// send. Ends when the follower goes (its end is read at once, by a thread of its own) or
    /// another one comes; a report it did not answer is kept for the next.
    pub fn follow(self: &Arc<Self>, conn: HostConn) {
        let me = {
            let mut queue = self.lock();
            queue.follower += 1;
            queue.followed = true;
            queue.ever_followed = true;
            self.changed.notify_all();
            queue.follower
        };
        let answers = match conn.try_clone() {
            Ok(reader) => self.read_answers(reader, me),
            Err(_) => return self.unfollow(me),
        };
        self.send_reports(conn, me, &answers);
        self.unfollow(me);
    }

    /// Reads the follower's answers on a thread of its own; at their end (the follower gone,
    /// or saying something else) it stops following.
    fn read_answers(self: &Arc<Self>, mut reader: HostConn, me: u64) -> Receiver<Option<String>> {
        let (tx, rx) = std::sync::mpsc::channel();
        let relay = self.clone();
        std::thread::spawn(move || {
            let _ = reader.set_read_timeout(None);
            while let Ok(HostRequest::Answered { stdout }) = read_frame_within(&mut reader, REPORT_MAX) {
                if tx.send(stdout).is_err() {
                    break;
                }
            }
            relay.unfollow(me);
        });
        rx
    }

    fn send_reports(&self, mut conn: HostConn, me: u64, answers: &Receiver<Option<String>>) {
        let _ = conn.set_write_timeout(Some(ANSWER_WAIT));
        if write_frame(&mut conn, &HostResponse::Ok).is_err() {
            let _ = conn.shutdown(std::net::Shutdown::Both);
            return;
        }
        let mut told_exit = false;
        loop {
            let next = {
                let mut queue = self.lock();
                loop {
                    if queue.follower != me || !queue.followed {
                        let _ = conn.shutdown(std::net::Shutdown::Both);
                        return;
                    }
                    if let Some(p) = queue.pending.pop_front() {
                        break Some(Ok(p));
                    }
                    if let Some(exit) = queue.exited.filter(|_| !told_exit) {
                        break Some(Err(exit));
                    }
                    let (q, waited) = self.changed.wait_timeout(queue, BEAT).unwrap_or_else(PoisonError::into_inner);
                    queue = q;
                    if waited.timed_out() && queue.pending.is_empty() {
                        break None;
                    }
                }
            };
            let pending = match next {
                Some(Ok(pending)) => pending,
                Some(Err(exit)) => {
                    told_exit = true;
                    if write_frame(&mut conn, &HostResponse::Exited { exit }).is_err() {
                        let _ = conn.shutdown(std::net::Shutdown::Both);
                        return;
                    }
                    continue;
                }
                None => {
                    if write_frame(&mut conn, &HostResponse::Ok).is_err() {
                        let _ = conn.shutdown(std::net::Shutdown::Both);
                        return;
                    }
                    continue;
                }
            };
            let sent = write_frame(&mut conn, &HostResponse::Report { hook: pending.hook.clone() });
            match sent.ok().and_then(|()| answers.recv_timeout(ANSWER_WAIT).ok()) {
                Some(stdout) => {
                    if let Some(answer) = pending.answer {
                        let _ = answer.try_send(stdout);
                    }
                }
                None => {
                    // Kept for the next follower; its hook is answered now, without waiting.
                    let Pending { mut hook, answer } = pending;
                    if let Some(answer) = answer {
                        let _ = answer.try_send(None);
                    }
                    mark_kept(&mut hook);
                    self.lock().pending.push_front(Pending { hook, answer: None });
                    self.changed.notify_all();
                    let _ = conn.shutdown(std::net::Shutdown::Both);
                    return;
                }
            }
        }
    }

    /// Tells every follower, now and to come, that the program ended and its work waits to be
    /// fetched (`HostResponse::Exited`, after the reports made before).
    pub fn exited(&self, exit: bosun_core::ExitStatus) {
        self.lock().exited = Some(exit);
        self.changed.notify_all();
    }

    /// No daemon follows any more: the hooks that wait are answered now, their reports kept.
    fn unfollow(&self, me: u64) {
        let mut queue = self.lock();
        if queue.follower == me {
            queue.followed = false;
            for pending in queue.pending.iter_mut() {
                if let Some(answer) = pending.answer.take() {
                    let _ = answer.try_send(None);
                    mark_kept(&mut pending.hook);
                }
            }
            self.changed.notify_all();
        }
    }
}

/// Marks a report as kept while no daemon heard it, as the hook spool does.
fn mark_kept(hook: &mut HookEvent) {
    if let HookEvent::Report { spooled_at, .. } = hook {
        let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH);
        *spooled_at = spooled_at.or(now.ok().map(|d| d.as_millis() as u64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude(event: &str) -> HookEvent {
        HookEvent::Report {
            driver: bosun_core::driver::DriverKind::Claude,
            agent: "a1".into(),
            generation: Some(0),
            event: event.into(),
            payload: "{}".into(),
            spooled_at: None,
        }
    }

    #[test]
    fn reports_wait_unfollowed_marked_as_kept_once_followed_and_only_the_newest_are_kept() {
        let relay = Relay::default();
        relay.push(claude("SessionStart"));
        let first = relay.lock().pending[0].hook.clone();
        let HookEvent::Report { spooled_at, .. } = first else { panic!() };
        assert!(spooled_at.is_none(), "before any daemon followed: the session's start, not a kept report");
        {
            let mut queue = relay.lock();
            queue.pending.clear();
            queue.ever_followed = true;
        }
        for i in 0..QUEUE_MAX + 3 {
            assert!(relay.push(claude(&format!("E{i}"))).is_none(), "no one follows: answered at once");
        }
        let queue = relay.lock();
        assert_eq!(queue.pending.len(), QUEUE_MAX);
        let HookEvent::Report { event, spooled_at, .. } = &queue.pending[0].hook else { panic!() };
        assert_eq!(event, "E3", "the oldest went first");
        assert!(spooled_at.is_some(), "kept while no daemon heard it, as a spooled report is");
    }
}
