//! What the fake API server holds: its objects (pods, secrets, claims) as the JSON the real server
//! returns, one resource version counter for all of them, and every change as a watch event
//! (kept for the cluster's life: a test's history is short). Label and field selectors, and the
//! `Status` objects errors are answered with.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

/// The resources the server keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Pod,
    Secret,
    Claim,
}

impl Kind {
    pub fn from_plural(plural: &str) -> Option<Kind> {
        match plural {
            "pods" => Some(Kind::Pod),
            "secrets" => Some(Kind::Secret),
            "persistentvolumeclaims" => Some(Kind::Claim),
            _ => None,
        }
    }

    pub fn plural(self) -> &'static str {
        match self {
            Kind::Pod => "pods",
            Kind::Secret => "secrets",
            Kind::Claim => "persistentvolumeclaims",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Pod => "Pod",
            Kind::Secret => "Secret",
            Kind::Claim => "PersistentVolumeClaim",
        }
    }
}

/// One change, as a watch sends it.
#[derive(Clone, Debug)]
pub struct Change {
    pub rv: u64,
    pub kind: Kind,
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub what: &'static str,
    pub object: Value,
}

/// An error answered as a `Status` object.
#[derive(Clone, Debug)]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub details: Option<Value>,
}

impl ApiError {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError { code, reason, message: message.into(), details: None }
    }

    pub fn not_found(kind: Kind, name: &str) -> Self {
        let mut e = ApiError::new(404, "NotFound", format!("{} \"{name}\" not found", kind.plural()));
        e.details = Some(json!({"name": name, "kind": kind.plural()}));
        e
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(400, "BadRequest", message)
    }

    /// A 422 for an object that fails validation: `causes` are `(field, message)`.
    pub fn invalid(kind: Kind, name: &str, causes: &[(String, String)]) -> Self {
        let text: Vec<String> = causes.iter().map(|(f, m)| format!("{f}: {m}")).collect();
        let mut e =
            ApiError::new(422, "Invalid", format!("{} \"{name}\" is invalid: {}", kind.name(), text.join(", ")));
        let causes: Vec<Value> =
            causes.iter().map(|(f, m)| json!({"reason": "FieldValueInvalid", "message": m, "field": f})).collect();
        e.details = Some(json!({"name": name, "kind": kind.name(), "causes": causes}));
        e
    }

    /// The `Status` object the real API server answers with.
    pub fn status(&self) -> Value {
        let mut s = json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": self.message, "reason": self.reason, "code": self.code,
        });
        if let Some(details) = &self.details {
            s["details"] = details.clone();
        }
        s
    }
}

/// Every object and every change.
#[derive(Default)]
pub struct Store {
    rv: u64,
    objects: BTreeMap<(Kind, String, String), Value>,
    changes: Vec<Change>,
    uids: u64,
}

impl Store {
    /// The newest resource version.
    pub fn rv(&self) -> u64 {
        self.rv
    }

    fn bump(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    /// Stores a new object (its `metadata.name` and `namespace` already checked), giving it a
    /// uid, resource version and creation time.
    pub fn create(&mut self, kind: Kind, ns: &str, mut object: Value) -> Result<Value, ApiError> {
        let name = object["metadata"]["name"].as_str().unwrap_or_default().to_owned();
        let key = (kind, ns.to_owned(), name.clone());
        if self.objects.contains_key(&key) {
            let mut e = ApiError::new(409, "AlreadyExists", format!("{} \"{name}\" already exists", kind.plural()));
            e.details = Some(json!({"name": name, "kind": kind.plural()}));
            return Err(e);
        }
        self.uids += 1;
        let rv = self.bump();
        let meta = &mut object["metadata"];
        meta["namespace"] = json!(ns);
        meta["uid"] = json!(uid(self.uids));
        meta["resourceVersion"] = json!(rv.to_string());
        meta["creationTimestamp"] = json!(now());
        if meta.get("labels").is_some_and(Value::is_null) {
            meta.as_object_mut().map(|m| m.remove("labels"));
        }
        self.objects.insert(key, object.clone());
        self.changes.push(Change { rv, kind, what: "ADDED", object: object.clone() });
        Ok(object)
    }

    pub fn get(&self, kind: Kind, ns: &str, name: &str) -> Option<&Value> {
        self.objects.get(&(kind, ns.to_owned(), name.to_owned()))
    }

    /// Changes the object `name` if it is still the one with `uid`; records a MODIFIED change
    /// when `change` altered it.
    pub fn update(&mut self, kind: Kind, ns: &str, name: &str, uid: &str, change: impl FnOnce(&mut Value)) -> bool {
        let key = (kind, ns.to_owned(), name.to_owned());
        let Some(object) = self.objects.get_mut(&key) else { return false };
        if object["metadata"]["uid"].as_str() != Some(uid) {
            return false;
        }
        let before = object.clone();
        change(object);
        if *object == before {
            return true;
        }
        self.rv += 1;
        let rv = self.rv;
        object["metadata"]["resourceVersion"] = json!(rv.to_string());
        let object = object.clone();
        self.changes.push(Change { rv, kind, what: "MODIFIED", object });
        true
    }

    /// Removes an object, recording a DELETED change.
    pub fn remove(&mut self, kind: Kind, ns: &str, name: &str) -> Option<Value> {
        let mut object = self.objects.remove(&(kind, ns.to_owned(), name.to_owned()))?;
        let rv = self.bump();
        object["metadata"]["resourceVersion"] = json!(rv.to_string());
        self.changes.push(Change { rv, kind, what: "DELETED", object: object.clone() });
        Some(object)
    }

    /// The objects of `kind` in `ns` (every namespace when `None`) that `selector` matches.
    pub fn list(&self, kind: Kind, ns: Option<&str>, selector: &Selector) -> Vec<Value> {
        self.objects
            .iter()
            .filter(|((k, n, _), o)| *k == kind && ns.is_none_or(|ns| ns == n) && selector.matches(o))
            .map(|(_, o)| o.clone())
            .collect()
    }

    /// The changes after resource version `rv` that a watch of `kind` in `ns` with `selector`
    /// sees.
    pub fn changes_after(&self, rv: u64, kind: Kind, ns: Option<&str>, selector: &Selector) -> Vec<Change> {
        let start = self.changes.partition_point(|c| c.rv <= rv);
        self.changes[start..]
            .iter()
            .filter(|c| {
                c.kind == kind
                    && ns.is_none_or(|ns| c.object["metadata"]["namespace"].as_str() == Some(ns))
                    && selector.matches(&c.object)
            })
            .cloned()
            .collect()
    }
}

/// A uid shaped as the real ones are (a version-4-looking UUID), unique in this cluster.
fn uid(n: u64) -> String {
    let r = fastrand::u64(..);
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        (r >> 32) as u32,
        (r >> 16) as u16,
        r as u16 & 0xfff,
        n >> 48 & 0xfff,
        n
    )
}

