//! The REST side of the fake API server: a request checked (token, size), routed by path and
//! method to the core/v1 calls it knows, and answered with the JSON the real server sends — the
//! object, a list, a `Status` for an error, or a watch to stream.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::http::{Request, MAX_BODY};
use super::store::{now, ApiError, Kind, Selector};
use super::{claims, pods, validate, Shared};

/// What a request is answered with.
pub enum Answer {
    Json(u16, Value),
    Text(u16, String),
    Watch(Watch),
    /// A container's output as it comes (`log?follow=true`), by its id on the engine.
    FollowLogs(String),
    /// A port-forward to `port` of the pod at `ip` over a WebSocket (`v4.channel.k8s.io`), whose
    /// handshake answers `key` with `protocol`.
    PortForward {
        ip: String,
        port: u16,
        key: String,
        protocol: String,
    },
}

/// A watch to stream: which objects, from which resource version (`None`: every object there is
/// first, as `ADDED`), with or without bookmarks, for how long.
pub struct Watch {
    pub kind: Kind,
    pub ns: Option<String>,
    pub selector: Selector,
    pub since: Option<u64>,
    pub bookmarks: bool,
    /// `sendInitialEvents=true`: every object first, then a bookmark that says they ended.
    pub initial_events: bool,
    pub timeout: Duration,
}

/// The longest a watch lasts when the client names no timeout (the real server picks 30 to 60
/// minutes).
const WATCH_TIMEOUT: Duration = Duration::from_secs(1800);

impl From<ApiError> for Answer {
    fn from(e: ApiError) -> Self {
        Answer::Json(e.code, e.status())
    }
}

pub fn handle(shared: &Arc<Shared>, req: &Request) -> Answer {
    let bearer = req.header("authorization").and_then(|v| v.strip_prefix("Bearer "));
    if bearer != Some(shared.token.as_str()) {
        return ApiError::new(401, "Unauthorized", "Unauthorized").into();
    }
    if req.too_large {
        return ApiError::new(413, "RequestEntityTooLarge", format!("the request body is over {MAX_BODY} bytes"))
            .into();
    }
    route(shared, req).unwrap_or_else(Answer::from)
}

fn route(shared: &Arc<Shared>, req: &Request) -> Result<Answer, ApiError> {
    let path = req.path().trim_end_matches('/');
    if path == "/version" {
        return Ok(Answer::Json(200, version()));
    }
    let Some(rest) = path.strip_prefix("/api/v1/") else {
        return Err(ApiError::new(404, "NotFound", "the server could not find the requested resource"));
    };
    let parts: Vec<&str> = rest.split('/').collect();
    let method = req.method.as_str();
    match parts.as_slice() {
        [plural] => {
            let kind = kind(plural)?;
            read_collection(shared, req, kind, None, method)
        }
        ["namespaces", ns, plural] => {
            let kind = kind(plural)?;
            match method {
                "POST" => create(shared, req, kind, ns),
                _ => read_collection(shared, req, kind, Some(ns), method),
            }
        }
        ["namespaces", ns, plural, name] => {
            let kind = kind(plural)?;
            match method {
                "GET" => get(shared, kind, ns, name).map(|o| Answer::Json(200, o)),
                "DELETE" => delete(shared, kind, ns, name),
                _ => Err(not_allowed(method)),
            }
        }
        ["namespaces", ns, "pods", name, "log"] if method == "GET" => logs(shared, req, ns, name),
        ["namespaces", ns, "pods", name, "portforward"] if method == "GET" => port_forward(shared, req, ns, name),
        _ => Err(ApiError::new(404, "NotFound", "the server could not find the requested resource")),
    }
}

fn kind(plural: &str) -> Result<Kind, ApiError> {
    Kind::from_plural(plural)
        .ok_or_else(|| ApiError::new(404, "NotFound", format!("the server doesn't have a resource type {plural:?}")))
}

fn not_allowed(method: &str) -> ApiError {
    ApiError::new(405, "MethodNotAllowed", format!("{method} is not supported by this fake API server"))
}

fn version() -> Value {
    json!({"major": "1", "minor": "33", "gitVersion": "v1.33.0-bosun-fake", "gitCommit": "", "gitTreeState": "clean",
           "buildDate": "2025-01-01T00:00:00Z", "goVersion": "go1.24", "compiler": "gc", "platform": "linux/amd64"})
}

