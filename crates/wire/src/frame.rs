//! Length-prefixed JSON frames: a 4-byte big-endian length, then that many bytes of JSON.

use std::io::{Read, Write};

use serde::{de::DeserializeOwned, Serialize};

/// Frames larger than this are refused, so a garbled length cannot make a reader allocate
/// gigabytes.
pub const MAX_FRAME: usize = 64 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("connection closed")]
    Closed,
    #[error("frame of {0} bytes is larger than the limit")]
    TooLarge(usize),
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    #[error("malformed message: {0}")]
    Json(#[from] serde_json::Error),
}

/// The frame for `value`: length prefix and JSON body.
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, FrameError> {
    let body = serde_json::to_vec(value)?;
    if body.len() > MAX_FRAME {
        return Err(FrameError::TooLarge(body.len()));
    }
    let mut out = Vec::with_capacity(body.len() + 4);
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// Parses a frame body (without its length prefix).
pub fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, FrameError> {
    Ok(serde_json::from_slice(body)?)
}

pub fn write_frame<W: Write, T: Serialize>(w: &mut W, value: &T) -> Result<(), FrameError> {
    w.write_all(&encode(value)?)?;
    w.flush()?;
    Ok(())
}

pub fn read_frame<R: Read, T: DeserializeOwned>(r: &mut R) -> Result<T, FrameError> {
    read_frame_within(r, MAX_FRAME)
}

/// `read_frame`, refusing a frame larger than `max` bytes (for what untrusted writers send).
pub fn read_frame_within<R: Read, T: DeserializeOwned>(r: &mut R, max: usize) -> Result<T, FrameError> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(FrameError::Closed),
        other => other?,
    }
    let len = u32::from_be_bytes(len) as usize;
    if len > max.min(MAX_FRAME) {
        return Err(FrameError::TooLarge(len));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    decode(&body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_reads_back_as_written() {
        let mut buf = Vec::new();
        write_frame(&mut buf, &vec!["a", "b"]).unwrap();
        assert_eq!(&buf[..4], &9u32.to_be_bytes());
        let back: Vec<String> = read_frame(&mut buf.as_slice()).unwrap();
        assert_eq!(back, vec!["a", "b"]);
    }

    #[test]
    fn an_oversized_length_is_refused_without_allocating() {
        let buf = u32::MAX.to_be_bytes();
        let err = read_frame::<_, String>(&mut buf.as_slice()).unwrap_err();
        assert!(matches!(err, FrameError::TooLarge(_)));
    }

    #[test]
    fn an_empty_stream_is_a_closed_connection() {
        let err = read_frame::<_, String>(&mut [].as_slice()).unwrap_err();
        assert!(matches!(err, FrameError::Closed));
    }
}
