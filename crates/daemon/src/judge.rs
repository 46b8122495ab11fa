//! The judge of a plan job's variants (`bosun_core::Judge`), run by the daemon: a gate run (by
//! the daemon's gate runner) in each variant's worktree, the smallest diff from where they started winning among those that
//! pass; or a command, run in the repository, that reads the variants' diffs (written to files
//! listed in `$BOSUN_VARIANTS`, one `N BRANCH DIFF` line each) and prints the winner's number.
//! Every value reaches the shell as an argument or in the environment; what the command prints
//! is read as a number or a branch, nothing else.

use std::path::Path;
use std::process::Command;

use bosun_adapters::gates::Gates;
use bosun_core::{Judge, VariantCandidate};

/// The most of a judge command's output read.
const SAID_MOST: usize = 64 * 1024;

/// The winner (1 for `v1`), or none, and why.
pub fn judge(
    gates: &dyn Gates,
    judge: &Judge,
    repo: &Path,
    source: &str,
    candidates: &[VariantCandidate],
    scratch: &Path,
) -> (Option<u32>, String) {
    match judge {
        Judge::Gate { gate } => by_gate(gates, gate, repo, source, candidates),
        Judge::Command { command } => by_command(command, repo, source, candidates, scratch),
        Judge::Person => (None, "a person picks".into()),
    }
}

fn by_gate(
    gates: &dyn Gates,
    gate: &str,
    repo: &Path,
    source: &str,
    candidates: &[VariantCandidate],
) -> (Option<u32>, String) {
    let mut said = Vec::new();
    let mut best: Option<(u64, u32)> = None;
    for c in candidates {
        let status = gates.run(gate, &c.path);
        match status {
            Ok(Some(0)) => {
                let lines = diff_lines(repo, source, &c.branch);
                said.push(format!("v{}: gate passed, {lines} lines changed", c.variant));
                if best.is_none_or(|(l, _)| lines < l) {
                    best = Some((lines, c.variant));
                }
            }
            Ok(Some(code)) => said.push(format!("v{}: gate failed (exit status: {code})", c.variant)),
            Ok(None) => said.push(format!("v{}: gate failed (killed by a signal)", c.variant)),
            Err(e) => said.push(format!("v{}: gate could not run ({e})", c.variant)),
        }
    }
    let winner = best.map(|(_, v)| v);
    if let Some(v) = winner {
        said.push(format!("kept v{v}"));
    }
    (winner, said.join("; "))
}

fn by_command(
    command: &str,
    repo: &Path,
    source: &str,
    candidates: &[VariantCandidate],
    scratch: &Path,
) -> (Option<u32>, String) {
    if let Err(e) = std::fs::create_dir_all(scratch) {
        return (None, format!("cannot make {}: {e}", scratch.display()));
    }
    let mut listed = String::new();
    for c in candidates {
        let file = scratch.join(format!("v{}.diff", c.variant));
        let diff = git(repo, &["diff", "--no-ext-diff", "--no-textconv", &format!("{source}...{}", c.branch)])
            .unwrap_or_default();
        if let Err(e) = std::fs::write(&file, diff) {
            return (None, format!("cannot write {}: {e}", file.display()));
        }
        listed.push_str(&format!("{} {} {}\n", c.variant, c.branch, file.display()));
    }
    let mut cmd = Command::new("sh");
    bosun_adapters::private::as_user(&mut cmd).args(["-c", command]).env("BOSUN_VARIANTS", &listed).current_dir(repo);
    let out = match bosun_adapters::bounded::output(&mut cmd, SAID_MOST) {
        Ok(out) if out.status.success() => out.stdout,
        Ok(out) => return (None, format!("its judge command failed ({}){}", out.status, said_last(&out.stderr))),
        Err(e) => return (None, format!("its judge command cannot run: {e}")),
    };
    let text = String::from_utf8_lossy(&out).into_owned();
    let word = text.split_whitespace().next().unwrap_or("");
    let number = word.strip_prefix('v').unwrap_or(word).parse::<u32>().ok();
    let winner = candidates.iter().find(|c| Some(c.variant) == number || c.branch == word).map(|c| c.variant);
    let shown: String = word.chars().take(80).collect();
    match winner {
        Some(v) => (Some(v), format!("its judge command picked v{v}")),
        None => (None, format!("its judge command printed {shown:?}, which names no done variant")),
    }
}

/// How many of the last lines of a failed judge command's stderr its message keeps, and how
/// many characters of them at most.
const STDERR_LINES: usize = 5;
const STDERR_CHARS: usize = 600;

