//! Session hosts in Kubernetes pods: `PodHosts` makes an agent's token secret and pod (see
//! `bosun_k8s::spec`), waits for the pod's address, and notes it with the token beside the other
//! hosts (`HostDir`), so every `Sessions` call reaches the host over TCP as a container's. The
//! pods' ends come from one watch per namespace, sent to the daemon as `PodChange`s; a pod is
//! deleted only once its host has gone (it saves the agent's work before it ends). The agent's
//! hooks report to its host, which relays them: each pod's reports are followed on a thread of
//! their own and sent to the daemon as `RelayedReport`s, whose answers go back to the hook.
//! For a repository with no remote, the pod's host takes its branch as a git bundle once the
//! pod runs, and the thread that follows it fetches the branch back as one when it says its
//! agent ended, into the branch this daemon noted (`BundleTo`).

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bosun_core::{Pod, SessionName};
use bosun_host::{HostClient, HostError, HostToken};
use bosun_k8s::{Cluster, PodChange, PodPhase, PodPlan};

use super::dir::{BundleTo, HostDir};
use crate::workspaces::bundle;
use crate::{AdapterError, SpawnSpec};

/// How long a pod has to be running with an address (its image may be pulled first).
const POD_START_WAIT: Duration = Duration::from_secs(180);
/// The label naming the state directory whose daemon made a pod (a digest: labels are short).
pub const POD_STATE_LABEL: &str = "bosun.state";
/// The label naming a pod's session.
pub const POD_SESSION_LABEL: &str = "bosun.session";

/// How long a relayed report waits for the daemon's answer (its host waits a little longer).
const ANSWER_WAIT: Duration = Duration::from_secs(8);
/// How often a pod whose host does not answer is looked for again (its address, or a new
/// port-forward after a restart).
const REACH_AGAIN: Duration = Duration::from_secs(30);

/// How the daemon reaches the session hosts in its pods.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reach {
    /// At the pod's own address: a daemon in the cluster, or on its network.
    Address,
    /// Through the API server (port-forward): a daemon outside the cluster.
    Forward,
    /// At the pod's address when this machine can reach it, else through the API server.
    #[default]
    Auto,
}

impl Reach {
    /// `address`, `forward` or `auto` (what `BOSUN_K8S_REACH` says).
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "address" => Some(Self::Address),
            "forward" => Some(Self::Forward),
            "auto" => Some(Self::Auto),
            _ => None,
        }
    }
}

/// A report of an agent's hook in a pod, relayed by its session host: the daemon checks it is
/// of the session's own agent, and sends what the hook prints (if anything) to `answer`.
pub struct RelayedReport {
    pub session: SessionName,
    pub hook: bosun_wire::HookEvent,
    pub answer: mpsc::SyncSender<Option<String>>,
}

/// A cluster and what bosun keeps of its pods.
pub struct PodHosts {
    cluster: Arc<dyn Cluster>,
    /// The value of this daemon's `bosun.state` label.
    state: String,
    changes: mpsc::Sender<PodChange>,
    reports: mpsc::Sender<RelayedReport>,
    watched: Mutex<BTreeSet<String>>,
    /// The sessions whose reports a thread follows.
    followed: Arc<Mutex<BTreeSet<SessionName>>>,
    reach: Reach,
    /// When each pod whose host did not answer was last looked for again.
    looked_for: Mutex<BTreeMap<SessionName, Instant>>,
    /// The sessions whose noted address is a port-forward of this process's.
    forwarded: Mutex<BTreeSet<SessionName>>,
    /// The sessions whose host relays no reports (an older bosun in the image).
    no_relay: Arc<Mutex<BTreeSet<SessionName>>>,
}

