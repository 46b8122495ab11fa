//! Where an agent really runs: for every workspace kind (worktree, folder, a pool's slot bound
//! at once or after waiting in line, a container's volume), in tmux and in bosun's own host, here
//! and in the sandbox, the agent's process works in its workspace — its real directory (`pwd -P`
//! and `/proc/PID/cwd`), the files it writes and `BOSUN_WORKSPACE` all say so — and the user's
//! checkout, where the daemon was started with work not committed, is untouched. One line per
//! case.

mod support;

use std::path::{Path, PathBuf};

use bosun_testkit::docker::DockerEngine;
use bosun_testkit::poll::wait_for;
use support::*;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Worktree,
    Folder,
    /// A pool with a slot available: bound in the start's own decision.
    PoolAtOnce,
    /// A pool whose only slot is taken: bound once the other task gives it back.
    PoolWaited,
    /// A clone in a container engine's volume (`--runtime docker` only).
    Volume,
    /// A runbook job's agent, its job's workspace a pool's slot available at once.
    JobOnPool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Session {
    Tmux,
    Host,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Runtime {
    Local,
    Sandbox,
    Docker,
}

macro_rules! cases {
    ($($name:ident: $kind:ident, $session:ident, $runtime:ident;)*) => {$(
        #[test]
        fn $name() {
            runs_in_its_workspace(Kind::$kind, Session::$session, Runtime::$runtime);
        }
    )*};
}

cases! {
    a_worktree_in_tmux: Worktree, Tmux, Local;
    a_worktree_in_the_host: Worktree, Host, Local;
    a_worktree_in_the_sandbox_in_tmux: Worktree, Tmux, Sandbox;
    a_worktree_in_the_sandbox_in_the_host: Worktree, Host, Sandbox;
    a_folder_in_tmux: Folder, Tmux, Local;
    a_folder_in_the_host: Folder, Host, Local;
    a_folder_in_the_sandbox: Folder, Tmux, Sandbox;
    a_pool_slot_bound_at_once_in_tmux: PoolAtOnce, Tmux, Local;
    a_pool_slot_bound_at_once_in_the_host: PoolAtOnce, Host, Local;
    a_pool_slot_bound_at_once_in_the_sandbox: PoolAtOnce, Tmux, Sandbox;
    a_pool_slot_bound_at_once_in_the_sandbox_in_the_host: PoolAtOnce, Host, Sandbox;
    a_pool_slot_bound_after_waiting_in_tmux: PoolWaited, Tmux, Local;
    a_pool_slot_bound_after_waiting_in_the_host: PoolWaited, Host, Local;
    a_pool_slot_bound_after_waiting_in_the_sandbox: PoolWaited, Tmux, Sandbox;
    a_jobs_agent_in_a_pool_slot_bound_at_once: JobOnPool, Tmux, Local;
    a_worktree_in_a_container: Worktree, Host, Docker;
    a_volume_in_a_container: Volume, Host, Docker;
}

/// Writes where it is (`pwd -P`) and `BOSUN_WORKSPACE`, writes a file, commits everything it
/// can, says so and waits.
const AGENT: &str = "pwd -P > cwd.txt; printf '%s\\n' \"$BOSUN_WORKSPACE\" > env.txt; echo agent > AGENT.txt; \
    git add -A >/dev/null 2>&1 && \
    git -c user.name=agent -c user.email=agent@example.com commit -qm 'agent commit' >/dev/null 2>&1; \
    echo written; exec sleep 600";

/// What the user has in their checkout: one commit on main, and a change not committed.
const USER_WIP: &str = "user wip\n";

fn runs_in_its_workspace(kind: Kind, session: Session, runtime: Runtime) {
    if runtime == Runtime::Sandbox {
        bosun_testkit::tools::bwrap();
    }
    let engine = (runtime == Runtime::Docker).then(DockerEngine::start);
    let bosun = match engine {
        Some(e) => bosun().with_env("DOCKER_HOST", e.host()),
        None => bosun(),
    };
    let repo = TempRepo::new();
    if kind == Kind::JobOnPool {
        write_job(&repo);
    }
    let main_before = repo.head();
    std::fs::write(repo.path().join("README.md"), USER_WIP).unwrap();
    let image = engine.map(|e| {
        let git = bosun_testkit::tools::which("git");
        let bin = PathBuf::from(env!("CARGO_BIN_EXE_bosun"));
        e.image("bosun-agent-git:test", &[&bin, Path::new("/bin/bash"), &git])
    });

    // The daemon starts here, in the user's checkout: the directory a session would fall back to.
    let mut args: Vec<&str> = vec!["agent", "start", "--json"];
    args.extend(match kind {
        Kind::Worktree => ["--workspace", "worktree"],
        Kind::Folder => ["--workspace", "folder"],
        Kind::PoolAtOnce | Kind::PoolWaited | Kind::JobOnPool => ["--workspace", "pool"],
        Kind::Volume => ["--workspace", "volume"],
    });
    args.extend(match session {
        Session::Tmux => ["--session", "tmux"],
        Session::Host => ["--session", "host"],
    });
    match runtime {
        Runtime::Local => {}
        Runtime::Sandbox => args.extend(["--runtime", "sandbox"]),
        Runtime::Docker => args.extend(["--runtime", "docker", "--image", image.as_deref().unwrap()]),
    }
    args.extend(["--", "sh", "-c", AGENT]);

    let holder = match kind {
        Kind::PoolAtOnce | Kind::PoolWaited | Kind::JobOnPool => {
            bosun.ok(repo.path(), &["pool", "init", "--size", "1"]);
            wait_for(PATIENCE, || pool_available(&bosun, &repo).then_some(())).expect("the pool's slot is made");
            (kind == Kind::PoolWaited).then(|| {
                let holder = bosun.start(repo.path(), &["--workspace", "pool", "--", "sleep", "600"]);
                bosun.wait_state(&holder, "running");
                holder
            })
        }
        _ => None,
    };
    let id = if kind == Kind::JobOnPool {
        job_agent(&bosun, &repo)
    } else {
        let started: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &args)).expect("start --json");
        match kind {
            Kind::PoolAtOnce => assert_eq!(started["waiting"], false, "bound in the start itself: {started}"),
            Kind::PoolWaited => assert_eq!(started["waiting"], true, "waits in line: {started}"),
            _ => {}
        }
        started["agent"].as_str().unwrap().to_owned()
    };
    if let Some(holder) = holder {
        bosun.ok(repo.path(), &["kill", &holder]);
    }

    let ws = wait_for(PATIENCE, || bosun.show(&id).workspace.filter(|w| !w.path.as_os_str().is_empty()))
        .unwrap_or_else(|| panic!("its workspace is never placed\n{}", bosun.log()));
    let (expected, cwd, env) = if kind == Kind::Volume {
        bosun.wait_screen(&id, "written");
        // A look at the volume brings its commit back to its branch here.
        bosun.ok(repo.path(), &["diff", &id, "--stat"]);
        let branch = ws.kind.branch().unwrap();
        let show = |file: &str| repo.git(&["show", &format!("{branch}:{file}")]);
        assert_eq!(show("AGENT.txt"), "agent", "its file is in its volume's clone");
        (ws.path.clone(), show("cwd.txt"), show("env.txt"))
    } else {
        let read = |file: &str| std::fs::read_to_string(ws.path.join(file)).ok().filter(|t| t.ends_with('\n'));
        let written = wait_for(PATIENCE, || {
            let stray = repo.path().join("cwd.txt");
            assert!(!stray.exists(), "the agent ran in the user's checkout: it wrote {}", stray.display());
            // AGENT.txt is written last: all three are there once it is.
            read("AGENT.txt")?;
            Some((read("cwd.txt")?, read("env.txt")?))
        });
        let (cwd, env) =
            written.unwrap_or_else(|| panic!("the agent wrote nothing in {}\n{}", ws.path.display(), bosun.log()));
        assert_eq!(read("AGENT.txt").as_deref(), Some("agent\n"), "its file is in its workspace");
        let expected = std::fs::canonicalize(&ws.path).unwrap();
        // The kernel's word for where its process is (bubblewrap's, for a sandboxed one; a
        // container's pid is of its own namespace).
        if runtime != Runtime::Docker {
            let pid = wait_for(PATIENCE, || bosun.agent(&id).pid).expect("its pid");
            let real = std::fs::read_link(format!("/proc/{pid}/cwd")).expect("its process's cwd");
            assert_eq!(real, expected, "its process works in its workspace");
        }
        (expected, cwd, env)
    };
    assert_eq!(cwd.trim_end(), expected.display().to_string(), "its real directory (pwd -P) is its workspace");
    assert_eq!(env.trim_end(), ws.path.display().to_string(), "BOSUN_WORKSPACE names its workspace");

    // The user's checkout: their change still not committed, main where it was, nothing added.
    let status = repo.git(&["status", "--porcelain=v1", "--untracked-files=all"]);
    assert_eq!(status, " M README.md", "the user's checkout holds only their own change");
    assert_eq!(std::fs::read_to_string(repo.path().join("README.md")).unwrap(), USER_WIP);
    assert_eq!(repo.git(&["rev-parse", "main"]), main_before, "main is where it was: no commit on it");
}

