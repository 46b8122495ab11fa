//! Reading an HTTP/1.1 request's head, bounded, as the model server (and the testkit's fake
//! cluster) does: one line at most `MAX_LINE` long, a request's head (its line and at most
//! `max_headers` headers), and the error a malformed request is.

use std::io::{self, BufRead, Read};

/// The longest request line or header line read.
const MAX_LINE: u64 = 64 * 1024;

/// One line without its line ending; `None` at the end of the stream.
pub fn read_line(r: &mut impl BufRead) -> io::Result<Option<String>> {
    let mut buf = Vec::new();
    let n = r.by_ref().take(MAX_LINE).read_until(b'\n', &mut buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() != Some(&b'\n') {
        return Err(invalid("a line is too long or cut short"));
    }
    while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        buf.pop();
    }
    String::from_utf8(buf).map(Some).map_err(|_| invalid("a header line is not UTF-8"))
}

pub fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// A request's line and headers (names in lower case, in the order they came).
pub struct Head {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
}

/// The head of the next request on a connection; `None` when the client closed it between
/// requests. Empty lines before a request line are passed over (RFC 9112 § 2.2).
pub fn read_head(r: &mut impl BufRead, max_headers: usize) -> io::Result<Option<Head>> {
    let mut line = String::new();
    while line.is_empty() {
        match read_line(r)? {
            None => return Ok(None),
            Some(l) => line = l,
        }
    }
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(invalid(format!("bad request line {line:?}")));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(invalid(format!("unsupported version in {line:?}")));
    }
    let mut headers = Vec::new();
    loop {
        let line = read_line(r)?.ok_or_else(|| invalid("connection closed inside the headers"))?;
        if line.is_empty() {
            break;
        }
        if headers.len() == max_headers {
            return Err(invalid("too many headers"));
        }
        let (name, value) = line.split_once(':').ok_or_else(|| invalid(format!("bad header line {line:?}")))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    Ok(Some(Head { method: method.to_owned(), target: target.to_owned(), headers }))
}
