//! The domains of `decide` call only downward: no file of `src/decide` reaches, through the
//! sibling modules it names (`super::x`), a file that reaches it back. An upward consequence is
//! a reaction to a recorded event (`decide/react.rs`), not a call.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The sibling modules each file of `src/decide` names, by file stem (`mod.rs` is the parent,
/// not a sibling, and is left out).
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/decide");
    let files: BTreeMap<String, String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap_or_else(|e| panic!("{}: {e}", dir.display())).path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| {
            let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_owned();
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (stem, text)
        })
        .filter(|(stem, _)| stem != "mod")
        .collect();
    let modules: BTreeSet<&str> = files.keys().map(String::as_str).collect();
    files
        .iter()
        .map(|(stem, text)| {
            let named = named_siblings(text).into_iter().filter(|m| modules.contains(m.as_str()) && m != stem);
            (stem.clone(), named.collect())
        })
        .collect()
}

/// Every `super::x` in `text`, and each `x` of a `super::{x, y::z}` group.
fn named_siblings(text: &str) -> BTreeSet<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut out = BTreeSet::new();
    for (at, _) in text.match_indices("super::") {
        let rest = &text[at + "super::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                out.extend(group.split(',').map(|part| ident(part.trim())).filter(|m| !m.is_empty()));
            }
            None => {
                out.insert(ident(rest));
            }
        }
    }
    out
}

/// A circle of `graph`, if it has one, as the files around it.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        at: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|p| p == at) {
            return Some(path[start..].iter().cloned().chain([at.to_owned()]).collect());
        }
        if done.contains(at) {
            return None;
        }
        path.push(at.to_owned());
        for next in graph.get(at).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(at.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|start| visit(start, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_file_of_decide_reaches_back_to_itself_through_the_files_it_names() {
    let graph = imports();
    assert!(graph.len() > 10, "the files of src/decide were not found: {graph:?}");
    assert!(graph["job"].contains("pool"), "a call down the work chain is read: {:?}", graph["job"]);
    if let Some(c) = circle(&graph) {
        panic!("src/decide has a circle: {}", c.join(" -> "));
    }
}

#[test]
fn the_reading_finds_a_circle_where_there_is_one() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("job", named_siblings("use super::{pool, session::died};")),
        ("pool", named_siblings("use super::ground::Decision;\nsuper::workspace::create_failed(x)")),
        ("workspace", named_siblings("super::job::workspace_ready(state, id, now, d);")),
        ("ground", BTreeSet::new()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    assert_eq!(circle(&graph), Some(vec!["job".into(), "pool".into(), "workspace".into(), "job".into()]));
}
