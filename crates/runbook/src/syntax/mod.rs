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
