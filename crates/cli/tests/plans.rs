//! Plans through the CLI: a graph of jobs, each on its own branch from the branch of the job it
//! uses; a job that uses two starts from both merged, and a merge that conflicts fails it with
//! nothing made; a failure stops what depends on it, and the plan is resumed from there.

mod support;

use bosun_testkit::poll::wait_for;
use support::*;

fn plan(bosun: &Bosun, repo: &TempRepo) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["plan", "ls", "--json"])).unwrap();
    v[0].clone()
}

fn git(repo: &TempRepo, args: &[&str]) -> String {
    let out = std::process::Command::new("git").args(args).current_dir(repo.path()).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_plan_example_chains_three_branches_with_claudeless_agents() {
    let bosun = bosun();
    let repo = repo_with_example("plan.hcl", 1);
    git(&repo, &["branch", "feature/api"]); // taken: the api job gets a suffix

    bosun.ok(repo.path(), &["plan", "run", "auth"]);
    let done = wait_for(PATIENCE, || (plan(&bosun, &repo)["state"]["state"] == "done").then_some(()));
    assert!(done.is_some(), "{}\n{}", plan(&bosun, &repo), bosun.log());
    let p = plan(&bosun, &repo);
    let targets: Vec<&str> = p["jobs"].as_array().unwrap().iter().map(|j| j["target"].as_str().unwrap()).collect();
    assert_eq!(targets, ["feature/schema", "feature/api-2", "feature/ui"]);
    assert_eq!(p["jobs"][1]["source"], "feature/schema");
    assert_eq!(p["jobs"][2]["source"], "feature/api-2");
    let log = git(&repo, &["log", "--format=%s", "feature/ui"]);
    let subjects: Vec<&str> = log.lines().take(3).collect();
    assert_eq!(subjects, ["Add the login form", "Add the login endpoint", "Add the users table"], "chained");
    let shown = bosun.ok(repo.path(), &["plan", "ls"]);
    assert!(shown.contains("feature/api-2") && shown.contains("done"), "{shown}");
}

#[test]
fn a_failed_plan_stops_there_and_resumes_from_the_job_that_failed() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let gate = repo.path().join("stop-here");
    std::fs::write(&gate, "").unwrap();
    let runbook = format!(
        r#"
plan "three" {{
  job "a" {{ run = {{ job = "mark" }} }}
  job "b" {{
    run   = {{ job = "mark" }}
    vars  = {{ gate = "{}" }}
    using = ["a"]
  }}
  job "c" {{
    run   = {{ job = "mark" }}
    using = ["b"]
  }}
}}

job "mark" {{
  defaults = {{ gate = "no-such-gate" }}
  source   = "worktree"
  step "mark" {{
    run = "test ! -e ${{var.gate}} && echo ${{source.branch}} >> marks.txt && git add -A && git commit -qm mark"
  }}
}}
"#,
        gate.display()
    );
    write_runbook(&repo, "three.hcl", &runbook);
    let err = bosun.fails(repo.path(), &["plan", "run", "nope"]);
    assert!(err.contains("no plan \"nope\"") && err.contains("three"), "{err}");

    let v: serde_json::Value =
        serde_json::from_str(&bosun.ok(repo.path(), &["plan", "run", "three", "--json"])).unwrap();
    let id = v[0]["id"].as_str().unwrap().to_owned();
    let failed = wait_for(PATIENCE, || (plan(&bosun, &repo)["state"]["state"] == "failed").then_some(()));
    assert!(failed.is_some(), "{}\n{}", plan(&bosun, &repo), bosun.log());
    let p = plan(&bosun, &repo);
    let logs = bosun.run(repo.path(), &["job", "logs", p["jobs"][0]["job_id"].as_str().unwrap()]);
    assert_eq!(p["state"]["job"], "b", "{}", String::from_utf8_lossy(&logs.stdout));
    assert_eq!(p["jobs"][2]["job_id"], serde_json::Value::Null, "c never started");
    let err = bosun.fails(repo.path(), &["plan", "resume", "pnosuch"]);
    assert!(err.contains("no plan pnosuch"), "{err}");

    std::fs::remove_file(&gate).unwrap();
    bosun.ok(repo.path(), &["plan", "resume", &id]);
    let done = wait_for(PATIENCE, || (plan(&bosun, &repo)["state"]["state"] == "done").then_some(()));
    assert!(done.is_some(), "{}\n{}", plan(&bosun, &repo), bosun.log());
    let marks = git(&repo, &["show", "feature/c:marks.txt"]);
    assert_eq!(marks, "feature/a\nfeature/b\nfeature/c\n", "each job built on the one before");
    let err = bosun.fails(repo.path(), &["plan", "resume", &id]);
    assert!(err.contains("has not failed"), "{err}");
}

