//! A value put into a shell command never runs as a command: run by a real `sh` with the
//! environment the rendering gives, each construct prints the value (or, where the shell itself
//! would split it, at least never runs it), and nothing a hostile value tries happens. A template
//! that another shell would parse again (`eval`, `sh -c "…"`) is refused.

use bosun_runbook::template::{render_shell, unsafe_reevaluation, Scope};
use proptest::prelude::*;

fn run(command: &str, env: &std::collections::BTreeMap<String, String>, dir: &std::path::Path) -> String {
    let out = std::process::Command::new("sh").arg("-c").arg(command).envs(env).current_dir(dir).output().expect("sh");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Shell constructs a value lands in, and what the command prints for a value `v` (None: the
/// shell may split it, only safety is checked).
const FORMS: [(&str, Option<(&str, &str)>); 9] = [
    ("printf %s ${var.x}", Some(("", ""))),
    ("printf %s \"${var.x}\"", Some(("", ""))),
    ("printf %s '${var.x}'", Some(("", ""))),
    ("printf %s \"a'${var.x}'b\"", Some(("a'", "'b"))),
    ("# don't worry\nprintf %s ${var.x}", Some(("", ""))),
    ("# it's untrusted\nprintf %s \"bug: ${var.x}\"", Some(("bug: ", ""))),
    ("cat <<EOF\n${var.x}\nEOF", Some(("", "\n"))),
    ("cat <<-'EOF'\n\t${var.x}\n\tEOF\nprintf %s ${var.x}", None),
    ("printf %s \"$(printf %s ${var.x})\"", None),
];

fn check(value: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut scope = Scope::new();
    scope.set("var", "x", value);
    let mut other = Scope::new();
    other.set("var", "x", "something else");
    for (form, printed) in FORMS {
        let command = render_shell(form, &scope).unwrap();
        // The text never depends on the value: the value is only ever in the environment.
        assert_eq!(command.text, render_shell(form, &other).unwrap().text, "{form:?}");
        let out = run(&command.text, &command.env, dir.path());
        if let Some((before, after)) = printed {
            assert_eq!(out, format!("{before}{value}{after}"), "{form:?} with {value:?} became {:?}", command.text);
        }
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{:?} with {value:?} created a file",
            command.text
        );
    }
}

#[test]
fn hostile_values_stay_data() {
    for value in [
        "'; touch pwned; '",
        "\"; touch pwned; \"",
        "$(touch pwned)",
        "`touch pwned`",
        "a\ntouch pwned",
        "x; touch pwned",
        "x && touch pwned",
        "x | touch pwned",
        "\\'\\\"$HOME",
        "it's a \"test\"",
        "${IFS}touch${IFS}pwned",
        "EOF\ntouch pwned\nEOF",
        "",
    ] {
        check(value);
    }
}

#[test]
fn templates_another_shell_parses_again_are_refused() {
    for form in [
        "eval \"echo ${var.x}\"",
        "sh -c \"echo ${var.x}\"",
        "bash -c 'echo ${var.x}'",
        "x=1; /bin/sh -c \"printf %s ${var.x}\"",
        "ssh host \"rm ${var.x}\"",
    ] {
        assert!(unsafe_reevaluation(form).is_some(), "{form}");
    }
    // What such a command should say instead works, and keeps the value data.
    let dir = tempfile::tempdir().unwrap();
    let mut scope = Scope::new();
    scope.set("var", "x", "$(touch pwned)");
    let command = render_shell("sh -c 'printf %s \"$BOSUN_VAR_X\"'", &scope).unwrap();
    assert_eq!(run(&command.text, &command.env, dir.path()), "$(touch pwned)");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_value_stays_data(value in "[ -~\n]{0,40}") {
        check(&value);
    }

    /// Generated shell texts around a template: whatever quoting, comments and here-documents
    /// stand before it, a hostile value never runs.
    #[test]
    fn any_shell_text_keeps_a_hostile_value_data(
        before in prop::collection::vec(prop_oneof![
            Just("'"), Just("\""), Just("# it's\n"), Just("cat <<EOF\n"), Just("\nEOF\n"), Just("\\"),
            Just("echo "), Just("$("), Just(")"), Just("`"), Just(" "), Just("\n"), Just("x"),
        ], 0..8),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut scope = Scope::new();
        scope.set("var", "x", "$(touch pwned1)`touch pwned2`;touch pwned3\ntouch pwned4");
        let text = format!("{}${{var.x}}", before.concat());
        let command = render_shell(&text, &scope).unwrap();
        if unsafe_reevaluation(&text).is_none() {
            let _ = std::process::Command::new("sh")
                .arg("-c")
                .arg(&command.text)
                .envs(&command.env)
                .current_dir(dir.path())
                .stdin(std::process::Stdio::null())
                .output();
            let made: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
            prop_assert!(made.is_empty(), "{:?} ran the value: {:?}", command.text, made);
        }
    }
}
