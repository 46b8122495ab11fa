//! The fake Kubernetes API server driven through kube-rs, as bosun's k8s runtime will drive it:
//! pods run on the test's Docker engine (init containers first, into shared volumes; the pod's
//! own loopback address, secrets and `$(VAR)` expansion reaching the process), observed through a
//! watcher, deleted with their containers; a failed init container fails the pod; a claim's
//! volume outlives its pods; selectors, 404s and 401s are the real server's; hostile requests
//! stay data and are refused.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use bosun_testkit::docker::DockerEngine;
use bosun_testkit::kube::FakeCluster;
use futures_util::{AsyncBufReadExt, StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod, Secret};
use kube::api::{Api, DeleteParams, ListParams, LogParams, PostParams, WatchEvent, WatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::wait::await_condition;
use kube::runtime::watcher::{self, Event};
use kube::{Client, Config};
use serde_json::{json, Value};

/// How long anything in these tests may take.
const PATIENCE: Duration = Duration::from_secs(60);

fn image(engine: &DockerEngine) -> String {
    engine.image("bosun-test/busybox:1", &[])
}

async fn config(cluster: &FakeCluster) -> Config {
    let kubeconfig = Kubeconfig::read_from(cluster.kubeconfig()).expect("the kubeconfig reads");
    Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await.expect("a config")
}

async fn client(cluster: &FakeCluster) -> Client {
    Client::try_from(config(cluster).await).expect("a client")
}

fn pod(value: Value) -> Pod {
    serde_json::from_value(value).expect("a pod")
}

fn phase(pod: &Pod) -> &str {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or_default()
}

/// A condition for `await_condition`: the pod is in `wanted` phase.
fn in_phase(wanted: &'static str) -> impl Fn(Option<&Pod>) -> bool {
    move |p| p.is_some_and(|p| phase(p) == wanted)
}

/// A pod whose only container runs `script` in `sh -c`, `/data` the claim `claim`.
fn with_claim(image: &str, name: &str, claim: &str, script: &str) -> Pod {
    pod(json!({
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": "Never",
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}],
            "containers": [{"name": "main", "image": image, "command": ["sh", "-c", script],
                            "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
        }
    }))
}

fn sleeper(image: &str, name: &str, labels: Value) -> Pod {
    pod(json!({
        "metadata": {"name": name, "labels": labels},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": image, "command": ["sleep", "600"]}]}
    }))
}

#[tokio::test]
async fn a_pod_runs_its_init_container_then_its_container_sees_its_ip_and_secret_and_goes_when_deleted() {
    let engine = DockerEngine::start();
    let image = image(engine);
    let cluster = FakeCluster::start(engine);
    let client = client(&cluster).await;
    let secrets: Api<Secret> = Api::default_namespaced(client.clone());
    let secret = json!({"metadata": {"name": "creds"}, "stringData": {"token": "s3cret"}});
    secrets.create(&PostParams::default(), &serde_json::from_value(secret).unwrap()).await.unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client);
    let events = watcher::watcher(pods.clone(), watcher::Config::default().labels("app=bosun,role=agent"));
    let mut events = Box::pin(events);

    let spec = pod(json!({
        "metadata": {"name": "agent-1", "labels": {"app": "bosun", "role": "agent"}},
        "spec": {
            "restartPolicy": "Never",
            "volumes": [{"name": "work", "emptyDir": {}}],
            "initContainers": [{"name": "clone", "image": image, "command": ["sh", "-c", "echo cloned > /work/file"],
                                "volumeMounts": [{"name": "work", "mountPath": "/work"}]}],
            "containers": [{
                "name": "agent", "image": image, "workingDir": "/work",
                "command": ["sh", "-c"],
                "args": ["echo \"$(cat file) listen=$(LISTEN) token=$TOKEN pod=$POD\"; exec sleep 600"],
                "env": [
                    {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                    {"name": "LISTEN", "value": "$(POD_IP):7000"},
                    {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}},
                ],
                "volumeMounts": [{"name": "work", "mountPath": "/work"}],
            }],
        }
    }));
    pods.create(&PostParams::default(), &spec).await.expect("the pod is created");

    let running = tokio::time::timeout(PATIENCE, async {
        while let Some(event) = events.next().await {
            if let Ok(Event::Apply(p) | Event::InitApply(p)) = event {
                if phase(&p) == "Running" {
                    return p;
                }
            }
        }
        panic!("the watch ended")
    })
    .await
    .expect("the watcher sees the pod running");
    let status = running.status.clone().unwrap();
    let ip = status.pod_ip.clone().expect("a pod IP");
    assert!(ip.starts_with("127.") && ip != "127.0.0.1", "{ip}");
    let init = &status.init_container_statuses.unwrap()[0];
    assert_eq!(init.state.as_ref().unwrap().terminated.as_ref().unwrap().exit_code, 0);
    assert!(status.container_statuses.unwrap()[0].state.as_ref().unwrap().running.is_some());

    let params = LogParams { container: Some("agent".into()), follow: true, ..LogParams::default() };
    let mut lines = pods.log_stream("agent-1", &params).await.expect("the log streams").lines();
    let line = tokio::time::timeout(PATIENCE, lines.try_next()).await.expect("a line in time").unwrap();
    assert_eq!(line.as_deref(), Some(format!("cloned listen={ip}:7000 token=s3cret pod=agent-1").as_str()));
    assert_eq!(cluster.containers("default", "agent-1").len(), 2, "the init container and the agent");

    pods.delete("agent-1", &DeleteParams::default()).await.expect("the pod is deleted");
    let deleted = tokio::time::timeout(PATIENCE, async {
        while let Some(event) = events.next().await {
            if let Ok(Event::Delete(p)) = event {
                return p;
            }
        }
        panic!("the watch ended")
    })
    .await
    .expect("the watcher sees the pod deleted");
    assert_eq!(deleted.metadata.name.as_deref(), Some("agent-1"));
    assert!(cluster.containers("default", "agent-1").is_empty(), "its containers are gone");
    assert!(cluster.pods().is_empty());
    let watches = cluster.requests().iter().filter(|r| r.is_watch()).count();
    assert!(watches >= 1, "the watcher watched");
}