#[test]
fn a_diamond_plan_runs_its_middle_jobs_from_one_branch_and_the_last_from_both_merged() {
    let bosun = bosun();
    let repo = repo_with_example("diamond.hcl", 1);
    bosun.ok(repo.path(), &["plan", "run", "release"]);
    let done = wait_for(PATIENCE, || (plan(&bosun, &repo)["state"]["state"] == "done").then_some(()));
    assert!(done.is_some(), "{}\n{}", plan(&bosun, &repo), bosun.log());
    let p = plan(&bosun, &repo);
    assert_eq!(
        (p["jobs"][1]["source"].as_str(), p["jobs"][2]["source"].as_str()),
        (Some("feature/schema"), Some("feature/schema"))
    );
    assert_eq!(p["jobs"][3]["source"], "feature/api");
    assert_eq!(p["jobs"][3]["merged"], serde_json::json!(["feature/ui"]));
    let files = git(&repo, &["ls-tree", "--name-only", "feature/docs"]);
    for f in ["SCHEMA.md", "API.md", "UI.md", "DOCS.md"] {
        assert!(files.lines().any(|l| l == f), "{f} on feature/docs: {files}");
    }
    let merges = git(&repo, &["log", "--merges", "--format=%s", "feature/docs"]);
    assert_eq!(merges.trim(), "Merge feature/ui into feature/api");

    // Its summary: per job, and the branch its work ends on; also at the end of its log.
    let id = p["id"].as_str().unwrap();
    let shown = bosun.ok(repo.path(), &["plan", "show", id]);
    assert!(shown.contains("): done\nfinal branch: feature/docs"), "{shown}");
    assert!(
        shown.contains("job docs (runbook job part): done\n  uses     api, ui\n  from     feature/api + feature/ui"),
        "{shown}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&bosun.ok(repo.path(), &["plan", "show", id, "--json"])).unwrap();
    assert_eq!(summary["final_branch"], "feature/docs");
    for j in summary["jobs"].as_array().unwrap() {
        assert_eq!(j["agents"].as_array().map(Vec::len), Some(1), "{j}");
        assert!(j["turns"].as_u64() >= Some(1), "each agent's turn is counted: {j}");
    }
    let log = bosun.state_dir().join("plans").join(format!("{id}.log"));
    let logged = wait_for(PATIENCE, || std::fs::read_to_string(&log).ok().filter(|t| t.contains("final branch")));
    assert_eq!(logged.as_deref().map(str::trim_end), Some(shown.trim_end()), "the log ends with the same summary");
    let err = bosun.fails(repo.path(), &["plan", "show", "pnosuch"]);
    assert!(err.contains("no plan pnosuch"), "{err}");
}

#[test]
fn a_job_whose_branches_conflict_fails_with_the_files_listed_and_nothing_made() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let runbook = r#"
plan "clash" {
  job "left"  {
    run  = { job = "write" }
    vars = { text = "left" }
  }
  job "right" {
    run  = { job = "write" }
    vars = { text = "right" }
  }
  job "both"  {
    run   = { job = "write" }
    vars  = { text = "both" }
    using = ["left", "right"]
  }
}

job "write" {
  vars   = ["text"]
  source = "worktree"
  step "write" {
    run = "echo ${var.text} > same.txt && git add -A && git commit -qm ${var.text}"
  }
}
"#;
    write_runbook(&repo, "clash.hcl", runbook);
    bosun.ok(repo.path(), &["plan", "run", "clash"]);
    let failed = wait_for(PATIENCE, || (plan(&bosun, &repo)["state"]["state"] == "failed").then_some(()));
    assert!(failed.is_some(), "{}\n{}", plan(&bosun, &repo), bosun.log());
    let p = plan(&bosun, &repo);
    assert_eq!(p["state"]["job"], "both", "{p}");
    let reason = p["state"]["reason"].as_str().unwrap();
    assert!(reason.contains("conflicts in same.txt"), "{reason}");
    assert_eq!((p["jobs"][0]["done"].as_bool(), p["jobs"][1]["done"].as_bool()), (Some(true), Some(true)));
    let branches = git(&repo, &["branch", "--list", "feature/both*"]);
    assert!(branches.trim().is_empty(), "no branch made for it: {branches}");
    let asked = bosun.ok(repo.path(), &["escalations"]);
    assert!(
        asked.contains("both") && asked.contains("conflicts in same.txt") && asked.contains("bosun plan resume"),
        "{asked}"
    );
    let jobs: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["job", "ls", "--json"])).unwrap();
    assert_eq!(jobs.as_array().map(Vec::len), Some(2), "no job made for it: {jobs}");
}

