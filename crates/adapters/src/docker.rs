//! `DockerContainers`: the real `Containers`, a Docker engine reached through its API with
//! bollard. It owns a small tokio runtime of its own: each synchronous call runs as a task there,
//! and the calling thread (a plain thread, or the daemon's `spawn_blocking` thread) only waits for
//! its answer, at most `CALL_TIMEOUT`. The connection is made, and the API version negotiated, at
//! the first call that needs it, and again after a call that could not make it.

mod body;
mod failure;
mod probe;
mod volume;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use bollard::models::ContainerSummaryStateEnum;
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, ListContainersOptionsBuilder, RemoveContainerOptionsBuilder,
};
use bollard::Docker;
use tokio::runtime::Runtime;
use tokio::sync::OnceCell;

use crate::{AdapterError, ContainerSeen, ContainerSpec, Containers};

/// How long one call may take, connecting included.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The system's engine, when neither the caller nor `DOCKER_HOST` names one.
const DEFAULT_HOST: &str = "unix:///var/run/docker.sock";

/// How many times `run` makes the container again when one of its name is in the way.
const CREATE_ATTEMPTS: usize = 5;
/// How much longer `run` waits before each new attempt.
const RETRY_WAIT: Duration = Duration::from_millis(100);

/// A Docker engine (see the module doc).
pub struct DockerContainers {
    engine: Arc<Engine>,
    /// Always `Some` until dropped: taken then to shut it down without blocking.
    runtime: Option<Runtime>,
}

/// The engine's address and, once made, the client connected to it.
struct Engine {
    host: String,
    client: OnceCell<Docker>,
    /// The ids of the images bosun's binary ran in (`probe`).
    ran_in: std::sync::Mutex<BTreeSet<String>>,
}

impl DockerContainers {
    /// The engine at `host` (`unix:///path/docker.sock` or `tcp://host:port`); with `None`, the
    /// one `DOCKER_HOST` names, else the system's socket. Nothing is contacted yet.
    pub fn new(host: Option<String>) -> Result<Self, AdapterError> {
        let host = host
            .or_else(|| std::env::var("DOCKER_HOST").ok().filter(|h| !h.is_empty()))
            .unwrap_or_else(|| DEFAULT_HOST.to_owned());
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("bosun-docker")
            .enable_all()
            .build()
            .map_err(|e| AdapterError::io("cannot start the Docker client's runtime", e))?;
        Ok(Self {
            engine: Arc::new(Engine { host, client: OnceCell::new(), ran_in: Default::default() }),
            runtime: Some(runtime),
        })
    }

    /// The engine's address.
    pub fn host(&self) -> &str {
        &self.engine.host
    }

    /// Runs `task` on the adapter's runtime and waits for its answer, at most `CALL_TIMEOUT`.
    fn call<T, F>(&self, what: String, task: impl FnOnce(Arc<Engine>) -> F) -> Result<T, AdapterError>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, AdapterError>> + Send + 'static,
    {
        let late = || AdapterError::Docker(format!("{what}: no answer from the engine within {CALL_TIMEOUT:?}"));
        let runtime = self.runtime.as_ref().ok_or_else(late)?;
        let (tx, rx) = mpsc::sync_channel(1);
        let task = task(Arc::clone(&self.engine));
        runtime.spawn(async move {
            // The receiver may have given up already; the answer is then dropped.
            let _ = tx.send(tokio::time::timeout(CALL_TIMEOUT, task).await);
        });
        match rx.recv_timeout(CALL_TIMEOUT + Duration::from_secs(1)) {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) | Err(_) => Err(late()),
        }
    }
}

