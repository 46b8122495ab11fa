//! `bosun run` and `bosun job`: a runbook command's job runs its shell steps in its own
//! worktree, follows their outcomes, and ends done or failed.

mod support;

use bosun_testkit::poll::wait_for;
use support::*;

const RUNBOOK: &str = r#"
command "ci" {
  args = "<name> [--fail]"
  run  = { job = "ci" }
}

job "ci" {
  vars     = ["name"]
  defaults = { fail = "false" }
  locals   = { top = "$(git rev-parse --show-toplevel)" }

  source {
    git    = true
    branch = "ci/${var.name}"
  }

  step "build" {
    run     = "printf '%s' ${var.name} > built.txt"
    on_done = { step = "test" }
  }

  step "test" {
    run     = "test -f built.txt && test ${var.fail} = false && test -d \"${local.top}\""
    on_done = "done"
    on_fail = { step = "report" }
  }

  step "report" {
    run     = "echo tests failed > report.txt"
    on_done = "fail"
  }
}
"#;

fn start(bosun: &Bosun, repo: &TempRepo, args: &[&str]) -> (String, std::path::PathBuf) {
    // `--json` goes to bosun; the command's own args follow its name.
    let all: Vec<&str> = ["run", "--json", "ci"].into_iter().chain(args.iter().copied()).collect();
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &all)).unwrap();
    (v["job"].as_str().unwrap().to_owned(), v["workspace"].as_str().unwrap().into())
}

#[test]
fn a_job_runs_its_steps_in_its_worktree_and_ends_done() {
    let bosun = bosun();
    let repo = repo_with_runbook("ci.hcl", RUNBOOK);
    let (job, ws) = start(&bosun, &repo, &["o'brien"]);
    let out = bosun.run(repo.path(), &["job", "wait", &job]);
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), bosun.log());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("{job} done"));
    assert_eq!(std::fs::read_to_string(ws.join("built.txt")).unwrap(), "o'brien", "the value stayed data");
    assert!(repo.git(&["branch", "--list"]).contains("ci/o'brien"), "{}", repo.git(&["branch", "--list"]));
    let shown = bosun.ok(repo.path(), &["job", "show", &job]);
    assert!(shown.contains("visits     build ×1") && shown.contains("visits     report ×0"), "{shown}");
    let logs = bosun.ok(repo.path(), &["job", "logs", &job]);
    assert!(logs.contains("== build-1 ==") && logs.contains("== test-1 =="), "{logs}");
}

#[test]
fn a_failing_step_goes_to_its_on_fail_step_and_the_job_fails() {
    let bosun = bosun();
    let repo = repo_with_runbook("ci.hcl", RUNBOOK);
    let (job, ws) = start(&bosun, &repo, &["billing", "--fail"]);
    let out = bosun.run(repo.path(), &["job", "wait", &job]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("failed"), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(ws.join("report.txt").exists(), "the on_fail step ran");
    let logs = bosun.ok(repo.path(), &["job", "logs", &job, "--follow"]);
    assert!(logs.contains("== report-1 =="), "{logs}");
    let list: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["job", "ls", "--json"])).unwrap();
    assert_eq!(list[0]["state"]["state"], "failed");
}

#[test]
fn bad_arguments_are_refused_with_the_usage_and_nothing_starts() {
    let bosun = bosun();
    let repo = repo_with_runbook("ci.hcl", RUNBOOK);
    let err = bosun.fails(repo.path(), &["run", "ci"]);
    assert!(err.contains("missing <name>") && err.contains("usage: bosun run ci <name> [--fail]"), "{err}");
    let err = bosun.fails(repo.path(), &["run", "ci", "x", "--nope"]);
    assert!(err.contains("unknown option --nope"), "{err}");
    let err = bosun.fails(repo.path(), &["run", "deploy"]);
    assert!(err.contains("no command \"deploy\""), "{err}");
    let list: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["job", "ls", "--json"])).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 0);
}

#[test]
fn an_agent_step_runs_claudeless_in_the_jobs_worktree_and_its_done_moves_the_job_on() {
    let bosun = bosun();
    let runbook = format!(
        r#"
command "build" {{
  args = "<name> <instructions>"
  run  = {{ job = "build" }}
}}

job "build" {{
  vars = ["name", "instructions"]
  source {{
    git    = true
    branch = "feature/${{var.name}}"
  }}
  step "plan" {{
    run     = {{ agent = "planner" }}
    on_done = {{ step = "check" }}
  }}
  step "check" {{
    run     = "test -f NOTES.md"
    on_done = "done"
  }}
}}

agent "planner" {{
  run     = ["{cl}", "--scenario", "{sc}"]
  prompt  = "write the plan: ${{var.instructions}}"
  on_idle = {{ action = "done" }}
}}
"#,
        cl = claudeless(),
        sc = scenario("writer")
    );
    let repo = repo_with_runbook("build.hcl", &runbook);
    let v: serde_json::Value =
        serde_json::from_str(&bosun.ok(repo.path(), &["run", "--json", "build", "auth", "Add login"])).unwrap();
    let job = v["job"].as_str().unwrap().to_owned();
    let ws = std::path::PathBuf::from(v["workspace"].as_str().unwrap());
    let out = bosun.run(repo.path(), &["job", "wait", &job]);
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), bosun.log());
    assert!(ws.join("NOTES.md").exists(), "the agent wrote its plan in the job's worktree");
    let agents = bosun.list().agents;
    assert_eq!(agents.len(), 1);
    assert_eq!(agents[0].state.label(), "dead(completed)", "its `done` ended it");
    assert_eq!(bosun.show(agents[0].id.as_str()).workspace.unwrap().path, ws, "in the job's worktree");
}

