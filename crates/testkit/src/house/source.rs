//! One Rust source file as the house checks read it: its text with comments, strings and
//! characters blanked out and its `#[cfg(test)]` items cut, so that what remains is the code
//! that ships; and the module path the file is in its crate.

use std::path::{Path, PathBuf};

/// A source file of a crate's `src/`.
#[derive(Clone, Debug)]
pub struct Source {
    /// Its path, relative to the tree the check reads (`crates/core/src/decide/job.rs`).
    pub path: PathBuf,
    /// The crate folder it belongs to (`crates/core`).
    pub krate: PathBuf,
    /// Its module path in that crate: `decide::job`; empty for `lib.rs` and `main.rs`; a
    /// binary's own root under `bin/` is its own crate root, named `bin::<name>`.
    pub module: Vec<String>,
    /// The code: comments, string and character literals blanked (newlines kept, so that line
    /// numbers hold), test items cut.
    pub code: String,
}

impl Source {
    /// Reads `file` of `krate` (both under `root`).
    pub fn read(root: &Path, krate: &Path, file: &Path) -> std::io::Result<Self> {
        let text = std::fs::read_to_string(root.join(file))?;
        let in_src = file.strip_prefix(krate.join("src")).unwrap_or(file);
        Ok(Self { path: file.to_owned(), krate: krate.to_owned(), module: module_of(in_src), code: code_of(&text) })
    }

    /// Its lines of code that ship: not blank once comments and tests are gone.
    pub fn lines(&self) -> usize {
        self.code.lines().filter(|l| !l.trim().is_empty()).count()
    }
}

/// The module path of a file at `in_src` (relative to `src/`).
fn module_of(in_src: &Path) -> Vec<String> {
    let mut parts: Vec<String> = in_src.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs").to_owned();
        if !(stem == "mod" || (parts.is_empty() && (stem == "lib" || stem == "main"))) {
            parts.push(stem);
        }
    }
    parts
}

/// `text` with comments, strings and character literals blanked and `#[cfg(test)]` items cut.
pub fn code_of(text: &str) -> String {
    cut_tests(&blank(text))
}

/// Comments, string literals (raw ones too) and character literals replaced by spaces,
/// newlines kept. Lifetimes (`'a`) stay.
fn blank(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let keep_newlines = |s: &[char], out: &mut String| {
        for c in s {
            out.push(if *c == '\n' { '\n' } else { ' ' });
        }
    };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            let end = b[i..].iter().position(|c| *c == '\n').map_or(b.len(), |p| i + p);
            keep_newlines(&b[i..end], &mut out);
            i = end;
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            let mut j = i;
            while j < b.len() {
                if b[j] == '/' && b.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if b[j] == '*' && b.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            keep_newlines(&b[i..j.min(b.len())], &mut out);
            i = j;
        } else if c == 'r' && matches!(next, Some('"') | Some('#')) && !ident_before(&b, i) {
            // A raw string: r"…", r#"…"#.
            let hashes = b[i + 1..].iter().take_while(|c| **c == '#').count();
            if b.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let close: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            let start = i + 2 + hashes;
            let end = (start..b.len()).find(|j| b[*j..].starts_with(&close)).map_or(b.len(), |j| j + close.len());
            keep_newlines(&b[i..end], &mut out);
            i = end;
        } else if c == '"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != '"' {
                j += if b[j] == '\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            keep_newlines(&b[i..end], &mut out);
            i = end;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{1F600}'), else a lifetime.
            let end = if next == Some('\\') {
                b[i + 2..].iter().position(|c| *c == '\'').map(|p| i + 2 + p + 1)
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 3)
            } else {
                None
            };
            match end {
                Some(end) => {
                    keep_newlines(&b[i..end], &mut out);
                    i = end;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

/// `code` without the items marked `#[cfg(test)]` (up to their closing brace or semicolon).
fn cut_tests(code: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let end = item_end(item).unwrap_or(item.len());
        out.extend(item[..end].chars().filter(|c| *c == '\n'));
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// Where the item starting `text` ends: after its block's closing brace, or its `;` when it has
/// no block.
fn item_end(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            ';' if depth == 0 => return Some(i + 1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_strings_and_tests_are_not_code() {
        let text = "use crate::a; // crate::b\nlet s = \"crate::c\"; let r = r#\"crate::d\"#;\nfn f<'a>(c: char) { '{'; }\n#[cfg(test)]\nmod tests { use crate::e; }\nuse crate::f;\n";
        let code = code_of(text);
        assert!(code.contains("crate::a") && code.contains("crate::f") && code.contains("<'a>"), "{code}");
        for gone in ["crate::b", "crate::c", "crate::d", "crate::e", "'{'"] {
            assert!(!code.contains(gone), "{gone} in {code}");
        }
        assert_eq!(code.lines().count(), text.lines().count());
    }

    #[test]
    fn a_files_module_follows_its_path() {
        assert!(module_of(Path::new("lib.rs")).is_empty());
        assert_eq!(module_of(Path::new("decide/mod.rs")), ["decide"]);
        assert_eq!(module_of(Path::new("decide/job.rs")), ["decide", "job"]);
    }
}