impl Drop for DockerContainers {
    fn drop(&mut self) {
        // A runtime dropped the ordinary way blocks, which panics inside another runtime.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Engine {
    /// The client, connected and with the API version negotiated (the engine may speak an
    /// older one than bollard's default).
    async fn client(&self) -> Result<&Docker, AdapterError> {
        self.client
            .get_or_try_init(|| async {
                let unreachable = |e| {
                    failure::unreachable(&self.host, &e)
                        .unwrap_or_else(|| AdapterError::Docker(format!("cannot connect to {}: {e}", self.host)))
                };
                let docker = Docker::connect_with_host(&self.host).map_err(unreachable)?.with_timeout(CALL_TIMEOUT);
                docker.negotiate_version().await.map_err(unreachable)
            })
            .await
    }

    fn failed(&self, what: &str, e: bollard::errors::Error) -> AdapterError {
        failure::failed(&self.host, what, e)
    }

    async fn run(
        &self,
        name: String,
        image: String,
        body: bollard::models::ContainerCreateBody,
    ) -> Result<String, AdapterError> {
        let docker = self.client().await?;
        let what = format!("run container {name}");
        let options = CreateContainerOptionsBuilder::default().name(&name).build();
        let mut attempts = 0;
        let id = loop {
            attempts += 1;
            let e = match docker.create_container(Some(options.clone()), body.clone()).await {
                Ok(created) => break created.id,
                Err(e) => e,
            };
            match failure::status(&e) {
                Some(404) => return Err(AdapterError::NoImage(image)),
                Some(409) if attempts < CREATE_ATTEMPTS => {
                    // A container still being removed holds its name a little longer.
                    tokio::time::sleep(RETRY_WAIT * (attempts as u32 - 1)).await;
                }
                _ => return Err(self.failed(&what, e)),
            }
            // A container of that name is there already: one that runs counts as started;
            // another is removed and made again.
            match docker.inspect_container(&name, None).await {
                Ok(seen) => {
                    let running = seen.state.as_ref().and_then(|s| s.running).unwrap_or(false);
                    if let (true, Some(id)) = (running, seen.id) {
                        return Ok(id);
                    }
                    self.remove(&name).await?;
                }
                Err(e) if failure::status(&e) == Some(404) => {}
                Err(e) => return Err(self.failed(&what, e)),
            }
        };
        if let Err(e) = docker.start_container(&id, None).await {
            let failed = self.failed(&what, e);
            // Not left behind half made; the start's failure is what matters.
            let _ = self.remove(&id).await;
            return Err(failed);
        }
        Ok(id)
    }

    async fn list(&self, key: String, value: String) -> Result<Vec<ContainerSeen>, AdapterError> {
        let docker = self.client().await?;
        let filters = HashMap::from([("label".to_owned(), vec![format!("{key}={value}")])]);
        let options = ListContainersOptionsBuilder::default().all(true).filters(&filters).build();
        let found = docker
            .list_containers(Some(options))
            .await
            .map_err(|e| self.failed(&format!("list containers labelled {key}={value}"), e))?;
        Ok(found
            .into_iter()
            .map(|c| ContainerSeen {
                name: c
                    .names
                    .unwrap_or_default()
                    .first()
                    .map(|n| n.trim_start_matches('/').to_owned())
                    .unwrap_or_default(),
                id: c.id.unwrap_or_default(),
                running: c.state == Some(ContainerSummaryStateEnum::RUNNING),
                labels: c.labels.unwrap_or_default().into_iter().collect::<BTreeMap<_, _>>(),
            })
            .collect())
    }

    /// Kills and removes `name` (forced); one already gone, or being removed, is fine.
    async fn remove(&self, name: &str) -> Result<(), AdapterError> {
        let docker = self.client().await?;
        let options = RemoveContainerOptionsBuilder::default().force(true).build();
        match docker.remove_container(name, Some(options)).await {
            Ok(()) => Ok(()),
            Err(e) if failure::status(&e) == Some(404) => Ok(()),
            Err(e) if failure::status(&e) == Some(409) && e.to_string().contains("already in progress") => Ok(()),
            Err(e) => Err(self.failed(&format!("remove container {name}"), e)),
        }
    }
}

impl Containers for DockerContainers {
    fn check_available(&self) -> Result<(), AdapterError> {
        self.call("reach the Docker engine".to_owned(), |engine| async move {
            let docker = engine.client().await?;
            docker.ping().await.map(drop).map_err(|e| engine.failed("ping the engine", e))
        })
    }

    fn check_runs(&self, image: &str, program: &Path) -> Result<(), AdapterError> {
        let program = program
            .to_str()
            .filter(|p| !p.contains([':', ',']))
            .ok_or_else(|| AdapterError::Docker(format!("{} cannot be bound into a container", program.display())))?
            .to_owned();
        let image = image.to_owned();
        self.call(format!("try bosun's binary in image {image}"), |engine| async move {
            engine.check_runs(&image, &program).await
        })
    }

    fn run(&self, spec: ContainerSpec<'_>) -> Result<String, AdapterError> {
        let body = body::create_body(&spec)?;
        let (name, image) = (spec.name.to_owned(), spec.image.to_owned());
        self.call(format!("run container {name}"), |engine| async move { engine.run(name, image, body).await })
    }

    fn list(&self, key: &str, value: &str) -> Result<Vec<ContainerSeen>, AdapterError> {
        if key.is_empty() || key.contains('=') {
            return Err(AdapterError::Docker(format!("cannot list by label key {key:?}: it is empty or holds '='")));
        }
        let (key, value) = (key.to_owned(), value.to_owned());
        self.call(
            format!("list containers labelled {key}={value}"),
            |engine| async move { engine.list(key, value).await },
        )
    }

    fn remove(&self, name: &str) -> Result<(), AdapterError> {
        let name = name.to_owned();
        self.call(format!("remove container {name}"), |engine| async move { engine.remove(&name).await })
    }

    fn create_volume(&self, name: &str, labels: &BTreeMap<String, String>) -> Result<(), AdapterError> {
        let (name, labels) = (name.to_owned(), labels.clone());
        self.call(format!("create volume {name}"), |engine| async move { engine.create_volume(&name, labels).await })
    }

    fn fill_volume(&self, name: &str, image: &str, tar: Vec<u8>) -> Result<(), AdapterError> {
        let (name, image) = (name.to_owned(), image.to_owned());
        self.call(format!("fill volume {name}"), |engine| async move { engine.fill_volume(&name, &image, tar).await })
    }

    fn read_volume(&self, name: &str, image: &str, to: &Path, max: u64) -> Result<bool, AdapterError> {
        let (name, image, to) = (name.to_owned(), image.to_owned(), PathBuf::from(to));
        self.call(
            format!("read volume {name}"),
            |engine| async move { engine.read_volume(&name, &image, &to, max).await },
        )
    }

    fn remove_volume(&self, name: &str) -> Result<(), AdapterError> {
        let name = name.to_owned();
        self.call(format!("remove volume {name}"), |engine| async move { engine.remove_volume(&name).await })
    }

    fn volumes(&self, key: &str, value: &str) -> Result<Vec<String>, AdapterError> {
        if key.is_empty() || key.contains('=') {
            return Err(AdapterError::Docker(format!("cannot list by label key {key:?}: it is empty or holds '='")));
        }
        let (key, value) = (key.to_owned(), value.to_owned());
        self.call(
            format!("list volumes labelled {key}={value}"),
            |engine| async move { engine.volumes(&key, &value).await },
        )
    }
}
