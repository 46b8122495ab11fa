//! The syntax both runbook formats are read into: a tree of values, each with the byte range
//! of the source it came from, so every later error can say file:line:column.
//!
//! HCL blocks become map entries keyed by their type (`job`), and a labelled block one entry
//! further down per label (`job "build" { … }` is `job.build`); repeated blocks of one type
//! merge. Strings keep their template text as written (`${var.name}` stays as is); heredocs are
//! strings with their indentation removed for `<<-`.

pub mod hcl;
pub mod toml;

use std::ops::Range;

/// A byte range in a source file.
pub type Span = Range<usize>;

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub span: Span,
    pub value: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    List(Vec<Node>),
    /// Entries in source order; keys are unique (a parser merges or rejects repeats).
    Map(Vec<Entry>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: String,
    pub key_span: Span,
    pub node: Node,
}

/// A syntax error, at a byte offset.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SyntaxError {
    pub span: Span,
    pub message: String,
}

impl Node {
    pub fn kind(&self) -> &'static str {
        match self.value {
            Value::Str(_) => "a string",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number",
            Value::Bool(_) => "a boolean",
            Value::List(_) => "a list",
            Value::Map(_) => "a table",
        }
    }
}

/// 1-based line and column of a byte offset.
pub fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let before = &source[..offset.min(source.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Helpers the HCL and TOML parser tests share: walking a tree by keys, and errors as
/// line, column and message.
#[cfg(test)]
pub(crate) mod testing {
    use super::{line_col, Node, SyntaxError, Value};

    /// The node at a path of map keys.
    pub fn at<'a>(node: &'a Node, path: &[&str]) -> &'a Node {
        path.iter().fold(node, |node, key| match &node.value {
            Value::Map(entries) => &entries.iter().find(|e| e.key == *key).unwrap_or_else(|| panic!("no {key}")).node,
            other => panic!("{key}: not a map: {other:?}"),
        })
    }

    pub fn keys(node: &Node) -> Vec<&str> {
        match &node.value {
            Value::Map(entries) => entries.iter().map(|e| e.key.as_str()).collect(),
            other => panic!("not a map: {other:?}"),
        }
    }

    /// The source text a node spans.
    pub fn text<'a>(src: &'a str, node: &Node) -> &'a str {
        &src[node.span.clone()]
    }

    /// What `parse` says of `src`, which must not parse: line, column, message.
    pub fn error(parse: impl Fn(&str) -> Result<Node, SyntaxError>, src: &str) -> (usize, usize, String) {
        let SyntaxError { span, message } = parse(src).expect_err("should not parse");
        let (line, col) = line_col(src, span.start);
        (line, col, message)
    }
}
