//! The HTTP/1.1 the fake API server speaks: one request read with every part bounded (a body over
//! the limit is drained, up to a point, and marked so the server can answer 413 and keep the
//! connection), and answers written whole (JSON, text) or as a chunked stream (a watch).

use bosun_model_server::http_lines::{invalid, read_head, read_line};
use std::io::{self, BufRead, Read, Write};

/// The most header lines one request may have.
const MAX_HEADERS: usize = 128;
/// The largest request body accepted (the real API server's limit is 3 MiB; ours is smaller).
pub(super) const MAX_BODY: usize = 1024 * 1024;
/// A body over `MAX_BODY` but under this is read and thrown away, so the client, which may still
/// be sending it, reads the 413; a larger one closes the connection after the answer.
const MAX_DRAIN: u64 = 16 * 1024 * 1024;

/// One request as it arrived.
#[derive(Clone, Debug, Default)]
pub(super) struct Request {
    pub method: String,
    /// The request target, query string included.
    pub target: String,
    /// Header names in lower case, in the order they came.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The body was over `MAX_BODY` and was not kept.
    pub too_large: bool,
    /// The connection cannot carry another request (a body too large to drain).
    pub must_close: bool,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The target without its query string.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    /// The query string, without its `?`; empty when there is none.
    pub fn query(&self) -> &str {
        self.target.split_once('?').map(|(_, q)| q).unwrap_or_default()
    }

    /// The query's parameters, percent-decoded (`+` is a space).
    pub fn params(&self) -> Vec<(String, String)> {
        self.query()
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (percent_decode(k), percent_decode(v))
            })
            .collect()
    }

    /// The first value of query parameter `name`.
    pub fn param(&self, name: &str) -> Option<String> {
        self.params().into_iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    pub fn wants_close(&self) -> bool {
        self.must_close || self.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

/// `%XX` and `+` decoded; invalid escapes are kept as they are.
pub(super) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(hi), Some(lo)) => {
                    out.push(hi * 16 + lo);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Reads the next request on a connection; `None` when the client closed it between requests.
pub(super) fn read_request(r: &mut impl BufRead) -> io::Result<Option<Request>> {
    let Some(head) = read_head(r, MAX_HEADERS)? else { return Ok(None) };
    let mut request = Request { method: head.method, target: head.target, headers: head.headers, ..Request::default() };
    let chunked = request.header("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        read_chunked(r, &mut request)?;
    } else if let Some(len) = request.header("content-length") {
        let len: u64 = len.parse().map_err(|_| invalid(format!("bad Content-Length {len:?}")))?;
        if len > MAX_BODY as u64 {
            request.too_large = true;
            if len > MAX_DRAIN {
                request.must_close = true;
            } else {
                io::copy(&mut r.by_ref().take(len), &mut io::sink())?;
            }
        } else {
            request.body = vec![0; len as usize];
            r.read_exact(&mut request.body)?;
        }
    }
    Ok(Some(request))
}

/// A `Transfer-Encoding: chunked` body, trailers skipped; over `MAX_BODY` it is drained.
fn read_chunked(r: &mut impl BufRead, request: &mut Request) -> io::Result<()> {
    let mut total: u64 = 0;
    loop {
        let line = read_line(r)?.ok_or_else(|| invalid("connection closed inside a chunked body"))?;
        let size = line.split(';').next().unwrap_or_default().trim();
        let size = u64::from_str_radix(size, 16).map_err(|_| invalid(format!("bad chunk size {line:?}")))?;
        if size == 0 {
            while read_line(r)?.is_some_and(|l| !l.is_empty()) {}
            return Ok(());
        }
        total = total.saturating_add(size);
        if total > MAX_DRAIN {
            request.too_large = true;
            request.must_close = true;
            request.body.clear();
            return Ok(());
        }
        if total > MAX_BODY as u64 {
            request.too_large = true;
            request.body = Vec::new();
            io::copy(&mut r.by_ref().take(size), &mut io::sink())?;
        } else {
            let start = request.body.len();
            request.body.resize(start + size as usize, 0);
            r.read_exact(&mut request.body[start..])?;
        }
        read_line(r)?;
    }
}

/// Writes a whole answer: `status`, its content type and body.
pub(super) fn write_whole(
    w: &mut impl Write,
    status: u16,
    content_type: &str,
    body: &[u8],
    close: bool,
) -> io::Result<()> {
    let connection = if close { "close" } else { "keep-alive" };
    let head = format!(
        "{}content-type: {content_type}\r\ncontent-length: {}\r\ncache-control: no-cache, private\r\n\
         connection: {connection}\r\n\r\n",
        status_line(status),
        body.len()
    );
    w.write_all(head.as_bytes())?;
    w.write_all(body)?;
    w.flush()
}

/// Starts a chunked `200` JSON stream (a watch); the connection closes when it ends.
pub(super) fn start_stream(w: &mut impl Write) -> io::Result<()> {
    let head = format!(
        "{}content-type: application/json\r\ncache-control: no-cache, private\r\ntransfer-encoding: chunked\r\n\
         connection: close\r\n\r\n",
        status_line(200)
    );
    w.write_all(head.as_bytes())?;
    w.flush()
}

/// One chunk of a stream.
pub(super) fn write_chunk(w: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    write!(w, "{:x}\r\n", bytes.len())?;
    w.write_all(bytes)?;
    w.write_all(b"\r\n")?;
    w.flush()
}

/// The end of a stream.
pub(super) fn end_stream(w: &mut impl Write) -> io::Result<()> {
    w.write_all(b"0\r\n\r\n")?;
    w.flush()
}

fn status_line(status: u16) -> String {
    let reason = match status {
        200 => "OK",
        201 => "Created",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        413 => "Request Entity Too Large",
        422 => "Unprocessable Entity",
        500 => "Internal Server Error",
        _ => "Status",
    };
    format!("HTTP/1.1 {status} {reason}\r\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_over_the_limit_is_drained_and_the_next_request_still_reads() {
        let big = "x".repeat(MAX_BODY + 1);
        let wire = format!("POST /a HTTP/1.1\r\ncontent-length: {}\r\n\r\n{big}GET /b HTTP/1.1\r\n\r\n", big.len());
        let mut r = io::BufReader::new(wire.as_bytes());
        let first = read_request(&mut r).unwrap().unwrap();
        assert!(first.too_large && !first.must_close && first.body.is_empty());
        assert_eq!(read_request(&mut r).unwrap().unwrap().path(), "/b");
    }

    #[test]
    fn query_parameters_are_percent_decoded() {
        let request =
            Request { target: "/p?labelSelector=a%3Db%2Cc%3Dd&watch=true&x=%zz+y".into(), ..Request::default() };
        assert_eq!(request.param("labelSelector").as_deref(), Some("a=b,c=d"));
        assert_eq!(request.param("watch").as_deref(), Some("true"));
        assert_eq!(request.param("x").as_deref(), Some("%zz y"));
    }
}
