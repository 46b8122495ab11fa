//! The HCL front-end: source text to a [`Node`] tree, by way of `hcl-edit`, which keeps spans.
//!
//! The root is a map. An attribute `k = v` is the entry `k`; a block `type "l1" "l2" { … }` is
//! the entry `type`, holding a map with the entry `l1`, holding a map with the entry `l2`, which
//! is the block's body (with no labels, `type` is the body). Blocks of one type merge into one
//! map; a repeated block (same type and labels) or attribute is an error at the second one.
//! A body's map spans its whole block; a map gathering blocks spans the first of them.
//!
//! Only literal values are read: strings, numbers (an integer when integral), booleans, lists
//! and objects. Quoted strings keep their template text as written (`${var.name}`, `%{ if … }`
//! and `$${` stay verbatim) with the backslash escapes decoded; heredocs are their lines, each
//! ending in a newline, and `<<-` removes the indentation the lines share. Any other expression
//! (a variable, a call, an operator) is an error: a runbook's templates are strings.

use std::collections::{HashMap, HashSet};

use hcl_edit::expr::{Expression, Object, ObjectKey, UnaryOperator};
use hcl_edit::structure::{Block, Body, Structure};
use hcl_edit::template::{Directive, Element, Template};
use hcl_edit::{Number, Span as _};

use super::{Entry, Node, Span, SyntaxError, Value};

/// Parses an HCL runbook into a tree whose root is a map.
pub fn parse(source: &str) -> Result<Node, SyntaxError> {
    let body = hcl_edit::parser::parse_body(source).map_err(|err| parse_error(source, &err))?;
    let entries = body_entries(source, &body)?;
    Ok(Node { span: 0..source.len(), value: Value::Map(entries) })
}

/// An entry of a body being built: blocks of one type are gathered in groups keyed by label.
struct Slot {
    key: String,
    key_span: Span,
    item: Item,
}

enum Item {
    Attribute(Node),
    Body(Node),
    Group(Span, Slots),
}

/// The entries of a body being built, indexed by key so that finding one stays cheap however
/// many there are.
#[derive(Default)]
struct Slots {
    list: Vec<Slot>,
    index: HashMap<String, usize>,
}

impl Slots {
    fn find(&self, key: &str) -> Option<usize> {
        self.index.get(key).copied()
    }

    fn push(&mut self, slot: Slot) -> usize {
        self.index.insert(slot.key.clone(), self.list.len());
        self.list.push(slot);
        self.list.len() - 1
    }
}

fn body_entries(source: &str, body: &Body) -> Result<Vec<Entry>, SyntaxError> {
    let mut slots = Slots::default();
    for structure in body.iter() {
        match structure {
            Structure::Attribute(attr) => {
                let key_span = span_of(&attr.key, 0..0);
                let key = attr.key.as_str();
                if let Some(slot) = slots.find(key).and_then(|i| slots.list.get(i)) {
                    let message = match slot.item {
                        Item::Attribute(_) => format!("duplicate attribute \"{key}\""),
                        _ => format!("\"{key}\" is both a block and an attribute"),
                    };
                    return Err(SyntaxError { span: key_span, message });
                }
                let node = expression(source, &attr.value)?;
                slots.push(Slot { key: key.to_owned(), key_span, item: Item::Attribute(node) });
            }
            Structure::Block(block) => add_block(source, &mut slots, block)?,
        }
    }
    Ok(slots.list.into_iter().map(into_entry).collect())
}

fn add_block(source: &str, slots: &mut Slots, block: &Block) -> Result<(), SyntaxError> {
    let span = span_of(block, 0..0);
    let ident_span = span_of(&block.ident, span.clone());
    let mut path = vec![(block.ident.as_str().to_owned(), ident_span.clone())];
    for label in &block.labels {
        path.push((label.as_str().to_owned(), span_of(label, span.clone())));
    }
    let body = Node { span: span.clone(), value: Value::Map(body_entries(source, &block.body)?) };

    let mut level = slots;
    for (depth, (key, key_span)) in path.iter().enumerate() {
        let last = depth + 1 == path.len();
        let index = match level.find(key) {
            Some(index) => index,
            None if last => {
                level.push(Slot { key: key.clone(), key_span: key_span.clone(), item: Item::Body(body) });
                return Ok(());
            }
            None => level.push(Slot {
                key: key.clone(),
                key_span: key_span.clone(),
                item: Item::Group(span.clone(), Slots::default()),
            }),
        };
        let Some(slot) = level.list.get_mut(index) else { break };
        match &mut slot.item {
            Item::Group(_, children) if !last => level = children,
            Item::Attribute(_) if depth == 0 => {
                let message = format!("\"{key}\" is both an attribute and a block");
                return Err(SyntaxError { span: ident_span, message });
            }
            _ => {
                let header: Vec<String> =
                    path[1..=depth].iter().map(|(label, _)| format!("\"{}\"", label.escape_default())).collect();
                let message = format!("duplicate {}", [vec![path[0].0.clone()], header].concat().join(" "));
                return Err(SyntaxError { span: ident_span.start..key_span.end, message });
            }
        }
    }
    Ok(())
}

