//! The harness's hands: a bosun with a repository, a runbook of one job whose claudeless agent
//! runs through a wrapper that logs every launch, and the daemon started (with a crash point),
//! killed and asked what it acknowledges.

use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use bosun_wire::{read_frame, write_frame, Envelope, Request, Response};

use super::facts::Facts;

use super::{CHAIN, GONE, TURN_MS};
use crate::bosun::Bosun;
use crate::repo::TempRepo;
use crate::tools;

pub(super) struct Harness {
    pub(super) bosun: Bosun,
    pub(super) repo: TempRepo,
    /// The scenario, the wrapper that logs every launch, and the log of launches.
    pub(super) files: tempfile::TempDir,
}

impl Harness {
    pub(super) fn new(bin: &Path) -> Result<Self, String> {
        let bosun = Bosun::new(bin);
        let repo = TempRepo::new();
        let files = tempfile::Builder::new().prefix("bosun-faults-").tempdir().map_err(|e| e.to_string())?;
        let scenario = files.path().join("scenario.toml");
        let wrapper = files.path().join("agent");
        let write = |p: &Path, text: &str| std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display()));
        write(
            &scenario,
            &format!(
                "[claude]\ntrusted = true\n\n[[responses]]\non = {{ contains = \"ping\" }}\nsay = \"pong\"\n\
                 delay_ms = {TURN_MS}\n\n[[responses]]\non = {{ contains = \"status\" }}\nsay = \"All tests pass.\"\n\
                 delay_ms = {TURN_MS}\n\n[default]\nsay = \"Understood.\"\n"
            ),
        )?;
        let spawns = files.path().join("spawns.log");
        write(
            &wrapper,
            &format!(
                "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
                spawns.display(),
                tools::claudeless().display()
            ),
        )?;
        let chmod = Command::new("chmod").arg("+x").arg(&wrapper).status().map_err(|e| e.to_string())?;
        if !chmod.success() {
            return Err("chmod failed".into());
        }
        let runbook = format!(
            r#"
command "work" {{
  args = "<n>"
  run  = {{ job = "work" }}
}}

job "work" {{
  vars   = ["n"]
  source = "worktree"
  step "agent" {{
    run     = {{ agent = "worker" }}
    on_done = {{ step = "mark" }}
  }}
  step "mark" {{
    run = "echo ${{var.n}} >> '{marks}'"
  }}
}}

agent "worker" {{
  run     = ["{wrapper}", "--scenario", "{scenario}"]
  driver  = "claude"
  prompt  = "task ${{var.n}}: ping"
  on_idle = [{chain}, "done"]
  grace   = "2s"
}}
"#,
            wrapper = wrapper.display(),
            scenario = scenario.display(),
            marks = files.path().join("marks").display(),
            chain = CHAIN.map(|(a, m)| format!("{{ action = \"{a}\", message = \"{m}\" }}")).join(", "),
        );
        let dir = repo.path().join(".bosun/runbooks");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        write(&dir.join("faults.hcl"), &runbook)?;
        Ok(Self { bosun, repo, files })
    }

    pub(super) fn submit(&self, n: usize) -> Result<String, String> {
        let out = self.bosun.ok(self.repo.path(), &["run", "--json", "work", &n.to_string()]);
        let v: serde_json::Value = serde_json::from_str(&out).map_err(|e| format!("bosun run: {e}: {out}"))?;
        v["job"].as_str().map(str::to_owned).ok_or_else(|| format!("bosun run gave no job: {out}"))
    }

    /// Starts the daemon (with a crash point); a start the crash point cuts short is fine.
    pub(super) fn start_daemon(&self, fault: Option<&str>) {
        let mut cmd = self.bosun.command(self.repo.path(), &["daemon", "start"]);
        if let Some(f) = fault {
            cmd.env("BOSUN_FAULT", f);
        }
        let _ = cmd.output();
    }

    /// SIGKILL; gone once its lock on `daemon.pid` is released (a zombie may linger unreaped).
    pub(super) fn kill_daemon(&self) {
        if let Some(pid) = self.bosun.daemon_pid() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            self.wait_daemon_gone(GONE);
        }
    }

    pub(super) fn wait_daemon_gone(&self, within: Duration) -> bool {
        crate::poll::wait_until(within, || self.bosun.daemon_pid().is_none())
    }

    /// What the daemon acknowledges now; None when it does not answer (it died meanwhile).
    /// Asked over its socket: a CLI command would start a daemon that is down.
    pub(super) fn facts(&self) -> Option<Facts> {
        let Response::Status(status) = self.ask(Request::Status)? else { return None };
        let Response::Jobs { jobs, .. } = self.ask(Request::JobList)? else { return None };
        let Response::List(list) = self.ask(Request::List)? else { return None };
        Some(Facts {
            events: status.events,
            jobs: jobs.into_iter().map(|j| (j.spec.id.to_string(), j.state.is_over())).collect(),
            agents: list.agents.into_iter().map(|a| a.id.to_string()).collect(),
        })
    }

    /// The jobs and agents as bosun shows them, and the daemon's log, for a failure message.
    pub(super) fn told(&self) -> String {
        let show = |args: &[&str]| {
            let out = self.bosun.command(self.repo.path(), args).output();
            out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default()
        };
        let mut text = format!("{}\n{}\n{}", show(&["job", "ls"]), show(&["ls"]), show(&["escalations"]));
        if let Some(Response::List(list)) = self.ask(Request::List) {
            for a in list.agents.iter().filter(|a| !a.state.is_dead()) {
                text.push_str(&show(&["show", a.id.as_str()]));
            }
        }
        format!("{text}\n{}", self.bosun.log())
    }

    pub(super) fn ask(&self, request: Request) -> Option<Response> {
        let mut s = UnixStream::connect(self.bosun.state_dir().join("run/bosun.sock")).ok()?;
        write_frame(&mut s, &Envelope { version: bosun_wire::VERSION.into(), request, id: None }).ok()?;
        read_frame::<_, Response>(&mut s).ok()
    }
}
