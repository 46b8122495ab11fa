//! bosun as the permission policy, through the CLI: `--allow` / `--deny` rules answer a Claude
//! agent's PermissionRequest hook at once (the hook prints the answer), every answer is shown by
//! `bosun show`; what no rule covers is a prompt that says what it asks.

mod support;

use support::*;

/// Runs the hook command bosun installed for agent `id`, as Claude would, with `payload` on
/// stdin; returns what it printed.
fn permission_request(bosun: &bosun_testkit::bosun::Bosun, id: &str, payload: &str) -> String {
    let out = bosun.hook(id, "PermissionRequest", payload.as_bytes());
    assert!(out.status.success(), "the hook never fails the agent: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn request(command: &str) -> String {
    serde_json::json!({
        "hook_event_name": "PermissionRequest",
        "session_id": "s",
        "tool_name": "Bash",
        "tool_input": { "command": command },
    })
    .to_string()
}

#[test]
fn rules_answer_permission_requests_at_once_and_the_rest_wait_for_a_person() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("chat"));
    let args = [
        "--allow",
        "Bash(git *)",
        "--deny",
        "Bash(git push *)",
        "--on-prompt",
        "escalate",
        "--",
        &cl,
        "--scenario",
        &sc,
    ];
    let id = bosun.start(repo.path(), &args);
    bosun.wait_state(&id, "idle");

    let allowed: serde_json::Value = serde_json::from_str(&permission_request(&bosun, &id, &request("git status")))
        .expect("the hook prints its answer as JSON");
    assert_eq!(allowed["hookSpecificOutput"]["hookEventName"], "PermissionRequest");
    assert_eq!(allowed["hookSpecificOutput"]["decision"]["behavior"], "allow");
    let denied: serde_json::Value =
        serde_json::from_str(&permission_request(&bosun, &id, &request("git push origin main"))).unwrap();
    assert_eq!(denied["hookSpecificOutput"]["decision"]["behavior"], "deny");
    assert!(denied["hookSpecificOutput"]["decision"]["message"].as_str().unwrap().contains("Bash(git push *)"));
    let open = |bosun: &bosun_testkit::bosun::Bosun| -> Vec<serde_json::Value> {
        let out = bosun.ok(repo.path(), &["escalations", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v.as_array().cloned().unwrap_or_default()
    };
    assert!(open(&bosun).is_empty(), "answered requests ask nobody");

    // No rule covers it: the hook prints nothing (Claude shows its dialog) and a person is asked.
    assert_eq!(permission_request(&bosun, &id, &request("cargo publish")), "");
    let agent = bosun.wait_state(&id, "prompt(permission)");
    assert_eq!(agent.asks.as_deref(), Some("Bash: cargo publish"));
    let escalations = open(&bosun);
    assert_eq!(escalations.len(), 1);
    let reason = escalations[0]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("permission dialog: Bash: cargo publish"), "{reason}");

    let show = bosun.ok(repo.path(), &["show", &id]);
    assert!(show.contains("permission allowed Bash \"git status\" by Bash(git *)"), "{show}");
    assert!(show.contains("permission denied Bash \"git push origin main\" by Bash(git push *)"), "{show}");
    assert!(show.contains("asks       Bash: cargo publish"), "{show}");
}

#[test]
fn a_bad_rule_is_refused_before_anything_starts() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let err = bosun.fails(repo.path(), &["agent", "start", "--allow", "Bash(git *", "--", "claude"]);
    assert!(err.contains("not a permission rule") && err.contains("TOOL(PATTERN)"), "{err}");
    assert!(bosun.list().agents.is_empty());
}

#[test]
fn answer_allow_picks_the_dialogs_yes() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("permission"));
    let id = bosun.start(repo.path(), &claude_args(&cl, &sc, &["--prompt", "clean up"]));
    let agent = bosun.wait_state(&id, "prompt(permission)");
    assert_eq!(agent.asks.as_deref(), Some("Bash: echo cleaned > cleaned.txt"), "what the dialog asks");
    bosun.wait_screen(&id, "Do you want to proceed?");
    let out = bosun.ok(repo.path(), &["answer", &id, "allow"]);
    assert_eq!(out.trim(), format!("answered {id}'s dialog with allow: \"Yes\""));
    // claudeless does not run the command; its screen drops the dialog, denying nothing.
    let gone = bosun_testkit::poll::wait_until(PATIENCE, || {
        !bosun.ok(repo.path(), &["peek", &id]).contains("Do you want to proceed?")
    });
    assert!(gone, "the dialog is answered");
    assert!(!bosun.ok(repo.path(), &["peek", &id]).contains("Permission denied"), "and answered yes");
    // bosun takes the answer as given once its own look finds the dialog gone.
    let known = bosun_testkit::poll::wait_until(PATIENCE, || !bosun.agent(&id).state.label().starts_with("prompt"));
    assert!(known, "bosun knows it is answered");
}

#[test]
fn resolve_with_an_answer_denies_and_hands_over_what_to_do_instead() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("permission"));
    let id = bosun.start(repo.path(), &claude_args(&cl, &sc, &["--prompt", "clean up", "--on-prompt", "escalate"]));
    bosun.wait_state(&id, "prompt(permission)");
    bosun.wait_screen(&id, "Do you want to proceed?");
    let out = bosun.ok(repo.path(), &["resolve", "e1", "--answer", "deny", "--message", "leave the build alone"]);
    assert!(out.contains("resolved e1; message"), "{out}");
    bosun.wait_screen(&id, "[Permission denied for Bash: echo cleaned");
    assert!(bosun.ok(repo.path(), &["escalations"]).contains("nothing needs a person"));
}

#[test]
fn answering_an_agent_at_no_dialog_is_refused_and_changes_nothing() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("chat"));
    let id = bosun.start(repo.path(), &["--", &cl, "--scenario", &sc]);
    bosun.wait_state(&id, "idle");
    let err = bosun.fails(repo.path(), &["answer", &id, "allow"]);
    assert!(err.contains("waits at no dialog") && err.contains("idle"), "{err}");
    let err = bosun.fails(repo.path(), &["answer", &id, "maybe"]);
    assert!(err.contains("allow, deny"), "{err}");
    assert_eq!(bosun.agent(&id).state.label(), "idle");
    assert!(bosun.show(&id).messages.is_empty());
}
