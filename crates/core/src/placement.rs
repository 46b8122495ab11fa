//! Where an agent runs, for the agent: the rules of its `Runtime` (`runtime.rs`) that read the
//! agent's record — where its session starts (`Place`), the environment and the directory it is
//! given there, and its `Sandbox` — kept apart from the runtime's own data, which the agent's
//! record holds.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::runtime::{POD_AGENT_DIR, POD_CONFIG, POD_WORKSPACE};
use crate::{Agent, Place, Runtime, Sandbox};

impl Runtime {
    /// Where `agent`'s session starts: here as it is, here in its `Sandbox`, in a container
    /// (its `Sandbox` what is bound into it), or in a pod, which is let at nothing of this
    /// machine's.
    pub fn place(&self, agent: &Agent) -> Place {
        match self {
            Self::Local => Place::Here,
            Self::Sandbox { network } => Place::Sandbox(Sandbox::of(agent, *network)),
            Self::Docker(c) => {
                let mut sandbox = Sandbox::of(agent, c.network);
                // Its session host, in the container with it, writes its output there (bound
                // first: its own config is in it).
                let mut writable = std::mem::take(&mut sandbox.read_only);
                writable.append(&mut sandbox.writable);
                sandbox.writable = writable;
                // A volume holds a clone of its own.
                sandbox.repository = c.volume.is_none();
                Place::Container { container: c.clone(), sandbox }
            }
            Self::K8s(p) => Place::Pod(Box::new(p.clone())),
        }
    }

    /// What of `agent`'s recorded `env` it is given here: all of it, its program's config
    /// variable pointed at its own config in a sandbox or a container (`OwnConfig`), with what
    /// else its program writes there (`AgentDriver::confined_env`), and in a container `HOME`
    /// too (the user's home is not there: a client found no home, a tool it runs could write
    /// none); and in a
    /// pod neither this machine's paths nor its workspace's: the pod's own instead (its
    /// workspace, and its agent's config where the claim keeps it, in every driver's config
    /// variable alike). Wherever it runs, its driver's `terminal_env` is added where the
    /// agent's own does not name the variable.
    pub fn env(&self, agent: &Agent) -> BTreeMap<String, String> {
        let mut env = self.runtime_env(agent);
        for (key, value) in agent.driver.behaviour().terminal_env() {
            env.entry((*key).to_owned()).or_insert_with(|| (*value).to_owned());
        }
        env
    }

    fn runtime_env(&self, agent: &Agent) -> BTreeMap<String, String> {
        let env = &agent.env;
        match self {
            Self::K8s(_) => {
                let own = |k: &str| crate::RECORDED_ENV.contains(&k) || k == "BOSUN_WORKSPACE";
                let mut env: BTreeMap<String, String> =
                    env.iter().filter(|(k, _)| !own(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
                env.insert("BOSUN_WORKSPACE".into(), POD_WORKSPACE.into());
                let drivers = crate::driver::DriverKind::ALL.iter();
                for config in drivers.filter_map(|k| k.behaviour().config_env()) {
                    env.insert(config.into(), POD_CONFIG.into());
                }
                agent.driver.behaviour().pod_env(std::path::Path::new(POD_CONFIG), &mut env);
                env
            }
            _ => {
                let mut env = env.clone();
                if let Some(own) = crate::OwnConfig::of(agent) {
                    own.point(&mut env);
                    if self.confines() {
                        agent.driver.behaviour().confined_env(&own.dir, &mut env);
                    }
                    // A container has none of this machine's homes: its home is its own config,
                    // bound in with its directory (Gemini CLI's is its home already).
                    if matches!(self, Self::Docker(_)) {
                        env.insert("HOME".into(), own.dir.display().to_string());
                    }
                }
                env
            }
        }
    }

    /// Where the agent's own files (its settings) are where it runs: its directory here, and
    /// `POD_AGENT_DIR` in a pod (which its session host writes them into).
    pub fn agent_dir(&self, agent: &Agent) -> PathBuf {
        match self {
            Self::K8s(_) => PathBuf::from(POD_AGENT_DIR),
            _ => agent.dir.clone(),
        }
    }
}

impl crate::Sandbox {
    /// The sandbox of `agent`: it writes its workspace and the config bosun made for its
    /// program (`OwnConfig`), never the user's own config, which it sees read-only with the rest
    /// of its home, if at all.
    pub fn of(agent: &Agent, network: bool) -> Self {
        let mut writable = vec![agent.cwd.clone()];
        writable.extend(crate::OwnConfig::of(agent).map(|own| own.dir));
        let home = agent.env.get("HOME").filter(|v| !v.is_empty()).map(PathBuf::from);
        Self { writable, read_only: vec![agent.dir.clone()], repository: true, home, network }
    }
}
