//! `bosun runbook ls | check` on real files.

mod support;

use support::*;

#[test]
fn check_finds_the_nearest_runbooks_and_places_every_error() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let dir = repo.path().join(".bosun/runbooks");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("a.hcl"),
        "job \"x\" {\n  step \"s\" {\n    run = \"true\"\n    on_dne = \"done\"\n  }\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("b.toml"), "[agent.y]\nrun = \"claude\"\non_idle = { action = \"jump\" }\n").unwrap();
    let nested = repo.path().join("src/deep");
    std::fs::create_dir_all(&nested).unwrap();
    let out = bosun.run(&nested, &["runbook", "check"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a.hcl:4:5: unknown field `on_dne`"), "{err}");
    assert!(err.contains("b.toml:3:11: on_idle"), "{err}");
    assert!(err.contains("2 error(s)"), "{err}");
}

#[test]
fn the_example_runbooks_check_and_list() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let dir = repo.path().join(".bosun/runbooks");
    std::fs::create_dir_all(&dir).unwrap();
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/runbooks");
    for f in std::fs::read_dir(examples).unwrap().flatten() {
        std::fs::copy(f.path(), dir.join(f.file_name())).unwrap();
    }
    let out = bosun.ok(repo.path(), &["runbook", "check"]);
    assert!(out.starts_with("ok: 4 file(s), 1 command(s), 4 job(s)") && out.contains("2 plan(s)"), "{out}");
    let ls = bosun.ok(repo.path(), &["runbook", "ls"]);
    assert!(ls.contains("plan → implement → check") && ls.contains("bugs → job fix ×2"), "{ls}");
    assert!(ls.contains("schema (job artifact) → api (job artifact) → ui (job artifact)"), "{ls}");
    assert!(ls.contains("schema (job part) → api (job part), ui (job part) → docs (job part)"), "{ls}");
}

#[test]
fn without_runbooks_check_says_where_to_put_them() {
    let bosun = bosun();
    let plain = tempfile::tempdir().unwrap();
    let err = bosun.fails(plain.path(), &["runbook", "check"]);
    assert!(err.contains("no .bosun/runbooks/") && err.trim().lines().count() == 1, "{err}");
}

#[test]
fn check_names_a_cycle_of_jobs_where_it_closes() {
    let bosun = bosun();
    let job = |name: &str, runs: &str| {
        format!("job \"{name}\" {{\n  step \"s\" {{\n    run = {{ job = \"{runs}\" }}\n  }}\n}}\n")
    };
    let repo = repo_with_runbook("a.hcl", &job("a", "b"));
    write_runbook(&repo, "b.hcl", &job("b", "a"));
    let err = bosun.fails(repo.path(), &["runbook", "check"]);
    assert!(
        err.contains(
            "b.hcl:2:3: step \"s\" of job \"b\" runs a job that leads back to it: job \"a\" → job \"b\" → job \"a\""
        ),
        "{err}"
    );
}

#[test]
fn check_reads_a_byte_order_mark_and_names_a_file_that_is_not_utf8() {
    let bosun = bosun();
    let repo = repo_with_runbook("a.hcl", "\u{feff}agent \"a\" {\n  run = \"claude\"\n}\n");
    let out = bosun.ok(repo.path(), &["runbook", "check"]);
    assert!(out.starts_with("ok: 1 file(s)") && out.contains("1 agent(s)"), "{out}");
    std::fs::write(repo.path().join(".bosun/runbooks/b.toml"), b"[agent.b]\nrun = \"\xc3\x28\"\n").unwrap();
    let err = bosun.fails(repo.path(), &["runbook", "check"]);
    assert!(err.contains("b.toml:2:8: not UTF-8 text (byte 17)"), "{err}");
}

/// The README says what `bosun runbook check` exits with wherever it says it, and says it truly.
#[test]
fn check_exits_with_the_code_the_readme_gives_everywhere() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let dir = repo.path().join(".bosun/runbooks");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.hcl"), "job \"x\" {\n  step \"s\" {\n    run = { agent = \"nobody\" }\n  }\n}\n")
        .unwrap();
    let out = bosun.run(repo.path(), &["runbook", "check"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let told: Vec<&str> = readme.lines().filter(|l| l.contains("runbook check") && l.contains("exit ")).collect();
    assert!(!told.is_empty(), "the README gives check's exit code somewhere");
    for line in told {
        assert!(line.contains("exit 2"), "the README gives another exit code: {line}");
    }
    let listed =
        readme.lines().any(|l| l.contains("`2` bad usage or input") && l.contains("`bosun runbook check` with errors"));
    assert!(listed, "the exit codes list check's errors under 2");
}
