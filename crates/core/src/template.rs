//! Templates: `${var.name}`, `${args.x}`, `${local.x}`, `${source.branch}`, `${workspace.path}`,
//! `${item.title}` replaced by their values. Into a shell command, a value is always quoted for
//! the place it lands in — outside quotes, inside double quotes, inside single quotes — so no
//! value (quotes, `;`, `$(…)`, newlines) can ever run as a command. `$(…)` written in the
//! template itself stays for the shell, where the runbook allows it (locals, `ref`).

use std::collections::BTreeMap;

/// The values a template may name, by namespace (`var`, `args`, `local`, `source`, …) and key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scope {
    values: BTreeMap<String, BTreeMap<String, String>>,
}

/// How the rendered text is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Plain text (a prompt, a branch name): values go in as they are.
    Text,
    /// A shell command: values are quoted for where they land.
    Shell,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("`${{{0}}}` is not defined")]
    Undefined(String),
    #[error("`${{{0}` is not closed with `}}`")]
    Unclosed(String),
    #[error("`${{{0}}}` must name NAMESPACE.KEY (var, args, local, source, workspace or item)")]
    Malformed(String),
}

impl Scope {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set(&mut self, namespace: &str, key: &str, value: impl Into<String>) -> &mut Self {
        self.values.entry(namespace.to_owned()).or_default().insert(key.to_owned(), value.into());
        self
    }

    pub fn get(&self, path: &str) -> Option<&str> {
        let (ns, key) = path.split_once('.')?;
        self.values.get(ns)?.get(key).map(String::as_str)
    }
}

/// Where the scanner stands in shell text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    None,
    Single,
    Double,
}

/// The names a template uses (`var.name`, …), in order, for checking them before a run.
pub fn names(template: &str) -> Result<Vec<String>, TemplateError> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(i) = rest.find("${") {
        let after = &rest[i + 2..];
        let end = after.find('}').ok_or_else(|| TemplateError::Unclosed(after.chars().take(20).collect()))?;
        let name = after[..end].trim();
        if !valid_name(name) {
            return Err(TemplateError::Malformed(name.to_owned()));
        }
        out.push(name.to_owned());
        rest = &after[end + 1..];
    }
    Ok(out)
}

fn valid_name(name: &str) -> bool {
    name.split_once('.').is_some_and(|(ns, key)| {
        let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        ident(ns) && ident(key)
    })
}

/// Renders `template` with `scope` for `target`.
pub fn render(template: &str, scope: &Scope, target: Target) -> Result<String, TemplateError> {
    let mut out = String::with_capacity(template.len());
    let mut quote = Quote::None;
    let mut chars = template.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '$' && template[i + 1..].starts_with('{') {
            let after = &template[i + 2..];
            let end = after.find('}').ok_or_else(|| TemplateError::Unclosed(after.chars().take(20).collect()))?;
            let name = after[..end].trim();
            if !valid_name(name) {
                return Err(TemplateError::Malformed(name.to_owned()));
            }
            let value = scope.get(name).ok_or_else(|| TemplateError::Undefined(name.to_owned()))?;
            match target {
                Target::Text => out.push_str(value),
                Target::Shell => out.push_str(&quoted(value, quote)),
            }
            // Skip past the closing brace.
            while chars.peek().is_some_and(|(j, _)| *j <= i + 2 + end) {
                chars.next();
            }
            continue;
        }
        if target == Target::Shell {
            quote = match (quote, c) {
                (Quote::None, '\'') => Quote::Single,
                (Quote::Single, '\'') => Quote::None,
                (Quote::None, '"') => Quote::Double,
                (Quote::Double, '"') => Quote::None,
                (q, '\\') if q != Quote::Single => {
                    // An escaped character keeps the quoting as it is.
                    out.push(c);
                    if let Some((_, next)) = chars.next() {
                        out.push(next);
                    }
                    continue;
                }
                (q, _) => q,
            };
        }
        out.push(c);
    }
    Ok(out)
}

/// `value` as literal shell text at a place with the given quoting.
fn quoted(value: &str, quote: Quote) -> String {
    match quote {
        // A single-quoted word; each ' becomes '\''.
        Quote::None => format!("'{}'", value.replace('\'', r"'\''")),
        // Inside "…": the characters special there are escaped.
        Quote::Double => {
            let mut s = String::with_capacity(value.len());
            for c in value.chars() {
                if matches!(c, '$' | '`' | '\\' | '"') {
                    s.push('\\');
                }
                s.push(c);
            }
            s
        }
        // Inside '…': close the quote, add the value quoted, open it again.
        Quote::Single => format!("'{}'", quoted(value, Quote::None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope() -> Scope {
        let mut s = Scope::new();
        s.set("var", "name", "auth").set("source", "branch", "feature/auth");
        s
    }

    #[test]
    fn text_templates_take_values_as_they_are() {
        assert_eq!(render("feature/${var.name}-x", &scope(), Target::Text).unwrap(), "feature/auth-x");
        assert_eq!(render("no templates", &scope(), Target::Text).unwrap(), "no templates");
        assert_eq!(render("${ var.name }", &scope(), Target::Text).unwrap(), "auth");
    }

    #[test]
    fn errors_name_the_template() {
        assert_eq!(render("${var.nope}", &scope(), Target::Text), Err(TemplateError::Undefined("var.nope".into())));
        assert!(matches!(render("${var.name", &scope(), Target::Text), Err(TemplateError::Unclosed(_))));
        assert_eq!(render("${name}", &scope(), Target::Text), Err(TemplateError::Malformed("name".into())));
        assert_eq!(names("a ${var.x} b ${local.y}").unwrap(), vec!["var.x", "local.y"]);
    }

    #[test]
    fn shell_values_are_quoted_for_where_they_land() {
        assert_eq!(
            render("git checkout ${source.branch}", &scope(), Target::Shell).unwrap(),
            "git checkout 'feature/auth'"
        );
        assert_eq!(render("echo \"b=${source.branch}\"", &scope(), Target::Shell).unwrap(), "echo \"b=feature/auth\"");
        assert_eq!(render("echo '${var.name}'", &scope(), Target::Shell).unwrap(), "echo '''auth'''");
        assert_eq!(render("echo $(date) ${var.name}", &scope(), Target::Shell).unwrap(), "echo $(date) 'auth'");
    }
}
