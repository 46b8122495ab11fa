//! `ModelServer`: a model API server on 127.0.0.1 for the real agent clients to talk to — the
//! Anthropic Messages API for Claude Code, the OpenAI Responses API for Codex. Its user queues
//! `Reply`s (text, a shell tool call, a stall, an HTTP error) and reads back every request it
//! received (`Logged`). Main-loop requests (those offering tools; for Codex, tools beyond the
//! `apply_patch` its title requests offer) take the replies in order; side requests (titles,
//! summaries, Claude's quota check) get a short text and leave the queue alone.
//!
//! Each connection is served on a thread of its own; dropping the `ModelServer` stops the server
//! and closes every connection.

use std::collections::HashMap;
use std::io::{BufReader, BufWriter};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use crate::http::{self, Request, Response, Stop};
use crate::script::{Logged, Reply, Script};
use crate::{anthropic, gemini, openai};

/// How often a wait for a request looks at the log.
const POLL: Duration = Duration::from_millis(5);

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("the model server cannot listen on 127.0.0.1: {0}")]
    Listen(std::io::Error),
    #[error("the model server cannot start its thread: {0}")]
    Thread(std::io::Error),
}

/// Which API a server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// Anthropic Messages (`/v1/messages`), for Claude Code.
    Anthropic,
    /// OpenAI Responses (`/v1/responses`), for Codex.
    OpenAi,
    /// The Gemini API (`/v1beta/models/{model}:streamGenerateContent`), for Gemini CLI.
    Gemini,
}

/// A scripted model server, listening until dropped.
pub struct ModelServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    accept: Option<JoinHandle<()>>,
}

struct Shared {
    api: Api,
    script: Mutex<Script>,
    stop: Stop,
    /// Every connection still open, by number, to shut them down when the server stops.
    connections: Mutex<HashMap<u64, TcpStream>>,
}

