use super::parse;
use crate::syntax::testing::{at, keys, text};
use crate::syntax::{line_col, Node, Value};

fn error(src: &str) -> (usize, usize, String) {
    crate::syntax::testing::error(parse, src)
}

fn str_at<'a>(node: &'a Node, path: &[&str]) -> &'a str {
    match &at(node, path).value {
        Value::Str(s) => s,
        other => panic!("{path:?}: not a string: {other:?}"),
    }
}

const SOURCE: &str = r#"source {
  git    = true
  branch = "feature/${var.name}-${source.nonce}"
  ref    = "origin/main"
}
"#;

const STEP: &str = r#"step "init" {
  run = <<-SHELL
    git -C "${local.repo}" worktree add -b "${local.branch}" "${source.root}" origin/${var.base}
  SHELL
  on_done = { step = "work" }
}
"#;

const AGENT: &str = r#"agent "fix" {
  on_idle  = { action = "nudge", message = "Continue working on the task." }
  on_dead  = { action = "recover", message = "Previous attempt exited. Try again." }
  on_error = "escalate"
}
"#;

#[test]
fn source_block_keeps_templates_verbatim() {
    let root = parse(SOURCE).unwrap();
    assert_eq!(keys(&root), ["source"]);
    assert_eq!(keys(at(&root, &["source"])), ["git", "branch", "ref"]);
    assert_eq!(at(&root, &["source", "git"]).value, Value::Bool(true));
    assert_eq!(str_at(&root, &["source", "branch"]), "feature/${var.name}-${source.nonce}");
    assert_eq!(str_at(&root, &["source", "ref"]), "origin/main");

    let branch = at(&root, &["source", "branch"]);
    assert_eq!(text(SOURCE, branch), r#""feature/${var.name}-${source.nonce}""#);
    assert_eq!(line_col(SOURCE, branch.span.start), (3, 12));
    let Value::Map(entries) = &at(&root, &["source"]).value else { panic!() };
    assert_eq!(line_col(SOURCE, entries[2].key_span.start), (4, 3));
    assert_eq!(line_col(SOURCE, at(&root, &["source"]).span.start), (1, 1));
}

#[test]
fn step_heredoc_is_dedented() {
    let root = parse(STEP).unwrap();
    assert_eq!(keys(at(&root, &["step"])), ["init"]);
    assert_eq!(keys(at(&root, &["step", "init"])), ["run", "on_done"]);
    assert_eq!(
        str_at(&root, &["step", "init", "run"]),
        "git -C \"${local.repo}\" worktree add -b \"${local.branch}\" \"${source.root}\" origin/${var.base}\n"
    );
    assert_eq!(str_at(&root, &["step", "init", "on_done", "step"]), "work");
    let run = at(&root, &["step", "init", "run"]);
    assert_eq!(line_col(STEP, run.span.start), (2, 9));
    assert!(text(STEP, run).starts_with("<<-SHELL"));
    assert_eq!(line_col(STEP, at(&root, &["step", "init", "on_done", "step"]).span.start), (5, 22));
}

#[test]
fn agent_handlers_are_maps_or_strings() {
    let root = parse(AGENT).unwrap();
    let agent = at(&root, &["agent", "fix"]);
    assert_eq!(keys(agent), ["on_idle", "on_dead", "on_error"]);
    assert_eq!(keys(at(agent, &["on_idle"])), ["action", "message"]);
    assert_eq!(str_at(agent, &["on_idle", "message"]), "Continue working on the task.");
    assert_eq!(str_at(agent, &["on_dead", "action"]), "recover");
    assert_eq!(str_at(agent, &["on_error"]), "escalate");
    assert_eq!(text(AGENT, at(agent, &["on_error"])), "\"escalate\"");
}

#[test]
fn blocks_merge_and_nest_by_label() {
    let src =
        "step \"a\" {\n  x = 1\n}\njob \"j\" \"k\" {}\nstep \"b\" {}\njob \"j\" \"l\" {}\nsettings {\n  y = 2\n}\n";
    let root = parse(src).unwrap();
    assert_eq!(keys(&root), ["step", "job", "settings"]);
    assert_eq!(keys(at(&root, &["step"])), ["a", "b"]);
    assert_eq!(keys(at(&root, &["job", "j"])), ["k", "l"]);
    assert_eq!(at(&root, &["step", "a", "x"]).value, Value::Int(1));
    assert_eq!(at(&root, &["settings", "y"]).value, Value::Int(2));
    assert_eq!(at(&root, &["job", "j", "l"]).value, Value::Map(vec![]));
    assert_eq!(line_col(src, at(&root, &["step", "b"]).span.start), (5, 1));
}

#[test]
fn duplicates_are_errors_at_the_second() {
    assert_eq!(error("step \"a\" {}\nstep \"b\" {}\nstep \"a\" {}\n"), (3, 1, "duplicate step \"a\"".into()));
    assert_eq!(error("source {}\n\n  source {}\n"), (3, 3, "duplicate source".into()));
    assert_eq!(error("job \"j\" \"k\" {}\njob \"j\" \"k\" {}\n"), (2, 1, "duplicate job \"j\" \"k\"".into()));
    assert_eq!(error("step \"a\" {}\nstep \"a\" \"b\" {}\n"), (2, 1, "duplicate step \"a\"".into()));
    assert_eq!(error("step \"a\" {\n  run = \"x\"\n  run = \"y\"\n}\n"), (3, 3, "duplicate attribute \"run\"".into()));
    assert_eq!(error("name = 1\nname {}\n").2, "\"name\" is both an attribute and a block");
    assert_eq!(error("name {}\nname = 1\n"), (2, 1, "\"name\" is both a block and an attribute".into()));
    assert_eq!(error("x = {\n  a = 1\n  \"a\" = 2\n}\n"), (3, 3, "duplicate key \"a\"".into()));
    assert_eq!(error("x = { a = 1, a = 2 }\n"), (1, 14, "duplicate key \"a\"".into()));
}

#[test]
fn expressions_are_rejected_where_they_stand() {
    let unsupported = "expressions are not supported here; quote it as a string".to_string();
    for (src, col) in [
        ("a = var.name\n", 5),
        ("a = foo\n", 5),
        ("a = upper(\"x\")\n", 5),
        ("a = 1 + 2\n", 5),
        ("a = true ? 1 : 2\n", 5),
        ("a = [for x in y : x]\n", 5),
        ("a = [1, local.x]\n", 9),
        ("a = { b = !true }\n", 11),
        ("a = (1)\n", 5),
    ] {
        assert_eq!(error(&format!("\n{src}")), (2, col, unsupported.clone()), "{src}");
    }
    assert_eq!(error("a = null\n").2, "null is not supported here; leave the value out");
    assert_eq!(error("a = { (b) = 1 }\n"), (1, 7, "an object key must be a name or a plain quoted string".into()));
}

#[test]
fn literals() {
    let src = "i = 42\nn = -7\nf = 2.5\ng = -0.5\ne = 1e3\nb = false\nl = [1, \"two\", [true]]\no = { \"a b\" = 1, c = {} }\n";
    let root = parse(src).unwrap();
    assert_eq!(at(&root, &["i"]).value, Value::Int(42));
    assert_eq!(at(&root, &["n"]).value, Value::Int(-7));
    assert_eq!(text(src, at(&root, &["n"])), "-7");
    assert_eq!(at(&root, &["f"]).value, Value::Float(2.5));
    assert_eq!(at(&root, &["g"]).value, Value::Float(-0.5));
    assert_eq!(at(&root, &["e"]).value, Value::Int(1000));
    assert_eq!(at(&root, &["b"]).value, Value::Bool(false));
    let Value::List(items) = &at(&root, &["l"]).value else { panic!() };
    assert_eq!(items.len(), 3);
    assert_eq!(items[1].value, Value::Str("two".into()));
    assert_eq!(text(src, &items[2]), "[true]");
    assert_eq!(keys(at(&root, &["o"])), ["a b", "c"]);
    assert_eq!(at(&root, &["o", "c"]).value, Value::Map(vec![]));
}

#[test]
fn escapes_are_decoded_outside_templates_only() {
    let src = r#"a = "q\"b\\s\nn\tt\u00e9"
b = "x ${ "in\"ner" } y \n"
c = "$${literal} %%{also}"
d = "%{ if var.x }yes\t%{ endif }"
e = ""
"#;
    let root = parse(src).unwrap();
    assert_eq!(str_at(&root, &["a"]), "q\"b\\s\nn\tt\u{e9}");
    assert_eq!(str_at(&root, &["b"]), "x ${ \"in\\\"ner\" } y \n");
    assert_eq!(str_at(&root, &["c"]), "$${literal} %%{also}");
    assert_eq!(str_at(&root, &["d"]), "%{ if var.x }yes\t%{ endif }");
    assert_eq!(str_at(&root, &["e"]), "");
}

