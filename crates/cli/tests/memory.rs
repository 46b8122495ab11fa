//! Run memory: `bosun job export` writes a job's checkpoint and its events, and `bosun job
//! resume` takes a job whose agent died mid-step up again with that same agent and its
//! conversation.

mod support;

use std::path::{Path, PathBuf};

use bosun_testkit::poll::{wait_for, wait_until};
use support::*;

/// A job of one agent step; the agent is done once its notes exist, and a restarted agent
/// left alone does not count as idle for an hour, so only a finished turn checks for them.
fn runbook() -> String {
    format!(
        r#"
command "notes" {{
  args = "<name>"
  run  = {{ job = "notes" }}
}}

job "notes" {{
  vars = ["name"]
  source {{
    git    = true
    branch = "notes/${{var.name}}"
  }}
  step "write" {{
    run = {{ agent = "writer" }}
  }}
}}

agent "writer" {{
  run     = ["{cl}", "--scenario", "{sc}"]
  prompt  = "hello"
  grace   = "1h"
  on_idle = {{ action = "gate", run = "test -f NOTES.md" }}
}}
"#,
        cl = claudeless(),
        sc = scenario("writer")
    )
}

/// Starts a `notes` job; returns its id, its workspace's path and its agent's id.
fn start(bosun: &Bosun, repo: &Path, name: &str) -> (String, PathBuf, String) {
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo, &["run", "--json", "notes", name])).unwrap();
    let (job, ws) = (v["job"].as_str().unwrap().to_owned(), PathBuf::from(v["workspace"].as_str().unwrap()));
    let agent =
        wait_for(PATIENCE, || agents_in(bosun, &ws).into_iter().next()).expect("the job's step starts its agent");
    (job, ws, agent)
}

/// The agents that ran in the workspace at `ws`.
fn agents_in(bosun: &Bosun, ws: &Path) -> Vec<String> {
    let id = ws.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
    bosun.list().agents.into_iter().filter(|a| a.workspace.as_str() == id).map(|a| a.id.to_string()).collect()
}

/// The escalations not yet resolved about `agent`.
fn open_escalations(bosun: &Bosun, agent: &str) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(bosun.state_dir(), &["escalations", "--json"])).unwrap();
    v.as_array().unwrap().iter().filter(|e| e["agent"] == agent).cloned().collect()
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).unwrap().lines().count()
}

