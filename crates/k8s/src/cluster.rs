//! `Cluster`: what bosun asks of a Kubernetes API server — make and delete an agent's secret,
//! claim and pod, list its pods and claims by label, and watch its pods (one watch for them
//! all, no polling) — and `KubeCluster`, the real one on kube-rs. Like the Docker adapter,
//! `KubeCluster` owns a small tokio runtime: each synchronous call runs there and the caller
//! waits at most `CALL_TIMEOUT`; the client is made from the kubeconfig at the first call.

use std::future::Future;
use std::path::PathBuf;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod, Secret};
use kube::api::{Api, DeleteParams, ListParams, PostParams, WatchEvent, WatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use tokio::sync::OnceCell;

use crate::K8sError;

/// How long one call may take, connecting included.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// What a pod of bosun's is doing, as its status says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSeen {
    pub name: String,
    pub phase: PodPhase,
    /// Its own address, once it has one.
    pub ip: Option<String>,
    /// How its agent's container ended, once it has.
    pub exit: Option<i32>,
    /// What that container left as its termination message (bosun's host: an `Ended`).
    pub message: Option<String>,
    pub labels: std::collections::BTreeMap<String, String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodPhase {
    Pending,
    Running,
    Succeeded,
    Failed,
    Unknown,
}

/// A change a watch saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PodChange {
    Seen(PodSeen),
    Gone(String),
}

