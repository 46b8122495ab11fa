//! The answers that stream: a watch (newline-separated JSON events in chunks, from a resource
//! version or with every object first, bookmarks when asked for, until its timeout, the client
//! going or the server stopping) and a followed container log.

use std::io::{self, Read, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::api::Watch;
use super::store::Kind;
use super::{http, Shared};

/// How often a watch that asked for bookmarks gets one when nothing else happens.
const BOOKMARK_EVERY: Duration = Duration::from_secs(30);

/// Streams a watch until its timeout, the client going, or the server stopping.
pub fn watch(shared: &Shared, w: &mut impl Write, watch: &Watch) -> io::Result<()> {
    http::start_stream(w)?;
    let deadline = Instant::now() + watch.timeout;
    let ns = watch.ns.as_deref();
    let mut since = match watch.since {
        Some(rv) if !watch.initial_events => rv,
        _ => {
            let (objects, rv) = {
                let store = shared.store();
                (store.list(watch.kind, ns, &watch.selector), store.rv())
            };
            for object in objects {
                send(w, "ADDED", &object)?;
            }
            if watch.initial_events {
                let mut mark = bookmark(watch.kind, rv);
                mark["metadata"]["annotations"] = json!({"k8s.io/initial-events-end": "true"});
                send(w, "BOOKMARK", &mark)?;
            }
            rv
        }
    };
    let mut last_sent = Instant::now();
    loop {
        let (changes, rv) = {
            let store = shared.store();
            let wait = deadline.saturating_duration_since(Instant::now()).min(BOOKMARK_EVERY);
            let (store, _) = shared
                .changed
                .wait_timeout_while(store, wait, |s| s.rv() <= since && !shared.stopped())
                .unwrap_or_else(|e| e.into_inner());
            (store.changes_after(since, watch.kind, ns, &watch.selector), store.rv())
        };
        for change in &changes {
            send(w, change.what, &change.object)?;
            last_sent = Instant::now();
        }
        since = rv;
        if shared.stopped() || Instant::now() >= deadline {
            return http::end_stream(w);
        }
        if watch.bookmarks && last_sent.elapsed() >= BOOKMARK_EVERY {
            send(w, "BOOKMARK", &bookmark(watch.kind, rv))?;
            last_sent = Instant::now();
        }
    }
}

/// Streams `docker logs -f` of container `id` (its stdout and stderr) until it ends or the
/// client goes.
pub fn logs(shared: &Shared, w: &mut impl Write, id: &str) -> io::Result<()> {
    let (mut read, write) = io::pipe()?;
    let mut docker = shared.engine.docker();
    docker.args(["logs", "-f", id]).stdin(Stdio::null()).stdout(write.try_clone()?).stderr(write);
    let mut child = docker.spawn()?;
    drop(docker);
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
    w.write_all(head.as_bytes())?;
    w.flush()?;
    let mut buf = [0u8; 8192];
    let result = loop {
        match read.read(&mut buf) {
            Ok(0) => break http::end_stream(w),
            Ok(n) => {
                if let Err(e) = http::write_chunk(w, &buf[..n]) {
                    break Err(e);
                }
            }
            Err(e) => break Err(e),
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    result
}

fn bookmark(kind: Kind, rv: u64) -> Value {
    json!({"kind": kind.name(), "apiVersion": "v1", "metadata": {"resourceVersion": rv.to_string()}})
}

fn send(w: &mut impl Write, what: &str, object: &Value) -> io::Result<()> {
    let mut line = json!({"type": what, "object": object}).to_string();
    line.push('\n');
    http::write_chunk(w, line.as_bytes())
}
