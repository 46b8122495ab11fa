//! Pods run on the test's Docker engine: each pod gets a thread that takes its own loopback
//! address, makes its volumes, runs its init containers one after another to completion and then
//! starts its containers, all on the host's network; a thread per running container waits on the
//! engine (`docker wait`) for its end. Every step is written into the pod's status, which the
//! store turns into a MODIFIED watch event. Deleting a pod removes its containers and files.

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::thread;

use serde_json::{json, Value};

use super::container::{self, Context, Source};
use super::store::{now, Kind};
use super::{validate, Shared};

/// The fake's side of a pod on the engine.
#[derive(Default)]
pub struct Run {
    /// The engine's ids of the pod's containers made so far.
    pub containers: Vec<String>,
    /// The pod was deleted: whatever is made after is removed at once.
    pub deleted: bool,
}

/// Which pod: its namespace, name and uid (a pod deleted and made again is another).
#[derive(Clone, Debug)]
struct PodRef {
    ns: String,
    name: String,
    uid: String,
}

/// Starts running `pod` (as stored) on the engine.
pub fn start(shared: &Arc<Shared>, pod: Value) {
    let meta = &pod["metadata"];
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let at = PodRef { ns: s(&meta["namespace"]), name: s(&meta["name"]), uid: s(&meta["uid"]) };
    shared.runs().insert(at.uid.clone(), Run::default());
    let shared = Arc::clone(shared);
    let spawned =
        thread::Builder::new().name(format!("fake-kube-pod-{}", at.name)).spawn(move || run(&shared, &at, &pod));
    if let Err(e) = spawned {
        eprintln!("fake kube: cannot start a thread for a pod: {e}");
    }
}

/// Removes the pod's containers and files; what its thread makes later is removed as it comes.
pub fn stop(shared: &Shared, uid: &str) {
    let containers = match shared.runs().get_mut(uid) {
        Some(run) => {
            run.deleted = true;
            std::mem::take(&mut run.containers)
        }
        None => return,
    };
    remove_containers(shared, &containers);
    let _ = fs::remove_dir_all(shared.dir.join("pods").join(uid));
}

fn remove_containers(shared: &Shared, ids: &[String]) {
    if ids.is_empty() {
        return;
    }
    let mut args = vec!["rm", "-f", "-v"];
    args.extend(ids.iter().map(String::as_str));
    let _ = shared.engine.output(&args);
}

fn update(shared: &Shared, at: &PodRef, change: impl FnOnce(&mut Value)) -> bool {
    shared.change(|store| store.update(Kind::Pod, &at.ns, &at.name, &at.uid, change))
}