/// One requirement of a label or field selector.
#[derive(Clone, Debug, PartialEq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    Absent(String),
}

/// A label selector and a field selector, equality-based (`a=b`, `a==b`, `a!=b`, `a`, `!a`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selector {
    labels: Vec<Requirement>,
    fields: Vec<Requirement>,
}

impl Selector {
    pub fn parse(labels: Option<&str>, fields: Option<&str>) -> Result<Selector, ApiError> {
        Ok(Selector {
            labels: requirements(labels.unwrap_or_default())?,
            fields: requirements(fields.unwrap_or_default())?,
        })
    }

    pub fn matches(&self, object: &Value) -> bool {
        let labels = &object["metadata"]["labels"];
        let label = |k: &str| labels.get(k).and_then(Value::as_str);
        let field = |k: &str| {
            let mut v = object;
            for part in k.split('.') {
                v = v.get(part)?;
            }
            v.as_str()
        };
        self.labels.iter().all(|r| satisfied(r, label)) && self.fields.iter().all(|r| satisfied(r, field))
    }
}

fn satisfied<'a>(r: &Requirement, value: impl Fn(&str) -> Option<&'a str>) -> bool {
    match r {
        Requirement::Equals(k, v) => value(k) == Some(v.as_str()),
        Requirement::NotEquals(k, v) => value(k) != Some(v.as_str()),
        Requirement::Exists(k) => value(k).is_some(),
        Requirement::Absent(k) => value(k).is_none(),
    }
}

fn requirements(text: &str) -> Result<Vec<Requirement>, ApiError> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let key_ok = |k: &str| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
        let req = if let Some((k, v)) = part.split_once("!=") {
            Requirement::NotEquals(k.trim().into(), v.trim().into())
        } else if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
            Requirement::Equals(k.trim().into(), v.trim().into())
        } else if let Some(k) = part.strip_prefix('!') {
            Requirement::Absent(k.trim().into())
        } else {
            Requirement::Exists(part.into())
        };
        let (Requirement::Equals(k, _)
        | Requirement::NotEquals(k, _)
        | Requirement::Exists(k)
        | Requirement::Absent(k)) = &req;
        if !key_ok(k) {
            return Err(ApiError::bad_request(format!(
                "unable to parse requirement: {part:?} (this fake knows only =, ==, != and existence)"
            )));
        }
        out.push(req);
    }
    Ok(out)
}

/// The time now as the API server writes it: RFC 3339 in UTC, to the second.
pub fn now() -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default();
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest / 60 % 60, rest % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_match_labels_and_fields() {
        let pod = json!({"metadata": {"name": "p", "labels": {"a": "b", "c": "d"}}});
        let sel = |l: &str, f: &str| Selector::parse(Some(l), Some(f)).unwrap().matches(&pod);
        assert!(sel("a=b,c==d", ""));
        assert!(!sel("a=b,c=x", ""));
        assert!(sel("a,!x,c!=x", "metadata.name=p"));
        assert!(!sel("", "metadata.name=q"));
        assert!(Selector::parse(Some("a in (b)"), None).is_err());
    }

    #[test]
    fn the_time_is_rfc3339() {
        let t = now();
        assert_eq!(t.len(), 20, "{t}");
        assert!(t.starts_with("20") && t.ends_with('Z'), "{t}");
    }
}