#[tokio::test]
async fn a_pod_whose_init_container_fails_fails_and_its_container_never_runs() {
    let engine = DockerEngine::start();
    let image = image(engine);
    let cluster = FakeCluster::start(engine);
    let pods: Api<Pod> = Api::default_namespaced(client(&cluster).await);
    let spec = pod(json!({
        "metadata": {"name": "broken"},
        "spec": {
            "restartPolicy": "Never",
            "initContainers": [{"name": "clone", "image": image, "command": ["sh", "-c", "echo no such repo >&2; exit 3"]}],
            "containers": [{"name": "agent", "image": image, "command": ["sleep", "600"]}],
        }
    }));
    pods.create(&PostParams::default(), &spec).await.unwrap();
    let failed = tokio::time::timeout(PATIENCE, await_condition(pods.clone(), "broken", in_phase("Failed")))
        .await
        .expect("in time")
        .unwrap()
        .expect("the pod is there");
    let status = failed.status.unwrap();
    let init = &status.init_container_statuses.unwrap()[0];
    let terminated = init.state.as_ref().unwrap().terminated.as_ref().unwrap();
    assert_eq!((terminated.exit_code, terminated.reason.as_deref()), (3, Some("Error")));
    let agent = &status.container_statuses.unwrap()[0];
    let state = agent.state.as_ref().unwrap();
    assert!(state.running.is_none() && state.terminated.is_none(), "{state:?}");
    let names = cluster.containers("default", "broken");
    assert!(names.len() == 1 && names[0].starts_with("k8s_clone_"), "only the init container ran: {names:?}");
    let params = LogParams { container: Some("clone".into()), ..LogParams::default() };
    assert_eq!(pods.logs("broken", &params).await.unwrap(), "no such repo\n");
}

