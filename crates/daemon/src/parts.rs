//! The daemon's parts: every adapter it reaches the world through, made once at start. `real`
//! makes the ones bosun runs with; a test fills the struct with fakes instead.

use std::path::Path;
use std::sync::{mpsc, Arc};

use bosun_adapters::classifiers::{Classifiers, CommandClassifiers};
use bosun_adapters::copies::{Copies, LocalCopies};
use bosun_adapters::forge::{Forge, GhCli};
use bosun_adapters::gates::{Gates, ShellGates};
use bosun_adapters::queue_commands::{QueueCommands, ShellQueueCommands};
use bosun_adapters::readiness::{LoginChecks, Readiness};
use bosun_adapters::steps::{ShellSteps, Steps};
use bosun_adapters::webhook::{HttpWebhooks, Webhooks};
use bosun_adapters::{
    Containers, DesktopNotifier, Git, HostSessions, LocalGit, LocalSurvey, LocalWorkspaces, Notifier, Pools,
    RelayedReport, Sessions, Survey, Tmux, Workspaces,
};
use bosun_k8s::{Cluster, PodChange};
use bosun_wire::StateDir;

use crate::DaemonError;

/// Every adapter the daemon uses.
pub struct Parts {
    pub sessions: Arc<dyn Sessions>,
    pub workspaces: Arc<dyn Workspaces>,
    pub pools: Arc<dyn Pools>,
    pub git: Arc<dyn Git>,
    /// The container engine agents with `--runtime docker` run in.
    pub containers: Arc<dyn Containers>,
    pub cluster: Arc<dyn Cluster>,
    pub survey: Arc<dyn Survey>,
    /// Whether the agents' programs are logged in.
    pub readiness: Arc<dyn Readiness>,
    /// Where pull requests are opened.
    pub forge: Arc<dyn Forge>,
    pub notifier: Arc<dyn Notifier>,
    pub webhooks: Arc<dyn Webhooks>,
    pub gates: Arc<dyn Gates>,
    pub classifiers: Arc<dyn Classifiers>,
    pub steps: Arc<dyn Steps>,
    pub queue_commands: Arc<dyn QueueCommands>,
    pub copies: Arc<dyn Copies>,
    /// The pods' session hosts and what they tell, followed once the daemon serves; none
    /// without pods.
    pub pods: Option<PodFeeds>,
}

/// The pods' session hosts, and the channels their changes and agents' reports arrive on.
pub struct PodFeeds {
    pub host: Arc<HostSessions>,
    pub changes: mpsc::Receiver<PodChange>,
    pub reports: mpsc::Receiver<RelayedReport>,
}

impl Parts {
    /// The parts bosun runs with: tmux on bosun's socket and bosun's own session hosts, git,
    /// Docker, Kubernetes, `gh`, and `sh` for gates, steps and queue commands.
    pub fn real(dirs: &StateDir, exe: &Path, hook_command: &str) -> Result<Parts, DaemonError> {
        // BOSUN_OUTPUT_LOG_MAX (bytes) sets where an agent's output.log rotates.
        let output_max = std::env::var("BOSUN_OUTPUT_LOG_MAX").ok().and_then(|v| v.parse::<u64>().ok());
        let output_max = output_max.unwrap_or(bosun_adapters::output_log::OUTPUT_LOG_MAX);
        let tmux = Tmux::new(dirs.tmux_socket(), dirs.tmux_config())
            .with_output_writer(format!("{hook_command} output --max {output_max}"));
        if let Err(e) = tmux.write_config(Some(&format!("{hook_command} tmux"))) {
            tracing::warn!("cannot write tmux config: {e}");
        }
        // DOCKER_HOST, else the engine's default socket; reached only when a container is asked for.
        let containers: Arc<dyn Containers> =
            Arc::new(bosun_adapters::DockerContainers::new(None).map_err(|e| DaemonError::Io {
                context: "cannot start the Docker client's runtime".into(),
                source: std::io::Error::other(e.to_string()),
            })?);
        // KUBECONFIG, else ~/.kube/config, else the pod's service account; reached only when a pod
        // is asked for.
        let cluster: Arc<dyn Cluster> = Arc::new(bosun_k8s::KubeCluster::new(None).map_err(|e| DaemonError::Io {
            context: "cannot start the Kubernetes client's runtime".into(),
            source: std::io::Error::other(e.to_string()),
        })?);
        // How the pods' hosts are reached: `BOSUN_K8S_REACH` = address, forward or auto (the default).
        let reach = match std::env::var("BOSUN_K8S_REACH") {
            Ok(text) => bosun_adapters::Reach::parse(&text).ok_or_else(|| {
                DaemonError::Setting(format!(
                    "BOSUN_K8S_REACH={text:?} is not a way to reach pods: give address, forward or auto"
                ))
            })?,
            Err(_) => bosun_adapters::Reach::default(),
        };
        let (pod_changes, changes) = mpsc::channel();
        let (pod_reports, reports) = mpsc::channel();
        let host = Arc::new(
            HostSessions::new(exe.to_owned(), dirs.hosts(), dirs.socket(), output_max)
                .with_containers(containers.clone(), dirs.label())
                .with_spool(dirs.spool())
                .with_pods(
                    bosun_adapters::PodHosts::new(cluster.clone(), dirs.digest(), pod_changes, pod_reports)
                        .with_reach(reach),
                ),
        );
        let sessions: Arc<dyn Sessions> =
            Arc::new(bosun_adapters::RoutedSessions::new(Arc::new(tmux), host.clone(), dirs.clone()));
        let local = Arc::new(
            LocalWorkspaces::new().with_containers(containers.clone(), dirs.label()).with_cluster(cluster.clone()),
        );
        Ok(Parts {
            sessions,
            workspaces: local.clone(),
            pools: local,
            git: Arc::new(LocalGit),
            containers,
            cluster,
            survey: Arc::new(LocalSurvey),
            readiness: Arc::new(LoginChecks::default()),
            forge: Arc::new(GhCli),
            notifier: Arc::new(DesktopNotifier),
            webhooks: Arc::new(HttpWebhooks::default()),
            gates: Arc::new(ShellGates),
            classifiers: Arc::new(CommandClassifiers),
            steps: Arc::new(ShellSteps),
            queue_commands: Arc::new(ShellQueueCommands),
            copies: Arc::new(LocalCopies),
            pods: Some(PodFeeds { host, changes, reports }),
        })
    }
}