impl PodHosts {
    pub fn new(
        cluster: Arc<dyn Cluster>,
        state: String,
        changes: mpsc::Sender<PodChange>,
        reports: mpsc::Sender<RelayedReport>,
    ) -> Self {
        Self {
            cluster,
            state,
            changes,
            reports,
            watched: Mutex::default(),
            followed: Arc::default(),
            reach: Reach::default(),
            looked_for: Mutex::default(),
            forwarded: Mutex::default(),
            no_relay: Arc::default(),
        }
    }

    /// Whether `session`'s noted address may be given its token: not a port-forward another
    /// process made, whose port anyone may have bound since.
    pub fn trusted(&self, dir: &HostDir, session: &SessionName) -> bool {
        !dir.forward_file(session).exists() || lock(&self.forwarded).contains(session)
    }

    /// The same, reaching the pods' hosts as `reach` says.
    pub fn with_reach(mut self, reach: Reach) -> Self {
        self.reach = reach;
        self
    }

    /// Notes where the host of pod `session` (at `ip`) is reached from here: its own address,
    /// or a local one forwarded to it through the API server. `forwarded_before`: it was
    /// reached through a forward (by an earlier daemon), which `Auto` keeps to without a probe.
    fn note_address(
        &self,
        dir: &HostDir,
        session: &SessionName,
        namespace: &str,
        ip: std::net::IpAddr,
        forwarded_before: bool,
    ) -> Result<(), AdapterError> {
        let direct = SocketAddr::new(ip, bosun_k8s::HOST_PORT);
        let forward = match self.reach {
            Reach::Address => false,
            Reach::Forward => true,
            Reach::Auto => forwarded_before || !reachable(direct),
        };
        let io = |e| AdapterError::io("noting a pod's address", e);
        if forward {
            let addr = self.cluster.forward(namespace, session.as_str(), bosun_k8s::HOST_PORT).map_err(k8s)?;
            lock(&self.forwarded).insert(session.clone());
            std::fs::write(dir.forward_file(session), b"").map_err(io)?;
            dir.write_address(session, addr).map_err(io)
        } else {
            lock(&self.forwarded).remove(session);
            let _ = std::fs::remove_file(dir.forward_file(session));
            dir.write_address(session, direct).map_err(io)
        }
    }

    /// Whether `session`'s pod still runs (or cannot be told: a cluster that does not answer).
    pub fn runs(&self, session: &SessionName, namespace: &str) -> bool {
        let selector = format!("{POD_SESSION_LABEL}={session}");
        match self.cluster.pods(namespace, &selector) {
            Ok(seen) => seen.iter().any(|p| p.name == session.as_str() && p.phase == PodPhase::Running),
            Err(_) => true,
        }
    }

