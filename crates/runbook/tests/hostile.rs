//! Runbooks written to hurt the checker: cycles of jobs and of locals, twenty thousand steps,
//! byte-order marks, files that are not UTF-8 or too big. Each is an error that says what is
//! wrong and where, or loads as it should.

use std::fmt::Write as _;
use std::path::PathBuf;

use bosun_runbook::load::{load, read_dir, ReadError, RunbookError, SourceFile, MAX_FILE_BYTES};

fn src(name: &str, text: &str) -> SourceFile {
    SourceFile { path: PathBuf::from(name), text: text.to_owned() }
}

fn errors(sources: &[SourceFile]) -> Vec<RunbookError> {
    load(sources).expect_err("should not load")
}

/// A job whose one step runs `runs`.
fn job_running(name: &str, runs: &str) -> String {
    format!("job \"{name}\" {{\n  step \"s\" {{\n    run = {{ job = \"{runs}\" }}\n  }}\n}}\n")
}

#[test]
fn jobs_that_run_each_other_are_a_cycle_named_where_it_closes() {
    let e = errors(&[src("a.hcl", &job_running("a", "b")), src("b.hcl", &job_running("b", "a"))]);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!((e[0].file.to_str(), e[0].line, e[0].column), (Some("b.hcl"), 2, 3), "{e:?}");
    assert!(e[0].message.contains("job \"a\" → job \"b\" → job \"a\""), "{}", e[0]);

    let chain = [job_running("a", "b"), job_running("b", "c"), job_running("c", "a")].concat();
    let e = errors(&[src("chain.hcl", &chain)]);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].message.contains("job \"a\" → job \"b\" → job \"c\" → job \"a\""), "{}", e[0]);

    let e = errors(&[src("self.hcl", &job_running("a", "a"))]);
    assert!(e.len() == 1 && e[0].message.contains("job \"a\" → job \"a\""), "{e:?}");
}

#[test]
fn a_long_cycle_of_jobs_is_named_in_part() {
    let jobs: String =
        (0..5000).map(|i| job_running(&format!("j{i:04}"), &format!("j{:04}", (i + 1) % 5000))).collect();
    let e = errors(&[src("ring.hcl", &jobs)]);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].message.contains("job \"j0000\" → job \"j0001\""), "{}", e[0]);
    assert!(e[0].message.contains("… and 4991 more"), "{}", e[0]);
}

#[test]
fn locals_made_of_each_other_are_a_cycle() {
    let text = "job \"x\" {\n  locals = { a = \"${local.b}\", b = \"<${local.a}>\", c = \"${local.c}\", d = \"${local.a}\" }\n  step \"s\" {\n    run = \"true\"\n  }\n}\n";
    let e = errors(&[src("l.hcl", text)]);
    let messages: Vec<&str> = e.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(e.len(), 2, "{messages:?}");
    assert!(messages.iter().any(|m| m.contains("local \"a\" → local \"b\" → local \"a\"")), "{messages:?}");
    assert!(messages.iter().any(|m| m.contains("local \"c\" → local \"c\"")), "{messages:?}");
    assert!(e.iter().all(|e| e.line == 1), "{e:?}");
}

#[test]
fn twenty_thousand_steps_are_checked_and_a_bad_name_lists_ten() {
    let n = 20_000;
    let mut text = String::from("job \"long\" {\n");
    for i in 0..n {
        let next = if i + 1 < n { format!("s{}", i + 1) } else { "done".into() };
        let back = if i + 1 < n { next.clone() } else { "s0".into() };
        let cancel = if i == n / 2 { "\n    on_cancel = \"nope\"" } else { "" };
        write!(text, "  step \"s{i}\" {{\n    run = \"true\"\n    on_done = \"{next}\"\n    on_fail = \"{back}\"{cancel}\n  }}\n")
            .unwrap();
    }
    text.push_str("}\n");
    // Every step reaches the last, which ends the job: the one problem is the unknown step.
    let e = errors(&[src("long.hcl", &text)]);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].line, 2 + 5 * n / 2 + 4, "{e:?}");
    assert_eq!(
        e[0].message,
        "no step \"nope\" in job \"long\" (steps: s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, … and 19990 more)"
    );
    let rb = load(&[src("long.hcl", &text.replace("\n    on_cancel = \"nope\"", ""))]).expect("loads");
    assert_eq!(rb.jobs["long"].steps.len(), n);
}

#[test]
fn a_leading_byte_order_mark_is_not_part_of_the_text() {
    let rb = load(&[
        src("a.hcl", "\u{feff}agent \"a\" {\n  run = \"claude\"\n}\n"),
        src("b.toml", "\u{feff}[agent.b]\nrun = \"claude\"\n"),
    ])
    .expect("loads");
    assert_eq!(rb.agents.keys().collect::<Vec<_>>(), ["a", "b"]);
    // Places count from after the mark.
    let e = errors(&[src("c.hcl", "\u{feff}agent \"a\" { nope = 1 }\n")]);
    assert_eq!((e[0].line, e[0].column), (1, 13), "{e:?}");
}

#[test]
fn a_file_that_is_not_utf8_is_named_with_its_place() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.hcl"), "agent \"a\" {}\n").unwrap();
    std::fs::write(dir.path().join("b.hcl"), b"agent \"b\" {\n  run = \"cl\xffaude\"\n}\n").unwrap();
    let e = read_dir(dir.path()).expect_err("not UTF-8");
    assert!(matches!(&e, ReadError::NotUtf8 { offset: 23, line: 2, column: 12, .. }), "{e:?}");
    let shown = e.to_string();
    assert!(shown.starts_with(&format!("{}:2:12: not UTF-8", dir.path().join("b.hcl").display())), "{shown}");
}

#[test]
fn a_file_over_the_limit_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.hcl");
    std::fs::File::create(&big).unwrap().set_len(MAX_FILE_BYTES + 1).unwrap();
    let e = read_dir(dir.path()).expect_err("too big");
    assert!(matches!(&e, ReadError::TooBig { path } if *path == big), "{e:?}");
    assert!(e.to_string().contains("at most 16777216 bytes"), "{e}");
    std::fs::File::create(&big).unwrap().set_len(MAX_FILE_BYTES).unwrap();
    assert_eq!(read_dir(dir.path()).expect("at the limit")[0].text.len() as u64, MAX_FILE_BYTES);
}
