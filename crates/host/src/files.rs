//! Files a host writes before its program starts (the agent's settings in a pod, where the
//! daemon's disk is not): given as a JSON object of absolute path to content in a variable,
//! which the daemon set from the pod's secret. Each path is absolute with no `..`, each file
//! written with mode 0600.

use std::collections::BTreeMap;
use std::path::{Component, Path};

use crate::HostError;

/// The most a variable of files may hold.
const FILES_MAX: usize = 1024 * 1024;

/// Writes the files that `var` names, if it is set.
pub fn write_from(var: &str) -> Result<(), HostError> {
    match std::env::var_os(var) {
        Some(text) => write_all(var, &text.to_string_lossy()),
        None => Ok(()),
    }
}

/// Writes the files `text` (the value of `var`) holds.
fn write_all(var: &str, text: &str) -> Result<(), HostError> {
    let unsafe_var = |why: String| HostError::Unsafe { path: var.into(), why };
    if text.len() > FILES_MAX {
        return Err(unsafe_var(format!("it holds {} bytes, more than {FILES_MAX}", text.len())));
    }
    let files: BTreeMap<String, String> =
        serde_json::from_str(text).map_err(|e| unsafe_var(format!("it is not a JSON object of files: {e}")))?;
    // Every path is checked before any file is written: a bad one writes nothing.
    for path in files.keys().map(Path::new) {
        let plain = path.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
        if !path.is_absolute() || !plain {
            return Err(unsafe_var(format!("{} is not an absolute path without `..`", path.display())));
        }
    }
    for (path, content) in &files {
        let path = Path::new(path);
        if let Some(dir) = path.parent() {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| HostError::io(format!("cannot make {}", dir.display()), e))?;
        }
        crate::private_file::write(path, content.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_land_where_they_say_and_a_path_that_climbs_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("agent/settings.json");
        let files = serde_json::json!({ good.display().to_string(): "{\"hooks\":{}}" });
        write_all("F", &files.to_string()).unwrap();
        assert_eq!(std::fs::read_to_string(&good).unwrap(), "{\"hooks\":{}}");

        let first = dir.path().join("a-first");
        for bad in [format!("{}/a/../../escape", dir.path().display()), "relative/file".to_owned()] {
            let files = serde_json::json!({ first.display().to_string(): "x", bad.clone(): "x" });
            let e = write_all("F", &files.to_string()).unwrap_err();
            assert!(e.to_string().contains("without `..`"), "{bad}: {e}");
            assert!(!first.exists(), "a bad path writes nothing, not even the good ones before it");
        }
        assert!(!dir.path().parent().unwrap().join("escape").exists());
        assert!(write_all("F", "[1, 2]").is_err(), "not an object");
        assert!(write_from("BOSUN_TEST_FILES_UNSET").is_ok(), "an unset variable writes nothing");
    }
}
