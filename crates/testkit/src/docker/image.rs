//! Small test images without a registry: a root filesystem made of busybox, the host binaries
//! a test names (with their shared libraries) and the host directory trees it names (a Node.js
//! client's package), imported with `tar -c | docker import`.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The `PATH` of the images; docker's own default.
const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

const PASSWD: &str = "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n";
const GROUP: &str = "root:x:0:\nnogroup:x:65534:\n";

/// Fills `root` with busybox (as `/bin/busybox`, a symlink in /bin for each of its applets, and
/// `/usr/bin/env`, which scripts' `#!/usr/bin/env node` runs),
/// `/tmp`, `/root`, `/etc/passwd` and `/etc/group`, and each of `extra_binaries` at its host path
/// (also linked from /usr/local/bin when that path is not on the image's `PATH`), each with the
/// shared libraries `ldd` lists at their host paths, and each of `trees` at its host path as it
/// is (its symbolic links kept). Returns the image's environment, as `docker import --change
/// 'ENV …'` lines.
pub(super) fn build_root(root: &Path, busybox: &Path, extra_binaries: &[&Path], trees: &[&Path]) -> Vec<String> {
    for dir in ["bin", "etc", "root", "tmp", "usr/bin", "usr/local/bin"] {
        create_dir(&root.join(dir));
    }
    set_mode(&root.join("tmp"), 0o1777);
    set_mode(&root.join("root"), 0o700);
    write(&root.join("etc/passwd"), PASSWD);
    write(&root.join("etc/group"), GROUP);

    let mut libraries = BTreeSet::new();
    copy_file(busybox, &root.join("bin/busybox"));
    libraries.extend(shared_libraries(busybox));
    for applet in applets(busybox) {
        let link = root.join("bin").join(&applet);
        if applet != "busybox" && !link.exists() {
            symlink("busybox", &link).unwrap_or_else(|e| panic!("cannot create {}: {e}", link.display()));
        }
    }

    let env = root.join("usr/bin/env");
    symlink("/bin/busybox", &env).unwrap_or_else(|e| panic!("cannot create {}: {e}", env.display()));

    for binary in extra_binaries {
        assert!(binary.is_absolute(), "an image's extra binary needs an absolute path, not {}", binary.display());
        copy_file(binary, &in_root(root, binary));
        libraries.extend(shared_libraries(binary));
        let dir = binary.parent().and_then(Path::to_str).unwrap_or_default();
        if let (false, Some(name)) = (PATH.split(':').any(|d| d == dir), binary.file_name()) {
            let link = root.join("usr/local/bin").join(name);
            symlink(binary, &link).unwrap_or_else(|e| panic!("cannot create {}: {e}", link.display()));
        }
    }
    for library in &libraries {
        copy_file(library, &in_root(root, library));
    }
    for tree in trees {
        assert!(tree.is_absolute(), "an image's tree needs an absolute path, not {}", tree.display());
        copy_tree(tree, &in_root(root, tree));
    }

    let mut env = vec![format!("ENV PATH={PATH}")];
    let unusual: BTreeSet<&Path> =
        libraries.iter().filter_map(|lib| lib.parent()).filter(|dir| !searched_by_default(dir)).collect();
    if !unusual.is_empty() {
        let dirs: Vec<String> = unusual.iter().map(|d| d.display().to_string()).collect();
        env.push(format!("ENV LD_LIBRARY_PATH={}", dirs.join(":")));
    }
    env
}

/// Imports `root` as image `tag` with `tar -C root -c . | docker import --change … - tag`.
pub(super) fn import(mut docker: Command, root: &Path, tag: &str, env: &[String]) {
    let mut tar = Command::new("tar")
        .arg("-C")
        .arg(root)
        .args(["--numeric-owner", "--owner=0", "--group=0", "-c", "."])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run tar: {e}"));
    let Some(archive) = tar.stdout.take() else { panic!("tar has no stdout") };
    docker.arg("import");
    for change in env {
        docker.arg("--change").arg(change);
    }
    let out = docker
        .args(["-", tag])
        .stdin(archive)
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .output()
        .unwrap_or_else(|e| panic!("cannot run docker import: {e}"));
    let tar_status = tar.wait().unwrap_or_else(|e| panic!("cannot wait for tar: {e}"));
    assert!(tar_status.success(), "tar -C {} -c . failed ({tar_status})", root.display());
    assert!(
        out.status.success(),
        "docker import of {} as {tag} failed ({}): {}",
        root.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The applets `busybox --list` names.
fn applets(busybox: &Path) -> Vec<String> {
    let out = Command::new(busybox)
        .arg("--list")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {} --list: {e}", busybox.display()));
    assert!(out.status.success(), "{} --list failed ({})", busybox.display(), out.status);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim)
        .filter(|name| !name.is_empty() && !name.contains('/'))
        .map(String::from)
        .collect()
}

/// The absolute paths of the shared libraries (and the loader) `ldd` lists for `binary`; none
/// for a static one.
fn shared_libraries(binary: &Path) -> Vec<PathBuf> {
    let Ok(out) = Command::new("ldd").arg(binary).output() else { return Vec::new() };
    if !out.status.success() {
        return Vec::new(); // "not a dynamic executable"
    }
    parse_ldd(&String::from_utf8_lossy(&out.stdout))
}

/// The absolute paths in `ldd` output: `libz.so.1 => /lib/…/libz.so.1 (0x…)` and
/// `/lib64/ld-linux-x86-64.so.2 (0x…)`; `linux-vdso.so.1 (0x…)` is no file.
fn parse_ldd(text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|line| {
            let target = line.split_once("=>").map_or(line, |(_, target)| target);
            target.split_whitespace().next().filter(|word| word.starts_with('/')).map(PathBuf::from)
        })
        .collect()
}

