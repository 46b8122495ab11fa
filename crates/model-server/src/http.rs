//! The little HTTP/1.1 the model server speaks: reading one request (request line, headers,
//! a `Content-Length` or chunked body, every read bounded) and writing one response, either whole
//! or as a stream of server-sent events with pauses between them. Connections are kept alive.

use crate::http_lines::{invalid, read_head, read_line};
use std::io::{self, BufRead, Write};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// The most header lines one request may have.
const MAX_HEADERS: usize = 256;
/// The largest request body read (a long conversation is a few megabytes).
const MAX_BODY: usize = 64 * 1024 * 1024;

/// One request as it arrived.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub method: String,
    /// The request target, query string included.
    pub target: String,
    /// Header names in lower case, in the order they came.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The target without its query string.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    /// Whether the client asked to close the connection after this exchange.
    pub fn wants_close(&self) -> bool {
        self.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

/// Reads the next request on a connection; `None` when the client closed it between requests.
pub(crate) fn read_request(r: &mut impl BufRead) -> io::Result<Option<Request>> {
    let Some(head) = read_head(r, MAX_HEADERS)? else { return Ok(None) };
    let mut request = Request { method: head.method, target: head.target, headers: head.headers, body: Vec::new() };
    let chunked = request.header("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        request.body = read_chunked(r)?;
    } else if let Some(len) = request.header("content-length") {
        let len: usize = len.parse().map_err(|_| invalid(format!("bad Content-Length {len:?}")))?;
        if len > MAX_BODY {
            return Err(invalid(format!("a body of {len} bytes is over the limit")));
        }
        request.body = vec![0; len];
        r.read_exact(&mut request.body)?;
    }
    Ok(Some(request))
}

/// A `Transfer-Encoding: chunked` body, trailers skipped.
fn read_chunked(r: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line = read_line(r)?.ok_or_else(|| invalid("connection closed inside a chunked body"))?;
        let size = line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size, 16).map_err(|_| invalid(format!("bad chunk size {line:?}")))?;
        if size == 0 {
            while read_line(r)?.is_some_and(|l| !l.is_empty()) {}
            return Ok(body);
        }
        if body.len() + size > MAX_BODY {
            return Err(invalid("a chunked body is over the limit"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        r.read_exact(&mut body[start..])?;
        read_line(r)?;
    }
}

/// What a server answers.
#[derive(Clone, Debug)]
pub(crate) enum Response {
    /// A whole body at once (JSON, as every answer but a stream is).
    Json { status: u16, headers: Vec<(String, String)>, body: serde_json::Value },
    /// `200` with `text/event-stream`, sent piece by piece.
    Events { headers: Vec<(String, String)>, pieces: Vec<Piece> },
}

/// A part of an event stream.
#[derive(Clone, Debug)]
pub(crate) enum Piece {
    /// One event: its `event:` name (when the API uses them) and its `data:` JSON.
    Event { name: Option<String>, data: serde_json::Value },
    /// Silence on the connection for this long.
    Pause(Duration),
}

/// Set once when the server stops; pauses wait on it so a stopping server never hangs.
#[derive(Default)]
pub(crate) struct Stop {
    stopped: Mutex<bool>,
    changed: Condvar,
}

impl Stop {
    pub fn stop(&self) {
        *self.stopped.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.changed.notify_all();
    }

    pub fn is_stopped(&self) -> bool {
        *self.stopped.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits `pause`, or less when the server stops meanwhile; whether it stopped.
    pub fn wait(&self, pause: Duration) -> bool {
        let guard = self.stopped.lock().unwrap_or_else(|e| e.into_inner());
        let (guard, _) =
            self.changed.wait_timeout_while(guard, pause, |stopped| !*stopped).unwrap_or_else(|e| e.into_inner());
        *guard
    }
}

/// Writes `response`; `close` adds `Connection: close`; without `body` (the answer to `HEAD`)
/// only the head is written. An error means the connection is unusable.
pub(crate) fn write_response(
    w: &mut impl Write,
    response: &Response,
    close: bool,
    body: bool,
    stop: &Stop,
) -> io::Result<()> {
    let connection = if close { "close" } else { "keep-alive" };
    match response {
        Response::Json { status, headers, body: json } => {
            let bytes = serde_json::to_vec(json).map_err(io::Error::other)?;
            let mut head = status_line(*status);
            head.push_str(&format!(
                "content-type: application/json\r\ncontent-length: {}\r\nconnection: {connection}\r\n",
                bytes.len()
            ));
            push_headers(&mut head, headers);
            w.write_all(head.as_bytes())?;
            if body {
                w.write_all(&bytes)?;
            }
            w.flush()
        }
        Response::Events { headers, pieces } => {
            let mut head = status_line(200);
            head.push_str(&format!(
                "content-type: text/event-stream; charset=utf-8\r\ncache-control: no-cache\r\n\
                 transfer-encoding: chunked\r\nconnection: {connection}\r\n"
            ));
            push_headers(&mut head, headers);
            w.write_all(head.as_bytes())?;
            w.flush()?;
            if !body {
                return Ok(());
            }
            for piece in pieces {
                match piece {
                    Piece::Event { name, data } => {
                        let mut text = String::new();
                        if let Some(name) = name {
                            text.push_str(&format!("event: {name}\n"));
                        }
                        text.push_str(&format!("data: {data}\n\n"));
                        write!(w, "{:x}\r\n{text}\r\n", text.len())?;
                        w.flush()?;
                    }
                    Piece::Pause(pause) => {
                        if stop.wait(*pause) {
                            return Err(io::Error::other("the server stopped"));
                        }
                    }
                }
            }
            w.write_all(b"0\r\n\r\n")?;
            w.flush()
        }
    }
}

fn status_line(status: u16) -> String {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Status",
    };
    format!("HTTP/1.1 {status} {reason}\r\n")
}

fn push_headers(head: &mut String, headers: &[(String, String)]) {
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_content_length_body_then_a_chunked_one_on_the_same_connection() {
        let wire = b"POST /v1/messages?beta=true HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}\
                     POST /v1/responses HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        let mut r = io::BufReader::new(&wire[..]);
        let first = read_request(&mut r).unwrap().unwrap();
        assert_eq!((first.method.as_str(), first.path(), first.body.as_slice()), ("POST", "/v1/messages", &b"{}"[..]));
        assert_eq!(first.header("HOST"), Some("x"));
        let second = read_request(&mut r).unwrap().unwrap();
        assert_eq!(second.body, b"abcde");
        assert!(read_request(&mut r).unwrap().is_none());
    }

    #[test]
    fn a_head_request_gets_no_body() {
        let response = Response::Json { status: 200, headers: vec![], body: serde_json::json!({}) };
        let mut out = Vec::new();
        write_response(&mut out, &response, false, false, &Stop::default()).unwrap();
        assert!(String::from_utf8(out).unwrap().ends_with("content-length: 2\r\nconnection: keep-alive\r\n\r\n"));
    }

    #[test]
    fn an_overlong_line_is_refused() {
        let wire = format!("GET /{} HTTP/1.1\r\n\r\n", "x".repeat(70 * 1024));
        assert!(read_request(&mut io::BufReader::new(wire.as_bytes())).is_err());
    }

    #[test]
    fn events_are_written_as_chunks() {
        let data = serde_json::json!({"type": "ping"});
        let response = Response::Events {
            headers: vec![],
            pieces: vec![Piece::Event { name: Some("ping".into()), data }, Piece::Pause(Duration::ZERO)],
        };
        let mut out = Vec::new();
        write_response(&mut out, &response, false, true, &Stop::default()).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
        assert!(out.ends_with("23\r\nevent: ping\ndata: {\"type\":\"ping\"}\n\n\r\n0\r\n\r\n"), "{out:?}");
    }
}
