//! Templates: `${var.name}`, `${args.x}`, `${local.x}`, `${source.branch}`, `${workspace.path}`,
//! `${item.title}` replaced by their values. Into a shell command a value is never spliced: the
//! command gets a reference to an environment variable that holds it (`${args.name}` becomes
//! `"${BOSUN_ARGS_NAME}"`), so whatever the value holds (quotes, `;`, `$(…)`, newlines) it is
//! data, even where the shell text's quoting is guessed wrong (an apostrophe in a comment, a
//! here-document). Only a command that hands the expanded text to another shell (`eval`,
//! `sh -c "…"`) could run it: `unsafe_reevaluation` finds those, and runbooks refuse them.
//! `$(…)` written in the template itself stays for the shell, where the runbook allows it.

use std::collections::BTreeMap;

/// `text` as one word for `sh`, whatever it holds: in single quotes, each `'` spelled `'\''`.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The values a template may name, by namespace (`var`, `args`, `local`, `source`, …) and key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scope {
    values: BTreeMap<String, BTreeMap<String, String>>,
}

/// How the rendered text is used: plain text (a prompt, a branch name), values as they are. A
/// shell command is rendered with `render_shell`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Text,
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

    /// Every value as the environment variable shell commands find it in.
    pub fn env(&self) -> BTreeMap<String, String> {
        let pairs = self.values.iter().flat_map(|(ns, keys)| keys.iter().map(move |(k, v)| (ns, k, v)));
        pairs.map(|(ns, k, v)| (env_name(&format!("{ns}.{k}")), v.clone())).collect()
    }

    pub fn get(&self, path: &str) -> Option<&str> {
        let (ns, key) = path.split_once('.')?;
        self.values.get(ns)?.get(key).map(String::as_str)
    }
}

/// Where the scanner stands in shell text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Quote {
    #[default]
    None,
    Single,
    Double,
    /// A here-document's body.
    Heredoc,
    /// A comment, to the end of its line.
    Comment,
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

/// Renders `template` with `scope` as plain text (`Target::Text`): values go in as they are.
pub fn render(template: &str, scope: &Scope, target: Target) -> Result<String, TemplateError> {
    let Target::Text = target;
    substitute(template, scope, |value, _| value.to_owned())
}

/// A shell command rendered from a template: its text, where each value is a reference to a
/// variable of `env`, and `env`, which the command must run with.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ShellCommand {
    pub text: String,
    pub env: BTreeMap<String, String>,
}

/// Renders `template` as a shell command: each `${ns.key}` becomes a reference to the variable
/// `BOSUN_NS_KEY`, quoted for where it lands (`"${V}"` outside quotes, `${V}` inside double
/// quotes or a here-document, `'"${V}"'` inside single quotes). `env` holds every value of the
/// scope, so shell text may also name them itself (`sh -c 'echo "$BOSUN_ITEM_TITLE"'`).
pub fn render_shell(template: &str, scope: &Scope) -> Result<ShellCommand, TemplateError> {
    let env = scope.env();
    let text = substitute(template, scope, |_, (name, quote)| {
        let var = env_name(name);
        match quote {
            Quote::None => format!("\"${{{var}}}\""),
            Quote::Double | Quote::Heredoc => format!("${{{var}}}"),
            Quote::Single => format!("'\"${{{var}}}\"'"),
            // A comment: nothing runs there; the reference keeps the line as it was meant.
            Quote::Comment => format!("${{{var}}}"),
        }
    })?;
    Ok(ShellCommand { text, env })
}

/// The environment variable a shell command finds the value of `ns.key` in: `BOSUN_NS_KEY`,
/// upper case, `-` as `_`.
pub fn env_name(name: &str) -> String {
    let tail: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect();
    format!("BOSUN_{tail}")
}

