//! What goes wrong talking to a cluster.

#[derive(Debug, thiserror::Error)]
pub enum K8sError {
    /// The API server could not be reached, or refused or failed a request: what it said.
    #[error("Kubernetes: {0}")]
    Api(String),
}
