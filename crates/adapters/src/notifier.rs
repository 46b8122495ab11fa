//! Telling a person: a desktop notification (`notify-send`) where a desktop session is there,
//! else a line in the daemon's log.

use std::process::{Command, Stdio};

use crate::AdapterError;

/// Tells a person something.
pub trait Notifier: Send + Sync {
    fn notify(&self, title: &str, body: &str) -> Result<(), AdapterError>;
}

/// Desktop notifications when `DISPLAY` or `WAYLAND_DISPLAY` is set and `notify-send` runs;
/// otherwise (and when it fails) a warning in the log.
#[derive(Debug, Default, Clone, Copy)]
pub struct DesktopNotifier;

impl Notifier for DesktopNotifier {
    fn notify(&self, title: &str, body: &str) -> Result<(), AdapterError> {
        let desktop = ["DISPLAY", "WAYLAND_DISPLAY"].iter().any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
        if desktop {
            let shown = Command::new("notify-send")
                .args(["--app-name=bosun", title, body])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if shown {
                return Ok(());
            }
        }
        tracing::warn!(title, body, "notification");
        Ok(())
    }
}
