//! Drawing the dashboard: the task manager, help, escalations and an agent's workspace view
//! (a 30 % sidebar beside a 70 % terminal), as seed 004 draws them. A plain function of what is
//! shown; it never reads anything.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row as TableRow, Table, Wrap};
use ratatui::Frame;

use super::board::{Board, Shown};
use super::view::{Focus, Mode, View};

/// An open escalation as listed: its id, agent and what it says.
#[derive(Clone, Debug, PartialEq)]
pub struct Open {
    pub id: u64,
    pub agent: String,
    pub text: String,
}

/// What the workspace view shows of one agent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Detail {
    pub name: String,
    pub label: String,
    pub live: bool,
    /// It died while it was being viewed.
    pub ended: bool,
    pub kind: String,
    /// Its branch's pull request (`#12 open`), when `gh` knows one.
    pub pr: Option<String>,
    /// Commits on its branch, lines added and removed against its base.
    pub commits: Option<(u32, u32, u32)>,
    /// Changed files against the base, with their M/A/D/R letter.
    pub files: Vec<(char, String)>,
    /// The newest events about it: when (ms) and what.
    pub history: Vec<(u64, String)>,
    pub task: Option<String>,
    /// Its screen, with its colours.
    pub screen: Text<'static>,
    /// Its terminal output as tmux copies it (`pipe-pane`): the screen is read again when it grows.
    pub output: std::path::PathBuf,
    /// Where it works.
    pub path: std::path::PathBuf,
}

pub fn draw(frame: &mut Frame, view: &View, board: &Board, open: &[Open], detail: Option<&Detail>, colors: bool) {
    let [body, footer] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(frame.area());
    match &view.mode {
        Mode::Workspace { focus, .. } => match detail {
            Some(d) => workspace(frame, body, d, *focus, board.now, colors),
            None => tasks(frame, body, view, board, colors),
        },
        Mode::Help => help(frame, body),
        Mode::Escalations { selected } => escalations(frame, body, open, *selected),
        _ => tasks(frame, body, view, board, colors),
    }
    let line = match &view.mode {
        Mode::Filter => format!("/{}▏  {}", view.filter, view.footer()),
        Mode::Send { id, text } => format!("to {id}: {text}▏  {}", view.footer()),
        Mode::ConfirmKill { id } => format!("kill {id}?  {}", view.footer()),
        _ if !view.filter.is_empty() && view.mode == Mode::Tasks => {
            format!("filter: {}  {}", view.filter, view.footer())
        }
        _ => view.footer().to_owned(),
    };
    frame.render_widget(Paragraph::new(line).style(Style::default().add_modifier(Modifier::DIM)), footer);
}

fn color(state: Shown, colors: bool) -> Style {
    if !colors {
        return Style::default();
    }
    let c = match state {
        Shown::Working => Color::Green,
        Shown::Idle => Color::Blue,
        Shown::Prompt => Color::Yellow,
        Shown::Error => Color::Red,
        Shown::Dead => Color::DarkGray,
        Shown::Waiting => Color::Cyan,
    };
    Style::default().fg(c)
}

fn tasks(frame: &mut Frame, area: Rect, view: &View, board: &Board, colors: bool) {
    let visible = view.visible(board);
    let agents = board.rows.iter().filter(|r| r.kind == super::board::RowKind::Agent).count();
    let title = format!(" bosun — {agents} agent(s), {} job(s) ", board.rows.len() - agents);
    let block = Block::default().borders(Borders::ALL).title(title);
    if visible.is_empty() {
        let text = if board.rows.is_empty() {
            "nothing runs: start an agent with `bosun agent start`, or a job with `bosun run`"
        } else {
            "nothing matches the filter (Esc clears it)"
        };
        frame.render_widget(Paragraph::new(text).block(block).wrap(Wrap { trim: true }), area);
        return;
    }
    let selected = view.selected.min(visible.len() - 1);
    let rows = visible.iter().enumerate().map(|(i, r)| {
        let mut style = Style::default();
        if i == selected {
            style = style.add_modifier(Modifier::REVERSED);
        }
        let esc = if r.escalations > 0 { format!("⚑{}", r.escalations) } else { String::new() };
        let dash = || "-".to_owned();
        TableRow::new(vec![
            Cell::from(Span::styled(format!("{} {}", r.state.symbol(), r.label), color(r.state, colors))),
            Cell::from(r.name.clone()),
            Cell::from(r.id.clone()),
            Cell::from(crate::render::age(board.now, r.created_at)),
            Cell::from(r.workspace.clone().unwrap_or_else(dash)),
            Cell::from(r.branch.clone().unwrap_or_else(dash)),
            Cell::from(r.ahead.map_or_else(dash, |n| n.to_string())),
            Cell::from(r.cost.clone().unwrap_or_else(dash)),
            Cell::from(esc),
        ])
        .style(style)
    });
    let widths = [
        Constraint::Min(20),
        Constraint::Min(8),
        Constraint::Length(9),
        Constraint::Length(4),
        Constraint::Min(8),
        Constraint::Min(8),
        Constraint::Length(5),
        Constraint::Length(8),
        Constraint::Length(3),
    ];
    let header = TableRow::new(["STATE", "NAME", "ID", "AGE", "WORKSPACE", "BRANCH", "AHEAD", "COST", ""])
        .style(Style::default().add_modifier(Modifier::BOLD));
    frame.render_widget(Table::new(rows, widths).header(header).block(block), area);
}