fn into_entry(slot: Slot) -> Entry {
    let node = match slot.item {
        Item::Attribute(node) | Item::Body(node) => node,
        Item::Group(span, children) => {
            Node { span, value: Value::Map(children.list.into_iter().map(into_entry).collect()) }
        }
    };
    Entry { key: slot.key, key_span: slot.key_span, node }
}

fn expression(source: &str, expr: &Expression) -> Result<Node, SyntaxError> {
    let span = span_of(expr, 0..0);
    let value = match expr {
        Expression::Bool(b) => Value::Bool(*b.value()),
        Expression::Number(n) => number(n.value()),
        Expression::String(_) => {
            let inner = span.start + 1..span.end.saturating_sub(1);
            Value::Str(quoted(source, &span, std::slice::from_ref(&inner))?)
        }
        Expression::StringTemplate(template) => {
            let mut literals = Vec::new();
            literal_spans(template, &mut literals);
            Value::Str(quoted(source, &span, &literals)?)
        }
        Expression::HeredocTemplate(_) => Value::Str(heredoc(source, &span)?),
        Expression::Array(array) => {
            Value::List(array.iter().map(|item| expression(source, item)).collect::<Result<_, _>>()?)
        }
        Expression::Object(object) => Value::Map(object_entries(source, object)?),
        Expression::UnaryOp(op) if *op.operator.value() == UnaryOperator::Neg => match &op.expr {
            Expression::Number(n) => negative(n.value()),
            _ => return Err(unsupported(span)),
        },
        Expression::Null(_) => {
            return Err(SyntaxError { span, message: "null is not supported here; leave the value out".into() })
        }
        _ => return Err(unsupported(span)),
    };
    Ok(Node { span, value })
}

fn unsupported(span: Span) -> SyntaxError {
    SyntaxError { span, message: "expressions are not supported here; quote it as a string".into() }
}

fn object_entries(source: &str, object: &Object) -> Result<Vec<Entry>, SyntaxError> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut seen = HashSet::new();
    for (key, value) in object.iter() {
        let key_span = span_of(key, 0..0);
        let name = match key {
            ObjectKey::Ident(ident) => ident.as_str().to_owned(),
            ObjectKey::Expression(Expression::String(s)) => s.value().clone(),
            ObjectKey::Expression(_) => {
                let message = "an object key must be a name or a plain quoted string".into();
                return Err(SyntaxError { span: key_span, message });
            }
        };
        if !seen.insert(name.clone()) {
            return Err(SyntaxError {
                span: key_span,
                message: format!("duplicate key \"{}\"", name.escape_default()),
            });
        }
        let node = expression(source, value.expr())?;
        entries.push(Entry { key: name, key_span, node });
    }
    Ok(entries)
}

fn number(n: &Number) -> Value {
    match (n.as_i64(), n.as_f64()) {
        (Some(i), _) => Value::Int(i),
        (None, Some(f)) => Value::Float(f),
        (None, None) => Value::Float(f64::NAN),
    }
}

fn negative(n: &Number) -> Value {
    let as_int = n.as_u64().and_then(|u| i64::try_from(-i128::from(u)).ok());
    match (as_int, n.as_f64()) {
        (Some(i), _) => Value::Int(i),
        (None, Some(f)) => Value::Float(-f),
        (None, None) => Value::Float(f64::NAN),
    }
}

fn span_of(item: &impl hcl_edit::Span, fallback: Span) -> Span {
    item.span().unwrap_or(fallback)
}

fn unreadable(span: &Span) -> SyntaxError {
    SyntaxError { span: span.clone(), message: "could not read this string".into() }
}