#[test]
fn heredocs() {
    let src = "a = <<EOT\n  keep\n    this \\n ${x}\nEOT\nb = <<-EOT\n\t\tone\n\n\t\t  two\n\t\tEOT\nc = <<-EOT\nEOT\n";
    let root = parse(src).unwrap();
    assert_eq!(str_at(&root, &["a"]), "  keep\n    this \\n ${x}\n");
    assert_eq!(str_at(&root, &["b"]), "one\n\n  two\n");
    assert_eq!(str_at(&root, &["c"]), "");
    let crlf = "a = <<-EOT\r\n    x\r\n      y\r\n    EOT\r\n";
    assert_eq!(str_at(&parse(crlf).unwrap(), &["a"]), "x\n  y\n");
}

#[test]
fn parse_errors_have_a_position_and_one_line() {
    for src in ["a = \n", "step \"a\" {\n  run = \"x\"\n", "= 1\n", "a = \"unterminated\n", "a = [1,, 2]\n"] {
        let err = parse(src).expect_err(src);
        assert!(!err.message.is_empty() && !err.message.contains('\n'), "{src}: {err:?}");
        assert!(err.span.start <= err.span.end && err.span.end <= src.len(), "{src}: {err:?}");
    }
    let (line, col, _) = error("a = 1\nb = 2 3\n");
    assert_eq!((line, col), (2, 7));
}

#[test]
fn empty_and_comment_only_sources_are_empty_maps() {
    for src in ["", "\n\n", "# just a comment\n// another\n/* block */\n"] {
        assert_eq!(parse(src).unwrap(), Node { span: 0..src.len(), value: Value::Map(vec![]) });
    }
}
