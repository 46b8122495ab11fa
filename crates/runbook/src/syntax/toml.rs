//! The TOML front-end: source text to a [`Node`] tree, by way of `toml_edit`, which keeps spans.
//!
//! Tables and inline tables become maps (entries in source order), arrays and arrays of tables
//! lists, and strings, integers, floats and booleans their values; a datetime is a string of its
//! text as written. A node's span is its value's byte range and an entry's key span its key's; a
//! table spans from its header (or, for one that only exists through its sub-tables, like
//! `pipeline` in `[pipeline.build]`, its first key) to the end of its last entry.

use toml_edit::{Document, InlineTable, Item, Table};

use super::{Entry, Node, Span, SyntaxError, Value};

/// Parses a TOML runbook into a tree whose root is a map.
pub fn parse(source: &str) -> Result<Node, SyntaxError> {
    let doc = Document::parse(source).map_err(|err| parse_error(source, &err))?;
    let entries = table_entries(source, doc.as_table());
    Ok(Node { span: 0..source.len(), value: Value::Map(entries) })
}

fn table_entries(source: &str, table: &Table) -> Vec<Entry> {
    let mut entries = Vec::new();
    for (key, item) in table.iter() {
        let key_span = table.key(key).and_then(toml_edit::Key::span);
        if let Some(node) = item_node(source, item, key_span.clone()) {
            let key_span = key_span.unwrap_or_else(|| node.span.clone());
            entries.push(Entry { key: key.to_owned(), key_span, node });
        }
    }
    entries
}

fn item_node(source: &str, item: &Item, key_span: Option<Span>) -> Option<Node> {
    match item {
        Item::None => None,
        Item::Value(value) => Some(value_node(source, value)),
        Item::Table(table) => {
            let entries = table_entries(source, table);
            let span = union(table.span().or(key_span), covering(&entries));
            Some(Node { span, value: Value::Map(entries) })
        }
        Item::ArrayOfTables(tables) => {
            let items: Vec<Node> = tables
                .iter()
                .map(|table| {
                    let entries = table_entries(source, table);
                    let span = union(table.span(), covering(&entries));
                    Node { span, value: Value::Map(entries) }
                })
                .collect();
            let span = union(tables.span().or(key_span), list_span(&items));
            Some(Node { span, value: Value::List(items) })
        }
    }
}

fn value_node(source: &str, value: &toml_edit::Value) -> Node {
    use toml_edit::Value as V;
    let value_out = match value {
        V::String(s) => Value::Str(s.value().clone()),
        V::Integer(i) => Value::Int(*i.value()),
        V::Float(f) => Value::Float(*f.value()),
        V::Boolean(b) => Value::Bool(*b.value()),
        V::Datetime(d) => {
            let written = d.span().and_then(|span| source.get(span)).map(str::trim);
            Value::Str(written.map_or_else(|| d.value().to_string(), str::to_owned))
        }
        V::Array(array) => Value::List(array.iter().map(|item| value_node(source, item)).collect()),
        V::InlineTable(table) => Value::Map(inline_entries(source, table)),
    };
    let span = value.span().or_else(|| match &value_out {
        Value::Map(entries) => covering(entries),
        Value::List(items) => list_span(items),
        _ => None,
    });
    Node { span: span.unwrap_or(0..0), value: value_out }
}

fn inline_entries(source: &str, table: &InlineTable) -> Vec<Entry> {
    table
        .iter()
        .map(|(key, value)| {
            let node = value_node(source, value);
            let key_span = table.key(key).and_then(toml_edit::Key::span).unwrap_or_else(|| node.span.clone());
            Entry { key: key.to_owned(), key_span, node }
        })
        .collect()
}

/// The range from the first entry's key to the end of the last entry.
fn covering(entries: &[Entry]) -> Option<Span> {
    let first = entries.iter().map(|e| e.key_span.start.min(e.node.span.start)).min()?;
    let last = entries.iter().map(|e| e.node.span.end.max(e.key_span.end)).max()?;
    Some(first..last)
}

/// The smallest range holding both, if any.
fn union(a: Option<Span>, b: Option<Span>) -> Span {
    match (a, b) {
        (Some(a), Some(b)) => a.start.min(b.start)..a.end.max(b.end),
        (Some(only), None) | (None, Some(only)) => only,
        (None, None) => 0..0,
    }
}

fn list_span(items: &[Node]) -> Option<Span> {
    Some(items.first()?.span.start..items.last()?.span.end)
}

/// A `toml_edit` parse error as a one-line message.
fn parse_error(source: &str, err: &toml_edit::TomlError) -> SyntaxError {
    let mut span = err.span().unwrap_or(0..0);
    span.start = span.start.min(source.len());
    span.end = span.end.clamp(span.start, source.len());
    while !source.is_char_boundary(span.start) {
        span.start -= 1;
    }
    while !source.is_char_boundary(span.end) {
        span.end += 1;
    }
    let mut lines = err.message().lines().map(str::trim).filter(|line| !line.is_empty());
    let message = match (lines.next(), lines.next()) {
        (Some(first), Some(second)) if second.starts_with("expected") => format!("{first}; {second}"),
        (Some(first), _) => first.to_owned(),
        (None, _) => "invalid TOML".to_owned(),
    };
    let message = match source.get(span.clone()) {
        Some(key) if message == "duplicate key" && key.starts_with(['"', '\'']) => format!("duplicate key {key}"),
        Some(key) if message == "duplicate key" && !key.is_empty() => format!("duplicate key \"{key}\""),
        _ => message,
    };
    SyntaxError { span, message }
}

#[cfg(test)]
mod tests;