fn run(shared: &Arc<Shared>, at: &PodRef, pod: &Value) {
    let spec = &pod["spec"];
    let ip = shared.next_ip();
    let inits = spec["initContainers"].as_array().cloned().unwrap_or_default();
    let mains = spec["containers"].as_array().cloned().unwrap_or_default();
    let waiting = |c: &Value, reason: &str| status_of(c, json!({"waiting": {"reason": reason}}), None);
    update(shared, at, |p| {
        let st = &mut p["status"];
        st["phase"] = json!("Pending");
        st["hostIP"] = json!("127.0.0.1");
        st["hostIPs"] = json!([{"ip": "127.0.0.1"}]);
        st["podIP"] = json!(ip);
        st["podIPs"] = json!([{"ip": ip}]);
        st["startTime"] = json!(now());
        st["conditions"] = json!([condition("PodScheduled", true, None)]);
        if !inits.is_empty() {
            st["initContainerStatuses"] = inits.iter().map(|c| waiting(c, "PodInitializing")).collect();
        }
        let reason = if inits.is_empty() { "ContainerCreating" } else { "PodInitializing" };
        st["containerStatuses"] = mains.iter().map(|c| waiting(c, reason)).collect();
        p["spec"]["nodeName"] = json!("fake-node");
    });
    let volumes = match volumes(shared, at, pod) {
        Ok(v) => v,
        Err(message) => {
            return stuck(shared, at, "initContainerStatuses", None, "CreateContainerConfigError", &message)
        }
    };
    let secret = |name: &str| shared.store().get(Kind::Secret, &at.ns, name).cloned();
    let ctx = Context { pod, ip: &ip, secret: &secret };
    for (i, c) in inits.iter().enumerate() {
        let Some(id) = launch(shared, at, c, &ctx, &volumes, "initContainerStatuses", i) else { return };
        let code = wait(shared, &id);
        let Some(code) = code else { return };
        let ok = code == 0;
        update(shared, at, |p| {
            p["status"]["initContainerStatuses"][i] = status_of(c, terminated(code, &id), Some(&id));
            if !ok {
                p["status"]["phase"] = json!("Failed");
                p["status"]["reason"] = json!("InitContainerFailed");
                p["status"]["message"] = json!(format!("init container {} exited with code {code}", name(c)));
                p["status"]["conditions"] = json!([
                    condition("PodScheduled", true, None),
                    condition("Initialized", false, Some("ContainersNotInitialized")),
                    condition("Ready", false, Some("PodFailed")),
                ]);
            }
        });
        if !ok {
            return;
        }
    }
    let mut ids = Vec::new();
    for (i, c) in mains.iter().enumerate() {
        let Some(id) = launch(shared, at, c, &ctx, &volumes, "containerStatuses", i) else { return };
        ids.push(id);
    }
    update(shared, at, |p| {
        p["status"]["phase"] = json!("Running");
        p["status"]["conditions"] = json!([
            condition("PodScheduled", true, None),
            condition("Initialized", true, None),
            condition("ContainersReady", true, None),
            condition("Ready", true, None),
        ]);
    });
    for (i, (c, id)) in mains.into_iter().zip(ids).enumerate() {
        let shared = Arc::clone(shared);
        let at = at.clone();
        let _ = thread::Builder::new().name(format!("fake-kube-wait-{}", name(&c))).spawn(move || {
            if let Some(code) = wait(&shared, &id) {
                ended(&shared, &at, &c, i, &id, code);
            }
        });
    }
}

/// A main container ended: its status, and the pod's phase when it was the last.
fn ended(shared: &Shared, at: &PodRef, c: &Value, i: usize, id: &str, code: i64) {
    let message = termination_message(shared, at, c);
    update(shared, at, |p| {
        let statuses = &mut p["status"]["containerStatuses"];
        statuses[i] = status_of(c, terminated(code, id), Some(id));
        if let Some(message) = &message {
            statuses[i]["state"]["terminated"]["message"] = json!(message);
        }
        let all = statuses.as_array().cloned().unwrap_or_default();
        let done = all.iter().all(|s| s["state"]["terminated"].is_object());
        let failed = all.iter().any(|s| s["state"]["terminated"]["exitCode"].as_i64().is_some_and(|c| c != 0));
        if done {
            p["status"]["phase"] = json!(if failed { "Failed" } else { "Succeeded" });
        }
        p["status"]["conditions"] = json!([
            condition("PodScheduled", true, None),
            condition("Initialized", true, None),
            condition("ContainersReady", false, Some("ContainersNotReady")),
            condition("Ready", false, Some("ContainersNotReady")),
        ]);
    });
}