fn help(frame: &mut Frame, area: Rect) {
    let text = "\
Task manager
  ↑/↓ j/k   move              w, Enter  the workspace view
  a         attach full screen s         send a message
  x         kill (asks first)  e         escalations (r resolves)
  /         filter             ?         this help        q  quit

Workspace view
  terminal focus: every key goes to the agent
    Ctrl+\\  the sidebar        Ctrl+]    full-screen attach (leaves the dashboard)
  sidebar focus:  Tab/Enter the terminal   Esc the task manager";
    frame.render_widget(Paragraph::new(text).block(Block::default().borders(Borders::ALL).title(" help ")), area);
}

fn escalations(frame: &mut Frame, area: Rect, open: &[Open], selected: usize) {
    let block = Block::default().borders(Borders::ALL).title(format!(" escalations ({}) ", open.len()));
    if open.is_empty() {
        frame.render_widget(Paragraph::new("nothing needs a person").block(block), area);
        return;
    }
    let lines: Vec<Line> = open
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let style =
                if i == selected { Style::default().add_modifier(Modifier::REVERSED) } else { Style::default() };
            Line::styled(format!("e{}  {}  {}", e.id, e.agent, e.text), style)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn workspace(frame: &mut Frame, area: Rect, d: &Detail, focus: Focus, now: u64, colors: bool) {
    let [side, term] = Layout::horizontal([Constraint::Percentage(30), Constraint::Percentage(70)]).areas(area);
    let mut lines: Vec<Line> = vec![Line::styled(d.name.clone(), Style::default().add_modifier(Modifier::BOLD))];
    let (mark, mark_style) = if d.live { ("● live", Shown::Working) } else { ("✗ dead", Shown::Dead) };
    // Seed 004's three spaces before the mark, one when the sidebar is too narrow for them.
    let status = format!("Status: {}", d.label);
    let fits = status.chars().count() + 3 + mark.chars().count() <= usize::from(side.width.saturating_sub(2));
    lines.push(Line::from(vec![
        Span::raw(format!("{status}{}", if fits { "   " } else { " " })),
        Span::styled(mark, color(mark_style, colors)),
    ]));
    lines.push(Line::raw(format!("Agent: {}", d.kind)));
    if let Some(pr) = &d.pr {
        lines.push(Line::raw(format!("PR: {pr}")));
    }
    if let Some((commits, added, removed)) = d.commits {
        lines.push(Line::raw(format!("Commits: {commits}  +{added} -{removed}")));
    }
    // Lines are cut at the sidebar's width, never wrapped, so what fits in its height is known:
    // at most ten files, fewer when the history and the task's first lines would not fit.
    let history = d.history.len().min(5);
    let task_shown = d.task.as_deref().map_or(1, |t| t.lines().count().clamp(1, 3));
    let room = usize::from(side.height.saturating_sub(2)).saturating_sub(lines.len() + 3);
    let files_max = room.saturating_sub(history + task_shown + 1).clamp(1, 10);
    lines.push(Line::raw(format!("── Files ({}) ──", d.files.len())));
    if d.files.is_empty() {
        lines.push(Line::raw("(no changes)"));
    }
    for (letter, file) in d.files.iter().take(files_max) {
        lines.push(Line::raw(format!("{letter} {file}")));
    }
    if d.files.len() > files_max {
        lines.push(Line::raw(format!("+{} more", d.files.len() - files_max)));
    }
    lines.push(Line::raw("── History ──"));
    for (at, what) in d.history.iter().rev().take(history) {
        lines.push(Line::raw(format!("{:>4}  {what}", crate::render::age(now, *at))));
    }
    lines.push(Line::raw("── Task ──"));
    match &d.task {
        Some(task) => lines.extend(task.lines().take(10).map(|l| Line::raw(l.to_owned()))),
        None => lines.push(Line::raw("(no description)")),
    }
    let focused = |f: Focus| {
        if f == focus {
            Style::default().add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::DIM)
        }
    };
    let side_block = Block::default().borders(Borders::ALL).border_style(focused(Focus::Sidebar));
    frame.render_widget(Paragraph::new(lines).block(side_block), side);
    let term_block = Block::default().borders(Borders::ALL).border_style(focused(Focus::Terminal));
    let screen = if d.ended {
        Text::raw("[Session ended]")
    } else if !d.live {
        Text::raw("[Session dead — Esc to dashboard, respawn from task list]")
    } else {
        d.screen.clone()
    };
    frame.render_widget(Paragraph::new(screen).block(term_block), term);
}

