//! Secrets stay out of the log: an agent inherits its starter's environment, but only the
//! variables given with `--env` (and the paths bosun reads) are recorded; the values of the rest
//! live in a 0600 file beside the agent, read again at every restart and removed with its
//! workspace. Everything bosun writes under its state directory is its user's alone, and its
//! socket serves no other user.

mod support;

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use bosun_testkit::poll::wait_until;
use support::*;

const RUNBOOK: &str = r#"
command "hello" {
  run = "echo hello > hello.txt"
}
"#;

/// Every file and directory under `dir`, workspaces (the user's own work, as git and the agent
/// made it) left out.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let a_workspace = path.parent().is_some_and(|p| p.file_name().is_some_and(|n| n == "workspaces"));
        if a_workspace {
            continue;
        }
        out.push(path.clone());
        if entry.file_type().unwrap().is_dir() {
            walk(&path, out);
        }
    }
}

/// This process's mode mask, which the bosun it starts passes on to what it starts for its user.
fn user_mask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find_map(|l| l.strip_prefix("Umask:")).expect("a Umask line");
    u32::from_str_radix(line.trim(), 8).unwrap()
}

fn files_holding(paths: &[PathBuf], needle: &str) -> Vec<PathBuf> {
    paths
        .iter()
        .filter(|p| p.is_file())
        .filter(|p| std::fs::read(p).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes())))
        .cloned()
        .collect()
}

#[test]
fn a_planted_secret_reaches_the_agent_and_no_record_export_or_log() {
    let bosun = bosun();
    let repo = repo_with_runbook("h.hcl", RUNBOOK);
    let secret = format!("s3cret-{}-{}", std::process::id(), bosun.state_dir().display().to_string().len());
    let script = "printf '%s' \"$PLANTED_SECRET/$GIVEN\" >> got.txt; echo >> got.txt; sleep 600";
    let id = bosun.start_with(
        repo.path(),
        &["--env", "GIVEN=visible", "--on-dead", "resume", "--", "sh", "-c", script],
        |cmd| {
            cmd.env("PLANTED_SECRET", &secret);
        },
    );
    let ws = bosun.show(&id).workspace.expect("a workspace").path;
    let got = ws.join("got.txt");
    let first = wait_until(PATIENCE, || std::fs::read_to_string(&got).is_ok_and(|t| t.lines().count() == 1));
    assert!(first, "the agent ran:\n{}", bosun.log());
    assert_eq!(std::fs::read_to_string(&got).unwrap(), format!("{secret}/visible\n"), "it inherited the secret");

    let agent = bosun.agent(&id);
    assert_eq!(agent.env.get("GIVEN").map(String::as_str), Some("visible"), "--env is recorded");
    assert!(!agent.env.contains_key("PLANTED_SECRET"), "{:?}", agent.env);
    assert!(agent.inherits.iter().any(|k| k == "PLANTED_SECRET"), "its name is: {:?}", agent.inherits);
    let kept = agent.inherited_env().expect("its inherited environment is kept");
    assert_eq!(std::fs::metadata(&kept).unwrap().permissions().mode() & 0o777, 0o600);

    // A restart after its session died reads the values again.
    assert!(bosun.tmux(&["kill-server"]).status.success());
    let again = wait_until(PATIENCE, || std::fs::read_to_string(&got).is_ok_and(|t| t.lines().count() == 2));
    assert!(again, "restarted:\n{:#?}\n{}", bosun.show(&id), bosun.log());
    assert_eq!(std::fs::read_to_string(&got).unwrap(), format!("{secret}/visible\n").repeat(2));

    // A job run from a shell that holds the secret, exported.
    let v: serde_json::Value = serde_json::from_str(&{
        let out = bosun.command(repo.path(), &["run", "--json", "hello"]).env("PLANTED_SECRET", &secret).output();
        String::from_utf8(out.unwrap().stdout).unwrap()
    })
    .unwrap();
    let job = v["job"].as_str().expect("a job").to_owned();
    assert!(bosun.run(repo.path(), &["job", "wait", &job]).status.success(), "{}", bosun.log());
    let export = tempfile::tempdir().unwrap();
    bosun.ok(repo.path(), &["job", "export", &job, "--dir", export.path().to_str().unwrap(), "--force"]);

    let mut paths = Vec::new();
    walk(bosun.state_dir(), &mut paths);
    walk(export.path(), &mut paths);
    let found: Vec<PathBuf> = files_holding(&paths, &secret).into_iter().filter(|p| p != &kept).collect();
    assert_eq!(found, Vec::<PathBuf>::new(), "the secret was written outside its 0600 file");
    assert!(paths.iter().any(|p| p.ends_with("bosun.db")), "the database was looked at");

    // Gone with the agent's workspace.
    bosun.ok(repo.path(), &["kill", &id]);
    bosun.wait_state(&id, "dead(killed)");
    bosun.ok(repo.path(), &["workspace", "rm", "--force", agent.workspace.as_str()]);
    assert!(wait_until(PATIENCE, || !kept.exists()), "{} is still there", kept.display());
}

