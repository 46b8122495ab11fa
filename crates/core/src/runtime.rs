//! Where an agent runs: on this machine as it is (`local`), or in a sandbox (`sandbox`:
//! bubblewrap, the root read-only) where it may write only its workspace, what a commit writes
//! in its repository and the config bosun made for its program (never the user's), reads its
//! own files, with a private `/tmp`, no home directory but its own, no processes but its own
//! and, when asked, no network. What a sandbox lets through is decided here; the adapter spells
//! it as bubblewrap's arguments (or a container's mounts) and shows the agent's hooks a report
//! channel of its own, never bosun's sockets or state.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "runtime", rename_all = "snake_case")]
pub enum Runtime {
    #[default]
    Local,
    Sandbox {
        /// Whether it reaches the network (false: a network namespace of its own, loopback only).
        network: bool,
    },
    /// A Docker container of `image` that runs bosun's session host, the agent inside.
    Docker(Container),
    /// A Kubernetes pod whose workspace is a clone made by its init container, the agent
    /// under bosun's session host in it.
    K8s(Pod),
}

/// Where a pod holds what bosun puts in it: its workspace, its agent's config, the agent's own
/// files (its settings) and the state directory its hooks report to, whose socket is its
/// session host's relay.
pub const POD_ROOT: &str = "/bosun";
/// The agent's workspace in its pod: the clone its init container makes.
pub const POD_WORKSPACE: &str = "/bosun/workspace";
/// The agent's config in its pod (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`): its conversation.
pub const POD_CONFIG: &str = "/bosun/config";
/// The agent's own files in its pod (`Agent::dir` here).
pub const POD_AGENT_DIR: &str = "/bosun/agent";
/// The state directory the agent's hooks are given in its pod.
pub const POD_STATE_DIR: &str = "/bosun/state";

/// A Kubernetes pod an agent runs in, as the command line or a runbook asks for it: its
/// workspace a clone made by an init container, the agent under bosun's session host
/// (`bosun-k8s` spells it as the cluster's objects).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pod {
    pub namespace: String,
    /// Its image, which holds the agent's program, `git` (for the clone) and bosun.
    pub image: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_milli: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account: Option<String>,
    /// The size of a claim that holds its workspace and its agent's config, so both outlive its
    /// pod (for `on_dead` resume); none: an `emptyDir` that goes with the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_bytes: Option<u64>,
    /// Secrets whose keys become its environment (credentials: named, never copied).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<String>,
    /// bosun's program in the image.
    #[serde(default = "Pod::default_bosun")]
    pub bosun: String,
    /// Where its workspace comes from and its work goes back, set when the agent starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Box<PodSource>>,
    /// The claim made for its `storage_bytes`, named when the agent starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<String>,
}

/// Where an agent's pod gets its workspace from, and where its work goes back: the
/// repository's remote, which its init container clones and its host pushes to; or, for a
/// repository with none, this machine's repository itself, whose branch goes to the pod and
/// comes back as git bundles through its session host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodSource {
    /// The repository's remote, as the cluster reaches it; none when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
    /// The repository on this machine.
    #[serde(default)]
    pub repo: PathBuf,
    /// The commit a new branch starts at.
    pub base: String,
    pub branch: String,
}

impl Pod {
    /// A pod of `image` in `namespace`, with nothing else asked: no limits, selector, account,
    /// storage or secrets, bosun on the image's `PATH`.
    pub fn new(namespace: impl Into<String>, image: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            image: image.into(),
            cpus_milli: None,
            memory_bytes: None,
            node_selector: BTreeMap::new(),
            service_account: None,
            storage_bytes: None,
            secrets: Vec::new(),
            bosun: Self::default_bosun(),
            source: None,
            claim: None,
        }
    }

    pub fn default_bosun() -> String {
        "bosun".into()
    }

    /// The name of the claim that holds the workspace of nonce `nonce` (an agent's, or a job's
    /// for its agents) and their config across their pods.
    pub fn claim_name(nonce: &crate::Nonce) -> String {
        format!("bosun-{}-work", nonce.as_str())
    }

    /// Whether `name` is a DNS-1123 label, as namespaces, secrets and claims must be: lowercase
    /// letters, digits and `-`, at most 63, starting and ending with a letter or digit.
    pub fn is_dns_label(name: &str) -> bool {
        let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
        !name.is_empty()
            && name.len() <= 63
            && name.chars().all(|c| ok(c) || c == '-')
            && name.starts_with(ok)
            && name.ends_with(ok)
    }
}