#[cfg(test)]
mod tests {
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    use super::*;
    use crate::dash::board::{Row, RowKind};
    use crate::dash::view::View;

    const NOW: u64 = 1_800_000_000_000;

    fn row(kind: RowKind, id: &str, name: &str, state: Shown, label: &str, escalations: usize) -> Row {
        Row {
            kind,
            id: id.into(),
            name: name.into(),
            state,
            label: label.into(),
            created_at: NOW - 125_000,
            workspace: Some(format!("ws-{name}-{id}")),
            branch: Some(format!("ws-{id}")),
            ahead: Some(escalations as u32 * 2),
            escalations,
            cost: None,
        }
    }

    fn board() -> Board {
        let rows = vec![
            row(RowKind::Agent, "k3j9x2ab", "fix-login", Shown::Working, "working", 0),
            row(RowKind::Agent, "p0q1r2s3", "docs", Shown::Idle, "idle", 0),
            row(RowKind::Agent, "m4n5o6p7", "migrate", Shown::Prompt, "prompt(permission)", 1),
            row(RowKind::Agent, "e8f9g0h1", "api", Shown::Error, "error(rate_limited)", 2),
            row(RowKind::Agent, "d2e3f4g5", "old", Shown::Dead, "dead(completed)", 0),
            row(RowKind::Agent, "w6x7y8z9", "queued", Shown::Waiting, "waiting", 0),
            row(RowKind::Job, "jab12cd34", "build", Shown::Working, "running (make)", 0),
        ];
        let mut rows = rows;
        rows[0].cost = Some("$1.23".into());
        rows[3].cost = Some("$0.41+?".into());
        Board { now: NOW, rows }
    }

    fn detail(live: bool, ended: bool) -> Detail {
        let files = (1..=12).map(|n| (if n % 3 == 0 { 'A' } else { 'M' }, format!("src/file{n}.rs"))).collect();
        Detail {
            name: "fix-login (k3j9x2ab)".into(),
            label: if live { "working".into() } else { "dead(completed)".into() },
            live,
            ended,
            kind: "claude".into(),
            pr: live.then(|| "#42 open".into()),
            commits: Some((3, 144, 12)),
            files,
            history: (0..7).map(|n| (NOW - (7 - n) * 30_000, format!("event {n}"))).collect(),
            task: Some("Fix the login bug.\nThe session cookie expires too early.".into()),
            screen: Text::raw("> Fix the login bug\n\n● Reading src/auth.rs\n\n> "),
            output: "/state/agents/k3j9x2ab/output.log".into(),
            path: "/work/fix-login".into(),
        }
    }

    fn screen(view: &View, board: &Board, detail: Option<&Detail>, (w, h): (u16, u16)) -> String {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        let open = vec![
            Open { id: 1, agent: "m4n5o6p7".into(), text: "asks to run `rm -rf target`".into() },
            Open { id: 2, agent: "e8f9g0h1".into(), text: "rate limited 3 times".into() },
        ];
        terminal.draw(|f| draw(f, view, board, &open, detail, false)).unwrap();
        terminal.backend().to_string()
    }