/// A list, or a watch when `watch` is set.
fn read_collection(
    shared: &Arc<Shared>,
    req: &Request,
    kind: Kind,
    ns: Option<&str>,
    method: &str,
) -> Result<Answer, ApiError> {
    if method != "GET" {
        return Err(not_allowed(method));
    }
    let selector = Selector::parse(req.param("labelSelector").as_deref(), req.param("fieldSelector").as_deref())?;
    if req.param("watch").is_some_and(|w| w == "true" || w == "1") {
        let since = match req.param("resourceVersion").as_deref() {
            None | Some("") | Some("0") => None,
            Some(rv) => Some(rv.parse().map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {rv:?}")))?),
        };
        let timeout =
            req.param("timeoutSeconds").and_then(|t| t.parse().ok()).map_or(WATCH_TIMEOUT, Duration::from_secs);
        let bookmarks = req.param("allowWatchBookmarks").is_some_and(|b| b == "true");
        let initial_events = req.param("sendInitialEvents").is_some_and(|b| b == "true");
        let ns = ns.map(str::to_owned);
        return Ok(Answer::Watch(Watch { kind, ns, selector, since, bookmarks, initial_events, timeout }));
    }
    let store = shared.store();
    let items = store.list(kind, ns, &selector);
    Ok(Answer::Json(
        200,
        json!({
            "kind": format!("{}List", kind.name()), "apiVersion": "v1",
            "metadata": {"resourceVersion": store.rv().to_string()}, "items": items,
        }),
    ))
}

fn get(shared: &Shared, kind: Kind, ns: &str, name: &str) -> Result<Value, ApiError> {
    shared.store().get(kind, ns, name).cloned().ok_or_else(|| ApiError::not_found(kind, name))
}

fn create(shared: &Arc<Shared>, req: &Request, kind: Kind, ns: &str) -> Result<Answer, ApiError> {
    let mut object: Value = serde_json::from_slice(&req.body)
        .map_err(|e| ApiError::bad_request(format!("the body is not valid JSON: {e}")))?;
    if !object.is_object() {
        return Err(ApiError::bad_request("the body is not a JSON object"));
    }
    if object.get("kind").and_then(Value::as_str).is_some_and(|k| k != kind.name()) {
        return Err(ApiError::bad_request(format!("the body's kind is not {}", kind.name())));
    }
    if !object["metadata"].is_object() && !object["metadata"].is_null() {
        return Err(ApiError::bad_request("metadata is not an object"));
    }
    if object["metadata"]["namespace"].as_str().is_some_and(|n| n != ns) {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    if !validate::is_label(ns) {
        return Err(ApiError::invalid(kind, ns, &[("metadata.namespace".into(), "Invalid value".into())]));
    }
    object["kind"] = json!(kind.name());
    object["apiVersion"] = json!("v1");
    let name = match (object["metadata"]["name"].as_str(), object["metadata"]["generateName"].as_str()) {
        (Some(name), _) if !name.is_empty() => name.to_owned(),
        (_, Some(prefix)) => format!("{prefix}{}", random_suffix()),
        _ => String::new(),
    };
    object["metadata"]["name"] = json!(name);
    let mut causes = Vec::new();
    validate::name(&name, &mut causes);
    validate::shape(kind, &object, &mut causes);
    match kind {
        Kind::Pod => validate::pod(&object["spec"], &mut causes),
        Kind::Secret if causes.is_empty() => validate::secret(&mut object, &mut causes),
        Kind::Secret => {}
        Kind::Claim => {}
    }
    if !causes.is_empty() {
        return Err(ApiError::invalid(kind, &name, &causes));
    }
    if let Some(meta) = object["metadata"].as_object_mut() {
        for key in ["uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"] {
            meta.remove(key);
        }
    }
    match kind {
        Kind::Pod => {
            object["status"] = json!({"phase": "Pending", "qosClass": "BestEffort"});
            if object["spec"]["restartPolicy"].is_null() {
                object["spec"]["restartPolicy"] = json!("Always");
            }
        }
        Kind::Secret => {
            if object["type"].is_null() {
                object["type"] = json!("Opaque");
            }
        }
        Kind::Claim => {
            if shared.store().get(kind, ns, &name).is_none() {
                claims::provision(shared, ns, &mut object).map_err(|e| ApiError::new(500, "InternalError", e))?;
            }
        }
    }
    let created = shared.change(|store| store.create(kind, ns, object.clone()));
    let created = match created {
        Ok(created) => created,
        Err(e) => {
            if kind == Kind::Claim {
                claims::release(shared, &object);
            }
            return Err(e);
        }
    };
    if kind == Kind::Pod {
        pods::start(shared, created.clone());
    }
    Ok(Answer::Json(201, created))
}

/// Deletes an object: a pod's containers and files go first, then it leaves the store with a
/// DELETED event.
pub fn delete(shared: &Shared, kind: Kind, ns: &str, name: &str) -> Result<Answer, ApiError> {
    let object = get(shared, kind, ns, name)?;
    if kind == Kind::Pod {
        // As the real server does: the pod is marked (a MODIFIED event), its containers are
        // stopped (their statuses may change meanwhile), then it goes (DELETED).
        let uid = object["metadata"]["uid"].as_str().unwrap_or_default();
        shared.change(|store| {
            store.update(kind, ns, name, uid, |p| {
                p["metadata"]["deletionTimestamp"] = json!(now());
                p["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            })
        });
        pods::stop(shared, uid);
    }
    let removed = shared.change(|store| store.remove(kind, ns, name));
    let Some(removed) = removed else { return Err(ApiError::not_found(kind, name)) };
    match kind {
        Kind::Pod => Ok(Answer::Json(200, removed)),
        Kind::Claim | Kind::Secret => {
            if kind == Kind::Claim {
                claims::release(shared, &removed);
            }
            let uid = removed["metadata"]["uid"].clone();
            Ok(Answer::Json(
                200,
                json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                       "details": {"name": name, "kind": kind.plural(), "uid": uid}}),
            ))
        }
    }
}

/// A container's output (`?container=` names it; the first container when there is one).
fn logs(shared: &Shared, req: &Request, ns: &str, name: &str) -> Result<Answer, ApiError> {
    let pod = get(shared, Kind::Pod, ns, name)?;
    let statuses: Vec<Value> = ["initContainerStatuses", "containerStatuses"]
        .iter()
        .flat_map(|l| pod["status"][l].as_array().cloned().unwrap_or_default())
        .collect();
    let wanted = req.param("container").or_else(|| pod["spec"]["containers"][0]["name"].as_str().map(str::to_owned));
    let status = statuses.iter().find(|s| s["name"].as_str() == wanted.as_deref());
    let id = status.and_then(|s| s["containerID"].as_str()).and_then(|id| id.strip_prefix("docker://"));
    let Some(id) = id else {
        return Err(ApiError::bad_request(format!("container {wanted:?} in pod {name:?} is not started")));
    };
    if req.param("follow").is_some_and(|f| f == "true") {
        return Ok(Answer::FollowLogs(id.to_owned()));
    }
    let out = shared.engine.output(&["logs", id]);
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    Ok(Answer::Text(200, text))
}

/// A port-forward to one port of a running pod, as a WebSocket upgrade.
fn port_forward(shared: &Shared, req: &Request, ns: &str, name: &str) -> Result<Answer, ApiError> {
    let pod = get(shared, Kind::Pod, ns, name)?;
    let ip = pod["status"]["podIP"].as_str().filter(|_| pod["status"]["phase"] == "Running");
    let ip = ip.ok_or_else(|| ApiError::bad_request(format!("pod {name} is not running")))?.to_owned();
    let ports = req.param("ports").unwrap_or_default();
    let port = match ports.split(',').collect::<Vec<_>>().as_slice() {
        [one] => one.trim().parse::<u16>().map_err(|_| ApiError::bad_request(format!("bad port {one:?}")))?,
        _ => return Err(ApiError::bad_request("this fake forwards exactly one port")),
    };
    let key = req.header("sec-websocket-key").ok_or_else(|| ApiError::bad_request("not a WebSocket upgrade"))?;
    let offered = req.header("sec-websocket-protocol").unwrap_or_default();
    let protocol = offered.split(',').map(str::trim).find(|p| *p == "v4.channel.k8s.io");
    let protocol = protocol.ok_or_else(|| ApiError::bad_request("no v4.channel.k8s.io protocol offered"))?;
    Ok(Answer::PortForward { ip, port, key: key.to_owned(), protocol: protocol.to_owned() })
}

fn random_suffix() -> String {
    const CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    (0..5).map(|_| CHARS[fastrand::usize(..CHARS.len())] as char).collect()
}