/// Commits a runbook whose job `where` works in a pool's workspace, its one step an agent
/// running `AGENT`.
fn write_job(repo: &TempRepo) {
    let runbook = format!(
        r#"
command "where" {{
  run = {{ job = "where" }}
}}

job "where" {{
  source = {{ pool = true }}
  step "work" {{
    run = {{ agent = "worker" }}
  }}
}}

agent "worker" {{
  run = ["sh", "-c", {script}]
}}
"#,
        script = serde_json::to_string(AGENT).unwrap()
    );
    write_runbook(repo, "where.hcl", &runbook);
    // The runbook is the user's own file: committed, so their checkout holds only their change.
    repo.git(&["add", ".bosun"]);
    repo.git(&["commit", "-qm", "add the runbook"]);
}

/// Runs job `where`; its agent's id.
fn job_agent(bosun: &Bosun, repo: &TempRepo) -> String {
    bosun.run_job(repo.path(), &["where"]);
    wait_for(PATIENCE, || bosun.list().agents.first().map(|a| a.id.to_string()))
        .unwrap_or_else(|| panic!("the job's agent never started\n{}", bosun.log()))
}

fn pool_available(bosun: &Bosun, repo: &TempRepo) -> bool {
    let out = bosun.ok(repo.path(), &["pool", "ls", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("pool ls --json");
    v["pools"][0]["slots"].as_array().is_some_and(|s| s.len() == 1 && s[0]["state"]["state"] == "available")
}
