//! Lowering: a runbook's command, cron, worker, plan and queue into the core's records, each
//! job once with every job its steps run, pinned by hash; and what stops a job from starting.

use std::fmt::Write;
use std::path::PathBuf;

use bosun_core::driver::DriverKind;
use bosun_core::{JobSource, Next, Schedule, StepRun};
use bosun_runbook::load::SourceFile;
use bosun_runbook::lower::{lower, LowerError, Lowered, MAX_DEPTH, MAX_MADE};

fn src(name: &str, text: &str) -> SourceFile {
    SourceFile { path: PathBuf::from(name), text: text.to_owned() }
}

fn lowered(text: &str) -> Lowered {
    lower(&[src("a.hcl", text)]).unwrap()
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

const RUNBOOK: &str = r#"
command "ci" {
  args     = "<name> [--base <branch>] [--fail]"
  defaults = { base = "main" }
  run      = { job = "build" }
}
command "hello" {
  run = "echo hello"
}
job "build" {
  vars   = ["name", "base"]
  source = { git = true, branch = "ci/${var.name}" }
  notify = { on_fail = "build of ${var.name} failed" }
  step "compile" {
    run     = "make"
    on_done = { step = "review" }
    on_fail = "fail"
  }
  step "review" {
    run     = { agent = "reviewer" }
    on_done = { step = "lint" }
  }
  step "lint" {
    run = { job = "lint" }
  }
}
job "lint" {
  step "fmt" {
    run = { job = "fmt" }
  }
}
job "fmt" {
  step "go" {
    run = "cargo fmt --check"
  }
}
job "unrelated" {
  step "x" {
    run = "true"
  }
}
agent "reviewer" {
  command     = ["claude", "--model", "x"]
  prompt_file = "prompt.md"
}
agent "writer" {
  command     = ["my-agent"]
  driver      = "codex"
  prompt      = "write"
}
queue "bugs" {
  retry = 3
}
queue "tickets" {
  list = "cat tickets.jsonl"
  take = "claim ${item.id}"
}
worker "fixer" {
  queue       = "tickets"
  job         = "lint"
  concurrency = 2
}
cron "nightly" {
  every = "1h"
  run   = { job = "fmt" }
}
plan "release" {
  job "one" {
    run = { job = "fmt" }
  }
  job "two" {
    run   = { job = "build" }
    using = ["one"]
    vars  = { name = "x" }
  }
}
"#;

#[test]
fn a_command_lowers_to_its_job_and_every_job_its_steps_run_and_no_other() {
    let (book, job, vars) = lowered(RUNBOOK).command("ci", &args(&["web", "--fail"])).unwrap();
    assert_eq!(job, "build");
    assert_eq!(book.jobs.keys().collect::<Vec<_>>(), ["build", "fmt", "lint"]);
    assert_eq!(vars.get("name").map(String::as_str), Some("web"));
    assert_eq!(vars.get("base").map(String::as_str), Some("main"), "the command's default");
    assert_eq!(vars.get("fail").map(String::as_str), Some("true"), "a flag");

    let build = &book.jobs["build"];
    assert_eq!(build.vars, ["name", "base"]);
    assert_eq!(build.source, JobSource::Worktree { branch: Some("ci/${var.name}".into()), base_ref: None });
    assert_eq!(build.notify.on_fail.as_deref(), Some("build of ${var.name} failed"));
    let steps: Vec<_> = build.steps.iter().map(|s| (s.name.as_str(), &s.run, &s.on_done, &s.on_fail)).collect();
    assert_eq!(
        steps[0],
        ("compile", &StepRun::Shell("make".into()), &Some(Next::Step("review".into())), &Some(Next::Fail))
    );
    assert_eq!(steps[1].1, &StepRun::Agent("reviewer".into()));
    assert_eq!(steps[2].1, &StepRun::Job("lint".into()));

    // Only the agents its steps run; the driver found from the command when none is named; a
    // prompt file kept to be read when the job is made.
    assert_eq!(build.agents.keys().collect::<Vec<_>>(), ["reviewer"]);
    let reviewer = &build.agents["reviewer"];
    assert_eq!(reviewer.plan.driver, DriverKind::Claude);
    assert_eq!(reviewer.plan.command, ["claude", "--model", "x"]);
    assert_eq!((reviewer.plan.prompt.as_deref(), reviewer.prompt_file.as_deref()), (None, Some("prompt.md")));
}

#[test]
fn an_agent_s_named_driver_wins_over_detection() {
    let text = format!("{RUNBOOK}\njob \"w\" {{\n  step \"s\" {{\n    run = {{ agent = \"writer\" }}\n  }}\n}}\n");
    let cron = format!("{text}\ncron \"w\" {{\n  every = \"1m\"\n  run = {{ job = \"w\" }}\n}}\n");
    let c = lowered(&cron).cron("w", PathBuf::from("/r")).unwrap();
    let writer = &c.book.jobs["w"].agents["writer"];
    assert_eq!(writer.plan.driver, DriverKind::Codex);
    assert_eq!((writer.plan.prompt.as_deref(), writer.prompt_file.as_deref()), (Some("write"), None));
}

#[test]
fn a_command_that_runs_a_shell_command_directly_lowers_to_a_job_of_one_step() {
    let (book, job, vars) = lowered(RUNBOOK).command("hello", &[]).unwrap();
    assert_eq!(job, "command:hello");
    assert!(vars.is_empty());
    let def = &book.jobs[&job];
    assert_eq!(def.source, JobSource::None);
    assert_eq!(def.steps.len(), 1);
    assert_eq!(def.steps[0].run, StepRun::Shell("echo hello".into()));
}

#[test]
fn a_command_s_arguments_are_checked_against_its_args_spec() {
    let l = lowered(RUNBOOK);
    let err = |a: &[&str]| l.command("ci", &args(a)).unwrap_err().to_string();
    let usage = "usage: bosun run ci <name> [--base <branch>] [--fail]";
    for (given, says) in [
        (&[][..], "missing <name>"),
        (&["a", "b"][..], "too many arguments (\"b\")"),
        (&["a", "--nope"][..], "unknown option --nope"),
        (&["a", "--base"][..], "--base needs a value"),
    ] {
        let e = err(given);
        assert!(e.starts_with(says) && e.ends_with(usage), "{given:?}: {e}");
    }
    let (_, _, vars) = l.command("ci", &args(&["--base", "dev", "a"])).unwrap();
    assert_eq!(vars.get("base").map(String::as_str), Some("dev"));
}

#[test]
fn a_name_not_in_the_runbook_is_refused_with_the_names_there_are() {
    let l = lowered(RUNBOOK);
    let cwd = PathBuf::from("/r");
    let missing = |e: LowerError| match e {
        LowerError::Missing { kind, name, known } => format!("{kind} {name} ({known})"),
        other => panic!("{other}"),
    };
    assert_eq!(missing(l.command("deploy", &[]).unwrap_err()), "command deploy (ci, hello)");
    assert_eq!(missing(l.cron("daily", cwd.clone()).unwrap_err()), "cron daily (nightly)");
    assert_eq!(missing(l.worker("w", cwd.clone()).unwrap_err()), "worker w (fixer)");
    assert_eq!(missing(l.plan("p", "p1".into(), cwd).unwrap_err()), "plan p (release)");
    assert_eq!(missing(l.queue_retry("q").unwrap_err()), "queue q (bugs, tickets)");
    let none = lowered("job \"a\" {\n  step \"s\" {\n    run = \"true\"\n  }\n}\n");
    assert_eq!(none.cron("x", PathBuf::new()).unwrap_err().to_string(), "no cron \"x\" in the runbooks (crons: none)");
}

#[test]
fn crons_workers_plans_and_queues_lower_to_the_core_s_records() {
    let l = lowered(RUNBOOK);
    let cwd = PathBuf::from("/repo");

    let cron = l.cron("nightly", cwd.clone()).unwrap();
    assert_eq!((cron.job.as_str(), cron.running, &cron.cwd), ("fmt", true, &cwd));
    assert_eq!(cron.schedule, Schedule::every(3_600_000).unwrap());
    assert_eq!(cron.book.jobs.keys().collect::<Vec<_>>(), ["fmt"]);

    let worker = l.worker("fixer", cwd.clone()).unwrap();
    assert_eq!((worker.queue.as_str(), worker.job.as_str(), worker.concurrency), ("tickets", "lint", 2));
    let external = worker.external.expect("tickets is an external queue");
    assert_eq!((external.list.as_str(), external.take.as_deref()), ("cat tickets.jsonl", Some("claim ${item.id}")));
    assert_eq!(worker.book.jobs.keys().collect::<Vec<_>>(), ["fmt", "lint"]);

    let plan = l.plan("release", "p1".into(), cwd).unwrap();
    assert_eq!((plan.id.as_str(), plan.base.as_str()), ("p1", "HEAD"));
    assert_eq!(
        plan.jobs.iter().map(|j| (j.name.as_str(), j.job.as_str())).collect::<Vec<_>>(),
        [("one", "fmt"), ("two", "build")]
    );
    assert_eq!(plan.jobs[1].using, ["one"]);
    assert_eq!(plan.book.jobs.keys().collect::<Vec<_>>(), ["build", "fmt", "lint"], "every plan job's jobs");

    assert_eq!(l.queue_retry("bugs").unwrap(), 3);
    assert!(matches!(l.queue_retry("tickets"), Err(LowerError::External(q)) if q == "tickets"));
}

#[test]
fn a_book_is_pinned_by_a_hash_of_the_files_paths_and_text() {
    let hash = |files: &[SourceFile]| lower(files).unwrap().command("hello", &[]).unwrap().0.hash;
    let one = hash(&[src("a.hcl", RUNBOOK)]);
    assert_eq!(one, hash(&[src("a.hcl", RUNBOOK)]), "the same text, the same hash");
    assert_eq!(one.len(), 16);
    assert_ne!(one, hash(&[src("b.hcl", RUNBOOK)]), "another path");
    assert_ne!(one, hash(&[src("a.hcl", &format!("{RUNBOOK}\n# edited\n"))]), "edited text");
}

#[test]
fn a_runbook_with_errors_is_refused_with_them() {
    let e =
        lower(&[src("a.hcl", "job \"a\" {\n  step \"s\" {\n    run = { agent = \"nobody\" }\n  }\n}\n")]).unwrap_err();
    let LowerError::Invalid(errors) = &e else { panic!("{e}") };
    assert_eq!(errors.len(), 1);
    assert!(e.to_string().contains("see `bosun runbook check`") && e.to_string().contains("a.hcl:2:3"), "{e}");
}

/// Jobs `j0` → `j1` → … → `j{n}`, each running the next as a step.
fn chain(n: usize) -> String {
    let mut text = String::new();
    for i in 0..=n {
        let run = if i < n { format!("{{ job = \"j{}\" }}", i + 1) } else { "\"true\"".to_owned() };
        writeln!(text, "job \"j{i}\" {{\n  step \"s\" {{\n    run = {run}\n  }}\n}}").unwrap();
    }
    text
}

#[test]
fn jobs_may_run_each_other_as_steps_up_to_the_depth_limit() {
    let ok = lowered(&format!("{}cron \"c\" {{\n  every = \"1m\"\n  run = {{ job = \"j0\" }}\n}}\n", chain(MAX_DEPTH)));
    assert_eq!(ok.cron("c", PathBuf::new()).unwrap().book.jobs.len(), MAX_DEPTH + 1);
    assert!(ok.problems().is_empty());

    let deep =
        lowered(&format!("{}cron \"c\" {{\n  every = \"1m\"\n  run = {{ job = \"j0\" }}\n}}\n", chain(MAX_DEPTH + 1)));
    assert!(matches!(deep.cron("c", PathBuf::new()), Err(LowerError::TooDeep(j)) if j == "j0"));
    let problems: Vec<String> = deep.problems().iter().map(ToString::to_string).collect();
    assert_eq!(problems, [format!("jobs run each other more than {MAX_DEPTH} deep, from job \"j0\"")]);
}

#[test]
fn a_long_chain_of_jobs_is_lowered_without_exhausting_the_stack() {
    let l = lowered(&chain(20_000));
    assert_eq!(l.problems().len(), 20_000 - MAX_DEPTH, "every job more than the limit from the end");
}

#[test]
fn a_job_that_would_make_too_many_jobs_through_its_steps_is_refused() {
    // `top` runs 11 jobs, each of which runs the same 10: 1 + 11 × 11 = 122 jobs made.
    let mut text = String::new();
    let leaves: String =
        (0..10).map(|i| format!("  step \"l{i}\" {{\n    run = {{ job = \"leaf{i}\" }}\n  }}\n")).collect();
    for i in 0..10 {
        writeln!(text, "job \"leaf{i}\" {{\n  step \"s\" {{\n    run = \"true\"\n  }}\n}}").unwrap();
    }
    let mut top = String::new();
    for i in 0..11 {
        writeln!(text, "job \"mid{i}\" {{\n{leaves}}}").unwrap();
        writeln!(top, "  step \"m{i}\" {{\n    run = {{ job = \"mid{i}\" }}\n  }}").unwrap();
    }
    writeln!(text, "job \"top\" {{\n{top}}}\nworker \"w\" {{\n  queue = \"q\"\n  job = \"top\"\n}}\nqueue \"q\" {{}}")
        .unwrap();
    let l = lowered(&text);
    let e = l.worker("w", PathBuf::new()).unwrap_err();
    assert!(matches!(&e, LowerError::TooMany { job, made: 122 } if job == "top"), "{e}");
    assert!(e.to_string().contains(&format!("more than the {MAX_MADE} allowed")), "{e}");
    assert_eq!(l.problems().len(), 1, "each mid makes 11, which is fine");
}

#[test]
fn an_agent_s_session_and_runtime_reach_its_plan_and_unknown_ones_are_errors() {
    let agent = |extra: &str| {
        format!(
            "job \"w\" {{\n  source {{\n    git = true\n  }}\n  step \"s\" {{\n    run = {{ agent = \"a\" }}\n  }}\n}}\n\
             agent \"a\" {{\n  run = [\"claude\"]\n{extra}\n}}\n\
             cron \"w\" {{\n  every = \"1m\"\n  run = {{ job = \"w\" }}\n}}\n"
        )
    };
    let plan = |extra: &str| {
        let c = lowered(&agent(extra)).cron("w", PathBuf::from("/r")).unwrap();
        c.book.jobs["w"].agents["a"].plan.clone()
    };
    let p = plan("  session = \"host\"\n  runtime = { sandbox = { network = false } }");
    assert_eq!(p.backend, bosun_core::SessionBackend::Host);
    assert_eq!(p.runtime, bosun_core::Runtime::Sandbox { network: false });
    assert_eq!(plan("  runtime = \"sandbox\"").runtime, bosun_core::Runtime::Sandbox { network: true });
    let defaults = plan("");
    assert_eq!((defaults.backend, defaults.runtime), (Default::default(), bosun_core::Runtime::Local));
    let pod = plan(
        "  runtime = { k8s = { image = \"agent:1\", namespace = \"agents\", cpus = 2, memory = \"4g\", \
         storage = \"10g\", secrets = [\"anthropic\"], node_selector = { pool = \"agents\" }, \
         service_account = \"bosun-agent\", bosun = \"/usr/local/bin/bosun\" } }",
    );
    let bosun_core::Runtime::K8s(pod) = pod.runtime else { panic!("a pod: {:?}", pod.runtime) };
    assert_eq!((pod.image.as_str(), pod.namespace.as_str()), ("agent:1", "agents"));
    assert_eq!((pod.cpus_milli, pod.memory_bytes, pod.storage_bytes), (Some(2000), Some(4 << 30), Some(10 << 30)));
    assert_eq!(pod.secrets, ["anthropic"]);
    assert_eq!(pod.node_selector.get("pool").map(String::as_str), Some("agents"));
    assert_eq!((pod.service_account.as_deref(), pod.bosun.as_str()), (Some("bosun-agent"), "/usr/local/bin/bosun"));
    let bosun_core::Runtime::K8s(plain) = plan("  runtime = { k8s = { image = \"a\" } }").runtime else { panic!() };
    let docker = plan("  runtime = { docker = { image = \"agent:1\", cpus = 1.5, memory = \"2g\", network = false } }");
    let want = bosun_core::Container {
        image: "agent:1".into(),
        cpus_milli: Some(1500),
        memory_bytes: Some(2 << 30),
        network: false,
        volume: None,
    };
    assert_eq!(docker.runtime, bosun_core::Runtime::Docker(want));
    let bosun_core::Runtime::Docker(plain_docker) = plan("  runtime = { docker = { image = \"a\" } }").runtime else {
        panic!()
    };
    assert_eq!((plain_docker.network, plain_docker.cpus_milli, plain_docker.memory_bytes), (true, None, None));
    assert_eq!((plain.namespace.as_str(), plain.bosun.as_str(), plain.storage_bytes), ("default", "bosun", None));
    for (extra, says) in [
        ("  runtime = { k8s = { namespace = \"a\" } }", "runtime.k8s needs an image"),
        ("  runtime = { k8s = { image = \"a\", namespace = \"../x\" } }", "is not a Kubernetes name"),
        ("  runtime = { k8s = { image = \"a\", secrets = [\"A;B\"] } }", "is not a Kubernetes name"),
        ("  runtime = { k8s = { image = \"a\", storage = \"lots\" } }", "runtime.k8s.storage"),
        ("  runtime = { k8s = { image = \"a\", gpus = 1 } }", "runtime.k8s has no \"gpus\""),
        ("  runtime = \"docker\"", "runtime \"docker\" is not one bosun has"),
        ("  runtime = { docker = { cpus = 2 } }", "runtime.docker needs an image"),
        ("  runtime = { docker = { image = \"a\", gpus = 1 } }", "runtime.docker has no \"gpus\""),
        ("  runtime = { docker = { image = \"a\", cpus = \"lots\" } }", "is not a number of CPUs"),
        ("  runtime = { docker = { image = \"a\", memory = \"1k\" } }", "too little memory"),
        (
            "  runtime = { docker = { image = \"a\", network = \"no\" } }",
            "runtime.docker.network must be true or false",
        ),
        ("  runtime = { sandbox = { network = \"no\" } }", "network must be true or false"),
        ("  session = \"screen\"", "session \"screen\" is not one bosun has"),
    ] {
        let e = bosun_runbook::load::load(&[src("a.hcl", &agent(extra))]).expect_err("refused");
        let text: Vec<String> = e.iter().map(ToString::to_string).collect();
        assert!(text.iter().any(|t| t.contains(says)), "{extra}: {text:?}");
    }
}

#[test]
fn a_job_whose_agents_run_in_pods_is_checked_for_what_a_pod_workspace_cannot_do() {
    let runbook = |source: &str, steps: &str, second: &str| {
        format!(
            "job \"w\" {{\n{source}\n  step \"s\" {{\n    run = {{ agent = \"a\" }}\n    on_done = {{ step = \"t\" }}\n  }}\n{steps}\n}}\n\
             agent \"a\" {{\n  run = [\"claude\"]\n  runtime = {{ k8s = {{ image = \"i\" }} }}\n}}\n\
             agent \"b\" {{\n  run = [\"claude\"]\n{second}\n}}\n\
             cron \"w\" {{\n  every = \"1m\"\n  run = {{ job = \"w\" }}\n}}\n"
        )
    };
    let worktree = "  source {\n    git = true\n  }";
    let in_pod = "  runtime = { k8s = { image = \"i\" } }";
    let agent_step = "  step \"t\" {\n    run = { agent = \"b\" }\n  }";
    let fine = runbook(worktree, agent_step, in_pod);
    assert!(bosun_runbook::load::load(&[src("a.hcl", &fine)]).is_ok(), "two agents in pods, one after the other");
    for (text, says) in [
        (runbook(worktree, agent_step, ""), "in a pod and agent \"b\" here"),
        (runbook(worktree, "  step \"t\" {\n    run = \"make test\"\n  }", in_pod), "step \"t\" has no workspace here"),
        (runbook("", agent_step, in_pod), "it needs `source = \"worktree\"`"),
        (
            runbook(worktree, agent_step, "  runtime = { k8s = { image = \"i\", namespace = \"other\" } }"),
            "namespaces \"default\" and \"other\"",
        ),
    ] {
        let e = bosun_runbook::load::load(&[src("a.hcl", &text)]).expect_err("refused");
        let text: Vec<String> = e.iter().map(ToString::to_string).collect();
        assert!(text.iter().any(|t| t.contains(says)), "{says}: {text:?}");
    }
}

const BUDGETS: &str = r#"
job "fix" {
  budget = "1Mtok"
  step "s" {
    run = "true"
  }
}
queue "bugs" {}
worker "fixer" {
  queue  = "bugs"
  job    = "fix"
  budget = { usd = 5 }
}
plan "auth" {
  budget = "2Mtok"
  job "a" {
    run = { job = "fix" }
  }
}
"#;

#[test]
fn a_plan_and_a_worker_carry_their_budgets_and_a_bad_one_is_refused_at_its_line() {
    let l = lowered(BUDGETS);
    let worker = l.worker("fixer", "/repo".into()).unwrap();
    assert_eq!(worker.budget, Some("5usd".parse().unwrap()));
    let plan = l.plan("auth", "p1".into(), "/repo".into()).unwrap();
    assert_eq!(plan.budget, Some("2Mtok".parse().unwrap()));
    for (bad, line) in [("budget = { usd = 5 }", 12), ("budget = \"2Mtok\"", 15)] {
        for wrong in ["budget = \"5 dollars\"", "budget = { eur = 5 }", "budget = -3"] {
            let text = BUDGETS.replacen(bad, wrong, 1);
            let e = bosun_runbook::load::load(&[src("a.hcl", &text)]).expect_err(wrong);
            assert_eq!(e.len(), 1, "{e:?}");
            assert_eq!(e[0].line, line, "{wrong}: {e:?}");
            assert!(e[0].to_string().contains("budget"), "{}", e[0]);
        }
    }
    let e = bosun_runbook::load::load(&[src("a.hcl", &BUDGETS.replacen("\"2Mtok\"", "\"lots\"", 1))]).unwrap_err();
    assert!(e[0].to_string().contains("`5usd`"), "the forms accepted: {}", e[0]);
}