/// The objects of bosun's an API server holds.
pub trait Cluster: Send + Sync {
    /// Whether the API server answers; says how to reach one when it does not.
    fn check_available(&self) -> Result<(), K8sError>;
    /// Creates `secret`; one of its name already there is fine.
    fn create_secret(&self, secret: &Secret) -> Result<(), K8sError>;
    /// Creates `claim`; one of its name already there is fine (it holds a resumed agent's work).
    fn create_claim(&self, claim: &PersistentVolumeClaim) -> Result<(), K8sError>;
    /// Creates `pod`; one of its name already there is fine.
    fn create_pod(&self, pod: &Pod) -> Result<(), K8sError>;
    /// Deletes the pod, secret or claim `name` in `namespace`; one already gone is fine.
    fn delete(&self, what: Object, namespace: &str, name: &str) -> Result<(), K8sError>;
    /// The pods in `namespace` whose labels match `selector` (`a=b,c=d`).
    fn pods(&self, namespace: &str, selector: &str) -> Result<Vec<PodSeen>, K8sError>;
    /// The names of the claims in `namespace` whose labels match `selector`.
    fn claims(&self, namespace: &str, selector: &str) -> Result<Vec<String>, K8sError>;
    /// Watches the pods in `namespace` matching `selector` until the receiver is dropped; every
    /// change, the pods already there first, is sent to `changes`.
    fn watch(&self, namespace: &str, selector: &str, changes: mpsc::Sender<PodChange>) -> Result<(), K8sError>;
    /// A local address (on loopback) whose every connection is forwarded to `port` of pod `pod`
    /// through the API server (port-forward), for a daemon that cannot reach the pods'
    /// addresses; it lasts until `unforward`, or this client goes.
    fn forward(&self, namespace: &str, pod: &str, port: u16) -> Result<std::net::SocketAddr, K8sError>;
    /// Stops forwarding to pod `pod`.
    fn unforward(&self, namespace: &str, pod: &str);
    /// Deletes pod `pod` and its host's secret, both tried; the first failure is returned.
    fn delete_pod(&self, namespace: &str, pod: &str) -> Result<(), K8sError> {
        let pod_gone = self.delete(Object::Pod, namespace, pod);
        let secret_gone = self.delete(Object::Secret, namespace, &crate::spec::host_secret_name(pod));
        pod_gone.and(secret_gone)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Object {
    Pod,
    Secret,
    Claim,
}

/// The API server a kubeconfig names (see the module doc).
pub struct KubeCluster {
    kubeconfig: Option<PathBuf>,
    client: Arc<OnceCell<Client>>,
    /// Always `Some` until dropped.
    runtime: Option<tokio::runtime::Runtime>,
    /// The port-forwards' listeners, by namespace and pod.
    forwards: std::sync::Mutex<std::collections::HashMap<(String, String), tokio::task::JoinHandle<()>>>,
}

impl KubeCluster {
    /// The cluster of the kubeconfig at `path`; with `None`, the one kube-rs infers
    /// (`KUBECONFIG`, `~/.kube/config`, or the pod's service account in a cluster).
    pub fn new(kubeconfig: Option<PathBuf>) -> Result<Self, K8sError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("bosun-k8s")
            .enable_all()
            .build()
            .map_err(|e| K8sError::Api(format!("cannot start the Kubernetes client's runtime: {e}")))?;
        Ok(Self { kubeconfig, client: Arc::new(OnceCell::new()), runtime: Some(runtime), forwards: Default::default() })
    }

    fn call<T, F>(&self, what: String, task: impl FnOnce(Client) -> F + Send + 'static) -> Result<T, K8sError>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, K8sError>> + Send + 'static,
    {
        let late = || K8sError::Api(format!("{what}: no answer from the API server within {CALL_TIMEOUT:?}"));
        let runtime = self.runtime.as_ref().ok_or_else(late)?;
        let (tx, rx) = mpsc::sync_channel(1);
        let (cell, path) = (Arc::clone(&self.client), self.kubeconfig.clone());
        runtime.spawn(async move {
            let answer = tokio::time::timeout(CALL_TIMEOUT, async move {
                let client = client(&cell, path).await?;
                task(client).await
            })
            .await;
            let _ = tx.send(answer);
        });
        match rx.recv_timeout(CALL_TIMEOUT + Duration::from_secs(1)) {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) | Err(_) => Err(late()),
        }
    }
}

/// The client, made from the kubeconfig (or inferred) at the first call that needs it.
async fn client(cell: &OnceCell<Client>, path: Option<PathBuf>) -> Result<Client, K8sError> {
    cell.get_or_try_init(|| async move {
        let config = match &path {
            Some(p) => {
                let file = Kubeconfig::read_from(p)
                    .map_err(|e| K8sError::Api(format!("cannot read the kubeconfig {}: {e}", p.display())))?;
                Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
                    .await
                    .map_err(|e| K8sError::Api(format!("the kubeconfig {} is not usable: {e}", p.display())))?
            }
            None => Config::infer().await.map_err(|e| {
                K8sError::Api(format!(
                    "no Kubernetes cluster is configured ({e}): set KUBECONFIG or run the daemon in a cluster"
                ))
            })?,
        };
        Client::try_from(config).map_err(|e| K8sError::Api(format!("cannot make a Kubernetes client: {e}")))
    })
    .await
    .cloned()
}

impl Drop for KubeCluster {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// `Ok` for an error of the kinds `fine` names (`AlreadyExists`, `NotFound`), else what it says.
fn unless(result: Result<(), kube::Error>, fine: &str, what: &str) -> Result<(), K8sError> {
    match result {
        Ok(()) => Ok(()),
        Err(kube::Error::Api(s)) if s.reason == fine => Ok(()),
        Err(e) => Err(K8sError::Api(format!("{what}: {e}"))),
    }
}

fn namespace_of(meta: &kube::api::ObjectMeta) -> String {
    meta.namespace.clone().unwrap_or_else(|| "default".into())
}

impl Cluster for KubeCluster {
    fn check_available(&self) -> Result<(), K8sError> {
        self.call("reach the API server".into(), |client| async move {
            client.apiserver_version().await.map(drop).map_err(|e| K8sError::Api(format!("the API server: {e}")))
        })
    }

    fn create_secret(&self, secret: &Secret) -> Result<(), K8sError> {
        let (secret, ns) = (secret.clone(), namespace_of(&secret.metadata));
        self.call("create a secret".into(), |client| async move {
            let api: Api<Secret> = Api::namespaced(client, &ns);
            unless(api.create(&PostParams::default(), &secret).await.map(drop), "AlreadyExists", "create a secret")
        })
    }

    fn create_claim(&self, claim: &PersistentVolumeClaim) -> Result<(), K8sError> {
        let (claim, ns) = (claim.clone(), namespace_of(&claim.metadata));
        self.call("create a claim".into(), |client| async move {
            let api: Api<PersistentVolumeClaim> = Api::namespaced(client, &ns);
            unless(api.create(&PostParams::default(), &claim).await.map(drop), "AlreadyExists", "create a claim")
        })
    }

