//! Runbooks as the seeds and the examples write them, and bad ones, each error placed.

use std::path::PathBuf;

use bosun_runbook::load::{load, RunbookError, SourceFile};
use bosun_runbook::model::{QueueKind, Run, Source, Transition};

fn src(name: &str, text: &str) -> SourceFile {
    SourceFile { path: PathBuf::from(name), text: text.to_owned() }
}

fn errors(name: &str, text: &str) -> Vec<RunbookError> {
    load(&[src(name, text)]).expect_err("should not load")
}

const SEED_001: &str = r#"
job "fix" {
  source {
    git    = true
    branch = "feature/${var.name}-${source.nonce}"
    ref    = "origin/main"
  }
  locals = { repo = "$(git rev-parse --show-toplevel)", branch = "b" }

  step "init" {
    run = <<-SHELL
      git -C "${local.repo}" worktree add -b "${local.branch}" "${source.root}" origin/${var.base}
    SHELL
    on_done = { step = "work" }
  }

  step "work" {
    run = { agent = "fix" }
  }
}

agent "fix" {
  on_idle  = { action = "nudge", message = "Continue working on the task." }
  on_dead  = { action = "recover", message = "Previous attempt exited. Try again." }
  on_error = "escalate"
}
"#;

#[test]
fn seed_001_means_what_it_says() {
    let rb = load(&[src("seed.hcl", SEED_001)]).unwrap();
    let job = &rb.jobs["fix"];
    assert_eq!(
        job.source,
        Source::Worktree {
            branch: Some("feature/${var.name}-${source.nonce}".into()),
            base_ref: Some("origin/main".into())
        }
    );
    assert_eq!(job.steps.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["init", "work"]);
    let Run::Shell(init) = &job.steps[0].run else { panic!() };
    assert!(init.starts_with("git -C \"${local.repo}\" worktree add"), "{init}");
    assert!(matches!(&job.steps[0].on_done, Some(Transition::Step { name, .. }) if name == "work"));
    assert_eq!(job.steps[1].run, Run::Agent("fix".into()));
    let policy = &rb.agents["fix"].policy;
    assert_eq!(policy.on_idle.0[0].to_string(), "nudge:Continue working on the task.");
    assert_eq!(policy.on_dead.0[0].to_string(), "resume:Previous attempt exited. Try again.");
    assert_eq!(policy.on_error.0[0].to_string(), "escalate");
}

const SEED_000: &str = r#"
[pipeline.build.defaults]
workspace = ".worktrees/build-{name}"
branch = "build-{name}"

[pipeline.build.step.work]
run = { agent = "fix" }

[agent.fix]
on_idle = { action = "nudge", message = "Continue working on the task." }
on_exit = { action = "recover", message = "Previous attempt exited. Try again." }
on_error = "escalate"
"#;

#[test]
fn seed_000_pipelines_are_jobs_and_on_exit_is_on_dead() {
    let rb = load(&[src("seed.toml", SEED_000)]).unwrap();
    assert_eq!(rb.jobs["build"].source, Source::Worktree { branch: Some("build-${var.name}".into()), base_ref: None });
    assert_eq!(rb.agents["fix"].policy.on_dead.0[0].to_string(), "resume:Previous attempt exited. Try again.");
}

#[test]
fn the_examples_load() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/runbooks");
    let sources = bosun_runbook::load::read_dir(&dir).unwrap();
    assert!(sources.len() >= 2);
    let rb = load(&sources).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(rb.commands["build"].args.positional, ["name", "instructions"]);
    assert_eq!(rb.jobs["build"].steps.len(), 3);
    assert_eq!(rb.workers["fixer"].concurrency, 2);
    assert_eq!(rb.queues["bugs"].kind, QueueKind::Persisted { retry: 2 });
}

