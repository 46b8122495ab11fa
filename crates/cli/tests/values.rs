//! Values are data, through `bosun run` and a worker's queue item: whatever a hostile argument or
//! item holds, and whatever the step's shell text looks like around it (an apostrophe in a
//! comment, a here-document, `"$(…)"`), it never runs; a template handed to another shell
//! (`sh -c "…"`, `eval`) is refused before anything starts.

mod support;

use support::*;

const RUNBOOK: &str = r#"
command "c2" {
  args = "<name>"
  run  = <<-SHELL
    # don't worry
    echo ${args.name} > said.txt
    cat >> said.txt <<EOF
    heredoc: ${args.name}
    EOF
    echo "sub: $(printf '%s' "${args.name}")" >> said.txt
  SHELL
}

queue "bugs" {}

worker "fixer" {
  queue = "bugs"
  job   = "fix"
}

job "fix" {
  step "report" {
    run = <<-SHELL
      # it's untrusted
      echo "bug: ${item.title}" > "OUT/bug.txt"
    SHELL
  }
}
"#;

const PWNED: [&str; 4] = ["pwned-1", "pwned-2", "pwned-3", "pwned-4"];

/// A value that would create `dir/pwned-N` files if any part of it ran.
fn hostile(dir: &std::path::Path) -> String {
    let p = |n: usize| dir.join(PWNED[n]).display().to_string();
    format!("$(touch {}) `touch {}`; touch {}\ntouch {}", p(0), p(1), p(2), p(3))
}

fn pwned(dir: &std::path::Path) -> Vec<&'static str> {
    PWNED.into_iter().filter(|f| dir.join(f).exists()).collect()
}

#[test]
fn a_hostile_argument_stays_data_in_every_construct() {
    let bosun = bosun();
    let repo = repo_with_runbook("c.hcl", RUNBOOK);
    let trap = tempfile::tempdir().unwrap();
    let value = hostile(trap.path());
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["run", "--json", "c2", &value])).unwrap();
    let job = v["job"].as_str().unwrap().to_owned();
    let out = bosun.run(repo.path(), &["job", "wait", &job]);
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), bosun.log());
    assert_eq!(pwned(trap.path()), Vec::<&str>::new(), "the value ran as a command");
    let said = std::fs::read_to_string(repo.path().join("said.txt")).unwrap();
    assert!(said.starts_with(&format!("{value}\n")), "echo prints it as it is:\n{said}");
    assert!(said.contains(&format!("heredoc: {value}\n")), "so does the here-document:\n{said}");
    assert!(said.contains(&format!("sub: {value}")), "and the command substitution:\n{said}");
}

#[test]
fn a_hostile_queue_item_stays_data() {
    let bosun = bosun();
    let repo = repo_with_runbook("c.hcl", RUNBOOK);
    let (trap, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_runbook(&repo, "c.hcl", &RUNBOOK.replace("OUT", &home.path().display().to_string()));
    let title = hostile(trap.path());
    bosun.ok(repo.path(), &["queue", "push", "bugs", &format!("title={title}")]);
    bosun.ok(repo.path(), &["worker", "start", "fixer"]);
    let bug = home.path().join("bug.txt");
    let done = bosun_testkit::poll::wait_until(PATIENCE, || bug.exists());
    assert!(done, "the item's job ran:\n{}", bosun.log());
    assert_eq!(pwned(trap.path()), Vec::<&str>::new(), "the item ran as a command");
    let text =
        bosun_testkit::poll::wait_for(PATIENCE, || std::fs::read_to_string(&bug).ok().filter(|t| t.ends_with('\n')))
            .unwrap();
    assert_eq!(text, format!("bug: {title}\n"));
}

#[test]
fn a_template_handed_to_another_shell_is_refused_before_anything_starts() {
    let bosun = bosun();
    let runbook = "command \"c3\" {\n  args = \"<name>\"\n  run  = \"sh -c \\\"echo ${args.name}\\\"\"\n}\n";
    let repo = repo_with_runbook("c.hcl", runbook);
    let out = bosun.run(repo.path(), &["runbook", "check"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("hands a template to another shell"), "{err}");
    assert!(err.contains("$BOSUN_ARGS_NAME"), "it says what to write instead: {err}");
    let err = bosun.fails(repo.path(), &["run", "c3", "x"]);
    assert!(err.contains("hands a template to another shell"), "{err}");
    assert!(bosun.ok(repo.path(), &["job", "ls"]).trim().lines().count() <= 1, "no job was made");
}