#[test]
fn the_build_example_plans_implements_checks_and_is_done() {
    let bosun = bosun();
    let repo = repo_with_example("build.hcl", 2);
    let v: serde_json::Value =
        serde_json::from_str(&bosun.ok(repo.path(), &["run", "--json", "build", "auth", "Add login"])).unwrap();
    assert_eq!(v["branch"], "feature/auth");
    let job = v["job"].as_str().unwrap().to_owned();
    let out = bosun.run(repo.path(), &["job", "wait", &job]);
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), bosun.log());
    let shown = bosun.ok(repo.path(), &["job", "show", &job]);
    assert!(shown.contains("visits     plan ×1") && shown.contains("visits     implement ×1"), "{shown}");
    assert!(shown.contains("visits     check ×1"), "{shown}");
    // What its agents used, together, and its cost (claudeless names a dated model, priced).
    let agents = bosun.list().agents;
    let input: u64 = agents.iter().flat_map(|a| a.tokens.values()).map(|t| t.input).sum();
    assert!(input > 0, "its agents' answers recorded their usage");
    let line = shown.lines().find(|l| l.starts_with("tokens     ")).unwrap_or_else(|| panic!("{shown}"));
    let written = input.to_string();
    let with_commas = written.as_bytes().rchunks(3).rev().map(|c| std::str::from_utf8(c).unwrap()).collect::<Vec<_>>();
    assert!(line.contains(&format!("{} in · ", with_commas.join(","))) && line.contains("($"), "{line}");
    let implementer = bosun.list().agents.into_iter().find(|a| a.name.as_str() == "implementer").expect("implementer");
    let nudges = bosun
        .show(implementer.id.as_str())
        .messages
        .iter()
        .filter(|m| m.kind == bosun_core::MessageKind::Nudge)
        .count();
    assert_eq!(nudges, 2, "nudged twice, then done, as its policy says");
}

const RELEASE: &str = r#"
command "release" {
  args = "<name>"
  run  = { job = "release" }
}

job "release" {
  vars   = ["name"]
  source = "worktree"
  step "verify" {
    run     = { job = "verify" }
    on_done = { step = "tag" }
  }
  step "tag" {
    run = "cat verified.txt > tagged.txt"
  }
}

job "verify" {
  vars = ["name"]
  step "mark" {
    run = "printf '%s' ${args.name} > verified.txt"
  }
}
"#;

#[test]
fn a_job_step_runs_the_other_job_in_the_same_worktree_then_goes_on() {
    let bosun = bosun();
    let repo = repo_with_runbook("release.hcl", RELEASE);
    let v: serde_json::Value =
        serde_json::from_str(&bosun.ok(repo.path(), &["run", "--json", "release", "v1; touch pwned"])).unwrap();
    let (id, ws) = (v["job"].as_str().unwrap(), std::path::PathBuf::from(v["workspace"].as_str().unwrap()));
    bosun.ok(repo.path(), &["job", "wait", id]);
    assert_eq!(std::fs::read_to_string(ws.join("verified.txt")).unwrap(), "v1; touch pwned", "the child ran here");
    assert_eq!(std::fs::read_to_string(ws.join("tagged.txt")).unwrap(), "v1; touch pwned", "then the parent's tag");
    assert!(!ws.join("pwned").exists());
    let jobs: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["job", "ls", "--json"])).unwrap();
    let child = jobs.as_array().unwrap().iter().find(|j| j["spec"]["name"] == "verify").expect("the child is listed");
    assert_eq!(child["spec"]["parent"][0], id, "{child}");
    assert_eq!(child["state"]["state"], "done");
}

const FLAKY: &str = r#"
command "check" {
  run = { job = "check" }
}

job "check" {
  source = "worktree"
  notify = { on_fail = "check failed in ${workspace.path}" }
  step "build" {
    run     = "echo built >> build.log"
    on_done = { step = "check" }
  }
  step "check" {
    run = "test -f fixed.txt"
  }
}
"#;

