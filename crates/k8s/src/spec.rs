//! The objects of an agent's pod. The pod has one volume, `work`, mounted at `/bosun`: an
//! `emptyDir`, or the agent's claim when the runbook gives it storage. An init container clones
//! the repository at the job's commit onto its branch into `/bosun/workspace` (skipped when a
//! claim already holds the clone: a resumed agent finds its work); a repository with no remote
//! has no init container: the host takes the branch as a git bundle from the daemon before the
//! agent starts, and gives it back as one when the agent ends. The agent's container runs
//! `bosun host serve` on the pod's address, port `HOST_PORT`, with the agent under it, its config
//! in `/bosun/config` (on the claim too). The host's secret holds its token and the agent's own
//! files (its settings), both given to the host as environment variables the agent does not
//! inherit (a mounted file would be root's in most clusters); the host writes the files into
//! `/bosun/agent` and relays the reports of the agent's hooks, which look for a daemon in
//! `/bosun/state`, to the daemon that follows it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use bosun_core::Pod as PodAsk;
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EnvFromSource, EnvVar, EnvVarSource, ObjectFieldSelector, PersistentVolumeClaim,
    PersistentVolumeClaimSpec, PersistentVolumeClaimVolumeSource, Pod, PodSpec, ResourceRequirements, Secret,
    SecretEnvSource, SecretKeySelector, Volume, VolumeMount, VolumeResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::ByteString;

/// The port the session host listens on, at the pod's own address.
pub const HOST_PORT: u16 = 7070;
/// The key of the token in the host's secret.
pub const TOKEN_KEY: &str = "token";
/// The key of the agent's files in the host's secret.
pub const FILES_KEY: &str = "files";

const WORK: &str = bosun_core::POD_ROOT;
const WORKSPACE: &str = bosun_core::POD_WORKSPACE;
/// Where a container's termination message is written (Kubernetes' default path).
pub const TERMINATION_LOG: &str = "/dev/termination-log";
/// The variable the session host reads its token from.
const TOKEN_VAR: &str = "BOSUN_HOST_TOKEN";
/// The variable the session host reads the agent's files from.
const FILES_VAR: &str = "BOSUN_HOST_FILES";

/// Clones `$BOSUN_REPO` into `$BOSUN_WORKSPACE` on branch `$BOSUN_BRANCH`: the remote's, when
/// an earlier pod of the agent's saved it there, else a new one at `$BOSUN_BASE`; nothing when
/// a clone is there already (on the agent's claim). Constant text: the values come as
/// environment.
const CLONE: &str = r#"set -e
if [ -d "$BOSUN_WORKSPACE/.git" ]; then exit 0; fi
git clone --quiet -- "$BOSUN_REPO" "$BOSUN_WORKSPACE"
cd "$BOSUN_WORKSPACE"
if git rev-parse --quiet --verify "refs/remotes/origin/$BOSUN_BRANCH" >/dev/null; then
  git checkout --quiet -b "$BOSUN_BRANCH" "refs/remotes/origin/$BOSUN_BRANCH"
else
  git checkout --quiet -b "$BOSUN_BRANCH" "$BOSUN_BASE"
fi
"#;

/// What an agent's pod is made of.
#[derive(Clone, Debug)]
pub struct PodPlan<'a> {
    /// The pod's name (a DNS label), which is also its session's.
    pub name: &'a str,
    pub ask: &'a PodAsk,
    pub labels: &'a BTreeMap<String, String>,
    /// Where the init container clones from (a URL the cluster can reach); none: the branch
    /// comes from the daemon and goes back to it as git bundles, through the host.
    pub repo_url: Option<&'a str>,
    /// The commit its branch starts at.
    pub base: &'a str,
    pub branch: &'a str,
    /// The agent's program and arguments.
    pub command: &'a [String],
    /// The agent's recorded environment (credentials come from `ask.secrets`, never here).
    pub env: &'a BTreeMap<String, String>,
    /// The secret that holds the session host's token and the agent's files (`host_secret`).
    pub host_secret: &'a str,
    /// The claim that holds its workspace and config, when the runbook gives it storage.
    pub claim: Option<&'a str>,
}

