//! Issue 13's session host figures: a keystroke through a host's attach stream to its echo, the
//! CPU of 50 idle agents' hosts together, and hosts adopted after a daemon SIGKILL.

use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use bosun_host::HostClient;
use bosun_testkit::bosun::Bosun;
use bosun_testkit::repo::TempRepo;

use crate::{wait_secs, Figure};

const AGENTS: usize = 50;
const KEYS: usize = 50;
const IDLE: Duration = Duration::from_secs(20);

pub fn figures(bin: &Path) -> Vec<Figure> {
    let bosun = Bosun::new(bin);
    let repo = TempRepo::new();
    let mut ids = Vec::new();
    for n in 0..AGENTS {
        let name = format!("h{n}");
        let args = ["--session", "host", "--name", &name, "--", "sh", "-c", "while read l; do echo \"got: $l\"; done"];
        ids.push(bosun.start(repo.path(), &args));
    }
    wait_secs(120, || {
        (bosun.list().agents.iter().filter(|a| a.state.label() == "running").count() == AGENTS).then_some(())
    });
    let echoed = keystrokes(&bosun, &ids[0]);
    let cpu = hosts_cpu(&bosun);
    let pids: Vec<Option<u32>> = ids.iter().map(|id| bosun.agent(id).pid).collect();
    bosun.kill_daemon_hard();
    let listed = bosun.list(); // a new daemon
    let mut adopted = 0;
    for (id, pid) in ids.iter().zip(&pids) {
        match listed.agents.iter().find(|a| a.id.as_str() == id.as_str()) {
            // Alive, the same process: its host was found again, not a new one started.
            Some(a) if !a.state.is_dead() && a.pid == *pid => adopted += 1,
            Some(a) => println!("not adopted: {id} {} pid {:?} (was {pid:?})", a.state.label(), a.pid),
            None => println!("not listed: {id}"),
        }
    }
    vec![
        Figure::new(
            format!("--session host: keystroke to its echo on the attach stream (n={KEYS})"),
            echoed,
            "< 20 ms",
            "-",
        ),
        Figure::value(
            format!("{AGENTS} idle agents under bosun host: CPU of all hosts, {} s", IDLE.as_secs()),
            format!("{cpu:.2} % of a core"),
            "< 1 %",
            "-",
        ),
        Figure::value(
            format!("hosts adopted after a daemon SIGKILL ({AGENTS} agents)"),
            format!("{adopted}/{AGENTS}, {} restarted", AGENTS - adopted),
            "every one",
            "-",
        ),
    ]
}

/// A key typed on the host's attach stream until the terminal echoes it back.
fn keystrokes(bosun: &Bosun, id: &str) -> Vec<Duration> {
    let host = HostClient::new(bosun.state_dir().join("h").join(format!("bosun-{id}")));
    let mut conn = host.attach().expect("attach to the host");
    conn.set_read_timeout(Some(Duration::from_secs(5))).expect("a read timeout");
    let mut buf = [0u8; 64 * 1024];
    // The screen's redraw first.
    let _ = conn.read(&mut buf);
    let mut samples = Vec::new();
    for n in 0..KEYS {
        let key = b'a' + (n % 26) as u8;
        let t0 = Instant::now();
        conn.write_all(&[key]).expect("type");
        loop {
            let got = conn.read(&mut buf).expect("its echo");
            assert!(got > 0, "the host went");
            if buf[..got].contains(&key) {
                break;
            }
        }
        samples.push(t0.elapsed());
    }
    conn.write_all(b"\r").expect("type");
    samples
}

/// The CPU all of bosun's session hosts use over `IDLE`, in percent of one core.
fn hosts_cpu(bosun: &Bosun) -> f64 {
    let out = std::process::Command::new("pgrep")
        .args(["-f", "--", &format!("host serve --socket {}", bosun.state_dir().display())])
        .output()
        .expect("pgrep");
    let pids: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect();
    assert_eq!(pids.len(), AGENTS, "one host per agent");
    crate::cpu_percent(&pids, IDLE)
}