/// The last lines a failed command wrote to its stderr, as the end of a message: `: …`, each
/// line's control characters dropped, at most `STDERR_LINES` lines and `STDERR_CHARS`
/// characters (its end kept); nothing when it wrote nothing.
fn said_last(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<String> = text
        .lines()
        .map(|l| l.chars().filter(|c| !c.is_control()).collect::<String>().trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect();
    let last = lines[lines.len().saturating_sub(STDERR_LINES)..].join(" / ");
    if last.is_empty() {
        return String::new();
    }
    let count = last.chars().count();
    let kept: String = last.chars().skip(count.saturating_sub(STDERR_CHARS)).collect();
    let cut = if count > STDERR_CHARS { "…" } else { "" };
    format!(": {cut}{kept}")
}

/// Lines added and removed on `branch` since it left `source`.
fn diff_lines(repo: &Path, source: &str, branch: &str) -> u64 {
    let numstat = git(repo, &["diff", "--no-ext-diff", "--no-textconv", "--numstat", &format!("{source}...{branch}")])
        .unwrap_or_default();
    numstat.lines().flat_map(|l| l.split_whitespace().take(2).map(|n| n.parse::<u64>().unwrap_or(0))).sum()
}

fn git(repo: &Path, args: &[&str]) -> Option<String> {
    let out = bosun_adapters::git_in(repo).args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bosun_testkit::repo::TempRepo;

    /// A repository with `v1` and `v2` branched from `main`, each one commit on; their worktrees
    /// stand in for the variants' (the gate runs in the repository itself here).
    fn variants() -> (TempRepo, Vec<VariantCandidate>) {
        let repo = TempRepo::new();
        let mut candidates = Vec::new();
        for (n, text) in [(1, "bad\nbad\nbad\n"), (2, "good\n")] {
            repo.git(&["checkout", "-q", "-b", &format!("v{n}"), "main"]);
            repo.commit_file("work.txt", text);
            candidates.push(VariantCandidate { variant: n, branch: format!("v{n}"), path: repo.path().to_owned() });
        }
        repo.git(&["checkout", "-q", "main"]);
        (repo, candidates)
    }

    #[test]
    fn a_command_judge_reads_the_diffs_and_only_a_done_variants_number_or_branch_is_taken() {
        let (repo, candidates) = variants();
        let scratch = tempfile::tempdir().unwrap();
        let pick = |command: &str| {
            let by = Judge::Command { command: command.into() };
            judge(&bosun_adapters::gates::ShellGates, &by, repo.path(), "main", &candidates, scratch.path())
        };
        let reads = r#"printf '%s' "$BOSUN_VARIANTS" | while read n b f; do if grep -q '^+good' "$f"; then echo "$n"; fi; done"#;
        assert_eq!(pick(reads).0, Some(2), "it read v2's diff");
        assert_eq!(pick("echo v1").0, Some(1));
        assert_eq!(pick("echo v2 and more").0, Some(2));
        // A failed judge says why, in its own last words, bounded.
        let (winner, said) = pick("echo first >&2; echo 'sh: 1: Bad substitution' >&2; exit 2");
        assert_eq!(winner, None);
        assert!(said.contains("failed (exit status: 2): first / sh: 1: Bad substitution"), "{said}");
        let (_, said) = pick("yes 'a long line of complaint' | head -n 1000 >&2; printf '\\033[31mred\\n' >&2; exit 1");
        assert!(said.len() < 1_000 && said.ends_with("[31mred") && !said.contains('\u{1b}'), "{said}");
        for hostile in ["echo 9", "echo '; rm -rf /'", "echo", "exit 1", "echo v0"] {
            let (winner, said) = pick(hostile);
            assert_eq!(winner, None, "{hostile}: {said}");
        }
    }

    #[test]
    fn a_gate_judge_keeps_the_smallest_diff_of_those_that_pass() {
        let (repo, candidates) = variants();
        let scratch = tempfile::tempdir().unwrap();
        let both = Judge::Gate { gate: "true".into() };
        let (winner, said) =
            judge(&bosun_adapters::gates::ShellGates, &both, repo.path(), "main", &candidates, scratch.path());
        assert_eq!(winner, Some(2), "{said}");
        assert!(
            said.contains("v1: gate passed, 3 lines changed") && said.contains("v2: gate passed, 1 lines changed"),
            "{said}"
        );
        let none = Judge::Gate { gate: "false".into() };
        assert_eq!(
            judge(&bosun_adapters::gates::ShellGates, &none, repo.path(), "main", &candidates, scratch.path()).0,
            None
        );
    }
}
