//! The daemon's parts filled with fakes, for the tests here.

use std::sync::Arc;

use bosun_daemon::Parts;
use bosun_testkit::fakes::{FakeForge, FakeGit, FakeNotifier, FakeProcesses, FakeSessions, FakeWorkspaces};

/// The fakes behind a daemon's parts, kept to be looked at.
#[derive(Default)]
pub struct Fakes {
    pub sessions: Arc<FakeSessions>,
    pub workspaces: Arc<FakeWorkspaces>,
    pub processes: Arc<FakeProcesses>,
    pub notifier: Arc<FakeNotifier>,
    pub forge: Arc<FakeForge>,
}

impl Fakes {
    /// Parts that reach the world only through these fakes (and, for what has no fake yet, a
    /// real adapter that the tests never reach: Docker, Kubernetes, webhooks).
    pub fn parts(&self) -> Parts {
        Parts {
            sessions: self.sessions.clone(),
            workspaces: self.workspaces.clone(),
            pools: self.workspaces.clone(),
            git: Arc::new(FakeGit),
            containers: Arc::new(bosun_adapters::DockerContainers::new(None).unwrap()),
            cluster: Arc::new(bosun_k8s::KubeCluster::new(None).unwrap()),
            survey: Arc::new(bosun_adapters::LocalSurvey),
            readiness: Arc::new(bosun_adapters::readiness::LoginChecks::default()),
            forge: self.forge.clone(),
            notifier: self.notifier.clone(),
            webhooks: Arc::new(bosun_adapters::webhook::HttpWebhooks::default()),
            gates: self.processes.clone(),
            classifiers: self.processes.clone(),
            steps: self.processes.clone(),
            queue_commands: self.processes.clone(),
            copies: self.processes.clone(),
            pods: None,
        }
    }
}
