//! A value interpolated into a shell command never runs as a command: run by a real `sh`, the
//! command prints the value exactly, and nothing it tries to do happens.

use bosun_runbook::template::{render, Scope, Target};
use proptest::prelude::*;

fn run(command: &str, dir: &std::path::Path) -> String {
    let out = std::process::Command::new("sh").arg("-c").arg(command).current_dir(dir).output().expect("sh");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const FORMS: [&str; 3] = ["printf %s ${var.x}", "printf %s \"${var.x}\"", "printf %s '${var.x}'"];

fn check(value: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut scope = Scope::new();
    scope.set("var", "x", value);
    for form in FORMS {
        let command = render(form, &scope, Target::Shell).unwrap();
        assert_eq!(run(&command, dir.path()), value, "{form} with {value:?} became {command:?}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "{command:?} created a file");
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
        "\\'\\\"$HOME",
        "it's a \"test\"",
        "",
    ] {
        check(value);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_value_stays_data(value in "[ -~\n]{0,40}") {
        check(&value);
    }
}