    fn create_pod(&self, pod: &Pod) -> Result<(), K8sError> {
        let (pod, ns) = (pod.clone(), namespace_of(&pod.metadata));
        self.call("create a pod".into(), |client| async move {
            let api: Api<Pod> = Api::namespaced(client, &ns);
            unless(api.create(&PostParams::default(), &pod).await.map(drop), "AlreadyExists", "create a pod")
        })
    }

    fn delete(&self, what: Object, namespace: &str, name: &str) -> Result<(), K8sError> {
        let (ns, name) = (namespace.to_owned(), name.to_owned());
        self.call(format!("delete {what:?} {name}"), move |client| async move {
            let params = DeleteParams::default();
            let done = match what {
                Object::Pod => Api::<Pod>::namespaced(client, &ns).delete(&name, &params).await.map(drop),
                Object::Secret => Api::<Secret>::namespaced(client, &ns).delete(&name, &params).await.map(drop),
                Object::Claim => {
                    Api::<PersistentVolumeClaim>::namespaced(client, &ns).delete(&name, &params).await.map(drop)
                }
            };
            unless(done, "NotFound", &format!("delete {what:?} {name}"))
        })
    }

    fn pods(&self, namespace: &str, selector: &str) -> Result<Vec<PodSeen>, K8sError> {
        let (ns, selector) = (namespace.to_owned(), selector.to_owned());
        self.call(format!("list pods {selector}"), |client| async move {
            let api: Api<Pod> = Api::namespaced(client, &ns);
            let list = api
                .list(&ListParams::default().labels(&selector))
                .await
                .map_err(|e| K8sError::Api(format!("list pods {selector}: {e}")))?;
            Ok(list.items.iter().map(seen).collect())
        })
    }

    fn claims(&self, namespace: &str, selector: &str) -> Result<Vec<String>, K8sError> {
        let (ns, selector) = (namespace.to_owned(), selector.to_owned());
        self.call(format!("list claims {selector}"), |client| async move {
            let api: Api<PersistentVolumeClaim> = Api::namespaced(client, &ns);
            let list = api
                .list(&ListParams::default().labels(&selector))
                .await
                .map_err(|e| K8sError::Api(format!("list claims {selector}: {e}")))?;
            Ok(list.items.into_iter().filter_map(|c| c.metadata.name).collect())
        })
    }

    fn watch(&self, namespace: &str, selector: &str, changes: mpsc::Sender<PodChange>) -> Result<(), K8sError> {
        let (ns, selector) = (namespace.to_owned(), selector.to_owned());
        let client = self.call("start a watch".into(), |client| async move { Ok(client) })?;
        let runtime = self.runtime.as_ref().ok_or_else(|| K8sError::Api("the client is shutting down".into()))?;
        runtime.spawn(async move {
            let api: Api<Pod> = Api::namespaced(client, &ns);
            follow_pods(&api, &selector, &changes).await;
        });
        Ok(())
    }

    fn forward(&self, namespace: &str, pod: &str, port: u16) -> Result<std::net::SocketAddr, K8sError> {
        let key = (namespace.to_owned(), pod.to_owned());
        let client = self.call("start a port-forward".into(), |client| async move { Ok(client) })?;
        let runtime = self.runtime.as_ref().ok_or_else(|| K8sError::Api("the client is shutting down".into()))?;
        let io = |e: std::io::Error| K8sError::Api(format!("cannot listen for a port-forward to pod {pod}: {e}"));
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(io)?;
        let addr = listener.local_addr().map_err(io)?;
        listener.set_nonblocking(true).map_err(io)?;
        let (ns, name) = key.clone();
        let task = runtime.spawn(async move {
            let Ok(listener) = tokio::net::TcpListener::from_std(listener) else { return };
            let pods: Api<Pod> = Api::namespaced(client, &ns);
            // One forward through the API server per connection, as `kubectl port-forward` does.
            while let Ok((mut conn, _)) = listener.accept().await {
                let (pods, name) = (pods.clone(), name.clone());
                tokio::spawn(async move {
                    let mut forwarder = match pods.portforward(&name, &[port]).await {
                        Ok(f) => f,
                        Err(e) => return tracing::warn!("cannot forward to pod {name}: {e}"),
                    };
                    if let Some(mut upstream) = forwarder.take_stream(port) {
                        let _ = tokio::io::copy_bidirectional(&mut conn, &mut upstream).await;
                    }
                    forwarder.abort();
                });
            }
        });
        let mut forwards = self.forwards.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(old) = forwards.insert(key, task) {
            old.abort();
        }
        Ok(addr)
    }

