//! Notices POSTed to a webhook: an agent's escalation (`--notify-webhook`) and a job's end
//! (`notify = { webhook = … }`), retried while the server fails, each delivery recorded.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use bosun_core::Event;
use support::*;

/// An HTTP server on 127.0.0.1 that answers with `statuses` in turn (then 200) and keeps the
/// body of every request.
struct Hook {
    url: String,
    bodies: Arc<Mutex<Vec<serde_json::Value>>>,
}

impl Hook {
    fn start(statuses: &[u16]) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let (kept, mut statuses) = (bodies.clone(), statuses.to_vec());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream);
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_err() {
                    continue;
                }
                kept.lock().unwrap().push(serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null));
                let status = if statuses.is_empty() { 200 } else { statuses.remove(0) };
                let answer = format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                let _ = reader.get_mut().write_all(answer.as_bytes());
            }
        });
        Self { url, bodies }
    }

    fn bodies(&self) -> Vec<serde_json::Value> {
        self.bodies.lock().unwrap().clone()
    }
}

fn daemon_with_short_backoff(bosun: &Bosun, cwd: &std::path::Path) {
    let out = bosun.command(cwd, &["daemon", "start"]).env("BOSUN_WEBHOOK_BACKOFF_MS", "10").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn sent(bosun: &Bosun) -> Vec<(u32, Option<String>)> {
    bosun
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::WebhookSent { attempts, error, .. } => Some((attempts, error)),
            _ => None,
        })
        .collect()
}

#[test]
fn an_escalation_is_posted_again_after_a_failure_and_its_delivery_recorded() {
    let (bosun, repo) = (bosun(), TempRepo::new());
    let hook = Hook::start(&[503]);
    daemon_with_short_backoff(&bosun, repo.path());
    let id =
        bosun.start(repo.path(), &["--notify-webhook", &hook.url, "--on-dead", "escalate", "--", "sh", "-c", "exit 3"]);
    let delivered = bosun_testkit::poll::wait_until(PATIENCE, || !sent(&bosun).is_empty());
    assert!(delivered, "no delivery recorded: {:?}\n{}", hook.bodies(), bosun.log());
    assert_eq!(sent(&bosun), [(2, None)], "delivered at the second try");
    let bodies = hook.bodies();
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    assert_eq!(bodies[0], bodies[1], "the same notice both times");
    assert_eq!(bodies[1]["kind"], "escalation");
    assert_eq!(bodies[1]["agent"], id.as_str());
    assert_eq!(bodies[1]["escalation"], 1, "escalation e1");
    assert!(bodies[1]["body"].as_str().unwrap().contains("bosun resolve e1"), "{bodies:?}");
}

#[test]
fn a_jobs_failure_goes_to_its_webhook_and_a_server_that_keeps_failing_is_recorded_as_such() {
    let hook = Hook::start(&[500, 500, 500, 500, 500]);
    let runbook = format!(
        r#"
command "build" {{
  run = {{ job = "build" }}
}}

job "build" {{
  notify = {{ webhook = "{url}" }}
  step "compile" {{
    run = "exit 1"
  }}
}}
"#,
        url = hook.url
    );
    let repo = repo_with_runbook("build.hcl", &runbook);
    let bosun = bosun();
    daemon_with_short_backoff(&bosun, repo.path());
    let job = bosun.run_job(repo.path(), &["build"]);
    let recorded = bosun_testkit::poll::wait_until(PATIENCE, || !sent(&bosun).is_empty());
    assert!(recorded, "{:?}", hook.bodies());
    let (attempts, error) = sent(&bosun).remove(0);
    assert_eq!(attempts, 5, "five tries");
    assert!(error.unwrap().contains("500"));
    let bodies = hook.bodies();
    assert_eq!(bodies.len(), 5);
    assert_eq!(bodies[0]["kind"], "job_failed");
    assert_eq!(bodies[0]["job"], job.as_str());
}

#[test]
fn a_webhook_that_is_not_an_http_url_is_refused_before_anything_starts() {
    let (bosun, repo) = (bosun(), TempRepo::new());
    for bad in ["ftp://example.com/x", "http://", "$(touch /tmp/x)", "http://a b"] {
        let out = bosun.run(repo.path(), &["agent", "start", "--notify-webhook", bad, "--", "true"]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("webhook"), "{bad}");
    }
    assert!(bosun.list().agents.is_empty());
    write_runbook(
        &repo,
        "bad.hcl",
        "job \"j\" {\n  notify = { webhook = \"file:///etc/passwd\" }\n  step \"s\" {\n    run = \"true\"\n  }\n}\n",
    );
    let out = bosun.run(repo.path(), &["runbook", "check"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("bad.hcl:2:") && err.contains("not an http:// or https:// URL"), "{err}");
}