/// Runs container `c` (entry `i` of status list `list`), records it as running; `None` when it
/// cannot (its status says why) or the pod is gone.
fn launch(
    shared: &Shared,
    at: &PodRef,
    c: &Value,
    ctx: &Context,
    volumes: &HashMap<String, Source>,
    list: &str,
    i: usize,
) -> Option<String> {
    let env = match container::env(c, ctx) {
        Ok(env) => env,
        Err(message) => {
            stuck(shared, at, list, Some(i), "CreateContainerConfigError", &message);
            return None;
        }
    };
    let docker_name = format!("k8s_{}_{}_{}_{}", name(c), at.name, at.ns, &at.uid[..8]);
    let labels = vec![
        ("bosun.kube.cluster".to_owned(), shared.id.clone()),
        ("bosun.kube.pod".to_owned(), format!("{}/{}", at.ns, at.name)),
        ("bosun.kube.pod-uid".to_owned(), at.uid.clone()),
        ("bosun.kube.container".to_owned(), name(c).to_owned()),
    ];
    // Its termination message: a file of the pod's, bound where the container says, read when
    // it ends (as the kubelet does).
    let message = termination_file(shared, at, c);
    let binds: Vec<String> = message.iter().map(|(file, path)| format!("{}:{path}", file.display())).collect();
    let args = match container::run_args(c, &ctx.pod["spec"], &docker_name, &labels, &env, volumes, &binds) {
        Ok(args) => args,
        Err(message) => {
            stuck(shared, at, list, Some(i), "CreateContainerConfigError", &message);
            return None;
        }
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = shared.engine.output(&args);
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !out.status.success() || id.is_empty() {
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        let reason = if stderr.contains("No such image") || stderr.contains("pull") {
            "ErrImageNeverPull"
        } else {
            "CreateContainerError"
        };
        if !id.is_empty() {
            remove_containers(shared, std::slice::from_ref(&id));
        }
        stuck(shared, at, list, Some(i), reason, &stderr);
        return None;
    }
    let deleted = {
        let mut runs = shared.runs();
        match runs.get_mut(&at.uid) {
            Some(run) if !run.deleted => {
                run.containers.push(id.clone());
                false
            }
            _ => true,
        }
    };
    if deleted || shared.stopped() {
        remove_containers(shared, std::slice::from_ref(&id));
        return None;
    }
    let running = json!({"running": {"startedAt": now()}});
    update(shared, at, |p| p["status"][list][i] = status_of(c, running, Some(&id)));
    Some(id)
}

/// Waits on the engine for container `id` to end; its exit code, `None` when it was removed.
fn wait(shared: &Shared, id: &str) -> Option<i64> {
    let out = shared.engine.output(&["wait", id]);
    if !out.status.success() {
        return None;
    }
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// The pod cannot go on: container `i` of `list` (or every entry of it) waits for `reason`.
fn stuck(shared: &Shared, at: &PodRef, list: &str, i: Option<usize>, reason: &str, message: &str) {
    update(shared, at, |p| {
        let entries = p["status"][list].as_array_mut();
        for (j, s) in entries.into_iter().flatten().enumerate() {
            if i.is_none_or(|i| i == j) {
                s["state"] = json!({"waiting": {"reason": reason, "message": message}});
            }
        }
        p["status"]["message"] = json!(message);
    });
}

/// The pod's volumes on the engine's host, by name.
fn volumes(shared: &Shared, at: &PodRef, pod: &Value) -> Result<HashMap<String, Source>, String> {
    let dir = shared.dir.join("pods").join(&at.uid);
    let mut out = HashMap::new();
    for v in pod["spec"]["volumes"].as_array().into_iter().flatten() {
        let name = v["name"].as_str().unwrap_or_default().to_owned();
        let source = if v.get("emptyDir").is_some() {
            let path = dir.join("volumes").join(&name);
            make_dir(&path, 0o777)?;
            Source::Dir { path, read_only: false }
        } else if let Some(claim) = v["persistentVolumeClaim"]["claimName"].as_str() {
            let read_only = v["persistentVolumeClaim"]["readOnly"].as_bool().unwrap_or(false);
            let stored = shared.store().get(Kind::Claim, &at.ns, claim).cloned();
            let stored = stored.ok_or_else(|| format!("persistentvolumeclaim \"{claim}\" not found"))?;
            let volume =
                stored["metadata"]["annotations"][super::claims::VOLUME_ANNOTATION].as_str().unwrap_or_default();
            let mountpoint = super::claims::mountpoint(shared, volume)?;
            if read_only {
                Source::Dir { path: mountpoint, read_only: true }
            } else {
                Source::Volume { name: volume.to_owned(), mountpoint }
            }
        } else if let Some(secret_name) = v["secret"]["secretName"].as_str() {
            let secret = shared.store().get(Kind::Secret, &at.ns, secret_name).cloned();
            let optional = v["secret"]["optional"].as_bool().unwrap_or(false);
            let path = dir.join("secrets").join(&name);
            make_dir(&path, 0o755)?;
            match secret {
                Some(secret) => write_secret(&secret, &v["secret"], &path)?,
                None if optional => {}
                None => return Err(format!("secret \"{secret_name}\" not found")),
            }
            Source::Dir { path, read_only: true }
        } else if let Some(path) = v["hostPath"]["path"].as_str() {
            Source::Dir { path: PathBuf::from(path), read_only: false }
        } else {
            return Err(format!(
                "volume {name:?}: this fake knows emptyDir, persistentVolumeClaim, secret and hostPath"
            ));
        };
        out.insert(name, source);
    }
    Ok(out)
}

fn make_dir(path: &std::path::Path, mode: u32) -> Result<(), String> {
    fs::create_dir_all(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|e| format!("cannot chmod {}: {e}", path.display()))
}

/// A secret's keys (or the `items` asked for) as files in `dir`.
fn write_secret(secret: &Value, volume: &Value, dir: &std::path::Path) -> Result<(), String> {
    let mode = volume["defaultMode"].as_u64().unwrap_or(0o644) as u32;
    let keys: Vec<(String, String, u32)> = match volume["items"].as_array() {
        Some(items) => items
            .iter()
            .map(|item| {
                let s = |k: &str| item[k].as_str().unwrap_or_default().to_owned();
                (s("key"), s("path"), item["mode"].as_u64().map_or(mode, |m| m as u32))
            })
            .collect(),
        None => secret["data"].as_object().into_iter().flatten().map(|(k, _)| (k.clone(), k.clone(), mode)).collect(),
    };
    for (key, path, mode) in keys {
        if path.is_empty() || path.starts_with('/') || path.split('/').any(|p| p == "..") {
            return Err(format!("secret item path {path:?} is not a relative path"));
        }
        let value = validate::secret_value(secret, &key).ok_or_else(|| format!("secret has no key {key:?}"))?;
        let file = dir.join(&path);
        if let Some(parent) = file.parent() {
            fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        fs::write(&file, value).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        fs::set_permissions(&file, fs::Permissions::from_mode(mode)).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn name(c: &Value) -> &str {
    c["name"].as_str().unwrap_or_default()
}

fn status_of(c: &Value, state: Value, id: Option<&str>) -> Value {
    let running = state.get("running").is_some();
    let mut s = json!({
        "name": name(c), "image": c["image"], "imageID": "", "ready": running, "started": running,
        "restartCount": 0, "state": state,
    });
    if let Some(id) = id {
        s["containerID"] = json!(format!("docker://{id}"));
    }
    s
}

fn terminated(code: i64, id: &str) -> Value {
    let reason = if code == 0 { "Completed" } else { "Error" };
    json!({"terminated": {"exitCode": code, "reason": reason, "finishedAt": now(), "containerID": format!("docker://{id}")}})
}

/// The most of a termination message kept, as the kubelet keeps.
const MESSAGE_MOST: u64 = 4096;

/// The host file bound at container `c`'s `terminationMessagePath` (by default
/// `/dev/termination-log`), made empty and writable by anyone; and that path.
fn termination_file(shared: &Shared, at: &PodRef, c: &Value) -> Option<(std::path::PathBuf, String)> {
    use std::os::unix::fs::PermissionsExt;
    let path = c["terminationMessagePath"].as_str().unwrap_or("/dev/termination-log");
    if !path.starts_with('/') || path.contains([':', ',']) {
        return None;
    }
    let file = shared.dir.join(format!("{}-{}.termination", at.uid, name(c)));
    std::fs::write(&file, b"").ok()?;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).ok()?;
    Some((file, path.to_owned()))
}

/// What container `c` left in its termination message, at most `MESSAGE_MOST` bytes.
fn termination_message(shared: &Shared, at: &PodRef, c: &Value) -> Option<String> {
    use std::io::Read;
    let file = shared.dir.join(format!("{}-{}.termination", at.uid, name(c)));
    let mut text = String::new();
    std::fs::File::open(file).ok()?.take(MESSAGE_MOST).read_to_string(&mut text).ok()?;
    (!text.is_empty()).then_some(text)
}

fn condition(kind: &str, ok: bool, reason: Option<&str>) -> Value {
    let mut c = json!({"type": kind, "status": if ok { "True" } else { "False" }, "lastTransitionTime": now()});
    if let Some(reason) = reason {
        c["reason"] = json!(reason);
    }
    c
}
