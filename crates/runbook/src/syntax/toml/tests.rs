use super::parse;
use crate::syntax::testing::{at, keys, text};
use crate::syntax::{line_col, Node, Value};

fn error(src: &str) -> (usize, usize, String) {
    crate::syntax::testing::error(parse, src)
}

fn key_pos(src: &str, node: &Node, key: &str) -> (usize, usize) {
    let Value::Map(entries) = &node.value else { panic!("not a map") };
    let entry = entries.iter().find(|e| e.key == key).unwrap();
    line_col(src, entry.key_span.start)
}

const PIPELINE: &str = r#"[pipeline.build.defaults]
workspace = ".worktrees/build-{name}"
branch = "build-{name}"
"#;

const AGENT: &str = r#"[agent.fix]
on_idle = { action = "nudge", message = "Continue working on the task." }
on_exit = { action = "recover", message = "Previous attempt exited. Try again." }
on_error = "escalate"
"#;

#[test]
fn dotted_table_headers_nest() {
    let root = parse(PIPELINE).unwrap();
    assert_eq!(keys(&root), ["pipeline"]);
    let defaults = at(&root, &["pipeline", "build", "defaults"]);
    assert_eq!(keys(defaults), ["workspace", "branch"]);
    assert_eq!(at(defaults, &["workspace"]).value, Value::Str(".worktrees/build-{name}".into()));
    assert_eq!(at(defaults, &["branch"]).value, Value::Str("build-{name}".into()));
    assert_eq!(text(PIPELINE, at(defaults, &["branch"])), "\"build-{name}\"");
    assert_eq!(line_col(PIPELINE, at(defaults, &["branch"]).span.start), (3, 10));
    assert_eq!(key_pos(PIPELINE, defaults, "branch"), (3, 1));
    assert_eq!(key_pos(PIPELINE, at(&root, &["pipeline"]), "build"), (1, 11));
    assert_eq!(line_col(PIPELINE, defaults.span.start), (1, 1));
    assert!(text(PIPELINE, defaults).ends_with("\"build-{name}\""));
}

#[test]
fn inline_tables_are_maps_in_source_order() {
    let root = parse(AGENT).unwrap();
    let fix = at(&root, &["agent", "fix"]);
    assert_eq!(keys(fix), ["on_idle", "on_exit", "on_error"]);
    assert_eq!(keys(at(fix, &["on_idle"])), ["action", "message"]);
    assert_eq!(at(fix, &["on_idle", "action"]).value, Value::Str("nudge".into()));
    assert_eq!(at(fix, &["on_error"]).value, Value::Str("escalate".into()));
    let on_exit = at(fix, &["on_exit"]);
    assert!(text(AGENT, on_exit).starts_with("{ action"));
    assert_eq!(line_col(AGENT, on_exit.span.start), (3, 11));
    assert_eq!(key_pos(AGENT, on_exit, "message"), (3, 33));
}

#[test]
fn scalars_arrays_and_arrays_of_tables() {
    let src = r#"z = 1
a = -2
f = 2.5
b = true
s = 'lit\n'
m = """
two
lines"""
when = 1979-05-27T07:32:00Z
day = 1979-05-27
list = [1, "x", [false]]
"dotted.key".x.y = 3

[[job]]
name = "first"

[[job]]
name = "second"
"#;
    let root = parse(src).unwrap();
    assert_eq!(keys(&root), ["z", "a", "f", "b", "s", "m", "when", "day", "list", "dotted.key", "job"]);
    assert_eq!(at(&root, &["a"]).value, Value::Int(-2));
    assert_eq!(at(&root, &["f"]).value, Value::Float(2.5));
    assert_eq!(at(&root, &["b"]).value, Value::Bool(true));
    assert_eq!(at(&root, &["s"]).value, Value::Str("lit\\n".into()));
    assert_eq!(at(&root, &["m"]).value, Value::Str("two\nlines".into()));
    assert_eq!(at(&root, &["when"]).value, Value::Str("1979-05-27T07:32:00Z".into()));
    assert_eq!(at(&root, &["day"]).value, Value::Str("1979-05-27".into()));
    let Value::List(items) = &at(&root, &["list"]).value else { panic!() };
    assert_eq!(items[1].value, Value::Str("x".into()));
    assert_eq!(text(src, &items[2]), "[false]");
    assert_eq!(at(&root, &["dotted.key", "x", "y"]).value, Value::Int(3));
    let Value::List(jobs) = &at(&root, &["job"]).value else { panic!() };
    assert_eq!(jobs.len(), 2);
    assert_eq!(at(&jobs[1], &["name"]).value, Value::Str("second".into()));
    assert_eq!(line_col(src, jobs[1].span.start), (17, 1));
    assert_eq!(line_col(src, at(&root, &["job"]).span.start), (14, 1));
}

#[test]
fn duplicates_are_errors_at_the_second() {
    assert_eq!(error("a = 1\nb = 2\na = 3\n"), (3, 1, "duplicate key \"a\"".into()));
    assert_eq!(error("[agent.fix]\n[agent.fix]\n").0, 2);
    assert_eq!(error("x = { a = 1, a = 2 }\n"), (1, 14, "duplicate key \"a\"".into()));
    assert_eq!(error("\"a b\" = 1\n\"a b\" = 2\n"), (2, 1, "duplicate key \"a b\"".into()));
}

#[test]
fn parse_errors_have_a_position_and_one_line() {
    for src in ["a = \n", "[a\n", "a = [1,\n", "a = \"unterminated\n", "a = foo\n", "= 1\n", "a = 1979-13-01\n"] {
        let err = parse(src).expect_err(src);
        assert!(!err.message.is_empty() && !err.message.contains('\n'), "{src}: {err:?}");
        assert!(err.span.start <= err.span.end && err.span.end <= src.len(), "{src}: {err:?}");
    }
    assert_eq!(error("a = 1\nb = nope\n").0, 2);
}

#[test]
fn empty_sources_are_empty_maps() {
    for src in ["", "\n# nothing\n"] {
        assert_eq!(parse(src).unwrap(), Node { span: 0..src.len(), value: Value::Map(vec![]) });
    }
}
