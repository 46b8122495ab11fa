//! Branch names git can make: the rules of `git check-ref-format --branch`, and the one git's
//! refs add, that a branch cannot also be a directory of other branches (`feature` and
//! `feature/x` cannot both exist). Checked before anything starts, so that a run never fails
//! midway with git's own words.

/// Why git cannot make a branch named `name`, if it cannot.
pub fn branch_problem(name: &str) -> Option<String> {
    let why = |s: &str| Some(s.to_owned());
    if name.is_empty() {
        return why("it is empty");
    }
    if name == "HEAD" {
        return why("HEAD names the current commit, not a branch");
    }
    if name.starts_with('-') {
        return why("it starts with `-`");
    }
    if name == "@" {
        return why("`@` names HEAD");
    }
    if let Some(c) = name.chars().find(|c| c.is_ascii_control() || " ~^:?*[\\".contains(*c)) {
        return Some(format!("it holds {c:?}, which git does not allow in a branch name"));
    }
    if name.contains("..") {
        return why("it holds `..`");
    }
    if name.contains("@{") {
        return why("it holds `@{`");
    }
    if name.ends_with('.') {
        return why("it ends with `.`");
    }
    if name.starts_with('/') || name.ends_with('/') || name.contains("//") {
        return why("it starts or ends with `/`, or holds `//`");
    }
    for part in name.split('/') {
        if part.starts_with('.') {
            return Some(format!("its part {part:?} starts with `.`"));
        }
        if part.ends_with(".lock") {
            return Some(format!("its part {part:?} ends with `.lock`"));
        }
    }
    None
}

/// Whether branches `a` and `b` cannot both exist: one is a directory of the other (`feature`
/// and `feature/x`), as git keeps them.
pub fn branches_clash(a: &str, b: &str) -> bool {
    let under =
        |dir: &str, name: &str| name.len() > dir.len() && name.starts_with(dir) && name[dir.len()..].starts_with('/');
    under(a, b) || under(b, a)
}

/// The branches that would have to exist for `name` to be a directory of them: each of its
/// leading parts (`a` and `a/b` for `a/b/c`).
pub fn branch_dirs(name: &str) -> impl Iterator<Item = &str> {
    name.match_indices('/').map(move |(i, _)| &name[..i])
}

/// A job of a plan as its branches go: its name, the branch it names (if any), its variants.
#[derive(Clone, Copy, Debug)]
pub struct PlanJobBranch<'a> {
    pub name: &'a str,
    pub branch: Option<&'a str>,
    pub variants: u32,
}

impl PlanJobBranch<'_> {
    /// The branches it asks for — its own, or each of its variants' (`<branch>-v1`, …) — and
    /// whether a numeric suffix may make one that is taken free (only when it names none).
    pub fn asked(&self) -> Vec<(String, bool)> {
        let (branch, suffix) = match self.branch {
            Some(b) => (b.to_owned(), false),
            None => (feature_branch(self.name), true),
        };
        if self.variants > 1 {
            (1..=self.variants).map(|n| (format!("{branch}-v{n}"), suffix)).collect()
        } else {
            vec![(branch, suffix)]
        }
    }
}

/// The branch a job of a plan that names none works on: `feature/<its name's slug>`.
pub fn feature_branch(name: &str) -> String {
    format!("feature/{}", slug(name))
}

/// Lower-case letters, digits and single dashes.
fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_owned()
}

/// What git would refuse of the branches a plan's jobs ask for, found before the plan starts: a
/// name it cannot make, a branch two jobs name, two that cannot both exist.
pub fn plan_branch_problems(jobs: &[PlanJobBranch<'_>]) -> Vec<String> {
    let mut out = Vec::new();
    let mut asked: Vec<(&str, String, bool)> = Vec::new();
    for j in jobs {
        for (branch, suffix) in j.asked() {
            if let Some(why) = branch_problem(&branch) {
                out.push(format!(
                    "plan job {:?}: no branch {branch:?} can be made: {why}; give it another `branch`",
                    j.name
                ));
            }
            asked.push((j.name, branch, suffix));
        }
    }
    for (i, (a, ba, free_a)) in asked.iter().enumerate() {
        for (b, bb, free_b) in &asked[i + 1..] {
            if branches_clash(ba, bb) {
                out.push(format!(
                    "plan jobs {a:?} and {b:?}: branches {ba:?} and {bb:?} cannot both exist (git cannot keep a \
                     branch beside another that is a directory of it); give one of them another `branch`"
                ));
            } else if ba == bb && !(*free_a && *free_b) {
                out.push(format!(
                    "plan jobs {a:?} and {b:?} both ask for branch {ba:?}; give one of them another `branch`"
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_git_refuses_are_refused_with_why_and_the_rest_pass() {
        let refused = [
            "",
            "HEAD",
            "-x",
            "@",
            "a b",
            "a~1",
            "a^",
            "a:b",
            "a?",
            "a*",
            "a[b",
            "a\\b",
            "a\tb",
            "a\u{7f}",
            "a..b",
            "a@{1}",
            "x.",
            "/a",
            "a/",
            "a//b",
            ".a",
            "a/.b",
            "a.lock",
            "a/b.lock/c",
        ];
        for name in refused {
            assert!(branch_problem(name).is_some(), "{name:?} passed");
        }
        let fine = ["main", "feature/x", "a.b", "a@b", "HEAD/x", "x/HEAD", "ä", "v1.2", "a-b_c", "a.locked"];
        for name in fine {
            assert_eq!(branch_problem(name), None, "{name:?}");
        }
    }

    #[test]
    fn a_branch_clashes_with_one_it_would_be_a_directory_of() {
        assert!(branches_clash("feature", "feature/x"));
        assert!(branches_clash("feature/x/y", "feature"));
        assert!(!branches_clash("feature", "feature-x"));
        assert!(!branches_clash("feature", "feature"));
        assert!(!branches_clash("feat", "feature/x"));
        assert_eq!(branch_dirs("a/b/c").collect::<Vec<_>>(), vec!["a", "a/b"]);
        assert_eq!(branch_dirs("main").count(), 0);
    }

    #[test]
    fn a_plans_branches_that_git_would_refuse_are_found_before_it_starts() {
        let job = |name, branch, variants| PlanJobBranch { name, branch, variants };
        assert!(plan_branch_problems(&[job("a", None, 1), job("b", Some("fix/b"), 3)]).is_empty());
        let head = plan_branch_problems(&[job("a", Some("HEAD"), 1)]);
        assert_eq!(head.len(), 1, "{head:?}");
        assert!(head[0].contains("plan job \"a\"") && head[0].contains("current commit"), "{head:?}");
        // `feature/x` is the branch job "x" asks for when it names none.
        let clash = plan_branch_problems(&[job("x", None, 1), job("y", Some("feature"), 1)]);
        assert_eq!(clash.len(), 1, "{clash:?}");
        assert!(clash[0].contains("\"feature/x\" and \"feature\" cannot both exist"), "{clash:?}");
        let twice = plan_branch_problems(&[job("x", Some("fix"), 1), job("y", Some("fix"), 1)]);
        assert_eq!(twice.len(), 1, "{twice:?}");
        // A name left to bosun is made free with a suffix.
        assert!(plan_branch_problems(&[job("a b", None, 1), job("a-b", None, 1)]).is_empty());
        assert_eq!(job("v", Some("v"), 2).asked(), vec![("v-v1".to_owned(), false), ("v-v2".to_owned(), false)]);
    }
}
