//! Running a command whose output is read no further than a bound: what comes past it is read
//! and dropped, so the command never blocks on a full pipe and no memory grows with it. For
//! commands a runbook names (a queue's list, a judge), whose output is not ours to trust.

use std::io::{self, Read};
use std::process::{Command, ExitStatus, Stdio};

/// What a command printed, each stream cut at the bound.
#[derive(Debug)]
pub struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Its standard output went past the bound.
    pub cut: bool,
}

/// Runs `cmd` (its stdin closed), keeping at most `most` bytes of each of its outputs.
pub fn output(cmd: &mut Command, most: usize) -> io::Result<Output> {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(io::Error::other("the command's outputs were not piped"));
    };
    let errors = std::thread::spawn(move || keep(err, most));
    let stdout = keep(out, most);
    let stderr = errors.join().unwrap_or_else(|_| Ok((Vec::new(), false)));
    let status = child.wait()?;
    let ((stdout, cut), (stderr, _)) = (stdout?, stderr?);
    Ok(Output { status, stdout, stderr, cut })
}

/// The first `most` bytes of `from`, and whether there was more (read to its end and dropped).
fn keep(from: impl Read, most: usize) -> io::Result<(Vec<u8>, bool)> {
    let mut from = from;
    let mut kept = Vec::new();
    (&mut from).take(u64::try_from(most).unwrap_or(u64::MAX)).read_to_end(&mut kept)?;
    let more = io::copy(&mut from, &mut io::sink())?;
    Ok((kept, more > 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_cut_at_the_bound_and_the_command_still_ends() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "head -c 5000000 /dev/zero; head -c 3000000 /dev/zero >&2; exit 3"]);
        let out = output(&mut cmd, 1024).unwrap();
        assert_eq!((out.stdout.len(), out.stderr.len(), out.cut), (1024, 1024, true));
        assert_eq!(out.status.code(), Some(3));
        let mut small = Command::new("sh");
        small.args(["-c", "echo hi"]);
        let out = output(&mut small, 1024).unwrap();
        assert_eq!((out.stdout.as_slice(), out.cut), (&b"hi\n"[..], false));
    }
}
