//! One container of a pod spec turned into a `docker run` command line: its environment (values,
//! secret keys, the pod's fields, `$(VAR)` expansion), its command and arguments with Kubernetes'
//! meaning (`command` replaces the image's entrypoint, `args` its command), its mounts, working
//! directory and user, on the host's network.

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use serde_json::Value;

use super::validate;

/// Where a pod's volume lives on the engine's host.
#[derive(Clone, Debug)]
pub enum Source {
    /// A directory of the fake's own (an `emptyDir`, a secret's files, a `hostPath`).
    Dir { path: PathBuf, read_only: bool },
    /// A Docker named volume (a claim's), and where the engine keeps it on the host (for
    /// `subPath`s, which the engine's API version cannot mount).
    Volume { name: String, mountpoint: PathBuf },
}

/// What a container's values are resolved against.
pub struct Context<'a> {
    pub pod: &'a Value,
    pub ip: &'a str,
    /// A secret of the pod's namespace by name.
    pub secret: &'a dyn Fn(&str) -> Option<Value>,
}

/// The container's environment in order, each value expanded with those before it.
pub fn env(c: &Value, ctx: &Context) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    for from in c["envFrom"].as_array().into_iter().flatten() {
        let Some(name) = from["secretRef"]["name"].as_str() else { continue };
        let optional = from["secretRef"]["optional"].as_bool().unwrap_or(false);
        match (ctx.secret)(name) {
            Some(secret) => {
                let prefix = from["prefix"].as_str().unwrap_or_default();
                for key in secret["data"].as_object().map(|d| d.keys().cloned().collect::<Vec<_>>()).unwrap_or_default()
                {
                    let value = validate::secret_value(&secret, &key).unwrap_or_default();
                    set(&mut out, format!("{prefix}{key}"), String::from_utf8_lossy(&value).into_owned());
                }
            }
            None if optional => {}
            None => return Err(format!("secret \"{name}\" not found")),
        }
    }
    for var in c["env"].as_array().into_iter().flatten() {
        let name = var["name"].as_str().unwrap_or_default().to_owned();
        let value = if let Some(value) = var["value"].as_str() {
            expand(value, &out)
        } else if let Some(r) = var["valueFrom"]["secretKeyRef"].as_object() {
            let secret_name = r.get("name").and_then(Value::as_str).unwrap_or_default();
            let key = r.get("key").and_then(Value::as_str).unwrap_or_default();
            let optional = r.get("optional").and_then(Value::as_bool).unwrap_or(false);
            let value = (ctx.secret)(secret_name).map(|s| validate::secret_value(&s, key));
            match value {
                Some(Some(v)) => String::from_utf8_lossy(&v).into_owned(),
                _ if optional => continue,
                None => return Err(format!("secret \"{secret_name}\" not found")),
                Some(None) => return Err(format!("couldn't find key {key} in Secret {secret_name}")),
            }
        } else if let Some(path) = var["valueFrom"]["fieldRef"]["fieldPath"].as_str() {
            field(ctx, path).ok_or_else(|| format!("unsupported fieldPath {path:?}"))?
        } else {
            String::new()
        };
        set(&mut out, name, value);
    }
    Ok(out)
}

fn set(env: &mut Vec<(String, String)>, name: String, value: String) {
    match env.iter_mut().find(|(n, _)| *n == name) {
        Some(slot) => slot.1 = value,
        None => env.push((name, value)),
    }
}

/// A `fieldRef`'s value.
fn field(ctx: &Context, path: &str) -> Option<String> {
    let pod = ctx.pod;
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    Some(match path {
        "metadata.name" => s(&pod["metadata"]["name"]),
        "metadata.namespace" => s(&pod["metadata"]["namespace"]),
        "metadata.uid" => s(&pod["metadata"]["uid"]),
        "status.podIP" => ctx.ip.to_owned(),
        "status.hostIP" => "127.0.0.1".to_owned(),
        "spec.nodeName" => s(&pod["spec"]["nodeName"]),
        "spec.serviceAccountName" => s(&pod["spec"]["serviceAccountName"]),
        _ => {
            let key = path.strip_prefix("metadata.labels['")?.strip_suffix("']")?;
            s(&pod["metadata"]["labels"][key])
        }
    })
}

