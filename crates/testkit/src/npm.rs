//! An installed npm package's tree, as Node.js finds it: the package and, transitively, each
//! package its `dependencies` and `optionalDependencies` name that is installed, found as
//! `require` finds it (in `node_modules` beside the package that needs it, then in each
//! `node_modules` above). A test image carries a Node.js client so (`docker::DockerEngine::
//! image_with_trees`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The directories of package `name` installed in `modules` (a `node_modules` folder) and of the
/// packages it needs, sorted, none inside another (a package in another's `node_modules` comes
/// with it). Panics when `name` is not installed there or a package
/// it needs (not an optional one) is missing.
pub fn package_tree(modules: &Path, name: &str) -> Vec<PathBuf> {
    let top = modules.join(name);
    assert!(top.join("package.json").is_file(), "{name} is not installed in {}", modules.display());
    let mut found = BTreeSet::new();
    let mut next = vec![top];
    while let Some(dir) = next.pop() {
        if !found.insert(dir.clone()) {
            continue;
        }
        let manifest = dir.join("package.json");
        let text =
            std::fs::read_to_string(&manifest).unwrap_or_else(|e| panic!("cannot read {}: {e}", manifest.display()));
        let package: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is no JSON: {e}", manifest.display()));
        for (field, needed) in [("dependencies", true), ("optionalDependencies", false)] {
            for dependency in package[field].as_object().into_iter().flat_map(|deps| deps.keys()) {
                match resolve(modules, &dir, dependency) {
                    Some(found) => next.push(found),
                    None if needed => panic!("{dependency}, which {} needs, is not installed", dir.display()),
                    None => {}
                }
            }
        }
    }
    let all: Vec<PathBuf> = found.into_iter().collect();
    all.iter().filter(|d| !all.iter().any(|outer| outer != *d && d.starts_with(outer))).cloned().collect()
}

/// Where `require` finds package `name` from the package in `from`: in the `node_modules` in it,
/// then in each one above it, up to `modules`.
fn resolve(modules: &Path, from: &Path, name: &str) -> Option<PathBuf> {
    let mut dir = Some(from);
    while let Some(d) = dir.filter(|d| d.starts_with(modules)) {
        let candidate = if d == modules { d.join(name) } else { d.join("node_modules").join(name) };
        if candidate.join("package.json").is_file() {
            return Some(candidate);
        }
        dir = d.parent();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package(dir: &Path, json: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("package.json"), json).unwrap();
    }

    #[test]
    fn a_package_brings_what_it_needs_nested_or_hoisted_and_what_it_may_use_when_installed() {
        let tmp = tempfile::tempdir().unwrap();
        let m = tmp.path().join("node_modules");
        package(
            &m.join("@s/app"),
            r#"{"dependencies": {"left": "1", "both": "1"}, "optionalDependencies": {"gone": "1", "opt": "1"}}"#,
        );
        package(&m.join("@s/app/node_modules/left"), r#"{"dependencies": {"both": "2"}}"#);
        package(&m.join("@s/app/node_modules/both"), "{}");
        package(&m.join("both"), r#"{"dependencies": {"deep": "1"}}"#);
        package(&m.join("deep"), "{}");
        package(&m.join("opt"), "{}");
        package(&m.join("unrelated"), "{}");
        let tree = package_tree(&m, "@s/app");
        let names: Vec<String> = tree.iter().map(|p| p.strip_prefix(&m).unwrap().display().to_string()).collect();
        assert_eq!(names, ["@s/app", "opt"], "its own node_modules come with it");
    }
}
