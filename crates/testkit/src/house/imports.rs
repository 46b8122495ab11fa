//! The import arrows between the files of the crates' `src/` trees, read from their code: a
//! file points at the file that defines what it names through `crate::`, `super::`, `self::`
//! or one of its own child modules, in `use` lines and in paths alike, following `pub use`
//! re-exports to the definition. And the circles those arrows make.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::source::Source;

/// The arrows of a tree: each file, and the files it takes something from.
#[derive(Debug, Default)]
pub struct Imports {
    pub arrows: BTreeMap<PathBuf, BTreeSet<PathBuf>>,
    /// What each arrow takes: the paths, as written, that make it.
    pub names: BTreeMap<(PathBuf, PathBuf), BTreeSet<String>>,
}

/// What a crate's files define and re-export, by module path.
struct Crate<'s> {
    modules: BTreeMap<Vec<String>, &'s Source>,
}

impl Imports {
    /// The arrows among `sources`.
    pub fn of(sources: &[Source]) -> Self {
        let mut crates: BTreeMap<(PathBuf, bool), Crate> = BTreeMap::new();
        for s in sources {
            let krate = crates.entry(crate_key(s)).or_insert_with(|| Crate { modules: BTreeMap::new() });
            krate.modules.insert(s.module.clone(), s);
        }
        let mut arrows: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
        let mut names: BTreeMap<(PathBuf, PathBuf), BTreeSet<String>> = BTreeMap::new();
        for s in sources {
            let krate = &crates[&crate_key(s)];
            let to = arrows.entry(s.path.clone()).or_default();
            for path in paths_in(s, krate) {
                if let Some(target) = krate.resolve(&s.module, &path, 0) {
                    if !contains(&target.module, &s.module) && !contains(&s.module, &target.module) {
                        to.insert(target.path.clone());
                        names.entry((s.path.clone(), target.path.clone())).or_default().insert(path.join("::"));
                    }
                }
            }
        }
        Self { arrows, names }
    }

    /// Every circle: each a set of two or more files that reach one another, sorted.
    pub fn circles(&self) -> Vec<Vec<PathBuf>> {
        let mut circles: Vec<Vec<PathBuf>> =
            strongly_connected(&self.arrows).into_iter().filter(|c| c.len() > 1).collect();
        for c in &mut circles {
            c.sort();
        }
        circles.sort();
        circles
    }
}

/// Whether module `outer` is `inner` or holds it: a folder's face (`mod.rs`, `lib.rs`) and
/// the files inside it are one module's inside, not an import either way.
fn contains(outer: &[String], inner: &[String]) -> bool {
    inner.starts_with(outer)
}

/// Binaries under `src/bin/` are crates of their own.
fn crate_key(s: &Source) -> (PathBuf, bool) {
    (s.krate.clone(), s.module.first().is_some_and(|m| m == "bin"))
}

/// The paths `s` names that may point into its own crate, as segments, each starting with
/// `crate`, `super`, `self` or one of its child modules.
fn paths_in(s: &Source, krate: &Crate) -> Vec<Vec<String>> {
    let children: BTreeSet<String> = krate
        .modules
        .keys()
        .filter(|m| m.len() == s.module.len() + 1 && m.starts_with(&s.module))
        .filter_map(|m| m.last().cloned())
        .collect();
    let mut paths = Vec::new();
    for stmt in use_statements(&s.code) {
        paths.extend(expand_use(&stmt));
    }
    let code = s.code.as_str();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if is_ident_start(bytes[i]) && (i == 0 || !is_ident(bytes[i - 1]) && bytes[i - 1] != b':') {
            let end = (i..bytes.len())
                .find(|j| !(is_ident(bytes[*j]) || bytes[*j] == b':' && colons(bytes, *j)))
                .unwrap_or(bytes.len());
            let text = &code[i..end];
            let segs: Vec<String> = text.split("::").filter(|p| !p.is_empty()).map(str::to_owned).collect();
            if segs.len() > 1 {
                let first = segs[0].as_str();
                if matches!(first, "crate" | "super" | "self") || children.contains(first) {
                    paths.push(segs);
                }
            }
            i = end.max(i + 1);
        } else {
            i += 1;
        }
    }
    paths
}

