//! Helpers shared by the CLI's black-box tests.

#![allow(dead_code, unused_imports)]

use std::path::{Path, PathBuf};

pub use bosun_testkit::bosun::{Bosun, PATIENCE};
pub use bosun_testkit::repo::TempRepo;

pub fn bosun() -> Bosun {
    Bosun::new(env!("CARGO_BIN_EXE_bosun"))
}

/// A new repository whose `.bosun/runbooks/<file>` holds `text`.
pub fn repo_with_runbook(file: &str, text: &str) -> TempRepo {
    let repo = TempRepo::new();
    write_runbook(&repo, file, text);
    repo
}

/// Writes `.bosun/runbooks/<file>` of `repo`.
pub fn write_runbook(repo: &TempRepo, file: &str, text: &str) {
    let dir = repo.path().join(".bosun/runbooks");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(file), text).unwrap();
}

/// A new repository whose runbooks are `examples/runbooks/<file>`, with claudeless (playing the
/// chat scenario) standing in for each `"claude"` agent; `agents` says how many there are.
pub fn repo_with_example(file: &str, agents: usize) -> TempRepo {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/runbooks").join(file);
    let stand_in = format!("[\"{}\", \"--scenario\", \"{}\"]", claudeless(), scenario("chat"));
    let text = std::fs::read_to_string(example).unwrap().replace("\"claude\"", &stand_in);
    assert_eq!(text.matches("--scenario").count(), agents, "every agent stands in");
    repo_with_runbook(file, &text)
}

/// The path of `examples/scenarios/<name>.toml`.
pub fn scenario(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios").join(format!("{name}.toml"));
    p.canonicalize().expect("scenario exists").display().to_string()
}

/// `bosun agent start` arguments: `rest`, then claudeless with the scenario at `sc`.
pub fn claude_args<'a>(cl: &'a str, sc: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = rest.to_vec();
    v.extend(["--", cl, "--scenario", sc]);
    v
}

pub fn claudeless() -> String {
    bosun_testkit::tools::claudeless().display().to_string()
}

/// Every file named `name` under `dir`.
pub fn find_files(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() && !path.is_symlink() {
            found.extend(find_files(&path, name));
        } else if path.file_name().is_some_and(|n| n == name) {
            found.push(path);
        }
    }
    found
}
