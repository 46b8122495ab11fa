//! The stage of one crash of a sequence: a bosun with a repository, a claudeless agent (its
//! every launch logged by a wrapper) that did work in its workspace, a `gh` that logs what it
//! is asked, and the daemon started again with one crash point before the command runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::bosun::Bosun;
use crate::repo::{git_in, TempRepo};
use crate::tools;

pub(super) struct Stage {
    pub(super) bosun: Bosun,
    pub(super) repo: TempRepo,
    /// The scenario, the launch wrapper, its log, and the `gh` stub with its log.
    pub(super) files: tempfile::TempDir,
}

/// An agent that did work: its id, process, workspace, branch and the commit it made there.
pub(super) struct Worker {
    pub(super) id: String,
    pub(super) pid: u32,
    pub(super) path: PathBuf,
    pub(super) branch: String,
    pub(super) commit: String,
}

impl Stage {
    pub(super) fn new(bin: &Path) -> Result<Self, String> {
        let files = tempfile::Builder::new().prefix("bosun-steps-").tempdir().map_err(|e| e.to_string())?;
        let write = |name: &str, text: &str| {
            let path = files.path().join(name);
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            let chmod = Command::new("chmod").arg("+x").arg(&path).status().map_err(|e| e.to_string())?;
            chmod.success().then_some(()).ok_or_else(|| format!("chmod {}", path.display()))
        };
        write(
            "scenario.toml",
            "[claude]\ntrusted = true\n\n[[responses]]\non = { contains = \"ping\" }\nsay = \"pong\"\n\n\
             [default]\nsay = \"Understood.\"\n",
        )?;
        let dir = files.path().display().to_string();
        let claudeless = tools::claudeless().display().to_string();
        write("agent", &wrapper(&dir, &claudeless))?;
        // Logs its arguments; logged in; `pr create` answers a URL, `pr view` that pull
        // request once it was created.
        write(
            "gh",
            &format!(
                "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> '{dir}/gh.args'\necho --- >> '{dir}/gh.args'\n\
                 case \"$1 $2\" in\n  'auth status') ;;\n  'pr create') touch '{dir}/opened'; \
                 echo 'https://github.example/o/r/pull/7' ;;\n  'pr view') test -e '{dir}/opened' && \
                 echo '{{\"state\":\"OPEN\",\"url\":\"https://github.example/o/r/pull/7\"}}' ;;\n  *) exit 2 ;;\nesac\n"
            ),
        )?;
        let path = format!("{dir}:{}", std::env::var("PATH").unwrap_or_default());
        Ok(Self { bosun: Bosun::new(bin).with_env("PATH", path), repo: TempRepo::new(), files })
    }