/// Whether the `:` at `j` is one of a `::`.
fn colons(b: &[u8], j: usize) -> bool {
    b.get(j + 1) == Some(&b':') || (j > 0 && b[j - 1] == b':')
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The bodies of the `use` statements in `code` (what follows `use` up to its `;`), tidied.
fn use_statements(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = find_word(rest, "use") {
        let after = &rest[at + 3..];
        let Some(end) = after.find(';') else { break };
        out.push(tidy(&after[..end]));
        rest = &after[end..];
    }
    out
}

/// The `pub use` statements of `code`: the name each brings in (`*` for a glob), and its path.
fn re_exports(code: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = find_word(rest, "use") {
        let before = rest[..at].trim_end();
        let public = before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
        let after = &rest[at + 3..];
        let Some(end) = after.find(';') else { break };
        if public {
            let stmt = tidy(&after[..end]);
            for path in expand_use(&stmt) {
                let name = match path.iter().position(|p| p == "as") {
                    Some(i) => path.get(i + 1).cloned().unwrap_or_default(),
                    None => path.last().cloned().unwrap_or_default(),
                };
                let path: Vec<String> = path.into_iter().take_while(|p| p != "as").collect();
                out.push((name, path));
            }
        }
        rest = &after[end..];
    }
    out
}

/// Where the word `word` next stands alone in `text`.
fn find_word(text: &str, word: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(p) = text[from..].find(word) {
        let at = from + p;
        let end = at + word.len();
        let alone_before = at == 0 || !is_ident(b[at - 1]);
        let alone_after = end < b.len() && !is_ident(b[end]);
        if alone_before && alone_after {
            return Some(at);
        }
        from = end;
    }
    None
}

/// A use tree (`crate::a::{b, c::{D, E as F}}`, spaces only around `as`) as the paths it
/// names, `as` kept as a segment followed by the new name.
fn expand_use(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim_start_matches("::");
    match tree.find('{') {
        None => {
            let (path, alias) = match tree.split_once(" as ") {
                Some((p, a)) => (p, Some(a)),
                None => (tree, None),
            };
            let mut segs: Vec<String> = path.split("::").filter(|s| !s.is_empty()).map(str::to_owned).collect();
            if let Some(alias) = alias {
                segs.push("as".into());
                segs.push(alias.to_owned());
            }
            vec![segs]
        }
        Some(open) => {
            let prefix = tree[..open].trim_end_matches("::");
            let Some(close) = tree.rfind('}') else { return Vec::new() };
            let inner = &tree[open + 1..close];
            split_top(inner)
                .into_iter()
                .flat_map(|part| {
                    let whole = match part.as_str() {
                        "self" => prefix.to_owned(),
                        _ if prefix.is_empty() => part,
                        _ => format!("{prefix}::{part}"),
                    };
                    expand_use(&whole)
                })
                .collect()
        }
    }
}

/// A `use` body with its whitespace gone but for the single spaces around `as`.
fn tidy(body: &str) -> String {
    let mut s = body.split_whitespace().collect::<Vec<_>>().join(" ");
    for (from, to) in
        [(" ::", "::"), (":: ", "::"), (" {", "{"), ("{ ", "{"), (" }", "}"), ("} ", "}"), (" ,", ","), (", ", ",")]
    {
        s = s.replace(from, to);
    }
    s
}

/// `a, b::{c, d}, e` split at its top-level commas.
fn split_top(inner: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in inner.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    parts.push(cur);
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

impl<'s> Crate<'s> {
    /// The file that defines what `path` names, seen from module `from`; none when the path
    /// leaves the crate or names nothing it has.
    fn resolve(&self, from: &[String], path: &[String], depth: usize) -> Option<&'s Source> {
        if depth > 8 {
            return None;
        }
        let mut module: Vec<String> = from.to_vec();
        let mut segs = path.iter().peekable();
        match segs.peek().map(|s| s.as_str()) {
            Some("crate") => {
                module.clear();
                segs.next();
            }
            Some("self") => {
                segs.next();
            }
            Some("super") => {
                while segs.peek().is_some_and(|s| *s == "super") {
                    module.pop()?;
                    segs.next();
                }
            }
            _ => {}
        }
        let rest: Vec<&String> = segs.take_while(|s| *s != "as").collect();
        let mut i = 0;
        while i < rest.len() {
            let mut deeper = module.clone();
            deeper.push(rest[i].clone());
            if self.modules.contains_key(&deeper) {
                module = deeper;
                i += 1;
            } else {
                break;
            }
        }
        let file = *self.modules.get(&module)?;
        let Some(name) = rest.get(i) else { return Some(file) };
        if defines(&file.code, name) {
            return Some(file);
        }
        for (exported, via) in re_exports(&file.code) {
            if exported == **name {
                return self.resolve(&module, &via, depth + 1).or(Some(file));
            }
            if exported == "*" {
                let mut glob = via.clone();
                glob.push((*name).clone());
                if let Some(found) = self.resolve(&module, &glob, depth + 1) {
                    if found.path != file.path {
                        return Some(found);
                    }
                }
            }
        }
        Some(file)
    }
}

/// Whether `code` defines an item called `name`.
fn defines(code: &str, name: &str) -> bool {
    const KINDS: [&str; 8] = ["fn", "struct", "enum", "trait", "type", "const", "static", "union"];
    let mut rest = code;
    while let Some(at) = find_word(rest, name) {
        let before = rest[..at].trim_end();
        let word_start = before.rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '!')).map_or(0, |p| p + 1);
        let word = &before[word_start..];
        if KINDS.contains(&word) || word == "macro_rules!" {
            return true;
        }
        rest = &rest[at + name.len()..];
    }
    false
}