#[test]
fn unknown_fields_are_errors_with_their_place() {
    let e = errors("a.hcl", "job \"x\" {\n  step \"s\" {\n    run = \"true\"\n    on_dne = \"done\"\n  }\n}\n");
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!((e[0].line, e[0].column), (4, 5));
    assert!(e[0].message.contains("unknown field `on_dne` in step \"s\""), "{}", e[0]);
    assert_eq!(e[0].to_string().split(':').take(3).collect::<Vec<_>>(), ["a.hcl", "4", "5"]);

    let e = errors("b.toml", "[agent.a]\nrun = \"claude\"\non_idel = \"escalate\"\n");
    assert_eq!((e[0].line, e[0].column), (3, 1), "{e:?}");
}

#[test]
fn unknown_step_names_are_errors_with_their_place() {
    let e =
        errors("a.hcl", "job \"x\" {\n  step \"s\" {\n    run = \"true\"\n    on_done = { step = \"nope\" }\n  }\n}\n");
    assert!(e.iter().any(|e| e.line == 4 && e.message.contains("no step \"nope\" in job \"x\"")), "{e:?}");
}

#[test]
fn a_step_graph_that_can_never_finish_is_reported() {
    let text = r#"
job "loop" {
  step "a" {
    run     = "true"
    on_done = { step = "b" }
    on_fail = { step = "b" }
  }
  step "b" {
    run     = "true"
    on_done = { step = "a" }
    on_fail = { step = "a" }
  }
}
"#;
    let e = errors("loop.hcl", text);
    assert!(e.iter().any(|e| e.line == 3 && e.message.contains("can never finish")), "{e:?}");
    assert!(e.iter().any(|e| e.line == 8 && e.message.contains("can never finish")), "{e:?}");
}

#[test]
fn undefined_references_and_templates_are_reported() {
    let text = r#"
command "go" { run = { job = "missing" } }
job "j" {
  vars = ["name"]
  step "s" { run = "echo ${var.nam} ${local.none}" }
}
worker "w" {
  queue = "q"
  job   = "j"
}
"#;
    let e = errors("refs.hcl", text);
    let all = e.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n");
    assert!(all.contains("runs job \"missing\""), "{all}");
    assert!(all.contains("`${var.nam}`"), "{all}");
    assert!(all.contains("`${local.none}`"), "{all}");
    assert!(all.contains("queue \"q\", which is not defined"), "{all}");
}

#[test]
fn names_defined_in_two_files_are_reported_in_the_second() {
    let a = src("a.hcl", "agent \"x\" { run = \"claude\" }\n");
    let b = src("b.toml", "[agent.x]\nrun = \"codex\"\n");
    let e = load(&[a, b]).unwrap_err();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].file, PathBuf::from("b.toml"));
}

const PLAN: &str = r#"
job "build" {
  vars   = ["instructions"]
  source = "worktree"
  step "work" {
    run = "echo ${var.instructions} > work.txt"
  }
}

plan "auth" {
  base = "main"
  job "schema" {
    run  = { job = "build" }
    vars = { instructions = "add the users table" }
  }
  job "api" {
    run    = { job = "build" }
    vars   = { instructions = "add login" }
    using  = ["schema"]
    branch = "auth/api"
  }
}
"#;

#[test]
fn a_plan_is_its_jobs_in_order_in_either_format() {
    let rb = load(&[src("p.hcl", PLAN)]).unwrap();
    let plan = &rb.plans["auth"];
    assert_eq!(plan.base.as_deref(), Some("main"));
    let names: Vec<&str> = plan.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["schema", "api"], "in the order written");
    assert_eq!(plan.jobs[1].using, ["schema"]);
    assert_eq!(plan.jobs[1].branch.as_deref(), Some("auth/api"));
    assert_eq!(plan.jobs[0].vars["instructions"], "add the users table");

    let toml = r#"
[job.build.step.work]
run = "true"

[plan.auth.job.schema]
run = { job = "build" }

[plan.auth.job.api]
run = { job = "build" }
using = ["schema"]
"#;
    let rb = load(&[src("p.toml", toml)]).unwrap();
    assert_eq!(rb.plans["auth"].jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>(), ["schema", "api"]);
    assert_eq!(rb.plans["auth"].concurrency, None, "the default, 2, is the core's");
}

