//! Whole outputs, as people read them, kept as snapshots (insta): `ls`, `show`, `escalations`,
//! `job ls`, `job show`, `runbook check` errors and `doctor`. The daemon draws its ids from
//! `BOSUN_SEED`, so they are the same from run to run and shown as they are; what still changes
//! between runs (temporary paths, ages, pids) is replaced by a placeholder of its kind, and the
//! layout is kept.
//! After an intended change: `INSTA_UPDATE=always scripts/test snapshots`, then review the diff.

mod support;

use support::*;

/// `text` with each known value replaced by its placeholder, then every age ("3s") by `[age]`
/// and every pid by `[pid]`.
fn redact(text: &str, known: &[(&str, &str)]) -> String {
    let mut text = text.to_owned();
    for (value, placeholder) in known {
        text = text.replace(value, placeholder);
    }
    let words: Vec<String> = text
        .split_inclusive([' ', '\n', '(', ')'])
        .map(|w| {
            let (word, end) = w.split_at(w.trim_end_matches([' ', '\n', '(', ')']).len());
            let digits = word.trim_end_matches(['s', 'm', 'h', 'd']);
            let is_age = !digits.is_empty() && digits.len() < word.len() && digits.chars().all(|c| c.is_ascii_digit());
            if is_age {
                format!("{:<width$}{end}", "[age]", width = word.len())
            } else {
                w.to_owned()
            }
        })
        .collect();
    let text = words.concat();
    match text.find("(pid ") {
        Some(at) => {
            let end = text[at..].find(')').map_or(text.len(), |e| at + e);
            format!("{}(pid [pid]{}", &text[..at], &text[end..])
        }
        None => text,
    }
}

/// A bosun whose daemon draws the same ids at every run.
fn seeded() -> Bosun {
    bosun().with_env("BOSUN_SEED", "1")
}

fn paths<'a>(bosun: &'a Bosun, repo: &'a TempRepo) -> Vec<(&'a str, &'a str)> {
    vec![(bosun.state_dir().to_str().unwrap(), "[state]"), (repo.path().to_str().unwrap(), "[repo]")]
}

#[test]
fn ls_and_show_of_an_agent_and_its_workspace() {
    let bosun = seeded();
    let repo = TempRepo::new();
    let id = bosun.start(repo.path(), &["--name", "fixer", "--", "sleep", "600"]);
    bosun.wait_up(&id);
    let known = paths(&bosun, &repo);
    insta::assert_snapshot!("ls", redact(&bosun.ok(repo.path(), &["ls"]), &known));
    insta::assert_snapshot!("show", redact(&bosun.ok(repo.path(), &["show", &id]), &known));
    bosun.ok(repo.path(), &["kill", &id]);
}

#[test]
fn escalations_of_an_agent_that_died() {
    let bosun = seeded();
    let repo = TempRepo::new();
    insta::assert_snapshot!("escalations_none", bosun.ok(repo.path(), &["escalations"]));
    let id = bosun.start(repo.path(), &["--on-dead", "escalate", "--", "sh", "-c", "exit 3"]);
    let escalated =
        bosun_testkit::poll::wait_until(PATIENCE, || bosun.ok(repo.path(), &["escalations", "--json"]).contains(&id));
    assert!(escalated, "no escalation: {}", bosun.ok(repo.path(), &["show", &id]));
    let known = paths(&bosun, &repo);
    insta::assert_snapshot!("escalations", redact(&bosun.ok(repo.path(), &["escalations"]), &known));
}

const RUNBOOK: &str = r#"
command "hello" {
  args = "<name>"
  run  = { job = "hello" }
}

job "hello" {
  vars   = ["name"]
  source = "worktree"
  step "greet" {
    run     = "echo hello ${var.name}"
    on_done = { step = "done" }
  }
  step "done" {
    run = "true"
  }
}
"#;

#[test]
fn job_ls_and_job_show_of_a_finished_job() {
    let bosun = seeded();
    let repo = repo_with_runbook("hello.hcl", RUNBOOK);
    insta::assert_snapshot!("job_ls_none", bosun.ok(repo.path(), &["job", "ls"]));
    let job = bosun.run_job(repo.path(), &["hello", "world"]);
    bosun.ok(repo.path(), &["job", "wait", &job]);
    let shown = bosun.ok(repo.path(), &["job", "show", &job]);
    // The runbook's hash is of its file, path included.
    let hash = shown.lines().find_map(|l| l.strip_prefix("runbook    ")).unwrap().trim().to_owned();
    let mut known = paths(&bosun, &repo);
    known.push((hash.as_str(), "[hash]"));
    insta::assert_snapshot!("job_ls", redact(&bosun.ok(repo.path(), &["job", "ls"]), &known));
    insta::assert_snapshot!("job_show", redact(&shown, &known));
}

#[test]
fn runbook_check_errors_each_with_its_place() {
    let bosun = bosun();
    let repo = repo_with_runbook(
        "broken.hcl",
        r#"
job "a" {
  step "one" {
    run     = "true"
    on_done = { step = "nowhere" }
  }
}

command "c" {
  run = { job = "missing" }
}
"#,
    );
    let out = bosun.run(repo.path(), &["runbook", "check"]);
    assert_eq!(out.status.code(), Some(2));
    let known = paths(&bosun, &repo);
    insta::assert_snapshot!("runbook_check_errors", redact(&String::from_utf8_lossy(&out.stderr), &known));
}

#[test]
fn doctor_clean_and_with_a_leftover_branch() {
    let bosun = bosun();
    let repo = TempRepo::new();
    insta::assert_snapshot!("doctor_clean", bosun.ok(repo.path(), &["doctor"]));
    let git = std::process::Command::new("git").current_dir(repo.path()).args(["branch", "ws-leftover1"]).status();
    assert!(git.unwrap().success());
    let out = bosun.run(repo.path(), &["doctor"]);
    let known = paths(&bosun, &repo);
    insta::assert_snapshot!("doctor_leftover", redact(&String::from_utf8_lossy(&out.stdout), &known));
}

#[test]
fn redaction_keeps_the_layout() {
    assert_eq!(redact("a  3s   b (pid 123) 10m\n", &[]), "a  [age]   b (pid [pid]) [age]\n");
    assert_eq!(redact("xs 4x", &[]), "xs 4x");
}
