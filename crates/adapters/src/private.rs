//! Every file bosun makes is its user's alone: the processes of bosun (the CLI, the daemon) make
//! files with the mode mask 077, so whatever they create under the state directory is 0600 or
//! 0700 without each place having to say so. What they start for the user (tmux and the agents
//! in it, git, steps, gates, classifiers) gets the user's own mask back, so the work an agent
//! makes is as the user would have made it.

use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::OnceLock;

use nix::sys::stat::{umask, Mode};

/// The mask the process was started with: the user's.
static USER_MASK: OnceLock<Mode> = OnceLock::new();

/// From now on this process creates files readable by its user only. Called once, first thing.
pub fn keep_files_private() {
    let before = umask(Mode::from_bits_truncate(0o077));
    let _ = USER_MASK.set(before);
}

/// The user's mask, once `keep_files_private` was called.
pub fn user_mask() -> Option<u32> {
    USER_MASK.get().map(|m| m.bits())
}

/// `cmd` starts with the user's own mask, not bosun's.
pub fn as_user(cmd: &mut Command) -> &mut Command {
    let Some(&mask) = USER_MASK.get() else { return cmd };
    // SAFETY: umask(2) is async-signal-safe and touches no memory: it may run between fork and
    // exec.
    unsafe {
        cmd.pre_exec(move || {
            umask(mask);
            Ok(())
        })
    }
}
