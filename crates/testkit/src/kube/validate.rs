//! What the fake checks of an object before it stores it, as the real API server does (a subset):
//! names are DNS-1123, a pod has containers with names and images, its mounts name its volumes
//! at absolute paths, a secret's data is base64. Each failure is a `(field, message)` cause of a
//! 422 `Invalid`.

use std::collections::HashSet;

use base64::Engine as _;
use serde_json::Value;

use super::store::Kind;

type Causes = Vec<(String, String)>;

/// Whether `name` is a DNS-1123 label: at most 63 of `[a-z0-9-]`, alphanumeric at both ends.
pub fn is_label(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Whether `name` is a DNS-1123 subdomain: at most 253, labels joined by dots.
pub fn is_subdomain(name: &str) -> bool {
    name.len() <= 253 && name.split('.').all(is_label)
}

const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', \
                         and must start and end with an alphanumeric character";
const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \
                             '-' or '.', and must start and end with an alphanumeric character";

/// The object's name problems.
pub fn name(name: &str, causes: &mut Causes) {
    if name.is_empty() {
        causes.push(("metadata.name".into(), "Required value: name or generateName is required".into()));
    } else if !is_subdomain(name) {
        causes.push(("metadata.name".into(), format!("Invalid value: {name:?}: {SUBDOMAIN_MSG}")));
    }
}

/// Problems with the object's shape: the maps the server and this fake write into are maps (or
/// absent), so that nothing later meets a string where it expects an object.
pub fn shape(kind: Kind, object: &Value, causes: &mut Causes) {
    let map_of_strings = |v: &Value| v.is_null() || v.as_object().is_some_and(|m| m.values().all(Value::is_string));
    for key in ["labels", "annotations"] {
        if !map_of_strings(&object["metadata"][key]) {
            causes.push((format!("metadata.{key}"), "Invalid value: must be a map of strings".into()));
        }
    }
    let maps: &[&str] = match kind {
        Kind::Pod => &["spec"],
        Kind::Secret => &["data", "stringData"],
        Kind::Claim => &["spec"],
    };
    for key in maps {
        let v = &object[key];
        let ok = if *key == "spec" { v.is_object() || (kind == Kind::Claim && v.is_null()) } else { map_of_strings(v) };
        if !ok {
            causes.push(((*key).into(), "Invalid value: must be an object".into()));
        }
    }
    if kind == Kind::Claim && !(object["spec"]["resources"].is_null() || object["spec"]["resources"].is_object()) {
        causes.push(("spec.resources".into(), "Invalid value: must be an object".into()));
    }
}

/// A pod's spec problems.
pub fn pod(spec: &Value, causes: &mut Causes) {
    let volumes: Vec<&str> =
        spec["volumes"].as_array().into_iter().flatten().filter_map(|v| v["name"].as_str()).collect();
    for (i, v) in volumes.iter().enumerate() {
        if !is_label(v) {
            causes.push((format!("spec.volumes[{i}].name"), format!("Invalid value: {v:?}: {LABEL_MSG}")));
        }
    }
    let mut seen = HashSet::new();
    for list in ["initContainers", "containers"] {
        let containers = spec[list].as_array().cloned().unwrap_or_default();
        if list == "containers" && containers.is_empty() {
            causes.push(("spec.containers".into(), "Required value".into()));
        }
        for (i, c) in containers.iter().enumerate() {
            let at = format!("spec.{list}[{i}]");
            let name = c["name"].as_str().unwrap_or_default();
            if !is_label(name) {
                causes.push((format!("{at}.name"), format!("Invalid value: {name:?}: {LABEL_MSG}")));
            } else if !seen.insert(name.to_owned()) {
                causes.push((format!("{at}.name"), format!("Duplicate value: {name:?}")));
            }
            if c["image"].as_str().is_none_or(str::is_empty) {
                causes.push((format!("{at}.image"), "Required value".into()));
            }
            for (j, m) in c["volumeMounts"].as_array().into_iter().flatten().enumerate() {
                mount(m, &format!("{at}.volumeMounts[{j}]"), &volumes, causes);
            }
            for key in ["command", "args"] {
                if !c[key].is_null() && !c[key].as_array().is_some_and(|a| a.iter().all(Value::is_string)) {
                    causes.push((format!("{at}.{key}"), "Invalid value: must be a list of strings".into()));
                }
            }
        }
    }
}

fn mount(m: &Value, at: &str, volumes: &[&str], causes: &mut Causes) {
    let name = m["name"].as_str().unwrap_or_default();
    if !volumes.contains(&name) {
        causes.push((format!("{at}.name"), format!("Not found: {name:?}")));
    }
    let path = m["mountPath"].as_str().unwrap_or_default();
    if !path.starts_with('/') || path.contains([':', ',', '\0']) {
        causes.push((
            format!("{at}.mountPath"),
            format!("Invalid value: {path:?}: must be an absolute path without ':'"),
        ));
    }
    if let Some(sub) = m["subPath"].as_str() {
        if sub.starts_with('/') || sub.split('/').any(|p| p == "..") || sub.contains([':', ',', '\0']) {
            causes.push((
                format!("{at}.subPath"),
                format!("Invalid value: {sub:?}: must be a relative path without '..'"),
            ));
        }
    }
}

/// A secret's problems; its `stringData` is folded into `data` (base64) as the server does.
pub fn secret(secret: &mut Value, causes: &mut Causes) {
    let engine = base64::engine::general_purpose::STANDARD;
    if let Some(strings) = secret.get("stringData").and_then(Value::as_object).cloned() {
        for (k, v) in strings {
            secret["data"][&k] = Value::String(engine.encode(v.as_str().unwrap_or_default()));
        }
    }
    if let Some(s) = secret.as_object_mut() {
        s.remove("stringData");
    }
    for (k, v) in secret["data"].as_object().into_iter().flatten() {
        let key_ok =
            !k.is_empty() && k != "." && k != ".." && k.chars().all(|c| c.is_ascii_alphanumeric() || "-._".contains(c));
        if !key_ok {
            causes.push((
                format!("data[{k}]"),
                format!(
                    "Invalid value: {k:?}: a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
                ),
            ));
        }
        if v.as_str().is_none_or(|s| engine.decode(s).is_err()) {
            causes.push((format!("data[{k}]"), "Invalid value: not base64".into()));
        }
    }
}

/// The decoded value of a secret's `key`.
pub fn secret_value(secret: &Value, key: &str) -> Option<Vec<u8>> {
    let text = secret["data"][key].as_str()?;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_subdomain("agent-1.x"));
        for bad in ["a/b", "..", "a..b", "-a", "A", "", "a_b"] {
            assert!(!is_subdomain(bad), "{bad}");
        }
        assert!(!is_label("a.b"));
    }
}