    /// An agent (in a pool's workspace when `pool`) asked "ping", idle once it answered, with a
    /// commit of `work.txt` on its branch and, unless in a pool, `loose.txt` not committed.
    pub(super) fn worker(&self, pool: bool) -> Result<Worker, String> {
        let (wrapper, scenario) = (self.file("agent"), self.file("scenario.toml"));
        let mut args = vec!["--driver", "claude", "--prompt", "ping"];
        if pool {
            self.bosun.ok(self.repo.path(), &["pool", "init", "--size", "1"]);
            args.extend(["--workspace", "pool"]);
        }
        args.extend(["--", &wrapper, "--scenario", &scenario]);
        let id = self.bosun.start(self.repo.path(), &args);
        let agent = self.bosun.wait_state(&id, "idle");
        let pid = agent.pid.ok_or_else(|| format!("agent {id} has no pid"))?;
        let ws = self.bosun.show(&id).workspace.ok_or_else(|| format!("agent {id} has no workspace"))?;
        let branch = ws.branch().ok_or("its workspace has no branch")?.to_owned();
        std::fs::write(ws.path.join("work.txt"), "the agent's work\n").map_err(|e| e.to_string())?;
        git_in(&ws.path, &["add", "work.txt"]);
        git_in(&ws.path, &["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "add work.txt"]);
        if !pool {
            std::fs::write(ws.path.join("loose.txt"), "not committed\n").map_err(|e| e.to_string())?;
        }
        let commit = git_in(&ws.path, &["rev-parse", "HEAD"]);
        Ok(Worker { id, pid, path: ws.path, branch, commit })
    }

    /// The daemon stopped, and started again with crash point `point` (`BOSUN_FAULT`).
    pub(super) fn arm(&self, point: &str) {
        self.bosun.ok(self.repo.path(), &["daemon", "stop"]);
        let _ = self.bosun.command(self.repo.path(), &["daemon", "start"]).env("BOSUN_FAULT", point).output();
    }

    /// Whether a daemon crashed at its crash point (it says so in its log as it does).
    pub(super) fn crashed(&self) -> bool {
        let log = std::fs::read_to_string(self.bosun.state_dir().join("daemon.log")).unwrap_or_default();
        log.contains("BOSUN_FAULT: crashing on purpose")
    }

    /// Every launch of a claudeless agent, its arguments one line each.
    pub(super) fn launches(&self) -> Vec<String> {
        let log = std::fs::read_to_string(self.files.path().join("spawns.log")).unwrap_or_default();
        log.lines().map(str::to_owned).collect()
    }

    /// How many times `gh pr create` ran.
    pub(super) fn prs_created(&self) -> usize {
        let log = std::fs::read_to_string(self.files.path().join("gh.args")).unwrap_or_default();
        log.split("---\n").filter(|a| a.starts_with("pr\ncreate")).count()
    }

    /// Runs `bosun ARGS`: its stdout, or why it failed.
    pub(super) fn command(&self, args: &[&str]) -> Result<String, String> {
        let out = self.bosun.run(self.repo.path(), args);
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() {
            return Ok(said);
        }
        Err(format!("bosun {args:?} failed: {said}{}", String::from_utf8_lossy(&out.stderr)))
    }

    pub(super) fn file(&self, name: &str) -> String {
        self.files.path().join(name).display().to_string()
    }
}

/// A launcher of claudeless that logs each launch's arguments in `<dir>/spawns.log`. claudeless
/// 0.4 finds a conversation to resume only through its project's `sessions-index.json`, which
/// Claude does not need: a transcript bosun copied for a fork, found where Claude looks, is
/// entered there first.
fn wrapper(dir: &str, claudeless: &str) -> String {
    format!(
        r#"#!/bin/sh
printf '%s\n' "$*" >> '{dir}/spawns.log'
prev=; id=
for a in "$@"; do [ "$prev" = --resume ] && id=$a; prev=$a; done
case " $* " in *" --fork-session "*)
  p="$CLAUDE_CONFIG_DIR/projects/$(pwd | tr '/.' '--')"
  if [ -n "$id" ] && [ -e "$p/$id.jsonl" ] && [ ! -e "$p/sessions-index.json" ]; then
    printf '{{"version":1,"entries":[{{"sessionId":"%s","fullPath":"%s","fileMtime":0,"firstPrompt":"","messageCount":0,"created":"2026-01-01T00:00:00Z","modified":"2026-01-01T00:00:00Z","gitBranch":"","projectPath":"%s","isSidechain":false}}]}}' "$id" "$p/$id.jsonl" "$(pwd)" > "$p/sessions-index.json"
  fi;;
esac
exec '{claudeless}' "$@"
"#
    )
}

/// Whether process `pid` is gone (polled: a killed process takes a moment to go).
pub(super) fn gone(pid: u32) -> bool {
    crate::poll::wait_until(super::GONE, || !alive(pid))
}

/// Whether process `pid` runs now (a zombie does not: only its parent has yet to look at it).
pub(super) fn alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty() && !stat.split(") ").nth(1).is_some_and(|rest| rest.starts_with('Z'))
}

/// The directory process `pid` works in.
pub(super) fn cwd_of(pid: u32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/cwd")).ok()
}
