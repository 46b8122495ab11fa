//! A daemon that dies under a call is invisible to the caller: the CLI starts a new one and
//! sends the request again with the same id, and a request carried out already is answered
//! with what it did, never carried out twice.

mod support;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use support::*;

#[test]
fn a_start_whose_daemon_died_before_answering_is_answered_from_what_it_recorded() {
    let (bosun, repo) = (bosun(), TempRepo::new());
    // This daemon dies once it has recorded the first request sent with an id, unanswered.
    let started = bosun.command(repo.path(), &["daemon", "start"]).env("BOSUN_FAULT", "unanswered:1").output();
    assert!(started.unwrap().status.success());
    let first = bosun.daemon_pid().expect("a daemon");

    let id = bosun.start(repo.path(), &["--name", "once", "--", "sleep", "600"]);

    assert_ne!(bosun.daemon_pid(), Some(first), "the first daemon died and a new one answered");
    let agents = bosun.list().agents;
    assert_eq!(agents.len(), 1, "started once: {agents:#?}");
    assert_eq!(agents[0].id.as_str(), id, "and the answer names it");
    assert!(bosun.log().contains("carried out already"), "{}", bosun.log());
    bosun.wait_state(&id, "running");
    let created = bosun.events().iter().filter(|e| matches!(e, bosun_core::Event::AgentCreated { .. })).count();
    assert_eq!(created, 1);
}

#[test]
fn calls_in_a_loop_all_go_through_thirty_sigkills_of_the_daemon_and_none_acts_twice() {
    let (bosun, repo) = (bosun(), TempRepo::new());
    bosun.list();
    let done = AtomicBool::new(false);
    let (mut ids, mut failed, mut calls) = (Vec::new(), Vec::new(), 0);
    let kills = std::thread::scope(|s| {
        let killer = s.spawn(|| {
            let mut rng = fastrand::Rng::with_seed(20_261_124);
            let mut kills = 0;
            while kills < 30 && !done.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(rng.u64(30..150)));
                if let Some(pid) = bosun.daemon_pid() {
                    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
                    kills += 1;
                    // The next kill waits for a new daemon.
                    bosun_testkit::poll::wait_until(PATIENCE, || bosun.daemon_pid().is_some_and(|p| p != pid));
                }
            }
            kills
        });
        while !killer.is_finished() {
            calls += 1;
            let name = format!("a{calls}");
            let out = bosun.run(repo.path(), &["agent", "start", "--json", "--name", &name, "--", "sleep", "600"]);
            match serde_json::from_slice::<serde_json::Value>(&out.stdout) {
                Ok(v) if out.status.success() => ids.push(v["agent"].as_str().unwrap().to_owned()),
                _ => failed.push(format!("start {name}: {}", String::from_utf8_lossy(&out.stderr))),
            }
            let out = bosun.run(repo.path(), &["ls", "--json"]);
            if !out.status.success() {
                failed.push(format!("ls: {}", String::from_utf8_lossy(&out.stderr)));
            }
        }
        done.store(true, Ordering::SeqCst);
        killer.join().unwrap()
    });
    println!("{kills} SIGKILLs under {calls} starts and as many listings: {} calls failed", failed.len());
    assert_eq!(failed, Vec::<String>::new(), "{}", bosun.log());
    let listed: BTreeSet<String> = bosun.list().agents.iter().map(|a| a.id.to_string()).collect();
    let answered: BTreeSet<String> = ids.iter().cloned().collect();
    assert_eq!(answered.len(), ids.len(), "no two starts answered with one agent");
    assert_eq!(listed, answered, "every agent started is one a call was answered with, and only once");
}
