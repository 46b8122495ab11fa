//! Neither syntax front-end panics, whatever it is fed: arbitrary strings, strings made of the
//! formats' own punctuation, and random edits of valid runbooks. Every span either returns is a
//! range of the source on character boundaries, and every error message is one line.

use bosun_runbook::syntax::{hcl, line_col, toml, Node, Span, SyntaxError, Value};
use proptest::prelude::*;

const HCL: &str = r#"source {
  git    = true
  branch = "feature/${var.name}-${source.nonce}"
  ref    = "origin/main"
}

step "init" {
  run = <<-SHELL
    git -C "${local.repo}" worktree add -b "${local.branch}" "${source.root}" origin/${var.base}
  SHELL
  on_done = { step = "work" }
}

agent "fix" {
  on_idle  = { action = "nudge", message = "Continue working on the task." }
  on_dead  = { action = "recover", message = "Previous attempt exited. Try again.", n = [1, -2.5, "x\"y"] }
  on_error = "escalate"
}
"#;

const TOML: &str = r#"[pipeline.build.defaults]
workspace = ".worktrees/build-{name}"
branch = "build-{name}"

[agent.fix]
on_idle = { action = "nudge", message = "Continue working on the task." }
on_exit = { action = "recover", message = "Previous attempt exited. Try again." }
on_error = "escalate"
when = 1979-05-27T07:32:00Z
list = [1, 2.5, true, 'lit']

[[job]]
name = """multi
line"""
"#;

type Parser = fn(&str) -> Result<Node, SyntaxError>;

fn check_span(source: &str, span: &Span) {
    assert!(span.start <= span.end && span.end <= source.len(), "span {span:?} outside {}", source.len());
    assert!(source.is_char_boundary(span.start) && source.is_char_boundary(span.end), "span {span:?} splits a char");
    let _ = line_col(source, span.start);
}

fn check_node(source: &str, node: &Node) {
    check_span(source, &node.span);
    match &node.value {
        Value::List(items) => items.iter().for_each(|item| check_node(source, item)),
        Value::Map(entries) => {
            for entry in entries {
                check_span(source, &entry.key_span);
                check_node(source, &entry.node);
            }
        }
        _ => {}
    }
}

fn check(parse: Parser, source: &str) {
    match parse(source) {
        Ok(node) => check_node(source, &node),
        Err(err) => {
            check_span(source, &err.span);
            assert!(!err.message.is_empty() && !err.message.contains('\n'), "message {:?}", err.message);
        }
    }
}

#[derive(Clone, Debug)]
enum Edit {
    Insert(usize, String),
    Delete(usize, usize),
    Duplicate(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let text = prop_oneof![
        "[{}\\[\\]\"'=,.$%<>#/\\\\\n -]{1,4}",
        Just("${".to_string()),
        Just("<<-EOT\n".to_string()),
        Just("\nEOT\n".to_string()),
        Just("\"\"\"".to_string()),
        Just("[[".to_string()),
        any::<String>(),
    ];
    prop_oneof![
        (any::<usize>(), text).prop_map(|(at, s)| Edit::Insert(at, s)),
        (any::<usize>(), 0usize..16).prop_map(|(at, n)| Edit::Delete(at, n)),
        (any::<usize>(), 0usize..64).prop_map(|(at, n)| Edit::Duplicate(at, n)),
    ]
}

/// The char boundary nearest below `at % (len + 1)`.
fn boundary(s: &str, at: usize) -> usize {
    let mut at = at % (s.len() + 1);
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn apply(source: &str, edits: &[Edit]) -> String {
    let mut s = source.to_owned();
    for edit in edits {
        match edit {
            Edit::Insert(at, text) => s.insert_str(boundary(&s, *at), text),
            Edit::Delete(at, n) | Edit::Duplicate(at, n) => {
                let start = boundary(&s, *at);
                let end = boundary(&s, start.saturating_add(*n).min(s.len()));
                let end = end.max(start);
                if matches!(edit, Edit::Delete(..)) {
                    s.replace_range(start..end, "");
                } else {
                    let copy = s[start..end].to_owned();
                    s.insert_str(end, &copy);
                }
            }
        }
    }
    s
}

#[test]
fn the_seeds_parse() {
    check(hcl::parse, HCL);
    check(toml::parse, TOML);
    assert!(hcl::parse(HCL).is_ok());
    assert!(toml::parse(TOML).is_ok());
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    for depth in [100, 10_000] {
        check(hcl::parse, &format!("a = {}1{}\n", "[".repeat(depth), "]".repeat(depth)));
        check(hcl::parse, &format!("{}\n{}", "b {\n".repeat(depth), "}\n".repeat(depth)));
        check(toml::parse, &format!("a = {}1{}\n", "[".repeat(depth), "]".repeat(depth)));
        check(toml::parse, &format!("a = {}\n", "{ b = ".repeat(depth) + "1" + &" }".repeat(depth)));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_strings(source in any::<String>()) {
        check(hcl::parse, &source);
        check(toml::parse, &source);
    }

    #[test]
    fn punctuation_soup(source in "[a-z0-9{}\\[\\]\"'=,.$%<>#/\\\\\n\t -]{0,80}") {
        check(hcl::parse, &source);
        check(toml::parse, &source);
    }

    #[test]
    fn edited_runbooks(edits in proptest::collection::vec(edit(), 1..6)) {
        check(hcl::parse, &apply(HCL, &edits));
        check(toml::parse, &apply(TOML, &edits));
    }

    #[test]
    fn each_format_fed_the_other(edits in proptest::collection::vec(edit(), 0..3)) {
        check(hcl::parse, &apply(TOML, &edits));
        check(toml::parse, &apply(HCL, &edits));
    }
}