#[test]
fn a_failed_job_is_resumed_where_it_stopped_after_the_fix_and_ends_done() {
    let bosun = bosun();
    let repo = repo_with_runbook("check.hcl", FLAKY);
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["run", "--json", "check"])).unwrap();
    let (job, ws) = (v["job"].as_str().unwrap(), std::path::PathBuf::from(v["workspace"].as_str().unwrap()));
    assert!(!bosun.run(repo.path(), &["job", "wait", job]).status.success(), "it fails: nothing is fixed");
    let told = format!("check failed in {}", ws.display());
    let log = wait_for(PATIENCE, || bosun.log().contains(&told).then_some(()));
    assert!(log.is_some(), "a person is told, here through the log: {}", bosun.log());
    let err = bosun.fails(repo.path(), &["job", "resume", "jnosuch"]);
    assert!(err.contains("jnosuch"), "{err}");

    std::fs::write(ws.join("fixed.txt"), "").unwrap();
    let out = bosun.ok(repo.path(), &["job", "resume", job]);
    assert!(out.contains("running (step check)"), "{out}");
    bosun.ok(repo.path(), &["job", "wait", job]);
    assert_eq!(std::fs::read_to_string(ws.join("build.log")).unwrap(), "built\n", "build did not run again");
    let err = bosun.fails(repo.path(), &["job", "resume", job]);
    assert!(err.contains("is done: only a failed or cancelled job is resumed"), "{err}");
}

#[test]
fn a_command_may_run_a_shell_command_or_an_agent_directly() {
    let bosun = bosun();
    let runbook = format!(
        r#"
command "hello" {{
  args = "<name>"
  run  = "printf '%s' ${{args.name}} > hello.txt"
}}

command "ask" {{
  run = {{ agent = "helper" }}
}}

agent "helper" {{
  run     = ["{}", "--scenario", "{}"]
  prompt  = "hello"
  on_idle = {{ action = "done" }}
}}
"#,
        claudeless(),
        scenario("chat")
    );
    let repo = repo_with_runbook("direct.hcl", &runbook);
    let v: serde_json::Value =
        serde_json::from_str(&bosun.ok(repo.path(), &["run", "--json", "hello", "x; touch pwned"])).unwrap();
    bosun.ok(repo.path(), &["job", "wait", v["job"].as_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(repo.path().join("hello.txt")).unwrap(), "x; touch pwned", "run where started");
    assert!(!repo.path().join("pwned").exists());

    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["run", "--json", "ask"])).unwrap();
    let ws = v["workspace"].as_str().expect("an agent gets a worktree of its own");
    bosun.ok(repo.path(), &["job", "wait", v["job"].as_str().unwrap()]);
    let agents = bosun.list().agents;
    assert_eq!(agents.len(), 1);
    assert_eq!(bosun.show(agents[0].id.as_str()).agent.cwd, std::path::PathBuf::from(ws));
}

#[test]
fn a_local_made_of_a_later_named_local_is_evaluated_after_it() {
    let repo = repo_with_runbook(
        "order.hcl",
        r#"
command "order" {
  run = { job = "order" }
}

job "order" {
  locals = { a = "${local.b}-x", b = "$(echo hi)" }
  step "check" {
    run = "test \"${local.a}\" = hi-x"
  }
}
"#,
    );
    let bosun = bosun();
    let job = bosun.run_job(repo.path(), &["order"]);
    let waited = bosun.run(repo.path(), &["job", "wait", &job]);
    let said = String::from_utf8_lossy(&waited.stdout);
    assert!(
        waited.status.success() && said.contains("done"),
        "{said} {}",
        bosun.ok(repo.path(), &["job", "show", &job])
    );
}

#[test]
fn job_logs_follow_prints_a_step_as_it_writes_and_ends_with_the_job() {
    let bosun = bosun();
    let gate = tempfile::tempdir().unwrap();
    let go = gate.path().join("go");
    let runbook = r#"
command "slow" {
  args = "<go>"
  run  = { job = "slow" }
}

job "slow" {
  vars = ["go"]
  source { git = true }

  step "talk" {
    run     = "echo first-half; while [ ! -e \"${var.go}\" ]; do sleep 0.05; done; echo second-half; while [ ! -e \"${var.go}.2\" ]; do sleep 0.05; done"
    on_done = "done"
  }
}
"#;
    let repo = repo_with_runbook("slow.hcl", runbook);
    let v: serde_json::Value =
        serde_json::from_str(&bosun.ok(repo.path(), &["run", "--json", "slow", go.to_str().unwrap()])).unwrap();
    let job = v["job"].as_str().unwrap().to_owned();
    let mut follow = bosun
        .command(repo.path(), &["job", "logs", &job, "--follow"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, lines) = std::sync::mpsc::channel();
    let stdout = follow.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)).map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    let mut saw = |text: &str| {
        wait_for(PATIENCE, || {
            seen.extend(lines.try_iter());
            seen.iter().any(|l| l == text).then_some(())
        })
        .unwrap_or_else(|| panic!("{text} never printed: {seen:?}"));
    };
    saw("first-half");
    // Only its output grows now, while the step goes on: no event says so.
    std::fs::write(&go, "").unwrap();
    saw("second-half");
    std::fs::write(gate.path().join("go.2"), "").unwrap();
    let status = wait_for(PATIENCE, || follow.try_wait().unwrap()).expect("it ends with the job");
    assert!(status.success());
}