/// Where in `template` (shell text) a template hands its expansion to another shell to parse
/// again — `eval …${x}…`, `sh -c "…${x}…"` (also bash, zsh, dash, ksh), `ssh … "…${x}…"` — so a
/// value there would run as code. None when there is no such place.
pub fn unsafe_reevaluation(template: &str) -> Option<String> {
    for line in template.lines() {
        let Some(at) = line.find("${") else { continue };
        let before = &line[..at];
        let words: Vec<&str> = before.split_whitespace().collect();
        let runs_shell = words.iter().enumerate().any(|(i, w)| {
            let w = w.trim_start_matches(['(', '{', ';', '&', '|', '`', '"', '\'']);
            let base = w.rsplit('/').next().unwrap_or(w);
            base == "eval"
                || base == "ssh"
                || (matches!(base, "sh" | "bash" | "zsh" | "dash" | "ksh") && words.get(i + 1) == Some(&"-c"))
        });
        if runs_shell {
            return Some(line.trim().chars().take(120).collect());
        }
    }
    None
}

/// Why a template may not stand where another shell parses the text again.
pub fn reevaluation_error(line: &str) -> String {
    format!(
        "`{line}` hands a template to another shell (eval, sh -c, ssh), where its value would run as a \
         command: name its variable there instead, inside single quotes, e.g. \
         sh -c 'echo \"$BOSUN_ARGS_NAME\"' (every value is in the environment as BOSUN_<NAMESPACE>_<KEY>)"
    )
}

/// `template` with each `${ns.key}` replaced by what `value` makes of its value, given its name
/// and the quoting where it stands.
fn substitute(
    template: &str,
    scope: &Scope,
    mut value: impl FnMut(&str, (&str, Quote)) -> String,
) -> Result<String, TemplateError> {
    let mut out = String::with_capacity(template.len());
    let mut scan = Scanner::default();
    let mut chars = template.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '$' && template[i + 1..].starts_with('{') {
            let after = &template[i + 2..];
            let end = after.find('}').ok_or_else(|| TemplateError::Unclosed(after.chars().take(20).collect()))?;
            let name = after[..end].trim();
            if !valid_name(name) {
                return Err(TemplateError::Malformed(name.to_owned()));
            }
            let v = scope.get(name).ok_or_else(|| TemplateError::Undefined(name.to_owned()))?;
            out.push_str(&value(v, (name, scan.quote)));
            // Skip past the closing brace.
            while chars.peek().is_some_and(|(j, _)| *j <= i + 2 + end) {
                chars.next();
            }
            continue;
        }
        scan.step(template, i, c);
        out.push(c);
        if c == '\\' && matches!(scan.quote, Quote::None | Quote::Double) {
            // An escaped character keeps the quoting as it is.
            if let Some((_, next)) = chars.next() {
                out.push(next);
            }
        }
    }
    Ok(out)
}

/// Follows shell quoting well enough to pick a reference's form: quotes, comments, and the
/// bodies of here-documents. A wrong guess makes a reference print as text, never run.
#[derive(Default)]
struct Scanner {
    quote: Quote,
    /// The quoting around each `$(` the scanner is inside: a command substitution starts afresh.
    nested: Vec<Quote>,
    /// Here-document delimiters whose bodies start at the next line.
    pending: Vec<(String, bool)>,
    /// The delimiter of the here-document body being read, and whether it strips tabs.
    body: Option<(String, bool)>,
    line_start: usize,
}

impl Scanner {
    fn step(&mut self, text: &str, i: usize, c: char) {
        if c == '\n' {
            self.line_start = i + 1;
            if self.quote == Quote::Comment {
                self.quote = Quote::None;
            }
            if let Some((delim, tabs)) = self.body.take() {
                let line = &text[text[..i].rfind('\n').map_or(0, |n| n + 1)..i];
                let line = if tabs { line.trim_start_matches('\t') } else { line };
                if line != delim {
                    self.body = Some((delim, tabs));
                }
            }
            if self.body.is_none() && !self.pending.is_empty() && self.quote == Quote::None {
                self.body = Some(self.pending.remove(0));
            }
            self.quote = if self.body.is_some() { Quote::Heredoc } else { self.quote };
            if self.body.is_none() && self.quote == Quote::Heredoc {
                self.quote = Quote::None;
            }
            return;
        }
        if c == '(' && text[..i].ends_with('$') && matches!(self.quote, Quote::None | Quote::Double | Quote::Heredoc) {
            self.nested.push(self.quote);
            self.quote = Quote::None;
            return;
        }
        if c == ')' && self.quote == Quote::None {
            if let Some(outer) = self.nested.pop() {
                self.quote = outer;
                return;
            }
        }
        self.quote = match (self.quote, c) {
            (Quote::Heredoc, _) => Quote::Heredoc,
            (Quote::Comment, _) => Quote::Comment,
            (Quote::None, '\'') => Quote::Single,
            (Quote::Single, '\'') => Quote::None,
            (Quote::None, '"') => Quote::Double,
            (Quote::Double, '"') => Quote::None,
            (Quote::None, '#') if i == self.line_start || text[..i].ends_with([' ', '\t', ';', '&', '|', '(']) => {
                Quote::Comment
            }
            (Quote::None, '<') if text[i..].starts_with("<<") && !text[..i].ends_with('<') => {
                if let Some(d) = heredoc_delimiter(&text[i + 2..]) {
                    self.pending.push(d);
                }
                Quote::None
            }
            (q, _) => q,
        };
    }
}

