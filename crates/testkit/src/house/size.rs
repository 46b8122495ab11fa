//! How big the files and functions of the crates' code are, in lines that ship (comments,
//! blank lines and tests left out of files; a function counted from its `fn` line to its
//! closing brace).

use super::source::Source;

/// A function and its length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// `crates/core/src/state.rs::apply`.
    pub name: String,
    pub lines: usize,
}

/// The functions of `s` with their lengths, in the order they stand.
pub fn functions(s: &Source) -> Vec<Function> {
    let code = s.code.as_str();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = code[from..].find("fn ") {
        let at = from + p;
        from = at + 3;
        if at > 0 && code[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String =
            code[at + 3..].trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            continue;
        }
        // Its body: the first `{` before any `;` (a declaration without a body has none).
        let Some(open) = body_start(code, at) else { continue };
        let Some(close) = closing(code, open) else { continue };
        let lines = code[at..=close].lines().filter(|l| !l.trim().is_empty()).count();
        out.push(Function { name: format!("{}::{name}", s.path.display()), lines });
    }
    out
}

/// Where the body of the function whose `fn` is at `at` opens: its first `{` outside
/// parentheses and brackets, unless a `;` ends it first (a declaration).
fn body_start(code: &str, at: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in code[at..].char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '{' if depth == 0 => return Some(at + i),
            ';' if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// The `}` closing the `{` at `open`.
fn closing(code: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in code[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}