/// The agent's pod.
pub fn pod(plan: &PodPlan<'_>) -> Pod {
    let work = match plan.claim {
        Some(claim) => Volume {
            name: "work".into(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim.to_owned(),
                read_only: None,
            }),
            ..Default::default()
        },
        None => Volume { name: "work".into(), empty_dir: Some(Default::default()), ..Default::default() },
    };
    let work_mount = VolumeMount { name: "work".into(), mount_path: WORK.into(), ..Default::default() };
    let clone = plan.repo_url.map(|url| Container {
        name: "clone".into(),
        image: Some(plan.ask.image.clone()),
        command: Some(vec!["sh".into(), "-c".into(), CLONE.into()]),
        env: Some(vec![
            value("BOSUN_REPO", url),
            value("BOSUN_BASE", plan.base),
            value("BOSUN_BRANCH", plan.branch),
            value("BOSUN_WORKSPACE", WORKSPACE),
        ]),
        volume_mounts: Some(vec![work_mount.clone()]),
        ..Default::default()
    });
    let command = host_command(plan);
    let env = env(plan);
    let env_from: Vec<EnvFromSource> = plan
        .ask
        .secrets
        .iter()
        .map(|s| EnvFromSource {
            secret_ref: Some(SecretEnvSource { name: s.clone(), optional: Some(false) }),
            ..Default::default()
        })
        .collect();
    let agent = Container {
        name: "agent".into(),
        image: Some(plan.ask.image.clone()),
        command: Some(command),
        working_dir: Some(WORKSPACE.into()),
        env: Some(env),
        env_from: (!env_from.is_empty()).then_some(env_from),
        ports: Some(vec![ContainerPort {
            name: Some("bosun-host".into()),
            container_port: i32::from(HOST_PORT),
            ..Default::default()
        }]),
        resources: resources(plan.ask),
        volume_mounts: Some(vec![work_mount]),
        ..Default::default()
    };
    Pod {
        metadata: meta(plan.name, &plan.ask.namespace, plan.labels),
        spec: Some(PodSpec {
            init_containers: clone.map(|c| vec![c]),
            containers: vec![agent],
            volumes: Some(vec![work]),
            restart_policy: Some("Never".into()),
            service_account_name: plan.ask.service_account.clone(),
            node_selector: (!plan.ask.node_selector.is_empty()).then(|| plan.ask.node_selector.clone()),
            ..Default::default()
        }),
        status: None,
    }
}

/// The agent container's command: `bosun host serve` on the pod's address, saving the branch
/// when it ends, then the agent's own command.
fn host_command(plan: &PodPlan<'_>) -> Vec<String> {
    let mut command: Vec<String> = [plan.ask.bosun.as_str(), "host", "serve", "--listen"].map(String::from).to_vec();
    command.push(format!("tcp:$(POD_IP):{HOST_PORT}"));
    command.extend(["--token-env".into(), TOKEN_VAR.into()]);
    command.extend(["--address-file".into(), format!("{WORK}/host.addr")]);
    command.extend(["--session".into(), plan.name.to_owned()]);
    // Where its branch is pushed when it ends, before the pod goes; or that the daemon brings
    // it and fetches it back.
    match plan.repo_url {
        Some(url) => command.extend(["--save-remote".into(), literal(url)]),
        None => command.push("--save-bundle".into()),
    }
    command.extend(["--save-branch".into(), literal(plan.branch)]);
    // It ends with its agent, saying how in its termination message, which the watch reports.
    command.extend(["--exit-file".into(), TERMINATION_LOG.into()]);
    // It writes the agent's files, and relays its hooks' reports from where they look for a daemon.
    command.extend(["--files-env".into(), FILES_VAR.into()]);
    let relay = bosun_wire::StateDir::new(bosun_core::POD_STATE_DIR.into()).map(|d| d.socket());
    if let Ok(relay) = relay {
        command.extend(["--relay".into(), relay.display().to_string()]);
    }
    command.push("--".into());
    // The kubelet expands `$(VAR)` in a command; what the agent's command says stays as it is.
    command.extend(plan.command.iter().map(|arg| literal(arg)));
    command
}

/// The agent container's environment: the pod's address, the host's token and files from its
/// secret, and the agent's own variables.
fn env(plan: &PodPlan<'_>) -> Vec<EnvVar> {
    let mut env = vec![EnvVar {
        name: "POD_IP".into(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector { field_path: "status.podIP".into(), api_version: None }),
            ..Default::default()
        }),
        ..Default::default()
    }];
    for (name, key) in [(TOKEN_VAR, TOKEN_KEY), (FILES_VAR, FILES_KEY)] {
        env.push(EnvVar {
            name: name.into(),
            value_from: Some(EnvVarSource {
                secret_key_ref: Some(SecretKeySelector {
                    name: plan.host_secret.to_owned(),
                    key: key.into(),
                    optional: Some(false),
                }),
                ..Default::default()
            }),
            ..Default::default()
        });
    }
    let ours = |k: &str| [TOKEN_VAR, FILES_VAR].contains(&k);
    env.extend(plan.env.iter().filter(|(k, _)| !ours(k)).map(|(k, v)| value(k, v)));
    env
}

