//! bosun's Kubernetes runtime: what an agent's pod is, spelled as the cluster's own objects
//! (`k8s-openapi` types) — the pod (`spec::pod`), the claim that lets its workspace and config
//! outlive it (`spec::claim`) and the secret that holds its session host's token
//! (`spec::host_secret`) — and the API server that holds them (`cluster`). Values from a runbook or a caller reach the pod only as fields,
//! environment or escaped arguments, never as shell text.

pub mod cluster;
mod error;
pub mod spec;

pub use cluster::{Cluster, KubeCluster, Object, PodChange, PodPhase, PodSeen};
pub use error::K8sError;
pub use spec::{claim, host_secret, host_secret_name, pod, PodPlan, FILES_KEY, HOST_PORT, TOKEN_KEY};