impl ModelServer {
    /// A server for `api` on a free port of 127.0.0.1.
    pub fn start(api: Api) -> Result<Self, ServerError> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(ServerError::Listen)?;
        let addr = listener.local_addr().map_err(ServerError::Listen)?;
        let shared = Arc::new(Shared {
            api,
            script: Mutex::new(Script::default()),
            stop: Stop::default(),
            connections: Mutex::new(HashMap::new()),
        });
        let accepting = Arc::clone(&shared);
        let accept = thread::Builder::new()
            .name("model-server-accept".into())
            .spawn(move || accept_loop(&listener, &accepting))
            .map_err(ServerError::Thread)?;
        Ok(Self { shared, addr, accept: Some(accept) })
    }

    pub fn api(&self) -> Api {
        self.shared.api
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// What a client is configured with: `http://127.0.0.1:P` for Anthropic
    /// (`ANTHROPIC_BASE_URL`) and Gemini (`GOOGLE_GEMINI_BASE_URL`), `http://127.0.0.1:P/v1` for OpenAI (a Codex provider's `base_url`).
    pub fn base_url(&self) -> String {
        match self.shared.api {
            Api::Anthropic | Api::Gemini => format!("http://{}", self.addr),
            Api::OpenAi => format!("http://{}/v1", self.addr),
        }
    }

    /// Queues `reply` for the next main-loop request that finds nothing queued before it.
    pub fn push(&self, reply: Reply) {
        self.shared.script().queue.push_back(reply);
    }

    /// Answers every model call (main-loop and side requests alike) with a 429 saying the limit
    /// resets at `until` (`Reply::Limited`) until then, leaving the queue alone; then answers
    /// again as before.
    pub fn limit_until(&self, until: SystemTime) {
        self.shared.script().limit = Some(crate::Limit { until, plan: false });
    }

    /// As `limit_until`, but the limit is a plan's usage limit (`Limit::plan`): Codex does not
    /// retry it and records its reset.
    pub fn usage_limit_until(&self, until: SystemTime) {
        self.shared.script().limit = Some(crate::Limit { until, plan: true });
    }

    /// How many replies are still queued.
    pub fn queued(&self) -> usize {
        self.shared.script().queue.len()
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<Logged> {
        self.shared.script().log.clone()
    }

    /// The main-loop requests received so far, oldest first.
    pub fn main_requests(&self) -> Vec<Logged> {
        self.shared.script().log.iter().filter(|r| r.main_loop).cloned().collect()
    }

    /// Waits until the log holds a request matching `pred` and returns the first such; `None`
    /// after `timeout`.
    pub fn wait_request(&self, timeout: Duration, pred: impl Fn(&Logged) -> bool) -> Option<Logged> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(found) = self.shared.script().log.iter().find(|r| pred(r)).cloned() {
                return Some(found);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(POLL);
        }
    }

    /// Waits until `count` main-loop requests have arrived; whether they did within `timeout`.
    pub fn wait_main_requests(&self, count: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.shared.script().log.iter().filter(|r| r.main_loop).count() >= count {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            thread::sleep(POLL);
        }
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.shared.stop.stop();
        // Wake the accept loop, which then sees the stop.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        for (_, connection) in self.shared.connections().drain() {
            let _ = connection.shutdown(Shutdown::Both);
        }
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

impl Shared {
    fn script(&self) -> MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn connections(&self) -> MutexGuard<'_, HashMap<u64, TcpStream>> {
        self.connections.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for (number, stream) in (0u64..).zip(listener.incoming()) {
        if shared.stop.is_stopped() {
            return;
        }
        let Ok(stream) = stream else { continue };
        let Ok(clone) = stream.try_clone() else { continue };
        shared.connections().insert(number, clone);
        let shared = Arc::clone(shared);
        // A connection that cannot get a thread is dropped, which the client sees as a reset.
        let _ = thread::Builder::new().name("model-server-conn".into()).spawn(move || {
            serve(stream, &shared);
            shared.connections().remove(&number);
        });
    }
}

/// Serves one connection's requests until it closes, errs, or the server stops.
fn serve(stream: TcpStream, shared: &Shared) {
    let _ = stream.set_nodelay(true);
    let Ok(write_half) = stream.try_clone() else { return };
    let mut reader = BufReader::new(stream);
    let mut writer = BufWriter::new(write_half);
    while !shared.stop.is_stopped() {
        let request = match http::read_request(&mut reader) {
            Ok(Some(request)) => request,
            Ok(None) | Err(_) => return,
        };
        let close = request.wants_close();
        let (response, logged) = respond(shared, &request);
        let body = request.method != "HEAD";
        let written = http::write_response(&mut writer, &response, close, body, &shared.stop);
        // The server is done with it even when the client hung up before the end (as a client
        // may once it has read a 429's status line): its answer time is this, either way.
        if let Some(entry) = shared.script().log.get_mut(logged) {
            entry.answered = Some(SystemTime::now());
        }
        if written.is_err() || close {
            return;
        }
    }
}

/// Logs `request` and works out its answer; the index of its log entry.
fn respond(shared: &Shared, request: &Request) -> (Response, usize) {
    let raw = String::from_utf8_lossy(&request.body).into_owned();
    let body: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
    let path = request.path().to_owned();
    let query = request.target.split_once('?').map(|(_, q)| q.to_owned()).unwrap_or_default();
    let method = request.method.as_str();
    let model_call = match shared.api {
        Api::Anthropic => anthropic::is_model_call(method, &path),
        Api::OpenAi => openai::is_model_call(method, &path),
        Api::Gemini => gemini::is_model_call(method, &path),
    };
    let main_loop = model_call
        && match shared.api {
            Api::Anthropic => anthropic::is_main_loop(&body),
            Api::OpenAi => openai::is_main_loop(request.header("x-codex-turn-metadata"), &body),
            Api::Gemini => gemini::is_main_loop(&body),
        };
    let mut script = shared.script();
    let reply = model_call.then(|| script.next(main_loop));
    let (response, usage) = match (&reply, shared.api) {
        (Some(reply), Api::Anthropic) => anthropic::answer(reply, &body),
        (Some(reply), Api::OpenAi) => openai::answer(reply, &body),
        (Some(reply), Api::Gemini) => gemini::answer(reply, &body, &path),
        (None, Api::Anthropic) => (anthropic::other(method, &path, &body), None),
        (None, Api::OpenAi) => (openai::other(method, &path), None),
        (None, Api::Gemini) => (gemini::other(method, &path, &body), None),
    };
    script.log.push(Logged {
        method: request.method.clone(),
        path,
        query,
        headers: request.headers.clone(),
        raw,
        body,
        at: Instant::now(),
        time: SystemTime::now(),
        main_loop,
        reply,
        answered: None,
        usage,
    });
    (response, script.log.len() - 1)
}