/// The claim of `bytes` that holds an agent's workspace and config across its pods.
pub fn claim(name: &str, namespace: &str, bytes: u64, labels: &BTreeMap<String, String>) -> PersistentVolumeClaim {
    PersistentVolumeClaim {
        metadata: meta(name, namespace, labels),
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec!["ReadWriteOnce".into()]),
            resources: Some(VolumeResourceRequirements {
                requests: Some(BTreeMap::from([("storage".into(), Quantity(bytes.to_string()))])),
                ..Default::default()
            }),
            ..Default::default()
        }),
        status: None,
    }
}

/// The name of the secret of pod `pod`'s session host.
pub fn host_secret_name(pod: &str) -> String {
    format!("{pod}-token")
}

/// The secret that holds a session host's `token` and the agent's `files` (path in the pod
/// and content), which the host writes before the agent starts.
pub fn host_secret(
    name: &str,
    namespace: &str,
    token: &str,
    files: &[(PathBuf, String)],
    labels: &BTreeMap<String, String>,
) -> Secret {
    let files: BTreeMap<String, &str> = files.iter().map(|(p, c)| (p.display().to_string(), c.as_str())).collect();
    let files = serde_json::to_vec(&files).unwrap_or_else(|_| b"{}".to_vec());
    Secret {
        metadata: meta(name, namespace, labels),
        data: Some(BTreeMap::from([
            (TOKEN_KEY.into(), ByteString(token.as_bytes().to_vec())),
            (FILES_KEY.into(), ByteString(files)),
        ])),
        type_: Some("Opaque".into()),
        ..Default::default()
    }
}

fn meta(name: &str, namespace: &str, labels: &BTreeMap<String, String>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: Some(namespace.to_owned()),
        labels: Some(labels.clone()),
        ..Default::default()
    }
}

/// `name=value`, the value as it is: the kubelet expands `$(VAR)` in values too, so `$` is
/// doubled.
fn value(name: &str, value: &str) -> EnvVar {
    EnvVar { name: name.to_owned(), value: Some(literal(value)), ..Default::default() }
}

fn resources(ask: &PodAsk) -> Option<ResourceRequirements> {
    let mut amounts = BTreeMap::new();
    if let Some(m) = ask.cpus_milli {
        amounts.insert("cpu".to_owned(), Quantity(format!("{m}m")));
    }
    if let Some(b) = ask.memory_bytes {
        amounts.insert("memory".to_owned(), Quantity(b.to_string()));
    }
    (!amounts.is_empty()).then(|| ResourceRequirements {
        requests: Some(amounts.clone()),
        limits: Some(amounts),
        ..Default::default()
    })
}