#[test]
fn preflight_refusals_say_each_problem_on_a_line_and_make_nothing() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let runbook = r#"
command "go" {
  run = { job = "work" }
}

plan "two" {
  job "one" { run = { job = "work" } }
  job "two" {
    run   = { job = "work" }
    using = ["one"]
  }
}

job "work" {
  source = "worktree"
  step "write" {
    run = { agent = "writer" }
  }
}

agent "writer" {
  run         = ["no-such-agent-program", "--flag"]
  prompt_file = "prompts/missing.md"
}
"#;
    write_runbook(&repo, "pre.hcl", runbook);
    let nothing_made = |bosun: &Bosun| {
        assert_eq!(git(&repo, &["for-each-ref", "refs/heads"]).lines().count(), 1, "no branch made");
        assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 1, "no worktree made");
        let jobs: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["job", "ls", "--json"])).unwrap();
        assert_eq!(jobs, serde_json::json!([]), "no job recorded");
        let plans: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["plan", "ls", "--json"])).unwrap();
        assert_eq!(plans, serde_json::json!([]), "no plan recorded");
    };
    let err = bosun.fails(repo.path(), &["run", "go"]);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("agent \"writer\"")).collect();
    assert_eq!(lines.len(), 2, "one line a problem: {err}");
    assert!(err.contains("prompt_file prompts/missing.md cannot be read") && err.contains("create it"), "{err}");
    assert!(err.contains("runs `no-such-agent-program`, which is not on PATH: install it"), "{err}");
    nothing_made(&bosun);

    // Fixed, but HEAD detached: a plan that starts from the current branch has none.
    std::fs::create_dir_all(repo.path().join("prompts")).unwrap();
    std::fs::write(repo.path().join("prompts/missing.md"), "work").unwrap();
    let fixed = runbook.replace("[\"no-such-agent-program\", \"--flag\"]", "[\"true\"]");
    // A plan job's engine runs its agents: it must be on PATH too.
    let fixed = fixed.replacen("using = [\"one\"]", "using = [\"one\"]\n    engine = \"no-such-engine\"", 1);
    write_runbook(&repo, "pre.hcl", &fixed);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "runbook"]);
    git(&repo, &["checkout", "-q", "--detach"]);
    let err = bosun.fails(repo.path(), &["plan", "run", "two"]);
    assert!(err.contains("HEAD is detached") && err.contains("give the plan a `base`"), "{err}");
    nothing_made(&bosun);

    // Outside a repository: said so, and what to do.
    let plain = tempfile::tempdir().unwrap();
    let dir = plain.path().join(".bosun/runbooks");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("pre.hcl"), &fixed).unwrap();
    let err = bosun.fails(plain.path(), &["plan", "run", "two"]);
    assert!(err.contains("is not inside a git repository") && err.contains("git init"), "{err}");
    assert!(err.contains("runs `no-such-engine`, which is not on PATH"), "{err}");
    nothing_made(&bosun);
}