    fn unforward(&self, namespace: &str, pod: &str) {
        let mut forwards = self.forwards.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(task) = forwards.remove(&(namespace.to_owned(), pod.to_owned())) {
            task.abort();
        }
    }
}

/// How long to wait before asking again after a list or a watch failed.
const WATCH_RETRY: Duration = Duration::from_secs(1);

/// Sends each change of the pods `selector` picks to `changes` until it is dropped: the pods
/// listed as they are, then the changes a watch from that list's version tells, listed again
/// whenever the watch ends (the server closes one within minutes) or fails. A pod may be told
/// again as it is; one deleted while no watch ran is not told (as kube's own watcher does).
async fn follow_pods(api: &Api<Pod>, selector: &str, changes: &mpsc::Sender<PodChange>) {
    let told = |change: PodChange| changes.send(change).is_ok();
    loop {
        let listed = match api.list(&ListParams::default().labels(selector)).await {
            Ok(list) => list,
            Err(e) => {
                tracing::warn!("cannot list pods {selector}: {e}");
                tokio::time::sleep(WATCH_RETRY).await;
                continue;
            }
        };
        if !listed.items.iter().all(|p| told(PodChange::Seen(seen(p)))) {
            return;
        }
        let version = listed.metadata.resource_version.unwrap_or_default();
        let stream = match api.watch(&WatchParams::default().labels(selector), &version).await {
            Ok(stream) => stream,
            Err(e) => {
                tracing::warn!("cannot watch pods {selector}: {e}");
                tokio::time::sleep(WATCH_RETRY).await;
                continue;
            }
        };
        let mut stream = Box::pin(stream);
        while let Some(event) = stream.next().await {
            let change = match event {
                Ok(WatchEvent::Added(p) | WatchEvent::Modified(p)) => PodChange::Seen(seen(&p)),
                Ok(WatchEvent::Deleted(p)) => PodChange::Gone(p.metadata.name.unwrap_or_default()),
                // None is asked for: each watch that ends lists the pods again.
                Ok(WatchEvent::Bookmark(_)) => continue,
                Ok(WatchEvent::Error(e)) => {
                    tracing::warn!("the watch on pods {selector} ended: {e:?}");
                    tokio::time::sleep(WATCH_RETRY).await;
                    break;
                }
                Err(e) => {
                    tracing::warn!("the watch on pods {selector} failed: {e}");
                    tokio::time::sleep(WATCH_RETRY).await;
                    break;
                }
            };
            if !told(change) {
                return;
            }
        }
        tracing::debug!("the watch on pods {selector} from version {version} ended: listing them again");
    }
}

/// What `pod`'s status says of it.
fn seen(pod: &Pod) -> PodSeen {
    let status = pod.status.as_ref();
    let phase = match status.and_then(|s| s.phase.as_deref()) {
        Some("Pending") => PodPhase::Pending,
        Some("Running") => PodPhase::Running,
        Some("Succeeded") => PodPhase::Succeeded,
        Some("Failed") => PodPhase::Failed,
        _ => PodPhase::Unknown,
    };
    let terminated = status
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|all| all.iter().find(|c| c.name == "agent"))
        .and_then(|c| c.state.as_ref()?.terminated.as_ref());
    PodSeen {
        name: pod.metadata.name.clone().unwrap_or_default(),
        phase,
        ip: status.and_then(|s| s.pod_ip.clone()),
        exit: terminated.map(|t| t.exit_code),
        message: terminated.and_then(|t| t.message.clone()),
        labels: pod.metadata.labels.clone().unwrap_or_default(),
    }
}
