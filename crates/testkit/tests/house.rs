//! The house as ARCHITECTURE.md keeps it, read from the crates' code (`bosun_testkit::house`):
//! - no module imports one that imports it back, directly or through others;
//! - no file over 600 lines of code and no function over 100 lines.
//!
//! What breaks these today is listed in `tests/house/*.txt`, one line each, and may only go:
//! a new circle's arrow, a new long file or function, or a listed one grown, fails; so does a
//! listed one that is gone or shrank, until its line is taken out or lowered (run with
//! `BOSUN_HOUSE_WRITE=1` to write the lists as they stand, and look at the diff;
//! `BOSUN_HOUSE_WHY=1` prints what each arrow of a circle takes).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bosun_testkit::house::{imports::Imports, size, source::Source, sources};

const FILE_MOST: usize = 600;
const FUNCTION_MOST: usize = 100;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn read() -> Vec<Source> {
    sources(&root()).unwrap()
}

/// Compares `now` (name → figure) with the list in `tests/house/<name>.txt`: nothing new, nothing
/// grown, nothing listed that is gone or smaller.
fn hold(list: &str, now: BTreeMap<String, usize>, what: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/house").join(format!("{list}.txt"));
    if std::env::var_os("BOSUN_HOUSE_WRITE").is_some() {
        let text: String = now.iter().map(|(name, n)| format!("{n} {name}\n")).collect();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let listed: BTreeMap<String, usize> =
        text.lines().filter_map(|l| l.split_once(' ')).map(|(n, name)| (name.to_owned(), n.parse().unwrap())).collect();
    let mut wrong = Vec::new();
    for (name, n) in &now {
        match listed.get(name) {
            None => wrong.push(format!("new: {what} {name} ({n})")),
            Some(was) if n > was => wrong.push(format!("grown: {what} {name} ({was} -> {n})")),
            _ => {}
        }
    }
    for (name, was) in &listed {
        match now.get(name) {
            None => wrong.push(format!("gone, take its line out of {}: {name}", path.display())),
            Some(n) if n < was => {
                wrong.push(format!("shrank, lower its figure in {}: {name} ({was} -> {n})", path.display()))
            }
            _ => {}
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let sources = read();
    let imports = Imports::of(&sources);
    let mut now = BTreeMap::new();
    for circle in imports.circles() {
        for from in &circle {
            for to in imports.arrows[from].iter().filter(|to| circle.contains(to)) {
                now.insert(format!("{} -> {}", from.display(), to.display()), 1);
                if std::env::var_os("BOSUN_HOUSE_WHY").is_some() {
                    let names = &imports.names[&(from.clone(), to.clone())];
                    eprintln!("{} -> {}: {names:?}", from.display(), to.display());
                }
            }
        }
    }
    hold("circles", now, "arrow in a circle:");
}

#[test]
fn no_file_grows_past_600_lines() {
    let now =
        read().iter().filter(|s| s.lines() > FILE_MOST).map(|s| (s.path.display().to_string(), s.lines())).collect();
    hold("files", now, "file over 600 lines:");
}

#[test]
fn no_function_grows_past_100_lines() {
    let now = read()
        .iter()
        .flat_map(size::functions)
        .filter(|f| f.lines > FUNCTION_MOST)
        .map(|f| (f.name, f.lines))
        .collect();
    hold("functions", now, "function over 100 lines:");
}