#[test]
fn three_variants_run_at_once_the_one_that_passes_its_gate_is_kept_and_the_losers_dropped() {
    let bosun = bosun();
    let repo = TempRepo::new();
    // Each variant's claudeless agent takes its turn, then a step commits what it tried; only
    // v2's leaves the file the gate looks for.
    let runbook = format!(
        r#"
plan "tries" {{
  job "fix" {{
    run       = {{ job = "attempt" }}
    variants  = 3
    keep_best = {{ gate = "test -e passes" }}
  }}
  job "after" {{
    run   = {{ job = "attempt" }}
    using = ["fix"]
  }}
}}

job "attempt" {{
  source = "worktree"
  step "think" {{
    run     = {{ agent = "trier" }}
    on_done = {{ step = "try" }}
  }}
  step "try" {{
    run = "case ${{source.branch}} in *-v2) touch passes ;; esac; echo ${{source.branch}} >> tried.txt && git add -A && git commit -qm tried"
  }}
}}

agent "trier" {{
  run     = ["{}", "--scenario", "{}"]
  prompt  = "ping"
  on_idle = {{ action = "done" }}
}}
"#,
        claudeless(),
        scenario("chat")
    );
    write_runbook(&repo, "tries.hcl", &runbook);
    let checked = bosun.ok(repo.path(), &["runbook", "check"]);
    assert!(checked.contains("1 plan(s)"), "{checked}");
    let v: serde_json::Value =
        serde_json::from_str(&bosun.ok(repo.path(), &["plan", "run", "tries", "--drop-losers", "--json"])).unwrap();
    let id = v[0]["id"].as_str().unwrap().to_owned();
    let done = wait_for(PATIENCE, || (plan(&bosun, &repo)["state"]["state"] == "done").then_some(()));
    assert!(done.is_some(), "{}\n{}", plan(&bosun, &repo), bosun.log());
    let p = plan(&bosun, &repo);
    assert_eq!(p["jobs"][0]["target"], "feature/fix-v2", "the variant whose gate passed");
    assert_eq!(p["jobs"][1]["source"], "feature/fix-v2", "what uses it starts there");
    assert_eq!(git(&repo, &["show", "feature/after:tried.txt"]), "feature/fix-v2\nfeature/after\n");
    let shown = bosun.ok(repo.path(), &["plan", "show", &id]);
    assert!(shown.contains("v2       feature/fix-v2: done, kept"), "{shown}");
    assert!(shown.contains("v1: gate failed") && shown.contains("kept v2"), "{shown}");
    let gone = wait_for(PATIENCE, || {
        let left = git(&repo, &["for-each-ref", "--format=%(refname:short)", "refs/heads/feature/fix-*"]);
        (left.trim() == "feature/fix-v2").then_some(())
    });
    let workspaces = bosun.ok(repo.path(), &["workspace", "ls"]);
    assert!(gone.is_some(), "the losers' branches go: {}\n{workspaces}\n{}", git(&repo, &["branch"]), bosun.log());
    assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 3, "main, the winner's and after's worktrees");
}

#[test]
fn a_runbook_with_variants_must_say_which_it_keeps() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let runbook = r#"
plan "bad" {
  job "a" {
    run      = { job = "w" }
    variants = 2
  }
  job "b" {
    run       = { job = "w" }
    keep_best = "person"
  }
  job "c" {
    run       = { job = "w" }
    variants  = 12
    keep_best = { gate = "true", command = "echo 1" }
  }
}

job "w" {
  source = "worktree"
  step "s" { run = "true" }
}
"#;
    write_runbook(&repo, "bad.hcl", runbook);
    let err = bosun.fails(repo.path(), &["runbook", "check"]);
    let out = format!("{err}{}", String::from_utf8_lossy(&bosun.run(repo.path(), &["runbook", "check"]).stdout));
    assert!(out.contains("runs variants: say which it keeps"), "{out}");
    assert!(out.contains("has keep_best but no variants"), "{out}");
    assert!(out.contains("variants is 2 to 9"), "{out}");
    assert!(out.contains("keep_best is { gate"), "{out}");
}

#[test]
fn a_person_is_asked_to_pick_a_variant_and_the_plan_goes_on_from_the_one_picked() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let runbook = r#"
plan "pick" {
  job "fix" {
    run       = { job = "attempt" }
    variants  = 2
    keep_best = "person"
  }
  job "after" {
    run   = { job = "attempt" }
    using = ["fix"]
  }
}

