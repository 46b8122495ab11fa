//! Formatting for people: tables, ages and states. Scripts use `--json` instead.

use bosun_core::Workspace;
use bosun_wire::AgentSummary;

/// "5s", "3m", "2h", "4d".
pub fn age(now_ms: u64, then_ms: u64) -> String {
    let s = now_ms.saturating_sub(then_ms) / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}

/// Left-aligned columns separated by two spaces; the last column is not padded.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let last = cells.len().saturating_sub(1);
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i == last {
                out.push_str(cell);
            } else {
                out.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            }
        }
        out.trim_end().to_owned()
    };
    let mut out = line(header.to_vec());
    for row in rows {
        out.push('\n');
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

pub fn agents_table(now: u64, agents: &[AgentSummary], workspaces: &[Workspace]) -> String {
    let rows: Vec<Vec<String>> = agents
        .iter()
        .map(|a| {
            let ws = workspaces.iter().find(|w| w.id == a.workspace);
            let branch = ws.and_then(|w| w.branch().map(str::to_owned)).unwrap_or_else(|| "-".into());
            vec![
                a.id.to_string(),
                a.name.to_string(),
                a.state_label(),
                age(now, a.created_at.as_millis()),
                a.workspace.to_string(),
                branch,
                tokens_total(&a.tokens),
                cost(a.cost.values().copied()),
            ]
        })
        .collect();
    table(&["AGENT", "NAME", "STATE", "AGE", "WORKSPACE", "BRANCH", "TOKENS", "COST"], &rows)
}

pub fn workspaces_table(now: u64, workspaces: &[Workspace]) -> String {
    let rows: Vec<Vec<String>> = workspaces
        .iter()
        .map(|w| {
            vec![
                w.id.to_string(),
                w.kind.label().to_owned(),
                w.state.label().to_owned(),
                age(now, w.created_at.as_millis()),
                w.branch().unwrap_or("-").to_owned(),
                w.path.display().to_string(),
            ]
        })
        .collect();
    table(&["WORKSPACE", "KIND", "STATE", "AGE", "BRANCH", "PATH"], &rows)
}

/// Tokens as `bosun show` and `bosun usage` say them: `1,234 in · 56 out · 7 cache write · 8
/// cache read`.
pub fn tokens(t: &bosun_core::usage::Tokens) -> String {
    format!(
        "{} in · {} out · {} cache write · {} cache read",
        count(t.input),
        count(t.output),
        count(t.cache_write),
        count(t.cache_read)
    )
}

/// What costs sum to: `$1.23`; `$1.23 + unknown` when some are unknown (a model with no
/// price), `unknown` when all are, `-` when there are none.
pub fn cost(costs: impl Iterator<Item = Option<u64>>) -> String {
    let (mut sum, mut known, mut unknown) = (0u64, false, false);
    for c in costs {
        match c {
            Some(c) => (sum, known) = (sum.saturating_add(c), true),
            None => unknown = true,
        }
    }
    match (known, unknown) {
        (false, false) => "-".to_owned(),
        (false, true) => "unknown".to_owned(),
        (true, false) => bosun_core::price::dollars(sum),
        (true, true) => format!("{} + unknown", bosun_core::price::dollars(sum)),
    }
}

/// A count with thousands apart: `12,345`.
pub use bosun_core::usage::thousands as count;

/// All of an agent's tokens together, `-` when none were recorded.
fn tokens_total(by_model: &std::collections::BTreeMap<String, bosun_core::usage::Tokens>) -> String {
    let total: u64 = by_model.values().map(bosun_core::usage::Tokens::total).sum();
    if total == 0 {
        "-".to_owned()
    } else {
        count(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_use_the_largest_whole_unit() {
        assert_eq!(age(59_999, 0), "59s");
        assert_eq!(age(60_000, 0), "1m");
        assert_eq!(age(7_200_000, 0), "2h");
        assert_eq!(age(0, 5), "0s");
        assert_eq!(age(86_400_000 * 3, 0), "3d");
    }

    #[test]
    fn tables_align_columns() {
        let t = table(&["A", "BB"], &[vec!["long".into(), "x".into()], vec!["s".into(), "yy".into()]]);
        assert_eq!(t, "A     BB\nlong  x\ns     yy");
    }

    #[test]
    fn counts_have_their_thousands_apart() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_234_567), "1,234,567");
        let t = bosun_core::usage::Tokens { input: 1_000, output: 2, cache_write: 30, cache_read: 4_000_000 };
        assert_eq!(tokens(&t), "1,000 in · 2 out · 30 cache write · 4,000,000 cache read");
    }
}