/// A container an agent runs in: its image, limits and network. Its own files and its
/// program's config are bound into it at their own paths (the `Sandbox`'s writable paths); so is
/// its workspace, unless it is a `volume` of the engine's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Container {
    pub image: String,
    /// CPU limit, in thousandths of a CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_milli: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// The host's network when true; loopback only when false.
    pub network: bool,
    /// The engine's named volume that holds its workspace (a clone), mounted at its working
    /// directory; none when its workspace is bound in from this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<String>,
}

/// A container's CPUs or memory that cannot be read as one, as given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadResource {
    #[error("{0:?} is not a number of CPUs (say 2 or 1.5)")]
    Cpus(String),
    #[error("{0:?} is not an amount of memory (say 512m or 2g)")]
    Memory(String),
    #[error("{0:?} is too little memory for an agent: give at least 4m")]
    TooLittleMemory(String),
}

impl Container {
    /// `1.5` CPUs as 1500 thousandths; at least 0.001, at most 1024.
    pub fn cpus(text: &str) -> Result<u32, BadResource> {
        let bad = || BadResource::Cpus(text.to_owned());
        let value: f64 = text.trim().parse().map_err(|_| bad())?;
        if !(0.001..=1024.0).contains(&value) {
            return Err(bad());
        }
        Ok((value * 1000.0).round() as u32)
    }

    /// `512m`, `2g`, `1073741824`: bytes (k, m, g in powers of 1024); at least 4 MiB.
    pub fn memory(text: &str) -> Result<u64, BadResource> {
        let t = text.trim().to_ascii_lowercase();
        let bad = || BadResource::Memory(text.to_owned());
        let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
            Some((at, _)) => (&t[..at], t[at..].trim_end_matches('b')),
            None => (t.as_str(), ""),
        };
        let n: u64 = digits.parse().map_err(|_| bad())?;
        let scale: u64 = match unit {
            "" => 1,
            "k" => 1 << 10,
            "m" => 1 << 20,
            "g" => 1 << 30,
            _ => return Err(bad()),
        };
        let bytes = n.checked_mul(scale).ok_or_else(bad)?;
        if bytes < 4 << 20 {
            return Err(BadResource::TooLittleMemory(text.to_owned()));
        }
        Ok(bytes)
    }
}

impl Runtime {
    pub fn is_local(&self) -> bool {
        *self == Self::Local
    }

    /// Whether its agents are walled off on this machine (see `Place::is_confined`).
    pub fn confines(&self) -> bool {
        matches!(self, Self::Sandbox { .. } | Self::Docker(_))
    }

    pub fn label(&self) -> String {
        match self {
            Self::Local => "local".into(),
            Self::Sandbox { network: true } => "sandbox".into(),
            Self::Sandbox { network: false } => "sandbox (no network)".into(),
            Self::Docker(c) => format!("docker ({}{})", c.image, if c.network { "" } else { ", no network" }),
            Self::K8s(p) => format!("k8s ({}, {})", p.namespace, p.image),
        }
    }

    /// Whether it inherits the environment of the command that started it: not in a pod, for
    /// this machine's environment is neither meant for it nor to be written into a cluster's
    /// objects.
    pub fn inherits(&self) -> bool {
        !matches!(self, Self::K8s(_))
    }

    /// The command its hooks report with where it runs (`local`, the daemon's, here): in a pod,
    /// bosun in the image with the pod's state directory, whose socket its session host relays.
    pub fn hook_command(&self, local: &str) -> String {
        match self {
            Self::K8s(p) => format!(
                "{} --state-dir {} hook",
                crate::template::shell_quote(&p.bosun),
                crate::template::shell_quote(POD_STATE_DIR)
            ),
            _ => local.to_owned(),
        }
    }