#[test]
fn a_plan_jobs_engine_is_one_program() {
    let with = |e: &str| PLAN.replacen("branch = \"auth/api\"", &format!("branch = \"auth/api\"\n    engine = {e}"), 1);
    let rb = load(&[src("p.hcl", &with("\"codex\""))]).unwrap();
    assert_eq!(rb.plans["auth"].jobs[1].engine.as_deref(), Some("codex"));
    for bad in ["\"codex --yolo\"", "\"\"", "3"] {
        let e = errors("p.hcl", &with(bad));
        assert!(e.iter().any(|e| e.message.contains("engine")), "{bad}: {e:?}");
    }
}

#[test]
fn a_plans_concurrency_is_one_to_sixty_four() {
    let with = |c: &str| PLAN.replacen("plan \"auth\" {", &format!("plan \"auth\" {{\n  concurrency = {c}"), 1);
    let rb = load(&[src("p.hcl", &with("3"))]).unwrap();
    assert_eq!(rb.plans["auth"].concurrency, Some(3));
    for bad in ["0", "65", "\"two\"", "-1"] {
        let e = errors("p.hcl", &with(bad));
        assert!(e.iter().any(|e| e.message.contains("concurrency")), "{bad}: {e:?}");
    }
}

#[test]
fn a_plan_job_may_use_only_one_written_before_it_and_each_name_once() {
    let later = PLAN.replace("using  = [\"schema\"]", "using  = [\"ui\"]");
    let e = errors("p.hcl", &later);
    assert!(
        e.iter().any(|e| e.line == 19 && e.message.contains("uses \"ui\", which is not a job written before it")),
        "{e:?}"
    );

    let twice = PLAN.replace("job \"api\"", "job \"schema\"");
    let e = errors("p.hcl", &twice);
    assert!(e.iter().any(|e| e.line == 16 && e.message.contains("duplicate job \"schema\"")), "{e:?}");

    let unknown = PLAN.replace("run  = { job = \"build\" }", "run  = { job = \"biuld\" }");
    let e = errors("p.hcl", &unknown);
    assert!(e.iter().any(|e| e.line == 12 && e.message.contains("runs job \"biuld\", which is not defined")), "{e:?}");

    let shell = PLAN.replace("run  = { job = \"build\" }", "run  = \"make\"");
    let e = errors("p.hcl", &shell);
    assert!(e.iter().any(|e| e.message.contains("runs a job: run = { job")), "{e:?}");
}

#[test]
fn an_agents_permission_rules_and_trust_are_policy_in_hcl_and_toml() {
    let hcl = "agent \"fix\" {\n  allow = [\"Bash(git *)\", \"Write\"]\n  deny = [\"Bash(rm *)\"]\n  accept_trust = false\n}\n";
    let toml = "[agent.fix]\nallow = [\"Bash(git *)\", \"Write\"]\ndeny = [\"Bash(rm *)\"]\naccept_trust = false\n";
    for (name, text) in [("a.hcl", hcl), ("a.toml", toml)] {
        let rb = load(&[src(name, text)]).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let policy = &rb.agents["fix"].policy;
        let rules = |r: &[bosun_core::PermissionRule]| r.iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(rules(&policy.allow), ["Bash(git *)", "Write"], "{name}");
        assert_eq!(rules(&policy.deny), ["Bash(rm *)"], "{name}");
        assert!(!policy.accept_trust, "{name}");
    }
    let e = errors("b.hcl", "agent \"fix\" {\n  allow = [\"Bash(git *\"]\n}\n");
    assert!(e.iter().any(|e| e.line == 2 && e.message.contains("not a permission rule")), "{e:?}");
}