#[test]
fn everything_under_the_state_dir_is_the_users_alone() {
    let bosun = bosun();
    let repo = repo_with_runbook("h.hcl", RUNBOOK);
    let id = bosun.start(repo.path(), &["--", "sh", "-c", "echo made > made.txt; sleep 600"]);
    let ws = bosun.show(&id).workspace.expect("a workspace").path;
    assert!(wait_until(PATIENCE, || ws.join("made.txt").exists()), "{}", bosun.log());
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["run", "--json", "hello"])).unwrap();
    assert!(bosun.run(repo.path(), &["job", "wait", v["job"].as_str().unwrap()]).status.success());

    let mut paths = Vec::new();
    walk(bosun.state_dir(), &mut paths);
    let open: Vec<String> = paths
        .iter()
        .filter_map(|p| {
            let meta = std::fs::symlink_metadata(p).ok()?;
            // tmux makes its own socket, group-writable by design, in this 0700 directory.
            let tmux_socket = meta.file_type().is_socket() && p.ends_with("tmux.sock");
            (meta.mode() & 0o077 != 0 && !tmux_socket && !meta.file_type().is_symlink())
                .then(|| format!("{:o} {}", meta.mode() & 0o777, p.display()))
        })
        .collect();
    assert_eq!(open, Vec::<String>::new(), "files others could read, of {} looked at", paths.len());
    for name in ["bosun.db", "run/bosun.sock", "daemon.log"] {
        assert!(paths.iter().any(|p| p.ends_with(name)), "{name} was looked at");
    }
    // What the agent made is made as its user would have: with the user's mask.
    let made = std::fs::metadata(ws.join("made.txt")).unwrap().mode() & 0o777;
    assert_eq!(made, 0o666 & !user_mask(), "made.txt");
    let step_made = std::fs::metadata(repo.path().join("hello.txt")).expect("the step made hello.txt");
    assert_eq!(step_made.mode() & 0o777, 0o666 & !user_mask(), "hello.txt");
    // And so is what git checked out into its worktree.
    let checked_out = std::fs::metadata(ws.join("README.md")).unwrap().mode() & 0o777;
    assert_eq!(checked_out, 0o666 & !user_mask(), "README.md, checked out");
}

#[test]
fn the_socket_serves_no_other_user_even_opened_up_by_hand() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: only root can connect as another user here");
        return;
    }
    let bosun = bosun();
    bosun.list(); // starts the daemon
    let state = bosun.state_dir();
    std::fs::set_permissions(state, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(state.join("run"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(state.join("run/bosun.sock"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let nobody = bosun.command(Path::new("/"), &["ls", "--json"]).uid(65534).gid(65534).env("HOME", "/").output();
    let nobody = nobody.unwrap();
    assert!(!nobody.status.success(), "{}", String::from_utf8_lossy(&nobody.stdout));
    let refused = wait_until(PATIENCE, || bosun.log().contains("refused a connection: its peer is uid 65534"));
    assert!(refused, "{}\n{}", String::from_utf8_lossy(&nobody.stderr), bosun.log());
    bosun.list(); // its own user is served
}

/// opencode's config given in its caller's environment (`OPENCODE_CONFIG_CONTENT`, which may
/// hold a provider's key: never recorded) reaches it with bosun's plugin added, every field of
/// the caller's kept; one bosun cannot add to is refused at start, nothing made.
#[test]
fn an_inherited_opencode_config_content_is_kept_with_bosuns_plugin_added_and_a_bad_one_refused() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let content =
        r#"{"model":"a/b","provider":{"a":{"options":{"apiKey":"k3y-inherited"}}},"plugin":["/p/theirs.js"]}"#;
    let script = "printf '%s' \"$OPENCODE_CONFIG_CONTENT\" > content.json; sleep 600";
    let id = bosun.start_with(repo.path(), &["--driver", "opencode", "--", "sh", "-c", script], |cmd| {
        cmd.env("OPENCODE_CONFIG_CONTENT", content);
    });
    let got = bosun.show(&id).workspace.expect("a workspace").path.join("content.json");
    assert!(wait_until(PATIENCE, || std::fs::read(&got).is_ok_and(|t| !t.is_empty())), "{}", bosun.log());
    let seen: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&got).unwrap()).unwrap();
    let agent = bosun.agent(&id);
    let plugin = agent.dir.join("config/bosun-plugin.js").display().to_string();
    assert_eq!(seen["model"], "a/b", "{seen}");
    assert_eq!(seen["provider"]["a"]["options"]["apiKey"], "k3y-inherited", "{seen}");
    assert_eq!(seen["plugin"], serde_json::json!(["/p/theirs.js", plugin]), "{seen}");
    assert!(!agent.env.contains_key("OPENCODE_CONFIG_CONTENT"), "not recorded: {:?}", agent.env);
    bosun.ok(repo.path(), &["kill", &id]);

    for bad in ["{ // opencode reads comments, bosun does not\n}", r#"{"plugin":"one.js"}"#] {
        let before = bosun.list().agents.len();
        let out = bosun
            .command(repo.path(), &["agent", "start", "--driver", "opencode", "--", "sh", "-c", "sleep 600"])
            .env("OPENCODE_CONFIG_CONTENT", bad)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains("OPENCODE_CONFIG_CONTENT cannot be given"), "{stderr}");
        assert_eq!(bosun.list().agents.len(), before, "nothing made");
        let given = bosun.run(
            repo.path(),
            &[
                "agent",
                "start",
                "--env",
                &format!("OPENCODE_CONFIG_CONTENT={bad}"),
                "--driver",
                "opencode",
                "--",
                "true",
            ],
        );
        assert!(!given.status.success(), "nor given with --env");
    }
}
