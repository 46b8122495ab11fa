//! `FakeCluster`: a fake Kubernetes API server on 127.0.0.1 for kube-rs to talk to through a
//! normal kubeconfig (plain http, a bearer token), speaking the real core/v1 REST and watch JSON
//! for the calls bosun makes — pods (create, get, list, watch, delete, logs), secrets and
//! persistent volume claims (create, get, list, watch, delete) — and running each pod's
//! containers on the test's Docker engine (`crate::docker`), so an init clone and an agent really
//! run. See `api` for the calls, `pods` for how a pod runs, `store` for objects and watches.
//!
//! Each pod gets a loopback address of its own (`127.X.Y.2`, `127.X.Y.3`, … with X.Y from the
//! test process's id, so that concurrent tests' pods do not meet) as `status.podIP`:
//! its containers share the host's network, and all of 127/8 reaches the host on Linux, so a
//! process in a pod listens on `$(POD_IP):PORT` without clashing with other pods.
//!
//! Each connection is served on a thread of its own. Dropping the `FakeCluster` stops the server,
//! ends its watches, and removes its containers, volumes and files.

mod api;
mod claims;
mod container;
mod forward;
mod http;
mod pods;
mod store;
mod stream;
mod validate;

use std::collections::HashMap;
use std::io::{BufReader, BufWriter};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::docker::DockerEngine;
use api::Answer;
use store::{Kind, Store};

/// One request the server received.
#[derive(Clone, Debug)]
pub struct ApiRequest {
    pub method: String,
    /// The path, without the query string.
    pub path: String,
    /// The query string as sent (still percent-encoded), empty when there is none.
    pub query: String,
    pub at: Instant,
}

impl ApiRequest {
    /// Whether this request is a watch (`?watch=true`).
    pub fn is_watch(&self) -> bool {
        self.query.split('&').any(|p| p == "watch=true" || p == "watch=1")
    }
}

/// A fake API server, listening until dropped.
pub struct FakeCluster {
    shared: Arc<Shared>,
    addr: SocketAddr,
    kubeconfig: PathBuf,
    accept: Option<JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

struct Shared {
    engine: &'static DockerEngine,
    /// Labels the cluster's containers and volumes on the engine.
    id: String,
    token: String,
    /// The cluster's files: pods' volumes and secrets, the kubeconfig.
    dir: PathBuf,
    store: Mutex<Store>,
    /// Notified on every change of the store, and when the server stops.
    changed: Condvar,
    runs: Mutex<HashMap<String, pods::Run>>,
    requests: Mutex<Vec<ApiRequest>>,
    stopped: AtomicBool,
    connections: Mutex<HashMap<u64, TcpStream>>,
    next_ip: AtomicU32,
}

impl FakeCluster {
    /// A server on a free port of 127.0.0.1 whose pods run on `engine`.
    pub fn start(engine: &'static DockerEngine) -> FakeCluster {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("fake kube: cannot listen: {e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("fake kube: no local address: {e}"));
        let dir = tempfile::Builder::new()
            .prefix("bosun-kube-")
            .tempdir()
            .unwrap_or_else(|e| panic!("fake kube: cannot create a temp dir: {e}"));
        let token: String = (0..32).map(|_| fastrand::alphanumeric()).collect();
        let id: String = (0..8).map(|_| fastrand::lowercase()).collect();
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::write(&kubeconfig, kubeconfig_text(addr, &token))
            .unwrap_or_else(|e| panic!("fake kube: cannot write {}: {e}", kubeconfig.display()));
        let shared = Arc::new(Shared {
            engine,
            id,
            token,
            dir: dir.path().to_path_buf(),
            store: Mutex::new(Store::default()),
            changed: Condvar::new(),
            runs: Mutex::new(HashMap::new()),
            requests: Mutex::new(Vec::new()),
            stopped: AtomicBool::new(false),
            connections: Mutex::new(HashMap::new()),
            next_ip: AtomicU32::new(((std::process::id() & 0xffff) << 8) | 2),
        });
        let accepting = Arc::clone(&shared);
        let accept = thread::Builder::new()
            .name("fake-kube-accept".into())
            .spawn(move || accept_loop(&listener, &accepting))
            .unwrap_or_else(|e| panic!("fake kube: cannot start a thread: {e}"));
        FakeCluster { shared, addr, kubeconfig, accept: Some(accept), _dir: dir }
    }

    /// A kubeconfig file whose current context points at this server with its token, in the
    /// namespace `default`.
    pub fn kubeconfig(&self) -> PathBuf {
        self.kubeconfig.clone()
    }

    /// The server's URL: `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bearer token the server wants.
    pub fn token(&self) -> &str {
        &self.shared.token
    }

    /// The engine the pods run on.
    pub fn engine(&self) -> &'static DockerEngine {
        self.shared.engine
    }

    /// Every request received so far, oldest first (those without the token too).
    pub fn requests(&self) -> Vec<ApiRequest> {
        lock(&self.shared.requests).clone()
    }

    /// Every pod, in every namespace, as the API shows it.
    pub fn pods(&self) -> Vec<Value> {
        self.shared.store().list(Kind::Pod, None, &store::Selector::default())
    }

    /// Pod `name` of `ns`, as the API shows it.
    pub fn pod(&self, ns: &str, name: &str) -> Option<Value> {
        self.shared.store().get(Kind::Pod, ns, name).cloned()
    }

    /// Claim `name` of `ns`, as the API shows it.
    pub fn claim(&self, ns: &str, name: &str) -> Option<Value> {
        self.shared.store().get(Kind::Claim, ns, name).cloned()
    }