/// Kubernetes' `$(VAR)` expansion: a defined variable is replaced, an undefined one is kept as
/// written, `$$` is a `$`.
pub fn expand(text: &str, env: &[(String, String)]) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(after) = after.strip_prefix('$') {
            out.push('$');
            rest = after;
        } else if let Some(end) = after.strip_prefix('(').and_then(|a| a.find(')')) {
            let name = &after[1..=end];
            match env.iter().rev().find(|(n, _)| n == name) {
                Some((_, value)) => out.push_str(value),
                None => out.push_str(&rest[at..at + end + 3]),
            }
            rest = &after[end + 2..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// `docker run -d` arguments for container `c` of the pod, named `name`, labelled with `labels`,
/// with the `-v` values in `binds` besides its mounts.
#[allow(clippy::too_many_arguments)]
pub fn run_args(
    c: &Value,
    pod_spec: &Value,
    name: &str,
    labels: &[(String, String)],
    env: &[(String, String)],
    volumes: &HashMap<String, Source>,
    binds: &[String],
) -> Result<Vec<String>, String> {
    let mut args: Vec<String> = vec!["run".into(), "-d".into(), "--pull".into(), "never".into()];
    args.extend(["--name".into(), name.into(), "--network".into(), "host".into()]);
    for (k, v) in labels {
        args.extend(["--label".into(), format!("{k}={v}")]);
    }
    for (k, v) in env {
        args.extend(["-e".into(), format!("{k}={v}")]);
    }
    for m in c["volumeMounts"].as_array().into_iter().flatten() {
        args.extend(["-v".into(), mount(m, volumes)?]);
    }
    for bind in binds {
        args.extend(["-v".into(), bind.clone()]);
    }
    if let Some(dir) = c["workingDir"].as_str().filter(|d| !d.is_empty()) {
        args.extend(["-w".into(), dir.into()]);
    }
    let security = |key: &str| c["securityContext"][key].as_i64().or_else(|| pod_spec["securityContext"][key].as_i64());
    match (security("runAsUser"), security("runAsGroup")) {
        (Some(u), Some(g)) => args.extend(["--user".into(), format!("{u}:{g}")]),
        (Some(u), None) => args.extend(["--user".into(), u.to_string()]),
        (None, Some(g)) => args.extend(["--group-add".into(), g.to_string()]),
        (None, None) => {}
    }
    let strings = |key: &str| -> Option<Vec<String>> {
        let list = c[key].as_array()?;
        Some(list.iter().map(|s| expand(s.as_str().unwrap_or_default(), env)).collect())
    };
    let command = strings("command").filter(|c| !c.is_empty());
    let rest_of_command = match &command {
        Some(command) => {
            args.extend(["--entrypoint".into(), command[0].clone()]);
            command[1..].to_vec()
        }
        None => Vec::new(),
    };
    args.push(c["image"].as_str().unwrap_or_default().into());
    args.extend(rest_of_command);
    args.extend(strings("args").unwrap_or_default());
    Ok(args)
}

/// A `-v` value for one of the container's `volumeMounts`.
fn mount(m: &Value, volumes: &HashMap<String, Source>) -> Result<String, String> {
    let volume = m["name"].as_str().unwrap_or_default();
    let target = m["mountPath"].as_str().unwrap_or_default();
    let sub = m["subPath"].as_str().filter(|s| !s.is_empty());
    let mut read_only = m["readOnly"].as_bool().unwrap_or(false);
    let source = match volumes.get(volume).ok_or_else(|| format!("volume {volume:?} is not ready"))? {
        Source::Volume { name, .. } if sub.is_none() => name.clone(),
        Source::Volume { mountpoint, .. } => sub_dir(mountpoint, sub, true)?,
        Source::Dir { path, read_only: forced } => {
            read_only |= forced;
            sub_dir(path, sub, !forced)?
        }
    };
    Ok(format!("{source}:{target}{}", if read_only { ":ro" } else { "" }))
}

/// `base/sub` (made, world-writable as an `emptyDir` is, when `create`), or `base`.
fn sub_dir(base: &std::path::Path, sub: Option<&str>, create: bool) -> Result<String, String> {
    let Some(sub) = sub else { return Ok(base.display().to_string()) };
    let path = base.join(sub);
    if create && !path.exists() {
        fs::create_dir_all(&path).map_err(|e| format!("cannot create subPath {}: {e}", path.display()))?;
        let _ = fs::set_permissions(&path, fs::Permissions::from_mode(0o777));
    }
    Ok(path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansion_is_kubernetes_own() {
        let env = vec![("POD_IP".to_owned(), "127.0.0.2".to_owned()), ("A".to_owned(), "x".to_owned())];
        assert_eq!(expand("--listen=$(POD_IP):7000", &env), "--listen=127.0.0.2:7000");
        assert_eq!(expand("$(NOPE) $$(A) $$ $A $(A", &env), "$(NOPE) $(A) $ $A $(A");
        assert_eq!(expand("$(A)$(A)", &env), "xx");
        assert_eq!(expand("echo \"$(cat f) $(A)\"", &env), "echo \"$(cat f) x\"");
    }

    #[test]
    fn command_replaces_the_entrypoint_and_args_follow() {
        let c = serde_json::json!({"image": "img", "command": ["sh", "-c"], "args": ["echo $(A)"], "workingDir": "/w"});
        let env = vec![("A".to_owned(), "x".to_owned())];
        let args = run_args(&c, &Value::Null, "n", &[], &env, &HashMap::new(), &[]).unwrap();
        let tail: Vec<&str> = args.iter().map(String::as_str).skip_while(|a| *a != "--entrypoint").collect();
        assert_eq!(tail, ["--entrypoint", "sh", "img", "-c", "echo x"]);
        assert!(args.windows(2).any(|w| w == ["-w", "/w"]));
    }
}