/// Tarjan's strongly connected components of `graph`.
fn strongly_connected(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'g PathBuf, usize>,
        low: BTreeMap<&'g PathBuf, usize>,
        stack: Vec<&'g PathBuf>,
        on_stack: BTreeSet<&'g PathBuf>,
        next: usize,
        out: Vec<Vec<PathBuf>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g PathBuf) {
            self.index.insert(v, self.next);
            self.low.insert(v, self.next);
            self.next += 1;
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                self.out.push(component);
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::house::source::code_of;

    fn file(path: &str, module: &[&str], text: &str) -> Source {
        Source {
            path: path.into(),
            krate: "k".into(),
            module: module.iter().map(|m| (*m).to_owned()).collect(),
            code: code_of(text),
        }
    }

    #[test]
    fn a_circle_is_found_through_a_re_export_and_a_face_is_not_one() {
        let tree = [
            file("lib.rs", &[], "mod a; mod b; mod c; pub use b::Bee;\npub trait Face {}\n"),
            file("a.rs", &["a"], "use crate::Bee;\nuse crate::Face;\n"),
            file("b.rs", &["b"], "pub struct Bee; fn f() { crate::c::see(); }\n"),
            file("c.rs", &["c"], "pub fn see() {}\nuse crate::{a::{self}, Face as F};\n"),
        ];
        let imports = Imports::of(&tree);
        let to = |from: &str| {
            imports.arrows[&PathBuf::from(from)].iter().map(|p| p.display().to_string()).collect::<Vec<_>>()
        };
        assert_eq!(to("a.rs"), ["b.rs"], "through lib.rs's re-export to where Bee is; lib.rs is a's face");
        assert_eq!(to("b.rs"), ["c.rs"]);
        assert_eq!(to("c.rs"), ["a.rs"]);
        assert_eq!(imports.circles(), [vec![PathBuf::from("a.rs"), PathBuf::from("b.rs"), PathBuf::from("c.rs")]]);
    }

    #[test]
    fn a_use_tree_is_every_path_it_names() {
        assert_eq!(
            expand_use(&tidy("crate::a::{b, c::{D, E as F}, self}")),
            [
                vec!["crate", "a", "b"],
                vec!["crate", "a", "c", "D"],
                vec!["crate", "a", "c", "E", "as", "F"],
                vec!["crate", "a"]
            ]
        );
    }
}