    #[test]
    fn the_task_manager_with_every_state_small_and_large() {
        let view = View { selected: 2, ..View::default() };
        insta::assert_snapshot!("tasks_80x24", screen(&view, &board(), None, (80, 24)));
        insta::assert_snapshot!("tasks_200x50", screen(&view, &board(), None, (200, 50)));
    }

    #[test]
    fn an_empty_list_a_filter_help_and_escalations() {
        insta::assert_snapshot!("tasks_empty", screen(&View::default(), &Board::default(), None, (80, 24)));
        let filtered = View { filter: "mig".into(), ..View::default() };
        insta::assert_snapshot!("tasks_filtered", screen(&filtered, &board(), None, (80, 24)));
        let help = View { mode: Mode::Help, ..View::default() };
        insta::assert_snapshot!("help", screen(&help, &board(), None, (80, 24)));
        let esc = View { mode: Mode::Escalations { selected: 1 }, ..View::default() };
        insta::assert_snapshot!("escalations", screen(&esc, &board(), None, (80, 24)));
    }

    #[test]
    fn the_workspace_view_in_both_focuses_and_when_the_session_is_dead_or_ended() {
        let at = |focus| View { mode: Mode::Workspace { id: "k3j9x2ab".into(), focus }, ..View::default() };
        let live = detail(true, false);
        insta::assert_snapshot!(
            "workspace_terminal_80x24",
            screen(&at(Focus::Terminal), &board(), Some(&live), (80, 24))
        );
        insta::assert_snapshot!(
            "workspace_sidebar_200x50",
            screen(&at(Focus::Sidebar), &board(), Some(&live), (200, 50))
        );
        let dead = detail(false, false);
        insta::assert_snapshot!("workspace_dead", screen(&at(Focus::Terminal), &board(), Some(&dead), (120, 30)));
        let ended = detail(false, true);
        insta::assert_snapshot!("workspace_ended", screen(&at(Focus::Terminal), &board(), Some(&ended), (120, 30)));
    }

    #[test]
    fn a_tiny_terminal_draws_without_panicking() {
        for (w, h) in [(1, 1), (10, 3), (20, 5)] {
            let at =
                View { mode: Mode::Workspace { id: "k3j9x2ab".into(), focus: Focus::Terminal }, ..View::default() };
            screen(&at, &board(), Some(&detail(true, false)), (w, h));
            screen(&View::default(), &board(), None, (w, h));
        }
    }

    /// Issue 12's frame figure, printed for `scripts/bench dash`: the task manager with 100
    /// agents and the workspace view, each drawn 500 times at 200×50 into ratatui's buffer (the
    /// terminal's own writes not counted), one `frame_us <view> <µs>` line per frame.
    #[test]
    #[ignore = "a benchmark: run by `scripts/bench dash`"]
    fn frame_render_samples() {
        let states = [Shown::Working, Shown::Idle, Shown::Prompt, Shown::Error, Shown::Dead, Shown::Waiting];
        let rows = (0..100)
            .map(|n| {
                let state = states[n % states.len()];
                let mut r = row(RowKind::Agent, &format!("a{n:07}"), &format!("agent-{n}"), state, "running", n % 3);
                r.workspace = Some(format!("ws-{n:04}"));
                r.branch = Some(format!("feature/task-{n}"));
                r
            })
            .collect();
        let board = Board { now: NOW, rows };
        let mut live = detail(true, false);
        let text: String =
            (0..48).map(|n| format!("\x1b[3{}mline {n} of the agent's screen\x1b[0m\n", n % 8)).collect();
        live.screen = ansi_to_tui::IntoText::into_text(&text.as_bytes()).unwrap();
        let mut terminal = Terminal::new(TestBackend::new(200, 50)).unwrap();
        let at = View { mode: Mode::Workspace { id: "a0000000".into(), focus: Focus::Terminal }, ..View::default() };
        for (name, view, detail) in [("tasks", View::default(), None), ("workspace", at, Some(&live))] {
            for n in 0..500 {
                // A moving selection, so each frame differs from the last.
                let view = View { selected: n % 100, ..view.clone() };
                let t0 = std::time::Instant::now();
                terminal.draw(|f| draw(f, &view, &board, &[], detail, true)).unwrap();
                println!("frame_us {name} {}", t0.elapsed().as_micros());
            }
        }
    }
}
