//! This machine's half of a pod workspace whose repository has no remote (see
//! `WorkspaceKind::Pod`): its branch, made here at its base, is bundled for the pod's host to
//! start from, and what the host bundles back when its agent ended is fetched into it,
//! fast-forward only, its objects checked. Nothing from the pod names a ref here: the branch
//! is the daemon's own record's.

use std::path::Path;

use super::git::{branch_exists, command_error, git, output, run, stderr_text, stdout_line};
use crate::AdapterError;

/// Makes `branch` at `base` in `repo`, unless it is there already (from the agent's last pod).
pub(crate) fn make_branch(repo: &Path, branch: &str, base: &str) -> Result<(), AdapterError> {
    if branch_exists(repo, branch)? {
        return Ok(());
    }
    let mut cmd = git(repo);
    cmd.args(["branch", "--no-track", branch, base]);
    run(&mut cmd).map(drop)
}

/// Writes a bundle of `branch` (its whole history) to `file`: a pod's seed.
pub(crate) fn seed(repo: &Path, branch: &str, file: &Path) -> Result<(), AdapterError> {
    let mut cmd = git(repo);
    cmd.args(["bundle", "create", "--quiet"]).arg(file).arg(format!("refs/heads/{branch}"));
    run(&mut cmd).map(drop)
}

/// The commit `branch` is at in `repo`, if it is there.
pub(crate) fn tip(repo: &Path, branch: &str) -> Option<String> {
    let mut cmd = git(repo);
    cmd.args(["rev-parse", "--verify", "--quiet"]).arg(format!("refs/heads/{branch}^{{commit}}"));
    let out = output(&mut cmd).ok()?;
    out.status.success().then(|| stdout_line(&out)).filter(|t| !t.is_empty())
}

/// Brings `branch` to what the pod gave: its bundle's `file`, or none when it gave only `tip`
/// (a commit this repository has). Fast-forward only: a branch that moved here meanwhile, or
/// that is checked out with the pod's work not on it, is left as it is. Whether the work is on
/// `branch` now, and what git said.
pub(crate) fn take_back(repo: &Path, branch: &str, file: Option<&Path>, tip: &str) -> (bool, String) {
    let head = format!("refs/heads/{branch}");
    match file {
        Some(file) => {
            let mut cmd = git(repo);
            cmd.args(["-c", "transfer.fsckObjects=true", "-c", "fetch.fsckObjects=true", "fetch", "--no-tags", "--"])
                .arg(file)
                .arg(format!("{head}:{head}"));
            match output(&mut cmd) {
                Ok(out) if out.status.success() => (true, format!("fetched {branch} from its pod's bundle")),
                Ok(out) => (false, command_error(&cmd, stderr_text(&out)).to_string()),
                Err(e) => (false, e.to_string()),
            }
        }
        None => {
            let is_commit = tip.len() >= 40 && tip.bytes().all(|b| b.is_ascii_hexdigit());
            let mut cmd = git(repo);
            cmd.args(["merge-base", "--is-ancestor", "--", tip, &head]);
            match output(&mut cmd) {
                Ok(out) if is_commit && out.status.success() => {
                    (true, format!("{branch} holds its pod's work already"))
                }
                Ok(out) => (false, format!("{branch} does not hold its pod's tip {tip}: {}", stderr_text(&out))),
                Err(e) => (false, e.to_string()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bosun_testkit::repo::TempRepo;

    #[test]
    fn what_comes_back_moves_the_branch_only_forward_and_nothing_else() {
        let repo = TempRepo::new();
        let base = repo.head();
        make_branch(repo.path(), "agent/b", &base).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let seed_file = dir.path().join("seed.bundle");
        seed(repo.path(), "agent/b", &seed_file).unwrap();
        // The pod's clone, one commit on.
        let pod = TempRepo::clone_of(&seed_file);
        pod.git(&["checkout", "-q", "agent/b"]);
        let work = pod.commit_file("w.txt", "work");
        let back = dir.path().join("back.bundle");
        pod.git(&["bundle", "create", "-q", back.to_str().unwrap(), "refs/heads/agent/b", &format!("^{base}")]);

        // A bundle that is not one, or a tip not on the branch, changes nothing.
        let junk = dir.path().join("junk.bundle");
        std::fs::write(&junk, "# v2 git bundle\nnot really\n").unwrap();
        assert!(!take_back(repo.path(), "agent/b", Some(&junk), &work).0);
        assert!(!take_back(repo.path(), "agent/b", None, &work).0, "a tip it lacks is not held");
        assert!(!take_back(repo.path(), "agent/b", None, "HEAD").0, "only a commit id is a tip");
        assert_eq!(tip(repo.path(), "agent/b").as_deref(), Some(base.as_str()));

        // The branch moved here meanwhile: the pod's work does not overwrite it.
        repo.git(&["checkout", "-q", "-b", "mine"]);
        let mine = repo.commit_file("m.txt", "mine");
        repo.git(&["branch", "-f", "agent/b", &mine]);
        let (fetched, said) = take_back(repo.path(), "agent/b", Some(&back), &work);
        assert!(!fetched && said.contains("rejected"), "{said}");
        assert_eq!(tip(repo.path(), "agent/b"), Some(mine));

        repo.git(&["branch", "-f", "agent/b", &base]);
        let (fetched, said) = take_back(repo.path(), "agent/b", Some(&back), &work);
        assert!(fetched, "{said}");
        assert_eq!(tip(repo.path(), "agent/b"), Some(work.clone()));
        assert!(take_back(repo.path(), "agent/b", None, &base).0, "an older tip is held already");
        assert!(repo.git(&["tag"]).trim().is_empty(), "no tag came with it");
    }
}
