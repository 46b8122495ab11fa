//! The line reading the testkit's fake HTTP servers (the model's and the cluster's) share:
//! one line at most `MAX_LINE` long, and the error a malformed request is.

use std::io::{self, BufRead, Read};

/// The longest request line or header line read.
const MAX_LINE: u64 = 64 * 1024;

/// One line without its line ending; `None` at the end of the stream.
pub(crate) fn read_line(r: &mut impl BufRead) -> io::Result<Option<String>> {
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

pub(crate) fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}