/// Whether the dynamic loader searches `dir` without `LD_LIBRARY_PATH` nor a cache: /lib,
/// /usr/lib, their 64 variants and their multiarch dirs (`/lib/x86_64-linux-gnu`).
fn searched_by_default(dir: &Path) -> bool {
    let bases = ["/lib", "/usr/lib", "/lib64", "/usr/lib64"].map(Path::new);
    bases.contains(&dir)
        || (dir.parent().is_some_and(|p| bases.contains(&p))
            && dir.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.contains("-linux-")))
}

/// Where host path `path` goes in `root`.
fn in_root(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

/// Copies `from`'s content (following symlinks) and mode to `to`, replacing what is there
/// (a busybox applet link is replaced, not written through).
fn copy_file(from: &Path, to: &Path) {
    if let Some(dir) = to.parent() {
        create_dir(dir);
    }
    if to.symlink_metadata().is_ok() {
        fs::remove_file(to).unwrap_or_else(|e| panic!("cannot replace {}: {e}", to.display()));
    }
    fs::copy(from, to).unwrap_or_else(|e| panic!("cannot copy {} to {}: {e}", from.display(), to.display()));
}

/// Copies the directory `from` to `to` as it is: its files (hard-linked when both are on one
/// file system: a package tree is tens of megabytes, which `tar` reads either way), its
/// directories and its symbolic links, which keep their targets (a link into a package not in
/// the image is left dangling there).
fn copy_tree(from: &Path, to: &Path) {
    create_dir(to);
    let entries = fs::read_dir(from).unwrap_or_else(|e| panic!("cannot read {}: {e}", from.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("cannot read {}: {e}", from.display()));
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().unwrap_or_else(|e| panic!("cannot read {}: {e}", source.display()));
        if kind.is_symlink() {
            let link = fs::read_link(&source).unwrap_or_else(|e| panic!("cannot read {}: {e}", source.display()));
            symlink(&link, &target).unwrap_or_else(|e| panic!("cannot create {}: {e}", target.display()));
        } else if kind.is_dir() {
            copy_tree(&source, &target);
        } else if fs::hard_link(&source, &target).is_err() {
            copy_file(&source, &target);
        }
    }
}

fn create_dir(dir: &Path) {
    fs::create_dir_all(dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
}

fn set_mode(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .unwrap_or_else(|e| panic!("cannot change the mode of {}: {e}", path.display()));
}

fn write(path: &Path, text: &str) {
    fs::write(path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldd_output_gives_the_library_paths_and_the_loader() {
        let text = "\tlinux-vdso.so.1 (0x00007f490125c000)\n\
                    \tlibz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x00007f4900de1000)\n\
                    \tlibgone.so.2 => not found\n\
                    \t/lib64/ld-linux-x86-64.so.2 (0x00007f490125e000)\n";
        assert_eq!(
            parse_ldd(text),
            [PathBuf::from("/lib/x86_64-linux-gnu/libz.so.1"), PathBuf::from("/lib64/ld-linux-x86-64.so.2")]
        );
    }

    #[test]
    fn a_tree_is_copied_with_its_links_and_a_binary_beside_it() {
        let host = tempfile::tempdir().unwrap();
        let tree = host.path().join("pkg");
        fs::create_dir_all(tree.join("dist")).unwrap();
        fs::write(tree.join("dist/cli.js"), "console.log(1)\n").unwrap();
        set_mode(&tree.join("dist/cli.js"), 0o755);
        symlink("dist/cli.js", tree.join("cli")).unwrap();
        symlink("../elsewhere/none", tree.join("dangling")).unwrap();
        let root = tempfile::tempdir().unwrap();
        let busybox = crate::tools::busybox();
        build_root(root.path(), &busybox, &[], &[tree.as_path()]);
        let copied = in_root(root.path(), &tree);
        assert_eq!(fs::read_to_string(copied.join("dist/cli.js")).unwrap(), "console.log(1)\n");
        assert_eq!(fs::metadata(copied.join("dist/cli.js")).unwrap().permissions().mode() & 0o777, 0o755);
        assert_eq!(fs::read_link(copied.join("cli")).unwrap(), Path::new("dist/cli.js"), "a link stays a link");
        assert_eq!(fs::read_link(copied.join("dangling")).unwrap(), Path::new("../elsewhere/none"));
        assert!(root.path().join("bin/sh").symlink_metadata().is_ok(), "busybox's applets are there too");
        assert_eq!(fs::read_link(root.path().join("usr/bin/env")).unwrap(), Path::new("/bin/busybox"), "for shebangs");
    }

    #[test]
    fn the_loader_searches_the_system_and_multiarch_dirs() {
        assert!(searched_by_default(Path::new("/lib/x86_64-linux-gnu")));
        assert!(searched_by_default(Path::new("/usr/lib64")));
        assert!(!searched_by_default(Path::new("/usr/local/lib")));
        assert!(!searched_by_default(Path::new("/opt/x/lib")));
    }
}