#[test]
fn branches_git_cannot_make_are_refused_by_check() {
    // A plan job's branch, and two that cannot both exist (`feature/api` is job "api"'s when it
    // names none).
    let head = PLAN.replacen("branch = \"auth/api\"", "branch = \"HEAD\"", 1);
    let e = errors("p.hcl", &head);
    assert!(e.iter().any(|e| e.message.contains("plan job \"api\": no branch \"HEAD\" can be made")), "{e:?}");
    let beside = PLAN.replacen("branch = \"auth/api\"", "branch = \"feature\"", 1);
    let beside = beside.replacen("job \"schema\" {", "job \"x\" {", 1).replace("[\"schema\"]", "[\"x\"]");
    let e = errors("p.hcl", &beside);
    assert!(e.iter().any(|e| e.message.contains("\"feature/x\" and \"feature\" cannot both exist")), "{e:?}");
    // A job's own branch, a template that no value could make good included.
    for bad in ["HEAD", "fix..${var.name}", "${var.name}.lock", "a b/${var.name}"] {
        let text = format!("job \"j\" {{\n  vars = [\"name\"]\n  source = {{ git = true, branch = \"{bad}\" }}\n  step \"s\" {{ run = \"true\" }}\n}}\n");
        let e = errors("j.hcl", &text);
        assert!(e.iter().any(|e| e.message.contains("can be made")), "{bad}: {e:?}");
    }
    let fine = "job \"j\" {\n  vars = [\"name\"]\n  source = { git = true, branch = \"fix/${var.name}\" }\n  step \"s\" { run = \"true\" }\n}\n";
    load(&[src("j.hcl", fine)]).unwrap();
    load(&[src("p.hcl", PLAN)]).unwrap();
}

#[test]
fn a_judge_command_naming_a_template_is_refused_by_check_and_shell_variables_pass() {
    let judged = |judge: &str| {
        PLAN.replacen(
            "branch = \"auth/api\"",
            &format!("branch = \"auth/api\"\n    variants = 2\n    keep_best = {judge}"),
            1,
        )
    };
    for bad in [r#"{ command = "pick ${var.instructions}" }"#, r#"{ gate = "make ${local.target}" }"#] {
        let e = errors("p.hcl", &judged(bad));
        assert!(e.iter().any(|e| e.message.contains("keep_best runs its command as it is written")), "{bad}: {e:?}");
    }
    for fine in [r#"{ command = "pick \"${BOSUN_VARIANTS}\"" }"#, r#"{ gate = "make check" }"#, "\"person\""] {
        load(&[src("p.hcl", &judged(fine))]).unwrap_or_else(|e| panic!("{fine}: {e:?}"));
    }
}

#[test]
fn an_agents_budget_is_policy_in_hcl_and_toml_and_a_bad_one_says_the_forms() {
    use bosun_core::budget::Budget;
    for (name, text, want) in [
        ("a.hcl", "agent \"fix\" {\n  budget = { usd = 5 }\n}\n", Budget::Usd(5_000_000_000)),
        ("a.toml", "[agent.fix]\nbudget = \"2Mtok\"\n", Budget::Tokens(2_000_000)),
        ("b.toml", "[agent.fix]\nbudget = { tokens = 500000 }\n", Budget::Tokens(500_000)),
    ] {
        let rb = load(&[src(name, text)]).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(rb.agents["fix"].policy.budget, Some(want), "{name}");
    }
    for bad in ["budget = \"5 dollars\"", "budget = { eur = 5 }", "budget = -3"] {
        let e = errors("c.hcl", &format!("agent \"fix\" {{\n  {bad}\n}}\n"));
        assert!(e.iter().any(|e| e.line == 2 && e.message.starts_with("budget")), "{bad}: {e:?}");
    }
    let e = errors("c.hcl", "agent \"fix\" {\n  budget = \"lots\"\n}\n");
    assert!(e.iter().any(|e| e.message.contains("`5usd`")), "the forms: {e:?}");
}

#[test]
fn a_jobs_budget_is_read_and_lowered_and_a_bad_one_names_its_line() {
    let text =
        "agent \"fix\" {}\njob \"build\" {\n  budget = { usd = 2.5 }\n  step \"go\" { run = { agent = \"fix\" } }\n}\n";
    let rb = load(&[src("j.hcl", text)]).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(rb.jobs["build"].budget, Some(bosun_core::budget::Budget::Usd(2_500_000_000)));
    let e = errors("j.hcl", &text.replace("{ usd = 2.5 }", "\"a lot\""));
    assert!(e.iter().any(|e| e.line == 3 && e.message.contains("`5usd`")), "{e:?}");
}
