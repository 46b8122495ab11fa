//! The manifests `docs/kubernetes.md` tells users to apply: each YAML block parses, each object
//! is one Kubernetes knows, and the daemon's role grants exactly what bosun asks of the API
//! server, in one namespace.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::rbac::v1::Role;

fn objects() -> Vec<serde_json::Value> {
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/kubernetes.md")).unwrap();
    let mut out = Vec::new();
    for block in page.split("```yaml\n").skip(1) {
        let yaml = block.split("```").next().unwrap();
        for doc in yaml.split("\n---\n") {
            let value: serde_json::Value = serde_saphyr::from_str(doc).unwrap_or_else(|e| panic!("{e}\n{doc}"));
            out.push(value);
        }
    }
    out
}

#[test]
fn the_manifests_parse_and_grant_the_daemon_what_bosun_calls_and_no_more() {
    let objects = objects();
    let kinds: Vec<&str> = objects.iter().map(|o| o["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["Namespace", "ServiceAccount", "Role", "RoleBinding", "ServiceAccount"]);
    let role = objects.iter().find(|o| o["kind"] == "Role").unwrap();
    let role: Role = serde_json::from_value(role.clone()).expect("a Role as Kubernetes has it");
    let mut granted: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for rule in role.rules.unwrap() {
        assert_eq!(rule.api_groups.unwrap(), [""], "core objects only");
        for resource in rule.resources.unwrap() {
            granted.entry(resource).or_default().extend(rule.verbs.iter().cloned());
        }
    }
    // What `bosun_k8s::Cluster` calls: create/get/list/watch/delete of pods, create/delete of
    // secrets, create/list/delete of claims; and a port-forward for a daemon outside.
    let want = |verbs: &[&str]| verbs.iter().map(|v| v.to_string()).collect::<BTreeSet<_>>();
    let expected = BTreeMap::from([
        ("pods".to_owned(), want(&["create", "get", "list", "watch", "delete"])),
        ("pods/portforward".to_owned(), want(&["create"])),
        ("secrets".to_owned(), want(&["create", "delete"])),
        ("persistentvolumeclaims".to_owned(), want(&["create", "list", "delete"])),
    ]);
    assert_eq!(granted, expected);
    let namespaces: BTreeSet<&str> = objects.iter().filter_map(|o| o["metadata"]["namespace"].as_str()).collect();
    assert_eq!(namespaces, BTreeSet::from(["bosun-agents"]), "everything in the agents' namespace");
    let agent = objects.iter().rfind(|o| o["kind"] == "ServiceAccount").unwrap();
    assert_eq!(agent["automountServiceAccountToken"], false, "the agents' pods may call nothing");
}
