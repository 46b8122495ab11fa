//! The house checks: what the crates' `src/` trees must keep as they grow. No module imports one
//! that imports it back (`imports`); no file and no function grows past its size (`size`).

pub mod imports;
pub mod size;
pub mod source;

use std::path::{Path, PathBuf};

use source::Source;

/// Every `.rs` file under `crates/*/src` of the workspace at `root`, read.
pub fn sources(root: &Path) -> std::io::Result<Vec<Source>> {
    let mut out = Vec::new();
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    crates.sort();
    for krate in crates {
        let rel = krate.strip_prefix(root).unwrap_or(&krate).to_owned();
        let mut files = Vec::new();
        walk(&krate.join("src"), &mut files)?;
        files.sort();
        for file in files {
            let file = file.strip_prefix(root).unwrap_or(&file).to_owned();
            out.push(Source::read(root, &rel, &file)?);
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}
