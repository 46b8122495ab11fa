//! The dashboard's view state and its keys, as plain functions: a key and the view as it is
//! give the view as it becomes and what to do outside (quit, attach, send, kill, forward a key
//! to the agent). Nothing here draws or talks to the daemon.

use bosun_core::TermKey;

use super::board::{Board, Row, RowKind};

/// The character a key types, when it types one (a key a terminal reports is one character).
fn typed(key: &TermKey) -> Option<char> {
    match key {
        TermKey::Text(t) => {
            let mut chars = t.chars();
            chars.next().filter(|_| chars.next().is_none())
        }
        _ => None,
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The task manager.
    Tasks,
    /// Typing the filter after `/`.
    Filter,
    Help,
    /// Typing a message to send after `s`.
    Send {
        id: String,
        text: String,
    },
    /// Asked whether to kill, after `x`.
    ConfirmKill {
        id: String,
    },
    /// The open escalations, after `e`.
    Escalations {
        selected: usize,
    },
    /// One agent's workspace: sidebar and live terminal.
    Workspace {
        id: String,
        focus: Focus,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    Terminal,
    Sidebar,
}

/// What the dashboard does outside the view after a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    None,
    Quit,
    /// `bosun attach ID` (full screen), back to the dashboard after a detach.
    Attach(String),
    /// `bosun attach ID` in the dashboard's stead (seed 004's escape hatch, `Ctrl+]`).
    AttachAndLeave(String),
    Send {
        id: String,
        text: String,
    },
    Kill(String),
    Resolve(u64),
    /// Type the key into the agent's session.
    Forward {
        id: String,
        key: TermKey,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    pub mode: Mode,
    /// The selected row among the visible ones.
    pub selected: usize,
    pub filter: String,
}

impl Default for View {
    fn default() -> Self {
        Self { mode: Mode::Tasks, selected: 0, filter: String::new() }
    }
}

impl View {
    /// The rows the filter lets through (a row matches when its id, name, state or branch holds
    /// the filter's text).
    pub fn visible<'a>(&self, board: &'a Board) -> Vec<&'a Row> {
        let f = self.filter.to_lowercase();
        let matches = |r: &Row| {
            f.is_empty()
                || [Some(&r.id), Some(&r.name), Some(&r.label), r.branch.as_ref()]
                    .into_iter()
                    .flatten()
                    .any(|t| t.to_lowercase().contains(&f))
        };
        board.rows.iter().filter(|r| matches(r)).collect()
    }

    /// The selected row, if any is visible.
    pub fn current<'a>(&self, board: &'a Board) -> Option<&'a Row> {
        let visible = self.visible(board);
        visible.get(self.selected.min(visible.len().saturating_sub(1))).copied()
    }

    /// The keys the footer shows for the current view.
    pub fn footer(&self) -> &'static str {
        match &self.mode {
            Mode::Tasks => "↑↓:move w:view a:attach s:send x:kill e:escalations /:filter ?:help q:quit",
            Mode::Filter => "type to filter  Enter:keep  Esc:clear",
            Mode::Help => "Esc/q/?:back",
            Mode::Send { .. } => "type the message  Enter:send  Esc:cancel",
            Mode::ConfirmKill { .. } => "y:kill  n/Esc:cancel",
            Mode::Escalations { .. } => "↑↓/jk:move  r:resolve  Esc:back",
            Mode::Workspace { focus: Focus::Terminal, .. } => "Ctrl+\\:sidebar  Ctrl+]:fullscreen",
            Mode::Workspace { focus: Focus::Sidebar, .. } => "Tab:terminal  Esc:dashboard",
        }
    }

    /// Takes `key`; `open` are the ids of the open escalations, in the order listed.
    pub fn key(&mut self, board: &Board, open: &[u64], key: TermKey) -> Action {
        if key == TermKey::Ctrl('c') && !matches!(self.mode, Mode::Workspace { focus: Focus::Terminal, .. }) {
            return Action::Quit;
        }
        let ch = typed(&key);
        match &mut self.mode {
            Mode::Tasks => self.tasks_key(board, &key, ch),
            Mode::Filter => {
                match key {
                    TermKey::Enter => self.mode = Mode::Tasks,
                    TermKey::Esc => {
                        self.filter.clear();
                        self.mode = Mode::Tasks;
                    }
                    TermKey::Backspace => _ = self.filter.pop(),
                    TermKey::Text(t) => self.filter.push_str(&t),
                    _ => {}
                }
                self.selected = 0;
                Action::None
            }
            Mode::Help => {
                if key == TermKey::Esc || matches!(ch, Some('q' | '?')) {
                    self.mode = Mode::Tasks;
                }
                Action::None
            }
            Mode::Send { id, text } => match key {
                TermKey::Enter if !text.trim().is_empty() => {
                    let action = Action::Send { id: id.clone(), text: text.clone() };
                    self.mode = Mode::Tasks;
                    action
                }
                TermKey::Esc => {
                    self.mode = Mode::Tasks;
                    Action::None
                }
                TermKey::Backspace => {
                    text.pop();
                    Action::None
                }
                TermKey::Text(t) => {
                    text.push_str(&t);
                    Action::None
                }
                _ => Action::None,
            },
            Mode::ConfirmKill { id } => {
                let action = match ch {
                    Some('y' | 'Y') => Action::Kill(id.clone()),
                    _ => Action::None,
                };
                self.mode = Mode::Tasks;
                action
            }
            Mode::Escalations { selected } => match (key, ch) {
                (TermKey::Up, _) | (_, Some('k')) => {
                    *selected = selected.saturating_sub(1);
                    Action::None
                }
                (TermKey::Down, _) | (_, Some('j')) => {
                    *selected = (*selected + 1).min(open.len().saturating_sub(1));
                    Action::None
                }
                (_, Some('r')) => open.get(*selected).map_or(Action::None, |e| Action::Resolve(*e)),
                (TermKey::Esc, _) | (_, Some('q')) => {
                    self.mode = Mode::Tasks;
                    Action::None
                }
                _ => Action::None,
            },
            Mode::Workspace { id, focus: focus @ Focus::Terminal } => match key {
                TermKey::Ctrl('\\') => {
                    *focus = Focus::Sidebar;
                    Action::None
                }
                TermKey::Ctrl(']') => Action::AttachAndLeave(id.clone()),
                other => Action::Forward { id: id.clone(), key: other },
            },
            Mode::Workspace { focus: focus @ Focus::Sidebar, .. } => {
                match key {
                    TermKey::Tab | TermKey::Enter => *focus = Focus::Terminal,
                    TermKey::Esc => self.mode = Mode::Tasks,
                    _ => {}
                }
                Action::None
            }
        }
    }

    /// Takes `key` (typing `ch`) in the task manager.
    fn tasks_key(&mut self, board: &Board, key: &TermKey, ch: Option<char>) -> Action {
        let count = self.visible(board).len();
        let current = self.current(board).cloned();
        let agent = current.as_ref().filter(|r| r.kind == RowKind::Agent).map(|r| r.id.clone());
        match (key, ch) {
            (TermKey::Up, _) | (_, Some('k')) => self.selected = self.selected.saturating_sub(1),
            (TermKey::Down, _) | (_, Some('j')) => self.selected = (self.selected + 1).min(count.saturating_sub(1)),
            (_, Some('q')) => return Action::Quit,
            (_, Some('?')) => self.mode = Mode::Help,
            (_, Some('/')) => self.mode = Mode::Filter,
            (_, Some('e')) => self.mode = Mode::Escalations { selected: 0 },
            (TermKey::Enter, _) | (_, Some('w')) => {
                if let Some(id) = agent {
                    self.mode = Mode::Workspace { id, focus: Focus::Terminal };
                }
            }
            (_, Some('a')) => return agent.map_or(Action::None, Action::Attach),
            (_, Some('s')) => {
                if let Some(id) = agent {
                    self.mode = Mode::Send { id, text: String::new() };
                }
            }
            (_, Some('x')) => {
                if let Some(id) = agent {
                    self.mode = Mode::ConfirmKill { id };
                }
            }
            _ => {}
        }
        Action::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key that types `c`.
    fn ch(c: char) -> TermKey {
        TermKey::Text(c.to_string())
    }
    use crate::dash::board::Shown;

    fn row(kind: RowKind, id: &str, name: &str, label: &str) -> Row {
        Row {
            kind,
            id: id.into(),
            name: name.into(),
            state: Shown::Idle,
            label: label.into(),
            created_at: 0,
            workspace: None,
            branch: Some(format!("ws-{id}")),
            ahead: None,
            escalations: 0,
            cost: None,
        }
    }

    fn board() -> Board {
        let rows = vec![
            row(RowKind::Agent, "a1", "fixer", "idle"),
            row(RowKind::Agent, "a2", "writer", "running"),
            row(RowKind::Job, "j1", "build", "running (make)"),
        ];
        Board { now: 0, rows }
    }

    fn keys(view: &mut View, keys: &[TermKey]) -> Vec<Action> {
        keys.iter().map(|k| view.key(&board(), &[7, 9], k.clone())).collect()
    }

    #[test]
    fn moving_stays_within_the_rows() {
        let mut v = View::default();
        keys(&mut v, &[TermKey::Up, TermKey::Down, ch('j'), TermKey::Down, TermKey::Down]);
        assert_eq!(v.selected, 2);
        keys(&mut v, &[ch('k')]);
        assert_eq!(v.current(&board()).map(|r| r.id.as_str()), Some("a2"));
    }

    #[test]
    fn the_workspace_view_opens_on_an_agent_only_and_its_focus_moves_as_the_seed_says() {
        let mut v = View::default();
        keys(&mut v, &[TermKey::Down, TermKey::Down, ch('w')]);
        assert_eq!(v.mode, Mode::Tasks, "a job has no terminal to show");
        keys(&mut v, &[TermKey::Up, ch('w')]);
        assert_eq!(v.mode, Mode::Workspace { id: "a2".into(), focus: Focus::Terminal });
        assert_eq!(v.footer(), "Ctrl+\\:sidebar  Ctrl+]:fullscreen");
        let typed = keys(&mut v, &[ch('q'), TermKey::Esc, TermKey::Ctrl('c')]);
        let forwarded = |k| Action::Forward { id: "a2".into(), key: k };
        assert_eq!(
            typed,
            [forwarded(ch('q')), forwarded(TermKey::Esc), forwarded(TermKey::Ctrl('c'))],
            "all to the agent"
        );
        keys(&mut v, &[TermKey::Ctrl('\\')]);
        assert_eq!(v.mode, Mode::Workspace { id: "a2".into(), focus: Focus::Sidebar });
        assert_eq!(v.footer(), "Tab:terminal  Esc:dashboard");
        keys(&mut v, &[TermKey::Tab]);
        assert!(matches!(v.mode, Mode::Workspace { focus: Focus::Terminal, .. }));
        assert_eq!(keys(&mut v, &[TermKey::Ctrl(']')]), [Action::AttachAndLeave("a2".into())]);
        keys(&mut v, &[TermKey::Ctrl('\\'), TermKey::Esc]);
        assert_eq!(v.mode, Mode::Tasks);
    }

    #[test]
    fn kill_asks_first_and_send_takes_the_typed_message() {
        let mut v = View::default();
        assert_eq!(keys(&mut v, &[ch('x'), ch('n')]), [Action::None, Action::None]);
        assert_eq!(keys(&mut v, &[ch('x'), ch('y')]), [Action::None, Action::Kill("a1".into())]);
        let typed = keys(&mut v, &[ch('s'), ch('h'), ch('x'), TermKey::Backspace, ch('i')]);
        assert!(typed.iter().all(|a| *a == Action::None));
        assert_eq!(keys(&mut v, &[TermKey::Enter]), [Action::Send { id: "a1".into(), text: "hi".into() }]);
        assert_eq!(v.mode, Mode::Tasks);
        keys(&mut v, &[ch('s'), TermKey::Enter]);
        assert!(matches!(v.mode, Mode::Send { .. }), "nothing to send yet");
        keys(&mut v, &[TermKey::Esc]);
        assert_eq!(v.mode, Mode::Tasks);
    }

    #[test]
    fn the_filter_narrows_the_rows_and_esc_clears_it() {
        let mut v = View::default();
        keys(&mut v, &[ch('/'), ch('W'), ch('r')]);
        assert_eq!(v.visible(&board()).iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["a2"]);
        keys(&mut v, &[TermKey::Enter]);
        assert_eq!(v.mode, Mode::Tasks);
        assert_eq!(v.filter, "Wr");
        keys(&mut v, &[ch('/'), TermKey::Esc]);
        assert_eq!(v.visible(&board()).len(), 3);
    }

    #[test]
    fn help_escalations_attach_and_quit() {
        let mut v = View::default();
        keys(&mut v, &[ch('?')]);
        assert_eq!(v.mode, Mode::Help);
        keys(&mut v, &[TermKey::Esc, ch('e'), ch('j'), ch('j')]);
        assert_eq!(keys(&mut v, &[ch('r')]), [Action::Resolve(9)]);
        keys(&mut v, &[TermKey::Esc]);
        assert_eq!(keys(&mut v, &[ch('a')]), [Action::Attach("a1".into())]);
        assert_eq!(keys(&mut v, &[TermKey::Ctrl('c')]), [Action::Quit]);
        assert_eq!(keys(&mut v, &[ch('q')]), [Action::Quit]);
    }
}