    /// The pod it runs in, if it runs in one.
    pub fn pod(&self) -> Option<&Pod> {
        match self {
            Self::K8s(p) => Some(p),
            _ => None,
        }
    }

    /// What holds the session of an agent that asked for `asked`: a container runs bosun's own
    /// session host, whatever was asked.
    pub fn backend(&self, asked: SessionBackend) -> SessionBackend {
        match self {
            Self::Docker(_) | Self::K8s(_) => SessionBackend::Host,
            _ => asked,
        }
    }
}

/// Where an agent's session starts, as its `Runtime` makes it for that agent
/// (`Effect::SpawnSession`): what the session router needs to start it there.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "in", rename_all = "snake_case")]
pub enum Place {
    /// On this machine, as it is.
    #[default]
    Here,
    /// On this machine, under bubblewrap, let at what it says.
    Sandbox(Sandbox),
    /// In a container whose session host runs the program, with what `sandbox` says bound in.
    Container { container: Container, sandbox: Sandbox },
    /// In a pod, whose session host runs the program.
    Pod(Box<Pod>),
}

impl Place {
    pub fn is_here(&self) -> bool {
        *self == Self::Here
    }

    /// Whether the agent's own files are written on this machine before its session starts; a
    /// pod's session host writes them there.
    pub fn files_here(&self) -> bool {
        !matches!(self, Self::Pod(_))
    }

    /// Walled off on this machine (a sandbox, a container): it reaches the daemon only through
    /// a report channel of its own, and keeps a config of its own.
    pub fn is_confined(&self) -> bool {
        matches!(self, Self::Sandbox(_) | Self::Container { .. })
    }
}

/// What a sandboxed agent's program is let at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sandbox {
    /// Directories and files it may write (each bound at its own path; one that does not exist
    /// is left out).
    pub writable: Vec<PathBuf>,
    /// Directories and files of bosun's it reads but must not write (bosun writes and follows
    /// them: its own files, whose settings name its hooks and where its output goes). Bound
    /// before what it writes, which may be in them (its own config is in its directory).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only: Vec<PathBuf>,
    /// Its worktree commits to its repository: what a commit writes there (the objects, the
    /// refs and their logs, the worktree's own git directory) is writable too, and nothing else
    /// of it (its config, hooks, other worktrees' directories, its worktree's link to it);
    /// where it is, is for the adapter to find out.
    pub repository: bool,
    /// Its own home directory, which it still sees, read-only (the user's config of its program
    /// too): every other home directory is hidden, and `/tmp` is a fresh one of its own.
    pub home: Option<PathBuf>,
    pub network: bool,
}

/// What holds an agent's terminal: a tmux session on bosun's own server, or bosun's own
/// session host (`bosun host`, one process per agent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionBackend {
    #[default]
    Tmux,
    Host,
}

impl SessionBackend {
    pub fn is_tmux(&self) -> bool {
        *self == Self::Tmux
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Tmux => "tmux",
            Self::Host => "host",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpus_and_memory_read_as_docker_reads_them() {
        assert_eq!(Container::cpus("1.5"), Ok(1500));
        assert_eq!(Container::cpus("2"), Ok(2000));
        assert!(Container::cpus("0").is_err() && Container::cpus("lots").is_err());
        assert_eq!(Container::memory("512m"), Ok(512 << 20));
        assert_eq!(Container::memory("2G"), Ok(2 << 30));
        assert_eq!(Container::memory("8388608"), Ok(8 << 20));
        assert!(Container::memory("1k").is_err() && Container::memory("2x").is_err());
        assert!(Container::memory("99999999999999999999g").is_err());
    }

    #[test]
    fn dns_labels_are_what_kubernetes_takes() {
        for good in ["bosun", "agents-1", "a", &"x".repeat(63)] {
            assert!(Pod::is_dns_label(good), "{good}");
        }
        for bad in ["", "-a", "a-", "A", "a_b", "a/b", "..", "a.b", &"x".repeat(64)] {
            assert!(!Pod::is_dns_label(bad), "{bad}");
        }
    }
}