/// The spans of a template's literal text, in order, including the text within its directives.
fn literal_spans(template: &Template, out: &mut Vec<Span>) {
    for element in template.iter() {
        match element {
            Element::Literal(literal) => out.extend(literal.span()),
            Element::Interpolation(_) => {}
            Element::Directive(directive) => match directive.as_ref() {
                Directive::If(d) => {
                    literal_spans(&d.if_expr.template, out);
                    if let Some(else_expr) = &d.else_expr {
                        literal_spans(&else_expr.template, out);
                    }
                }
                Directive::For(d) => literal_spans(&d.for_expr.template, out),
            },
        }
    }
}

/// The text of the quoted string at `span`: the `literals` ranges with their escapes decoded,
/// and the rest (interpolations and directive markers) as written.
fn quoted(source: &str, span: &Span, literals: &[Span]) -> Result<String, SyntaxError> {
    let whole = source.get(span.clone()).ok_or_else(|| unreadable(span))?;
    if whole.len() < 2 || !whole.starts_with('"') || !whole.ends_with('"') {
        return Err(unreadable(span));
    }
    let (start, end) = (span.start + 1, span.end - 1);
    let mut out = String::new();
    let mut pos = start;
    for range in literals {
        let verbatim = source.get(pos..range.start).ok_or_else(|| unreadable(span))?;
        out.push_str(verbatim);
        decode_escapes(source.get(range.clone()).ok_or_else(|| unreadable(span))?, &mut out);
        pos = range.end;
    }
    out.push_str(source.get(pos..end).ok_or_else(|| unreadable(span))?);
    Ok(out)
}

fn decode_escapes(text: &str, out: &mut String) {
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some(digits @ ('u' | 'U')) => {
                let len = if digits == 'u' { 4 } else { 8 };
                let hex: String = chars.clone().take(len).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32).filter(|_| hex.len() == len) {
                    Some(decoded) => {
                        out.push(decoded);
                        chars.nth(len - 1);
                    }
                    None => {
                        out.push('\\');
                        out.push(digits);
                    }
                }
            }
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
}

/// The body of the heredoc at `span`: the lines between its markers, each ending in `\n`, with
/// the indentation shared by the non-blank lines removed for `<<-`.
fn heredoc(source: &str, span: &Span) -> Result<String, SyntaxError> {
    let text = source.get(span.clone()).ok_or_else(|| unreadable(span))?;
    let rest = text.strip_prefix("<<").ok_or_else(|| unreadable(span))?;
    let (indented, rest) = match rest.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, rest),
    };
    let (_, rest) = rest.split_once('\n').ok_or_else(|| unreadable(span))?;
    let mut lines: Vec<&str> = rest.split('\n').map(|line| line.strip_suffix('\r').unwrap_or(line)).collect();
    lines.pop(); // The closing marker.
    let indent = |line: &str| line.chars().take_while(|c| *c == ' ' || *c == '\t').count();
    let strip = if indented {
        lines.iter().filter(|line| !line.trim().is_empty()).map(|line| indent(line)).min().unwrap_or(0)
    } else {
        0
    };
    let mut out = String::new();
    for line in lines {
        let cut: usize = line.chars().take(strip.min(indent(line))).map(char::len_utf8).sum();
        out.push_str(line.get(cut..).unwrap_or(line));
        out.push('\n');
    }
    Ok(out)
}

/// An `hcl-edit` parse error as a one-line message at the offending character.
fn parse_error(source: &str, err: &hcl_edit::parser::Error) -> SyntaxError {
    let mut offset = err.location().offset().min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    let rest = source.get(offset..).unwrap_or("");
    let end = offset + rest.chars().next().map_or(0, char::len_utf8);
    let message = err.message().lines().next().unwrap_or("invalid HCL");
    let message = if message.contains("redefined attribute") {
        format!("duplicate attribute \"{}\"", token(rest))
    } else if message.contains("redefined object key") {
        format!("duplicate key \"{}\"", token(rest).trim_matches('"'))
    } else {
        message.to_owned()
    };
    SyntaxError { span: offset..end, message }
}

/// The identifier or quoted string that `text` starts with.
fn token(text: &str) -> &str {
    let len = if text.starts_with('"') {
        text.get(1..).and_then(|after| after.find('"')).map_or(text.len(), |i| i + 2)
    } else {
        text.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-')).unwrap_or(text.len())
    };
    text.get(..len).unwrap_or(text)
}

#[cfg(test)]
mod tests;