    /// Looks for the running pod of `session`, whose host did not answer at its noted address
    /// (a port-forward of an earlier daemon's, or a pod moved), and notes where it is now; at
    /// most once every `REACH_AGAIN`. Whether a new address was noted.
    pub fn look_for(&self, dir: &HostDir, session: &SessionName, namespace: &str) -> bool {
        {
            let mut looked = lock(&self.looked_for);
            if looked.get(session).is_some_and(|t| t.elapsed() < REACH_AGAIN) {
                return false;
            }
            looked.insert(session.clone(), Instant::now());
        }
        let selector = format!("{POD_SESSION_LABEL}={session}");
        let Ok(seen) = self.cluster.pods(namespace, &selector) else { return false };
        let running = seen.iter().find(|p| p.name == session.as_str() && p.phase == PodPhase::Running);
        let Some(ip) = running.and_then(|p| p.ip.as_deref()?.parse().ok()) else { return false };
        let forwarded_before = dir.forward_file(session).exists();
        match self.note_address(dir, session, namespace, ip, forwarded_before) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(%session, "cannot reach its pod: {e}");
                false
            }
        }
    }

    /// Whether a thread follows `session`'s reports (its host answered it, and has not gone).
    pub fn is_followed(&self, session: &SessionName) -> bool {
        lock(&self.followed).contains(session)
    }

    /// Follows the hook reports `session`'s host relays, on a thread of its own, unless one
    /// does already. The thread ends when the host goes (ended, or out of reach); it is
    /// followed again once it answers (`HostSessions::list`).
    pub fn follow(&self, dir: &HostDir, session: &SessionName) {
        if lock(&self.no_relay).contains(session) || !lock(&self.followed).insert(session.clone()) {
            return;
        }
        let client = match dir.endpoint(session) {
            Ok(endpoint) => HostClient::new(endpoint),
            Err(e) => {
                tracing::warn!(%session, "cannot follow its reports: {e}");
                lock(&self.followed).remove(session);
                return;
            }
        };
        let (session, reports, followed) = (session.clone(), self.reports.clone(), self.followed.clone());
        let no_relay = self.no_relay.clone();
        let (bundle_to, scratch) = (dir.bundle_to(&session), dir.bundle_file(&session));
        let spawned = std::thread::Builder::new().name(format!("reports {session}")).stack_size(256 * 1024).spawn({
            let session = session.clone();
            move || {
                // A stream that ends is followed again at once; a host that does not take it
                // has gone (or cannot be reached), and a daemon that stopped listening is done.
                loop {
                    match client.reports() {
                        Ok(mut stream) => match relay(&session, &mut stream, &reports) {
                            Ok(Followed::DaemonGone) => break,
                            Ok(Followed::Exited) => {
                                drop(stream);
                                match &bundle_to {
                                    Some(to) => fetch_back(&session, &client, to, &scratch),
                                    None => tracing::warn!(%session, "its host waits for a bundle no one noted"),
                                }
                                // Followed again: a host whose fetch failed midway says so again.
                                std::thread::sleep(Duration::from_secs(1));
                            }
                            // Not at once: a host that takes and drops followers is not hammered.
                            Err(_) => std::thread::sleep(Duration::from_secs(1)),
                        },
                        Err(HostError::Refused { message, .. }) if message.contains("relays no reports") => {
                            lock(&no_relay).insert(session.clone());
                            break;
                        }
                        Err(_) => break,
                    }
                }
                lock(&followed).remove(&session);
            }
        });
        if let Err(e) = spawned {
            tracing::warn!(%session, "cannot follow its reports: {e}");
            lock(&self.followed).remove(&session);
        }
    }

    /// Watches this daemon's pods in `namespace`, once.
    pub fn watch(&self, namespace: &str) -> Result<(), AdapterError> {
        let mut watched = lock(&self.watched);
        if watched.contains(namespace) {
            return Ok(());
        }
        let selector = format!("{POD_STATE_LABEL}={}", self.state);
        self.cluster.watch(namespace, &selector, self.changes.clone()).map_err(k8s)?;
        watched.insert(namespace.to_owned());
        Ok(())
    }

    /// The names of this daemon's pods in `namespace`.
    pub fn names(&self, namespace: &str) -> Result<Vec<String>, AdapterError> {
        let selector = format!("{POD_STATE_LABEL}={}", self.state);
        Ok(self.cluster.pods(namespace, &selector).map_err(k8s)?.into_iter().map(|p| p.name).collect())
    }

    /// Makes the session's secret and pod and waits until its host may be reached; its address
    /// and token are then in `dir`.
    pub fn start(&self, dir: &HostDir, spec: &SpawnSpec<'_>, pod: &Pod) -> Result<(), AdapterError> {
        let session = spec.session;
        let source = pod.source.as_ref().ok_or_else(|| refused(session, "it has no repository to clone"))?;
        self.watch(&pod.namespace)?;
        let token_file = dir.make_token(session).map_err(|e| refused(session, &e.to_string()))?;
        let token = HostToken::read(&token_file).map_err(|e| refused(session, &e.to_string()))?;
        dir.note_pod(session, &pod.namespace).map_err(|e| AdapterError::io("noting a pod", e))?;
        let labels = BTreeMap::from([
            (POD_STATE_LABEL.to_owned(), self.state.clone()),
            (POD_SESSION_LABEL.to_owned(), session.to_string()),
        ]);
        if let (Some(claim), Some(bytes)) = (&pod.claim, pod.storage_bytes) {
            // The agent's own claim, made with its first pod and kept across the next ones.
            let ours = BTreeMap::from([(POD_STATE_LABEL.to_owned(), self.state.clone())]);
            self.cluster.create_claim(&bosun_k8s::claim(claim, &pod.namespace, bytes, &ours)).map_err(k8s)?;
        }
        let secret = bosun_k8s::host_secret_name(session.as_str());
        self.cluster
            .create_secret(&bosun_k8s::host_secret(&secret, &pod.namespace, token.text(), spec.files, &labels))
            .map_err(k8s)?;
        let plan = PodPlan {
            name: session.as_str(),
            ask: pod,
            labels: &labels,
            repo_url: source.remote.as_deref(),
            base: &source.base,
            branch: &source.branch,
            command: spec.command,
            env: spec.env,
            host_secret: &secret,
            claim: pod.claim.as_deref(),
        };
        self.cluster.create_pod(&bosun_k8s::pod(&plan)).map_err(k8s)?;
        let selector = format!("{POD_SESSION_LABEL}={session}");
        let deadline = Instant::now() + POD_START_WAIT;
        loop {
            let seen = self.cluster.pods(&pod.namespace, &selector).map_err(k8s)?;
            match seen.iter().find(|p| p.name == session.as_str()) {
                Some(p) if p.phase == PodPhase::Running => {
                    if let Some(ip) = p.ip.as_deref().and_then(|ip| ip.parse().ok()) {
                        let mut noted = self.note_address(dir, session, &pod.namespace, ip, false);
                        if noted.is_ok() && source.remote.is_none() {
                            noted = seed(dir, session, source);
                        }
                        if noted.is_err() {
                            self.remove(dir, session, &pod.namespace);
                        }
                        return noted;
                    }
                }
                Some(p) if matches!(p.phase, PodPhase::Failed | PodPhase::Succeeded) => {
                    self.remove(dir, session, &pod.namespace);
                    return Err(refused(session, "its pod ended before its host served it (did its clone fail?)"));
                }
                _ => {}
            }
            if Instant::now() >= deadline {
                self.remove(dir, session, &pod.namespace);
                return Err(refused(
                    session,
                    &format!("its pod was not running within {} s", POD_START_WAIT.as_secs()),
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Deletes the session's pod and secret and forgets them.
    pub fn remove(&self, dir: &HostDir, session: &SessionName, namespace: &str) {
        self.cluster.unforward(namespace, session.as_str());
        lock(&self.looked_for).remove(session);
        lock(&self.forwarded).remove(session);
        if let Err(e) = self.cluster.delete_pod(namespace, session.as_str()) {
            tracing::warn!(%session, "cannot delete its pod: {e}");
        }
        dir.forget(session);
        let _ = std::fs::remove_file(dir.pod_file(session));
    }
}

/// How following a host's reports ended, short of the host going.
enum Followed {
    /// The daemon stopped listening.
    DaemonGone,
    /// The host's agent ended, and its branch waits to be fetched.
    Exited,
}

/// Passes the stream's reports to the daemon and its answers back, until the stream ends
/// (`Err`: the host went or let this follower go), the daemon does, or the agent.
fn relay(
    session: &SessionName,
    stream: &mut bosun_host::Reports,
    reports: &mpsc::Sender<RelayedReport>,
) -> Result<Followed, HostError> {
    loop {
        let hook = match stream.hear()? {
            bosun_host::Heard::Report(hook) => hook,
            bosun_host::Heard::Exited(_) => return Ok(Followed::Exited),
        };
        let (answer, answered) = mpsc::sync_channel(1);
        if reports.send(RelayedReport { session: session.clone(), hook, answer }).is_err() {
            return Ok(Followed::DaemonGone);
        }
        stream.answer(answered.recv_timeout(ANSWER_WAIT).ok().flatten())?;
    }
}

/// Gives the host of a pod whose repository has no remote its branch as a bundle, once it
/// listens (a host whose claim holds its clone already wants none). Where the branch comes
/// back to is noted first.
fn seed(dir: &HostDir, session: &SessionName, source: &bosun_core::PodSource) -> Result<(), AdapterError> {
    let to = BundleTo { repo: source.repo.clone(), branch: source.branch.clone() };
    dir.note_bundle_to(session, &to).map_err(|e| AdapterError::io("noting where a pod's branch comes back", e))?;
    let client = HostClient::new(dir.endpoint(session).map_err(|e| refused(session, &e.to_string()))?);
    let deadline = Instant::now() + POD_START_WAIT;
    loop {
        match client.needs_seed() {
            Ok(false) => return Ok(()),
            Ok(true) => break,
            Err(HostError::Gone(_)) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => return Err(refused(session, &e.to_string())),
        }
    }
    let file = dir.bundle_file(session);
    let sent = bundle::seed(&source.repo, &source.branch, &file).and_then(|()| {
        let io = |e| AdapterError::io(format!("reading {}", file.display()), e);
        let mut bytes = std::fs::File::open(&file).map_err(io)?;
        let len = bytes.metadata().map_err(io)?.len();
        client.seed(&mut bytes, len).map_err(|e| refused(session, &format!("its seed was not taken: {e}")))
    });
    let _ = std::fs::remove_file(&file);
    sent
}

/// Fetches the branch of a pod's ended agent back into `to`, from the bundle its host gives,
/// and tells the host what came of it (it then ends, saying so to the pods' watch). A host
/// gone midway is asked again when it is followed again.
fn fetch_back(session: &SessionName, client: &HostClient, to: &BundleTo, scratch: &std::path::Path) {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let have: Vec<String> = bundle::tip(&to.repo, &to.branch).into_iter().collect();
    let mut given = match client.bundle(have) {
        Ok(given) => given,
        Err(e) => return tracing::warn!(%session, "cannot take its branch back: {e}"),
    };
    let (fetched, said) = if given.len == 0 {
        bundle::take_back(&to.repo, &to.branch, None, &given.tip)
    } else {
        let written = std::fs::File::create(scratch)
            .map_err(|e| HostError::io(format!("writing {}", scratch.display()), e))
            .and_then(|mut file| given.read_to(&mut file));
        if let Err(e) = written {
            let _ = std::fs::remove_file(scratch);
            return tracing::warn!(%session, "cannot take its branch back: {e}");
        }
        // Fetches into one repository wait for each other.
        let _one = lock(&ONE_AT_A_TIME);
        let taken = bundle::take_back(&to.repo, &to.branch, Some(scratch), &given.tip);
        let _ = std::fs::remove_file(scratch);
        taken
    };
    tracing::info!(%session, fetched, "its branch {}: {said}", to.branch);
    if let Err(e) = given.fetched(fetched, said) {
        tracing::warn!(%session, "cannot tell its host what came of its bundle: {e}");
    }
}

/// Whether this machine reaches the host at `addr`: a connection made within about a second
/// (a refusal is retried, as the host may not listen yet; a firewall that rejects refuses too).
fn reachable(addr: SocketAddr) -> bool {
    for _ in 0..5 {
        match std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            Ok(_) => return true,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                std::thread::sleep(Duration::from_millis(200))
            }
            Err(_) => return false,
        }
    }
    false
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn k8s(e: bosun_k8s::K8sError) -> AdapterError {
    AdapterError::Command { command: "kubernetes".into(), stderr: e.to_string() }
}

fn refused(session: &SessionName, why: &str) -> AdapterError {
    AdapterError::Command { command: format!("bosun host in pod {session}"), stderr: why.to_owned() }
}
