//! The versions of the real clients bosun was tested with (`scripts/real-clients`, which the
//! real-client tests run against), and whether the version a client says it is (`claude
//! --version`: `2.1.332 (Claude Code)`; `codex --version`: `codex-cli 0.171.0`) is newer.

/// The pinned versions: one npm package a line, `NAME VERSION`.
const PINNED: &str = include_str!("../../../scripts/real-clients");

/// A version's three numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u32, pub u32, pub u32);

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// The first `N.N.N` in `text`.
pub fn parse(text: &str) -> Option<Version> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.')).find_map(|word| {
        let mut n = word.split('.').map(|p| p.parse::<u32>().ok());
        Some(Version(n.next()??, n.next()??, n.next()??))
    })
}

/// The newest version of `package` bosun was tested with.
pub fn tested(package: &str) -> Option<Version> {
    PINNED.lines().map(str::trim).filter(|l| !l.starts_with('#')).find_map(|l| parse(l.strip_prefix(package)?))
}

/// What to tell a person who starts the client of npm package `package`, whose `--version`
/// printed `said`: nothing when bosun was tested with this version or a newer one.
pub fn untested(package: &str, said: &str) -> Option<(Version, String)> {
    let (version, newest) = (parse(said)?, tested(package)?);
    (version > newest).then(|| {
        let name = package.rsplit('/').next().unwrap_or(package);
        (
            version,
            format!(
                "{name} {version} is newer than the newest version bosun was tested with ({newest}): run \
                 `bosun doctor --clients` to see whether bosun reads it right"
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_what_the_clients_print() {
        assert_eq!(parse("2.1.332 (Claude Code)"), Some(Version(2, 1, 332)));
        assert_eq!(parse("codex-cli 0.171.0"), Some(Version(0, 171, 0)));
        assert_eq!(parse("no version here"), None);
        assert_eq!(parse("v1.2"), None);
    }

    #[test]
    fn only_a_version_newer_than_the_pinned_one_is_told() {
        let newest = tested("@anthropic-ai/claude-code").expect("pinned");
        let same = format!("{newest} (Claude Code)");
        assert_eq!(untested("@anthropic-ai/claude-code", &same), None);
        let newer = Version(newest.0, newest.1, newest.2 + 1);
        let (v, said) = untested("@anthropic-ai/claude-code", &format!("{newer} (Claude Code)")).expect("told");
        assert_eq!(v, newer);
        assert!(said.contains(&newest.to_string()) && said.contains("`bosun doctor --clients`"), "{said}");
        assert!(untested("@openai/codex", "codex-cli 0.0.1").is_none(), "older is not told");
        assert!(untested("claudeless", "9.9.9").is_none(), "not a package bosun pins");
        assert!(untested("@openai/codex", "garbage").is_none());
    }
}