/// What the kubelet turns into `arg`: `$` doubled, so that no `$(VAR)` in it is expanded.
fn literal(arg: &str) -> String {
    arg.replace('$', "$$")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask() -> PodAsk {
        PodAsk {
            namespace: "agents".into(),
            image: "registry.example/agent:1".into(),
            cpus_milli: Some(1500),
            memory_bytes: Some(2 << 30),
            node_selector: BTreeMap::from([("pool".into(), "agents".into())]),
            service_account: Some("bosun-agent".into()),
            storage_bytes: Some(10 << 30),
            secrets: vec!["anthropic".into()],
            bosun: "/usr/local/bin/bosun".into(),
            source: None,
            claim: None,
        }
    }

    fn labels() -> BTreeMap<String, String> {
        BTreeMap::from([("bosun.agent".into(), "k3j9x0aa".into()), ("bosun.job".into(), "j1".into())])
    }

    fn plan<'a>(
        ask: &'a PodAsk,
        labels: &'a BTreeMap<String, String>,
        command: &'a [String],
        env: &'a BTreeMap<String, String>,
        claim: Option<&'a str>,
    ) -> PodPlan<'a> {
        PodPlan {
            name: "bosun-k3j9x0aa",
            ask,
            labels,
            repo_url: Some("https://git.example/repo.git"),
            base: "0123456789abcdef0123456789abcdef01234567",
            branch: "ws-k3j9x0aa",
            command,
            env,
            host_secret: "bosun-k3j9x0aa-token",
            claim,
        }
    }

    #[test]
    fn a_pod_with_a_claim_clones_then_runs_the_agent_under_the_host() {
        let (ask, labels) = (ask(), labels());
        let command = vec!["claude".to_owned(), "--model".to_owned(), "opus".to_owned()];
        let env = BTreeMap::from([("BOSUN_AGENT_ID".to_owned(), "k3j9x0aa".to_owned())]);
        let pod = pod(&plan(&ask, &labels, &command, &env, Some("bosun-k3j9x0aa")));
        insta::assert_snapshot!(serde_json::to_string_pretty(&pod).unwrap());
    }

    #[test]
    fn a_pod_without_storage_works_in_an_empty_dir_with_no_limits_asked() {
        let ask = PodAsk::new("default", "agent:1");
        let (labels, env) = (labels(), BTreeMap::new());
        let command = vec!["sh".to_owned()];
        let pod = pod(&plan(&ask, &labels, &command, &env, None));
        let spec = pod.spec.unwrap();
        let work = &spec.volumes.as_ref().unwrap()[0];
        assert!(work.empty_dir.is_some() && work.persistent_volume_claim.is_none());
        let agent = &spec.containers[0];
        assert!(agent.resources.is_none() && agent.env_from.is_none());
        assert!(spec.node_selector.is_none() && spec.service_account_name.is_none());
    }

    #[test]
    fn a_pod_of_a_repository_with_no_remote_has_no_clone_its_host_takes_and_gives_back_bundles() {
        let (ask, labels, env) = (ask(), labels(), BTreeMap::new());
        let command = vec!["sh".to_owned()];
        let pod = pod(&PodPlan { repo_url: None, ..plan(&ask, &labels, &command, &env, None) });
        let spec = pod.spec.unwrap();
        assert!(spec.init_containers.is_none(), "nothing to clone from");
        let args = spec.containers[0].command.clone().unwrap();
        let at = args.iter().position(|a| a == "--save-bundle").expect("its host saves by bundle");
        assert!(!args.contains(&"--save-remote".to_owned()), "{args:?}");
        let branch = args.iter().position(|a| a == "--save-branch").expect("it knows its branch");
        assert_eq!(args[branch + 1], "ws-k3j9x0aa");
        assert!(at < args.iter().position(|a| a == "--").unwrap(), "a host option, not the agent's");
    }

    #[test]
    fn the_agents_words_stay_data_in_the_pod() {
        let (ask, labels) = (ask(), labels());
        let command = vec!["sh".to_owned(), "-c".to_owned(), "echo $(POD_IP) $HOME; rm -rf /".to_owned()];
        let env = BTreeMap::from([("X".to_owned(), "$(POD_IP)`id`".to_owned())]);
        let pod = pod(&plan(&ask, &labels, &command, &env, None));
        let spec = pod.spec.unwrap();
        let args = spec.containers[0].command.clone().unwrap();
        assert_eq!(args.last().map(String::as_str), Some("echo $$(POD_IP) $$HOME; rm -rf /"), "no $(VAR) is expanded");
        assert!(args.contains(&"tcp:$(POD_IP):7070".to_owned()), "bosun's own argument is expanded: {args:?}");
        let clone = &spec.init_containers.unwrap()[0];
        assert_eq!(clone.command.as_ref().unwrap()[2], CLONE, "the clone's script is constant");
        let env = spec.containers[0].env.clone().unwrap();
        let x = env.iter().find(|e| e.name == "X").unwrap();
        assert_eq!(x.value.as_deref(), Some("$$(POD_IP)`id`"), "an environment value is not expanded either");
    }

    #[test]
    fn a_claim_and_a_host_secret() {
        let labels = labels();
        insta::assert_snapshot!(
            serde_json::to_string_pretty(&claim("bosun-k3j9x0aa", "agents", 10 << 30, &labels)).unwrap()
        );
        let files = [(PathBuf::from("/bosun/agent/settings.json"), "{\"hooks\":{}}".to_owned())];
        let secret = host_secret("bosun-k3j9x0aa-token", "agents", "not-a-real-token", &files, &labels);
        let data = secret.data.unwrap();
        assert_eq!(data[TOKEN_KEY].0, b"not-a-real-token");
        let files: serde_json::Value = serde_json::from_slice(&data[FILES_KEY].0).unwrap();
        assert_eq!(files, serde_json::json!({ "/bosun/agent/settings.json": "{\"hooks\":{}}" }));
    }
}