#[tokio::test]
async fn a_claims_volume_outlives_its_pod() {
    let engine = DockerEngine::start();
    let image = image(engine);
    let cluster = FakeCluster::start(engine);
    let client = client(&cluster).await;
    let claims: Api<PersistentVolumeClaim> = Api::default_namespaced(client.clone());
    let claim = json!({"metadata": {"name": "ws"},
                       "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
    let claim = claims.create(&PostParams::default(), &serde_json::from_value(claim).unwrap()).await.unwrap();
    assert_eq!(claim.status.unwrap().phase.as_deref(), Some("Bound"));

    let pods: Api<Pod> = Api::default_namespaced(client);
    pods.create(&PostParams::default(), &with_claim(&image, "first", "ws", "echo kept > /data/f")).await.unwrap();
    let done = await_condition(pods.clone(), "first", in_phase("Succeeded"));
    tokio::time::timeout(PATIENCE, done).await.expect("in time").unwrap();
    pods.delete("first", &DeleteParams::default()).await.unwrap();

    pods.create(&PostParams::default(), &with_claim(&image, "second", "ws", "cat /data/f")).await.unwrap();
    let done = await_condition(pods.clone(), "second", in_phase("Succeeded"));
    tokio::time::timeout(PATIENCE, done).await.expect("in time").unwrap();
    assert_eq!(pods.logs("second", &LogParams::default()).await.unwrap(), "kept\n");
}

#[tokio::test]
async fn lists_select_by_label_a_missing_pod_is_not_found_and_no_token_is_unauthorized() {
    let engine = DockerEngine::start();
    let image = image(engine);
    let cluster = FakeCluster::start(engine);
    let pods: Api<Pod> = Api::default_namespaced(client(&cluster).await);
    for (name, role) in [("a", "agent"), ("b", "agent"), ("c", "gate")] {
        let spec = sleeper(&image, name, json!({"app": "bosun", "role": role}));
        pods.create(&PostParams::default(), &spec).await.unwrap();
    }
    for name in ["a", "b", "c"] {
        let running = await_condition(pods.clone(), name, in_phase("Running"));
        tokio::time::timeout(PATIENCE, running).await.expect("in time").unwrap();
    }
    let listed = pods.list(&ListParams::default().labels("app=bosun,role=agent")).await.unwrap();
    let mut names: Vec<String> = listed.items.into_iter().filter_map(|p| p.metadata.name).collect();
    names.sort();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(pods.list(&ListParams::default().labels("role!=agent")).await.unwrap().items.len(), 1);
    let everywhere: Api<Pod> = Api::all(client(&cluster).await);
    assert_eq!(everywhere.list(&ListParams::default()).await.unwrap().items.len(), 3);
    let ip = |name: &str| cluster.pod("default", name).and_then(|p| p["status"]["podIP"].as_str().map(str::to_owned));
    let ips: std::collections::HashSet<_> = ["a", "b", "c"].map(ip).into_iter().collect();
    assert_eq!(ips.len(), 3, "each pod has an address of its own: {ips:?}");

    // A watch from resource version 0 first shows every pod; one with streaming lists ends them
    // with a bookmark that says so; both end at their timeout.
    let events: Vec<_> =
        pods.watch(&WatchParams::default().timeout(1), "0").await.unwrap().try_collect().await.unwrap();
    assert_eq!(events.iter().filter(|e| matches!(e, WatchEvent::Added(_))).count(), 3, "{events:?}");
    let streaming = WatchParams::streaming_lists().timeout(1).labels("role=agent");
    let events: Vec<_> = pods.watch(&streaming, "").await.unwrap().try_collect().await.unwrap();
    assert_eq!(events.iter().filter(|e| matches!(e, WatchEvent::Added(_))).count(), 2, "{events:?}");
    match events.last() {
        Some(WatchEvent::Bookmark(mark)) => {
            assert_eq!(mark.metadata.annotations.get("k8s.io/initial-events-end").map(String::as_str), Some("true"))
        }
        other => panic!("the initial events end with {other:?}"),
    }

    assert!(cluster.delete_behind_back("default", "c"), "c was there");
    assert!(cluster.containers("default", "c").is_empty(), "its container went with it");
    assert!(!cluster.delete_behind_back("default", "c"), "c is gone");
    assert_eq!(pods.list(&ListParams::default()).await.unwrap().items.len(), 2);

    match pods.get("nope").await {
        Err(kube::Error::Api(status)) => assert_eq!((status.code, status.reason.as_str()), (404, "NotFound")),
        other => panic!("a missing pod gave {other:?}"),
    }
    let again = pods.create(&PostParams::default(), &sleeper(&image, "a", json!({}))).await;
    assert!(matches!(again, Err(kube::Error::Api(s)) if s.code == 409 && s.reason == "AlreadyExists"));

    let mut config = config(&cluster).await;
    config.auth_info.token = None;
    let anonymous: Api<Pod> = Api::default_namespaced(Client::try_from(config).unwrap());
    match anonymous.list(&ListParams::default()).await {
        Err(kube::Error::Api(status)) => assert_eq!((status.code, status.reason.as_str()), (401, "Unauthorized")),
        other => panic!("a request without the token gave {other:?}"),
    }
    let gets = cluster.requests().iter().filter(|r| r.method == "GET" && r.path.ends_with("/pods/nope")).count();
    assert_eq!(gets, 1);
}

/// Sends one raw request with the cluster's token (or without, when `token` is false) and
/// returns the status code and the body as JSON.
fn raw(cluster: &FakeCluster, method: &str, path: &str, body: &[u8], token: bool) -> (u16, Value) {
    let addr = cluster.url().trim_start_matches("http://").to_owned();
    let mut stream = TcpStream::connect(addr).unwrap();
    let auth = if token { format!("Authorization: Bearer {}\r\n", cluster.token()) } else { String::new() };
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let code = answer[9..12].parse().unwrap();
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or_default();
    (code, serde_json::from_str(body).unwrap_or(Value::Null))
}

#[test]
fn hostile_requests_are_refused_and_create_nothing() {
    let engine = DockerEngine::start();
    let image = image(engine);
    let cluster = FakeCluster::start(engine);
    let pods = "/api/v1/namespaces/default/pods";
    let mut big = sleeper(&image, "big", json!({}));
    big.metadata.annotations = Some([("junk".to_owned(), "x".repeat(2 << 20))].into());
    let (code, status) = raw(&cluster, "POST", pods, &serde_json::to_vec(&big).unwrap(), true);
    assert_eq!((code, status["reason"].as_str()), (413, Some("RequestEntityTooLarge")), "{status}");

    let (code, status) = raw(&cluster, "POST", pods, b"{\"metadata\": {\"name\": ", true);
    assert_eq!((code, status["kind"].as_str(), status["reason"].as_str()), (400, Some("Status"), Some("BadRequest")));

    for name in ["a/b", "..", "../../etc", "Agent", "a b"] {
        let body = serde_json::to_vec(&sleeper(&image, name, json!({}))).unwrap();
        let (code, status) = raw(&cluster, "POST", pods, &body, true);
        assert_eq!((code, status["reason"].as_str()), (422, Some("Invalid")), "{name}: {status}");
        assert_eq!(status["details"]["causes"][0]["field"], "metadata.name", "{status}");
    }
    let mut mount = serde_json::to_value(sleeper(&image, "mount", json!({}))).unwrap();
    mount["spec"]["volumes"] = json!([{"name": "w", "emptyDir": {}}]);
    mount["spec"]["containers"][0]["volumeMounts"] = json!([{"name": "w", "mountPath": "/w", "subPath": "../../x"}]);
    let (code, _) = raw(&cluster, "POST", pods, &serde_json::to_vec(&mount).unwrap(), true);
    assert_eq!(code, 422, "a subPath out of its volume");
    let odd: [(&str, Value); 4] = [
        (pods, json!({"metadata": {"name": "x", "annotations": "s"}, "spec": {"containers": []}})),
        (pods, json!({"metadata": {"name": "x"}, "spec": 5})),
        (
            "/api/v1/namespaces/default/secrets",
            json!({"metadata": {"name": "s"}, "data": "x", "stringData": {"a": "b"}}),
        ),
        ("/api/v1/namespaces/default/persistentvolumeclaims", json!({"metadata": {"name": "c"}, "spec": []})),
    ];
    for (path, body) in odd {
        let (code, status) = raw(&cluster, "POST", path, &serde_json::to_vec(&body).unwrap(), true);
        assert_eq!((code, status["reason"].as_str()), (422, Some("Invalid")), "{body}: {status}");
    }
    let (code, status) = raw(&cluster, "GET", pods, b"", false);
    assert_eq!((code, status["reason"].as_str()), (401, Some("Unauthorized")));

    assert!(cluster.pods().is_empty());
    let (code, list) = raw(&cluster, "GET", pods, b"", true);
    assert_eq!((code, list["kind"].as_str(), list["items"].as_array().map(Vec::len)), (200, Some("PodList"), Some(0)));
    let containers = engine.run(&["ps", "-aq", "--filter", &format!("label={}", cluster.engine_label())]);
    assert!(containers.trim().is_empty(), "no container was made: {containers}");
    let volumes = engine.run(&["volume", "ls", "-q", "--filter", &format!("label={}", cluster.engine_label())]);
    assert!(volumes.trim().is_empty(), "no volume was made: {volumes}");
}
