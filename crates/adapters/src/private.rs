//! Every file bosun makes is its user's alone: the processes of bosun (the CLI, the daemon) make
//! files with the mode mask 077, so whatever they create under the state directory is 0600 or
//! 0700 without each place having to say so. What they start for the user (tmux and the agents
//! in it, git, steps, gates, classifiers) gets the user's own mask back, so the work an agent
//! makes is as the user would have made it.
//!
//! Two ways to give it back. `as_user` sets the mask between fork and exec, which makes the
//! standard library fork the whole process where it would otherwise `posix_spawn` (a vfork):
//! in the daemon, a few milliseconds a command. `with_user_mask` runs a start in a thread of its
//! own whose file mask alone is the user's (Linux lets a thread leave the process's shared
//! mask: `unshare(CLONE_FS)`), so that what it starts inherits the mask and no hook is needed:
//! the start path's `git worktree add` and `tmux new-session` go that way.

use std::cell::Cell;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::OnceLock;

use nix::sys::stat::{umask, Mode};

/// The mask the process was started with: the user's.
static USER_MASK: OnceLock<Mode> = OnceLock::new();

thread_local! {
    /// Set in a thread whose own file mask is the user's (`with_user_mask`).
    static MASKED_AS_USER: Cell<bool> = const { Cell::new(false) };
}

/// From now on this process creates files readable by its user only. Called once, first thing.
pub fn keep_files_private() {
    let before = umask(Mode::from_bits_truncate(0o077));
    let _ = USER_MASK.set(before);
}

/// The user's mask, once `keep_files_private` was called.
pub fn user_mask() -> Option<u32> {
    USER_MASK.get().map(|m| m.bits())
}

/// `cmd` starts with the user's own mask, not bosun's: at once in a `with_user_mask` thread,
/// else set between fork and exec.
pub fn as_user(cmd: &mut Command) -> &mut Command {
    let Some(&mask) = USER_MASK.get() else { return cmd };
    if MASKED_AS_USER.get() {
        return cmd;
    }
    // SAFETY: umask(2) is async-signal-safe and touches no memory: it may run between fork and
    // exec.
    unsafe {
        cmd.pre_exec(move || {
            umask(mask);
            Ok(())
        })
    }
}

/// Runs `start` (which starts processes, each made with `as_user`) in a thread whose own file
/// mask is the user's, so they start without a fork of this process. Where a thread cannot have
/// a mask of its own, `as_user` sets the mask in each child instead. Nothing of bosun's own may
/// be written inside `start`: it would get the user's mask. Fails only when no thread can be
/// started.
pub fn with_user_mask<T: Send>(start: impl FnOnce() -> T + Send) -> std::io::Result<T> {
    let Some(&mask) = USER_MASK.get() else { return Ok(start()) };
    if MASKED_AS_USER.get() {
        return Ok(start());
    }
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new().name("bosun-as-user".into()).spawn_scoped(scope, move || {
            if own_mask() {
                umask(mask);
                MASKED_AS_USER.set(true);
            }
            start()
        })?;
        Ok(thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    })
}

/// Gives the calling thread a file mask (and working directory) of its own.
#[cfg(target_os = "linux")]
fn own_mask() -> bool {
    nix::sched::unshare(nix::sched::CloneFlags::CLONE_FS).is_ok()
}

#[cfg(not(target_os = "linux"))]
fn own_mask() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The user's mask reaches what `with_user_mask` starts, and the process keeps bosun's.
    #[test]
    fn a_start_in_the_users_mask_gets_it_and_the_process_keeps_its_own() {
        // A user's mask that differs from bosun's 077 (nextest runs each test in a process of
        // its own).
        umask(Mode::from_bits_truncate(0o022));
        keep_files_private();
        let user = user_mask().unwrap();
        let shown = |masked: bool| {
            let run = || {
                let out = as_user(&mut Command::new("sh")).args(["-c", "umask"]).output().unwrap();
                String::from_utf8(out.stdout).unwrap().trim().to_owned()
            };
            if masked {
                with_user_mask(run).unwrap()
            } else {
                run()
            }
        };
        let want = format!("{user:04o}");
        assert_eq!(shown(true), want, "started in the user's mask");
        assert_eq!(shown(false), want, "started with the mask set before exec");
        // The process's own mask is still bosun's: a file made here is private.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o077, 0);
    }
}