/// The delimiter of a here-document that starts after `<<` (`-EOF`, `'EOF'`, `"EOF"`, ` EOF`),
/// and whether its body's leading tabs are stripped. A quoted delimiter's body is not expanded
/// by the shell: it is read as single-quoted text.
fn heredoc_delimiter(rest: &str) -> Option<(String, bool)> {
    if rest.starts_with('<') {
        return None; // a here-string
    }
    let (tabs, rest) = rest.strip_prefix('-').map_or((false, rest), |r| (true, r));
    let word: String =
        rest.trim_start().chars().take_while(|c| !c.is_whitespace() && !";&|<>()".contains(*c)).collect();
    let delim: String = word.chars().filter(|c| !matches!(c, '\'' | '"' | '\\')).collect();
    (!delim.is_empty()).then_some((delim, tabs))
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
    fn shell_values_are_references_to_the_environment() {
        let shell = |t: &str| render_shell(t, &scope()).unwrap();
        let c = shell("git checkout ${source.branch}");
        assert_eq!(c.text, "git checkout \"${BOSUN_SOURCE_BRANCH}\"");
        assert_eq!(c.env.get("BOSUN_SOURCE_BRANCH").map(String::as_str), Some("feature/auth"));
        assert_eq!(shell("echo \"b=${source.branch}\"").text, "echo \"b=${BOSUN_SOURCE_BRANCH}\"");
        assert_eq!(shell("echo '${var.name}'").text, "echo ''\"${BOSUN_VAR_NAME}\"''");
        assert_eq!(shell("echo $(date) ${var.name}").text, "echo $(date) \"${BOSUN_VAR_NAME}\"");
        // An apostrophe in a comment does not open a quote.
        assert_eq!(shell("# don't\necho ${var.name}").text, "# don't\necho \"${BOSUN_VAR_NAME}\"");
        // A command substitution quotes afresh, inside double quotes too.
        assert_eq!(
            shell("echo \"s: $(printf '%s' \"${var.name}\") ${var.name}\"").text,
            "echo \"s: $(printf '%s' \"${BOSUN_VAR_NAME}\") ${BOSUN_VAR_NAME}\""
        );
        // A here-document's body expands references as they are.
        assert_eq!(
            shell("cat <<EOF\nname: ${var.name}\nEOF\necho ${var.name}").text,
            "cat <<EOF\nname: ${BOSUN_VAR_NAME}\nEOF\necho \"${BOSUN_VAR_NAME}\""
        );
        assert_eq!(env_name("args.base-ref"), "BOSUN_ARGS_BASE_REF");
    }

    #[test]
    fn handing_a_template_to_another_shell_is_found() {
        for t in [
            "eval \"echo ${args.x}\"",
            "sh -c \"echo ${args.x}\"",
            "/bin/bash -c 'x ${args.x}'",
            "ssh host \"rm ${args.x}\"",
        ] {
            assert!(unsafe_reevaluation(t).is_some(), "{t}");
        }
        for t in
            ["echo ${args.x}", "sh script.sh ${args.x}", "evaluate ${args.x}", "eval \"$(ssh-agent)\"\necho ${args.x}"]
        {
            assert_eq!(unsafe_reevaluation(t), None, "{t}");
        }
    }
}