    /// Deletes pod `name` of `ns` as someone else would (not logged as a request): its
    /// containers go, a DELETED event is sent. Whether there was such a pod.
    pub fn delete_behind_back(&self, ns: &str, name: &str) -> bool {
        api::delete(&self.shared, Kind::Pod, ns, name).is_ok()
    }

    /// The names of the engine's containers (running or not) of pod `name` of `ns`.
    pub fn containers(&self, ns: &str, name: &str) -> Vec<String> {
        let out = self.shared.engine.run(&[
            "ps",
            "-a",
            "--filter",
            &format!("label=bosun.kube.cluster={}", self.shared.id),
            "--filter",
            &format!("label=bosun.kube.pod={ns}/{name}"),
            "--format",
            "{{.Names}}",
        ]);
        out.lines().map(str::to_owned).collect()
    }

    /// The label every container and volume of this cluster carries on the engine
    /// (`bosun.kube.cluster=…`), for `docker ps --filter label=…`.
    pub fn engine_label(&self) -> String {
        format!("bosun.kube.cluster={}", self.shared.id)
    }
}

impl Drop for FakeCluster {
    fn drop(&mut self) {
        {
            let _store = self.shared.store();
            self.shared.stopped.store(true, Ordering::SeqCst);
            self.shared.changed.notify_all();
        }
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        for (_, connection) in lock(&self.shared.connections).drain() {
            let _ = connection.shutdown(Shutdown::Both);
        }
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        for run in self.shared.runs().values_mut() {
            run.deleted = true;
        }
        let label = self.engine_label();
        let engine = self.shared.engine;
        let listed = engine.output(&["ps", "-aq", "--filter", &format!("label={label}")]);
        let ids: Vec<String> = String::from_utf8_lossy(&listed.stdout).split_whitespace().map(str::to_owned).collect();
        if !ids.is_empty() {
            let mut args = vec!["rm", "-f", "-v"];
            args.extend(ids.iter().map(String::as_str));
            let _ = engine.output(&args);
        }
        let listed = engine.output(&["volume", "ls", "-q", "--filter", &format!("label={label}")]);
        let volumes: Vec<String> =
            String::from_utf8_lossy(&listed.stdout).split_whitespace().map(str::to_owned).collect();
        if !volumes.is_empty() {
            let mut args = vec!["volume", "rm", "-f"];
            args.extend(volumes.iter().map(String::as_str));
            let _ = engine.output(&args);
        }
    }
}

fn kubeconfig_text(addr: SocketAddr, token: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: http://{addr}\n\
         contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\n    namespace: default\n\
         current-context: fake\nusers:\n- name: fake\n  user:\n    token: {token}\n"
    )
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn store(&self) -> MutexGuard<'_, Store> {
        lock(&self.store)
    }

    /// Changes the store and wakes the watches.
    fn change<T>(&self, f: impl FnOnce(&mut Store) -> T) -> T {
        let mut store = self.store();
        let out = f(&mut store);
        self.changed.notify_all();
        out
    }

    fn runs(&self) -> MutexGuard<'_, HashMap<String, pods::Run>> {
        lock(&self.runs)
    }

    fn stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// The next pod's loopback address: `127.X.Y.2`, `127.X.Y.3`, … with X.Y this process's id
    /// (tests run in processes of their own, sharing the host's network), never .0 or .255.
    fn next_ip(&self) -> String {
        loop {
            let n = self.next_ip.fetch_add(1, Ordering::SeqCst);
            let [_, b, c, d] = n.to_be_bytes();
            if d != 0 && d != 255 {
                return format!("127.{b}.{c}.{d}");
            }
        }
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for (number, stream) in (0u64..).zip(listener.incoming()) {
        if shared.stopped() {
            return;
        }
        let Ok(stream) = stream else { continue };
        let Ok(clone) = stream.try_clone() else { continue };
        lock(&shared.connections).insert(number, clone);
        let shared = Arc::clone(shared);
        let _ = thread::Builder::new().name("fake-kube-conn".into()).spawn(move || {
            serve(stream, &shared);
            lock(&shared.connections).remove(&number);
        });
    }
}

/// Serves one connection's requests until it closes, errs, or the server stops.
fn serve(stream: TcpStream, shared: &Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let Ok(write_half) = stream.try_clone() else { return };
    let mut reader = BufReader::new(stream);
    let mut writer = BufWriter::new(write_half);
    while !shared.stopped() {
        let request = match http::read_request(&mut reader) {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(e) => {
                let status = store::ApiError::bad_request(format!("malformed HTTP request: {e}")).status();
                let _ = http::write_whole(&mut writer, 400, "application/json", status.to_string().as_bytes(), true);
                return;
            }
        };
        lock(&shared.requests).push(ApiRequest {
            method: request.method.clone(),
            path: request.path().to_owned(),
            query: request.query().to_owned(),
            at: Instant::now(),
        });
        let close = request.wants_close();
        let written = match api::handle(shared, &request) {
            Answer::Json(status, body) => {
                http::write_whole(&mut writer, status, "application/json", body.to_string().as_bytes(), close)
            }
            Answer::Text(status, text) => {
                http::write_whole(&mut writer, status, "text/plain; charset=utf-8", text.as_bytes(), close)
            }
            Answer::Watch(watch) => {
                let _ = stream::watch(shared, &mut writer, &watch);
                return;
            }
            Answer::FollowLogs(id) => {
                let _ = stream::logs(shared, &mut writer, &id);
                return;
            }
            Answer::PortForward { ip, port, key, protocol } => {
                drop(writer);
                forward::serve(reader.into_inner(), &ip, port, &key, &protocol);
                return;
            }
        };
        if written.is_err() || close {
            return;
        }
    }
}
