//! Turn classification end to end: a claudeless agent's idle turns are classified by a
//! guardrail, then by a classifier command, and `on_idle` routes each class to its own action.

mod support;

use bosun_core::{ClassSource, MessageKind, MessageState, TurnClass};
use support::*;

#[test]
fn a_guardrail_then_a_classifier_command_classify_turns_and_each_class_gets_its_own_action() {
    let bosun = bosun();
    let runbook = format!(
        r#"
command "ask" {{
  run = {{ agent = "helper" }}
}}

agent "helper" {{
  run    = ["{}", "--scenario", "{}"]
  prompt = "ping"
  classify = {{
    rules   = [{{ name = "pong", pattern = "\\bpong\\b", class = "working" }}]
    command = ["sh", "-c", "grep -q 'tests pass' && echo needs_review"]
  }}
  on_idle = {{
    working      = {{ action = "nudge", message = "status please" }}
    needs_review = "done"
    other        = "escalate"
  }}
}}
"#,
        claudeless(),
        scenario("chat")
    );
    let repo = repo_with_runbook("classify.hcl", &runbook);
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["run", "--json", "ask"])).unwrap();
    let out = bosun.ok(repo.path(), &["job", "wait", v["job"].as_str().unwrap()]);
    assert!(out.contains("done"), "{out}");

    let id = bosun.list().agents[0].id.to_string();
    let detail = bosun.show(&id);
    let nudged = detail
        .messages
        .iter()
        .any(|m| m.kind == MessageKind::Nudge && m.text == "status please" && m.state == MessageState::Delivered);
    assert!(nudged, "\"pong\" was classified working by the guardrail, and working nudges: {:?}", detail.messages);
    let verdict = detail.agent.verdict.expect("the last turn is classified");
    assert_eq!((verdict.class, verdict.source), (TurnClass::NeedsReview, ClassSource::Classifier));
    assert_eq!(bosun.ok(repo.path(), &["escalations"]).trim(), "nothing needs a person");
    let shown = bosun.ok(repo.path(), &["show", &id]);
    assert!(shown.contains("needs_review (classifier)"), "{shown}");
}

#[test]
fn a_guardrail_that_does_not_compile_is_a_runbook_error_with_its_place() {
    let runbook = r#"
agent "helper" {
  run      = "claude"
  classify = { rules = [{ name = "bad", pattern = "(unclosed", class = "done" }] }
}
"#;
    let repo = repo_with_runbook("bad.hcl", runbook);
    let bosun = bosun();
    let err = bosun.fails(repo.path(), &["runbook", "check"]);
    let out = format!("{err}{}", String::from_utf8_lossy(&bosun.run(repo.path(), &["runbook", "check"]).stdout));
    assert!(out.contains("bad.hcl:4") && out.contains("rule \"bad\""), "{out}");
}

#[test]
fn a_classifier_whose_program_is_not_logged_in_is_warned_of_and_not_run_the_heuristic_decides() {
    let Some(codex) = bosun_testkit::tools::codex() else { return };
    let home = tempfile::tempdir().unwrap();
    let bosun = bosun().with_env("CODEX_HOME", home.path().to_str().unwrap());
    let runbook = format!(
        r#"
command "ask" {{
  run = {{ agent = "helper" }}
}}

agent "helper" {{
  run      = ["{}", "--scenario", "{}"]
  prompt   = "ping"
  classify = {{ command = ["{}", "exec", "classify this"] }}
  on_idle  = {{ other = "done" }}
}}
"#,
        claudeless(),
        scenario("chat"),
        codex.display()
    );
    let repo = repo_with_runbook("classify.hcl", &runbook);
    let out = bosun.run(repo.path(), &["run", "--json", "ask"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let warned = String::from_utf8_lossy(&out.stderr);
    assert!(warned.contains("is not ready") && warned.contains("login status` failed"), "{warned}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let done = bosun.ok(repo.path(), &["job", "wait", v["job"].as_str().unwrap()]);
    assert!(done.contains("done"), "{done}");
    let id = bosun.list().agents[0].id.to_string();
    let verdict = bosun.show(&id).agent.verdict.expect("its turn is classified");
    assert_eq!(verdict.source, ClassSource::Heuristic, "{verdict:?}");
    assert!(verdict.error.is_some_and(|e| e.contains("not run, its program is not ready")), "recorded as such");
}
