//! The real clients' private configurations (`bosun_model_server::clients`) for tests: written
//! with a panic instead of an error (`WriteOrPanic`), and helpers that run a client to its end
//! within a deadline and find the processes a client left behind.

use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::Duration;

pub use bosun_model_server::clients::*;
pub use bosun_model_server::pi_config::{PiConfig, PI_MODEL, PI_PROVIDER};
pub use bosun_model_server::{OpencodeConfig, OPENCODE_MODEL};

/// `write`: a config written, or a panic saying why not.
pub trait WriteOrPanic {
    fn write(self) -> ClientEnv;
}

impl WriteOrPanic for ClaudeConfig {
    fn write(self) -> ClientEnv {
        self.try_write().unwrap_or_else(|e| panic!("{e}"))
    }
}

impl WriteOrPanic for PiConfig {
    fn write(self) -> ClientEnv {
        self.try_write().unwrap_or_else(|e| panic!("{e}"))
    }
}

impl WriteOrPanic for GeminiConfig {
    fn write(self) -> ClientEnv {
        self.try_write().unwrap_or_else(|e| panic!("{e}"))
    }
}

impl WriteOrPanic for OpencodeConfig {
    /// Its config directory holds opencode's plugin package, as a user's does after a first run.
    fn write(self) -> ClientEnv {
        let env = self.try_write().unwrap_or_else(|e| panic!("{e}"));
        crate::tools::seed_opencode_plugin(&env.config_dir);
        env
    }
}

impl WriteOrPanic for CodexConfig {
    fn write(self) -> ClientEnv {
        self.try_write().unwrap_or_else(|e| panic!("{e}"))
    }
}

/// Runs `cmd` to its end and returns its output, as `Command::output` does, but kills it and
/// panics, showing what it printed, when it is still running after `timeout`.
pub fn run_within(cmd: &mut Command, timeout: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    // Read both pipes meanwhile, so a chatty child never blocks on a full pipe.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let status = crate::poll::wait_for(timeout, || child.try_wait().ok().flatten());
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        let out = String::from_utf8_lossy(&stdout.join().unwrap_or_default()).into_owned();
        let err = String::from_utf8_lossy(&stderr.join().unwrap_or_default()).into_owned();
        panic!("{cmd:?} still ran after {timeout:?}; killed it.\nstdout:\n{out}\nstderr:\n{err}");
    };
    Output { status, stdout: stdout.join().unwrap_or_default(), stderr: stderr.join().unwrap_or_default() }
}

/// The processes whose command line or environment names `dir` (a client's config dir or
/// home, say), from `/proc`: a client still running, or something it left behind.
pub fn processes_using(dir: &Path) -> Vec<u32> {
    let needle = dir.display().to_string();
    let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
    let me = std::process::id();
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let mentions = |file: &str| {
                let bytes = fs::read(entry.path().join(file)).unwrap_or_default();
                String::from_utf8_lossy(&bytes).contains(&needle)
            };
            (pid != me && (mentions("cmdline") || mentions("environ"))).then_some(pid)
        })
        .collect()
}
