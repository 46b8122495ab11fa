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

/// The files in `dir`, by name, sorted: the marks a hostile agent's escapes would leave.
pub fn marks(dir: &Path) -> Vec<String> {
    let mut left: Vec<String> =
        std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    left.sort();
    left
}

/// The bytes of each of `paths` and of the files in each directory of them (none for what is
/// not there): what the user has that a hostile agent must leave as it was.
pub fn snapshot(paths: &[PathBuf]) -> std::collections::BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut seen = std::collections::BTreeMap::new();
    for path in paths {
        if path.is_dir() {
            for entry in std::fs::read_dir(path).unwrap().flatten() {
                seen.insert(entry.path(), std::fs::read(entry.path()).ok());
            }
        }
        seen.insert(path.clone(), std::fs::read(path).ok());
    }
    seen
}

/// Another agent beside a hostile one: a Claude agent (a shell, in bosun's session host) whose
/// every idle turn is nudged with a command that leaves a file of its own in `mark`, so that a
/// report of its idleness made by anyone else shows as a file too many.
pub struct Victim {
    pub id: String,
    pub pid: u32,
    pub workspace: bosun_core::Workspace,
}

/// Starts the victim in `repo`, its script kept in `dir`, its environment holding `secret` (and
/// its workspace a file of it).
pub fn start_victim(bosun: &Bosun, repo: &TempRepo, dir: &Path, mark: &Path, secret: &str) -> Victim {
    let script = dir.join("victim.sh");
    std::fs::write(&script, "#!/bin/sh\nexec sh -i\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let nudge = format!("nudge*5:mktemp {}/nudged.XXXXXX", mark.display());
    let secret_env = format!("VICTIM_SECRET={secret}");
    let args = [
        "--name",
        "victim",
        "--driver",
        "claude",
        "--session",
        "host",
        "--grace",
        "0s",
        "--on-idle",
        &nudge,
        "--env",
        &secret_env,
        "--",
        script.to_str().unwrap(),
    ];
    let id = bosun.start(repo.path(), &args);
    let pid = bosun.wait_up(&id).pid.expect("the victim's pid");
    let workspace = bosun.show(&id).workspace.expect("its workspace");
    std::fs::write(workspace.path.join("secret.txt"), secret).unwrap();
    Victim { id, pid, workspace }
}

impl Victim {
    /// Tells the victim's own idleness (its Stop hook, here) and waits for its nudge: asserts that
    /// it was nudged once, so no report made as it by anyone else was taken as its own (its nudge
    /// would have been typed first, and left a mark too). The mark is removed.
    pub fn nudged_only_by_its_own_report(&self, bosun: &Bosun, mark: &Path) {
        let stop = serde_json::json!({"hook_event_name": "Stop"}).to_string();
        assert!(bosun.hook(&self.id, "Stop", stop.as_bytes()).status.success());
        let nudged = bosun_testkit::poll::wait_for(PATIENCE, || Some(marks(mark)).filter(|m| !m.is_empty()));
        let nudged = nudged.expect("the victim's own report is nudged");
        assert_eq!(nudged.len(), 1, "a report made as the victim was taken as its: {nudged:?}");
        std::fs::remove_file(mark.join(&nudged[0])).unwrap();
    }
}

/// Whether process `pid` runs on this machine.
pub fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}
