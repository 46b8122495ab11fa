//! Shell completions, the man page, and logs without colour codes.

mod support;

use support::*;

#[test]
fn completions_for_each_shell_name_the_commands_and_bash_reads_its_script() {
    let bosun = bosun();
    for shell in ["bash", "zsh", "fish"] {
        let out = bosun.ok(bosun.state_dir(), &["completions", shell]);
        for word in ["escalations", "workspace", "doctor"] {
            assert!(out.contains(word), "{shell} completions lack {word}");
        }
        if shell == "bash" {
            let script = bosun.state_dir().join("bosun.bash");
            std::fs::write(&script, &out).unwrap();
            let checked = std::process::Command::new("bash").arg("-n").arg(&script).output().unwrap();
            assert!(checked.status.success(), "{}", String::from_utf8_lossy(&checked.stderr));
        }
    }
    let out = bosun.run(bosun.state_dir(), &["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2), "an unknown shell is bad usage");
}

#[test]
fn the_man_page_is_roff_with_the_commands_and_exit_codes() {
    let bosun = bosun();
    let page = bosun.ok(bosun.state_dir(), &["man"]);
    assert!(page.contains(".TH bosun 1"), "{page}");
    assert!(page.contains("escalations") && page.contains("Exit codes"), "{page}");
}

#[test]
fn the_daemon_log_holds_no_colour_codes() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = bosun.start(repo.path(), &["--", "sleep", "600"]);
    bosun.ok(repo.path(), &["kill", &id]);
    let log = bosun.log();
    assert!(log.contains("daemon ready"), "{log}");
    assert!(!log.contains('\u{1b}'), "escape codes in daemon.log: {log:?}");
}