job "attempt" {
  source = "worktree"
  step "try" {
    run = "echo ${source.branch} >> tried.txt && git add -A && git commit -qm tried"
  }
}
"#;
    write_runbook(&repo, "pick.hcl", runbook);
    let v: serde_json::Value =
        serde_json::from_str(&bosun.ok(repo.path(), &["plan", "run", "pick", "--json"])).unwrap();
    let id = v[0]["id"].as_str().unwrap().to_owned();
    let asked = wait_for(PATIENCE, || {
        let listed = bosun.ok(repo.path(), &["escalations"]);
        listed.contains("pick a variant").then_some(listed)
    });
    let asked = asked.unwrap_or_else(|| panic!("a person is asked\n{}", plan(&bosun, &repo)));
    assert!(
        asked.contains("v1 on feature/fix-v1, v2 on feature/fix-v2")
            && asked.contains(&format!("bosun plan pick {id} fix N")),
        "{asked}"
    );
    let err = bosun.fails(repo.path(), &["plan", "pick", &id, "fix", "7"]);
    assert!(err.contains("no done variant v7"), "{err}");
    bosun.ok(repo.path(), &["plan", "pick", &id, "fix", "2"]);
    let done = wait_for(PATIENCE, || (plan(&bosun, &repo)["state"]["state"] == "done").then_some(()));
    assert!(done.is_some(), "{}\n{}", plan(&bosun, &repo), bosun.log());
    assert_eq!(git(&repo, &["show", "feature/after:tried.txt"]), "feature/fix-v2\nfeature/after\n");
    assert_eq!(bosun.ok(repo.path(), &["escalations"]).trim(), "nothing needs a person");
    assert!(git(&repo, &["branch", "--list", "feature/fix-v1"]).contains("feature/fix-v1"), "the loser is kept");
}

/// A branch git cannot make — `HEAD`, or `feature/x` beside a branch `feature` — is refused
/// before anything starts, in a line that says what to do, not midway in git's words.
#[test]
fn branches_that_cannot_exist_are_refused_before_anything_starts() {
    let bosun = bosun();
    let repo = TempRepo::new();
    git(&repo, &["branch", "feature"]);
    let runbook = |branch: &str| {
        format!(
            r#"
plan "p" {{
  job "x" {{
    run  = {{ job = "mark" }}
    vars = {{ name = "x" }}
    {branch}
  }}
}}

job "mark" {{
  vars   = ["name"]
  source = {{ git = true, branch = "feature/${{var.name}}" }}
  step "mark" {{ run = "true" }}
}}

command "mark" {{
  args = "<name>"
  run  = {{ job = "mark" }}
}}
"#
        )
    };
    let branches_before = git(&repo, &["branch", "--list"]);
    let nothing_made = |bosun: &Bosun| {
        let plans: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["plan", "ls", "--json"])).unwrap();
        assert_eq!(plans, serde_json::json!([]), "no plan recorded");
        let jobs: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["job", "ls", "--json"])).unwrap();
        assert_eq!(jobs, serde_json::json!([]), "no job recorded");
        let workspaces = bosun.state_dir().join("workspaces");
        let made = std::fs::read_dir(&workspaces).map(|d| d.count()).unwrap_or(0);
        assert_eq!(made, 0, "no workspace made in {}", workspaces.display());
        assert_eq!(git(&repo, &["branch", "--list"]), branches_before, "no branch made");
    };

    // The plan job "x" asks for feature/x, which the branch feature keeps from being made.
    write_runbook(&repo, "p.hcl", &runbook(""));
    let out = bosun.run(repo.path(), &["plan", "run", "p"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("plan job \"x\"") && err.contains("a branch \"feature\" exists"), "{err}");
    assert!(err.len() < 600, "one short line: {err}");
    nothing_made(&bosun);

    // A job run on its own, with a branch feature/auth.
    let out = bosun.run(repo.path(), &["run", "mark", "auth"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no branch \"feature/auth\" can be made") && err.contains("\"feature\" exists"), "{err}");
    nothing_made(&bosun);

    // HEAD: refused by check, and by the run.
    write_runbook(&repo, "p.hcl", &runbook("branch = \"HEAD\""));
    let err = bosun.fails(repo.path(), &["runbook", "check"]);
    assert!(err.contains("no branch \"HEAD\" can be made"), "{err}");
    let out = bosun.run(repo.path(), &["plan", "run", "p"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    nothing_made(&bosun);
}