#[test]
fn a_job_whose_agent_was_killed_is_exported_then_resumed_mid_step_by_the_same_agent_and_ends_done() {
    let bosun = bosun();
    let repo = repo_with_runbook("notes.hcl", &runbook());
    let (other_job, other_ws, other_agent) = start(&bosun, repo.path(), "other");
    let (job, ws, agent) = start(&bosun, repo.path(), "mine");

    // Its first turn ends; its gate finds no notes, and a person is asked.
    let asked = wait_until(PATIENCE, || !open_escalations(&bosun, &agent).is_empty());
    assert!(asked, "the gate failed and escalated: {}", bosun.log());
    let log = wait_for(PATIENCE, || bosun.agent(&agent).log).expect("the session log is known from the hooks");
    let before = lines(&log);
    let first = bosun.agent(&agent);
    let bosun_core::driver::Driver::Claude { session_id } = first.driver.clone() else { panic!("{:?}", first.driver) };
    let pid = first.pid.expect("its pid");
    assert!(std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap().success());
    assert!(!bosun.run(repo.path(), &["job", "wait", &job]).status.success(), "the job fails with its agent");

    // The export: where the job stands, and its events alone, in order.
    let dir = tempfile::tempdir().unwrap();
    let out = bosun.ok(repo.path(), &["job", "export", &job, "--dir", dir.path().to_str().unwrap(), "--json"]);
    let told: serde_json::Value = serde_json::from_str(&out).unwrap();
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("state.json")).unwrap()).unwrap();
    assert_eq!(state["version"], 1);
    assert_eq!(state["seq"], told["seq"]);
    assert_eq!((state["job"]["spec"]["id"].as_str(), state["job"]["step"].as_str()), (Some(&*job), Some("write")));
    assert_eq!((state["job"]["attempt"].as_u64(), state["job"]["state"]["state"].as_str()), (Some(1), Some("failed")));
    assert_eq!(state["workspace"]["path"].as_str(), ws.to_str());
    let agents = state["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 1, "{agents:?}");
    assert_eq!(
        (agents[0]["id"].as_str(), agents[0]["driver"]["session_id"].as_str()),
        (Some(&*agent), Some(&*session_id))
    );
    assert_eq!(state["resume"]["from"], "mid_step", "{}", state["resume"]);
    assert_eq!(state["resume"]["agent"], agent.as_str());
    let text = std::fs::read_to_string(dir.path().join("events.jsonl")).unwrap();
    let events: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(events.len() as u64, told["events"].as_u64().unwrap());
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "in order: {seqs:?}");
    assert!(seqs.last().is_some_and(|last| *last <= told["seq"].as_u64().unwrap()));
    let kinds: Vec<&str> = events.iter().map(|e| e["event"]["type"].as_str().unwrap()).collect();
    for kind in ["job_created", "workspace_creating", "step_entered", "agent_created", "agent_died", "job_finished"] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    let other_ws_id = other_ws.file_name().unwrap().to_str().unwrap();
    for other in [other_job.as_str(), other_agent.as_str(), other_ws_id] {
        assert!(!text.contains(other), "the other job's {other} is not in the export");
    }

    // Resumed: the same agent, its conversation going on, and then its work done (its session
    // ends as soon as its gate passes, so the answer is read from its session log).
    let out = bosun.ok(repo.path(), &["job", "resume", &job]);
    assert!(out.contains(&format!("resumed mid-step: agent {agent} restarted with its conversation")), "{out}");
    let resumed = wait_for(PATIENCE, || Some(bosun.agent(&agent)).filter(|a| a.restarts == 1 && a.state.is_up()))
        .unwrap_or_else(|| panic!("not restarted: {:#?}\n{}", bosun.show(&agent), bosun.log()));
    assert_eq!(resumed.log.as_ref(), Some(&log), "the same conversation");
    assert!(open_escalations(&bosun, &agent).is_empty(), "the resume settled what a person was asked");
    bosun.ok(repo.path(), &["send", &agent, "write the plan"]);
    let out = bosun.run(repo.path(), &["job", "wait", &job]);
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), bosun.log());
    assert!(ws.join("NOTES.md").exists(), "the resumed agent did the work in the job's worktree");
    assert!(lines(&log) > before, "the same session log grew");
    let conversation = std::fs::read_to_string(&log).unwrap();
    assert!(conversation.contains("write the plan") && conversation.contains("I wrote NOTES.md"), "answered in it");
    assert_eq!(agents_in(&bosun, &ws), std::slice::from_ref(&agent), "no second agent");
    let ended = bosun.agent(&agent);
    assert_eq!((ended.restarts, ended.state.label()), (1, "dead(completed)".to_owned()), "its gate passed: done");
    let shown = bosun.ok(repo.path(), &["job", "show", &job]);
    assert!(shown.contains(&format!("resumed    mid-step: agent {agent} restarted with its conversation")), "{shown}");
}

const DONE: &str = r#"
command "quick" {
  run = { job = "quick" }
}

job "quick" {
  step "only" {
    run = "true"
  }
}
"#;

#[test]
fn an_export_is_refused_for_an_unknown_job_over_an_earlier_export_and_where_it_cannot_write() {
    let bosun = bosun();
    let repo = repo_with_runbook("quick.hcl", DONE);
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["run", "--json", "quick"])).unwrap();
    let job = v["job"].as_str().unwrap().to_owned();
    bosun.ok(repo.path(), &["job", "wait", &job]);
    let tmp = tempfile::tempdir().unwrap();

    let dir = tmp.path().join("unknown");
    let err = bosun.fails(repo.path(), &["job", "export", "jnosuch", "--dir", dir.to_str().unwrap()]);
    assert!(err.contains("no job matches \"jnosuch\""), "{err}");
    assert!(!dir.exists(), "nothing written");

    let dir = tmp.path().join("export");
    let out = bosun.ok(repo.path(), &["job", "export", &job, "--dir", dir.to_str().unwrap()]);
    assert!(out.contains(&format!("wrote state.json and events.jsonl to {}", dir.display())), "{out}");
    std::fs::write(dir.join("state.json"), "earlier").unwrap();
    let err = bosun.fails(repo.path(), &["job", "export", &job, "--dir", dir.to_str().unwrap()]);
    assert!(err.contains("already holds an export (state.json): pass --force"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.join("state.json")).unwrap(), "earlier", "nothing changed");
    bosun.ok(repo.path(), &["job", "export", &job, "--dir", dir.to_str().unwrap(), "--force"]);
    assert!(std::fs::read_to_string(dir.join("state.json")).unwrap().contains(&job), "--force overwrote it");

    // A directory under a file cannot be made, whoever runs the test.
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let dir = file.join("export");
    let err = bosun.fails(repo.path(), &["job", "export", &job, "--dir", dir.to_str().unwrap()]);
    assert!(err.contains(&format!("cannot write {}", dir.display())), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "", "nothing written");
}
