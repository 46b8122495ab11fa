//! `HostToken`: the secret a TCP host asks of every connection before it serves it. Made from
//! the OS's random source, kept in a 0600 file beside the host's address, compared in constant
//! time, and never printed: its `Debug` says only that it is a token.

use std::path::Path;

use subtle::ConstantTimeEq;

use crate::{private_file, HostError};

/// Random bytes in a new token (written as twice as many hex digits).
const TOKEN_BYTES: usize = 32;
/// The shortest token a host accepts from its file: one shorter is guessable.
const SHORTEST: usize = 32;
/// The largest token file read.
const LARGEST: u64 = 1024;

#[derive(Clone, PartialEq, Eq)]
pub struct HostToken(String);

impl std::fmt::Debug for HostToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostToken(…)")
    }
}

impl HostToken {
    /// A new token: 32 bytes from the OS's random source, as hex.
    pub fn generate() -> Result<Self, HostError> {
        let mut bytes = [0u8; TOKEN_BYTES];
        getrandom::fill(&mut bytes)
            .map_err(|e| HostError::io("cannot make a token", std::io::Error::other(e.to_string())))?;
        Ok(Self(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// The token in `path`: a file of this user's that no one else may read, holding at least
    /// 32 printable characters (a final newline aside).
    pub fn read(path: &Path) -> Result<Self, HostError> {
        let bytes = private_file::read(path, LARGEST)?;
        let bad = |why: &str| HostError::Unsafe { path: path.to_owned(), why: why.to_owned() };
        let text = String::from_utf8(bytes).map_err(|_| bad("it is not text"))?;
        let token = text.trim_end_matches(['\n', '\r']);
        if token.len() < SHORTEST || !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(bad("it does not hold a token (at least 32 printable characters)"));
        }
        Ok(Self(token.to_owned()))
    }

    /// The token in the environment variable `name`, held to the same rules as a file's.
    pub fn from_env(name: &str) -> Result<Self, HostError> {
        let bad = |why: &str| HostError::Unsafe { path: format!("${name}").into(), why: why.to_owned() };
        let text = std::env::var(name).map_err(|_| bad("it is not set, or not text"))?;
        if text.len() < SHORTEST || text.len() as u64 > LARGEST || !text.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(bad("it does not hold a token (at least 32 printable characters)"));
        }
        Ok(Self(text))
    }

    /// The token's text, to hand to where the host reads it (a cluster's secret).
    pub fn text(&self) -> &str {
        &self.0
    }

    /// Writes the token to `path` (mode 0600, atomically).
    pub fn write(&self, path: &Path) -> Result<(), HostError> {
        private_file::write(path, self.0.as_bytes())
    }

    /// Whether `offered` is this token, in time that does not depend on where they differ.
    pub fn admits(&self, offered: &str) -> bool {
        bool::from(self.0.as_bytes().ct_eq(offered.as_bytes()))
    }

    /// The token's text, for the hello that presents it.
    pub(crate) fn reveal(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_token_is_random_hex_reads_back_and_hides_in_debug() {
        let (a, b) = (HostToken::generate().unwrap(), HostToken::generate().unwrap());
        assert_ne!(a, b);
        assert_eq!(a.reveal().len(), 64);
        assert!(a.reveal().bytes().all(|c| c.is_ascii_hexdigit()));
        assert!(!format!("{a:?}").contains(a.reveal()));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        a.write(&path).unwrap();
        let read = HostToken::read(&path).unwrap();
        assert!(read.admits(a.reveal()));
        assert!(!read.admits(b.reveal()));
        assert!(!read.admits(""));
        assert!(!read.admits(&a.reveal()[..63]));
    }

    #[test]
    fn a_short_empty_or_open_token_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        for text in ["", "short", "with spaces in it that make it long enough to pass"] {
            private_file::write(&path, text.as_bytes()).unwrap();
            assert!(HostToken::read(&path).is_err(), "{text:?}");
        }
        HostToken::generate().unwrap().write(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(HostToken::read(&path).unwrap_err().to_string().contains("0600"));
    }
}
