//! `bosun dash`: the task manager and the workspace view (seed 004), in the terminal. The
//! daemon's event stream says when to look again; the view state and its keys are plain
//! functions (`view`), the drawing too (`draw`); this loop gathers, draws and acts.

mod board;
mod draw;
mod view;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use bosun_core::{Event, Heartbeat, TermKey, WorkspaceId};
use bosun_wire::EventsQuery;
use ratatui::crossterm::event::{self, Event as TermEvent, KeyCode, KeyEventKind, KeyModifiers};

use crate::client::Client;
pub use board::Board;
pub use draw::{Detail, Open};
pub use view::{Action, Mode, View};

/// How often, at most, the board is asked for again while events come in.
const BOARD_EVERY: Duration = Duration::from_millis(25);
/// How often the workspace view's git figures are taken again when nothing says they changed.
const GIT_EVERY: Duration = Duration::from_secs(10);
/// How often, at most, they are taken again while its files are being written.
const GIT_AT_MOST: Duration = Duration::from_secs(1);
/// How often the commits ahead of every workspace are counted again.
const AHEAD_EVERY: Duration = Duration::from_secs(10);
/// How often the workspace view asks `gh` again for its branch's pull request.
const PR_EVERY: Duration = Duration::from_secs(60);
/// How often the agent's screen is read when its output says nothing changed (a session whose
/// output is not kept, a change its output does not show).
const SCREEN_AT_LEAST: Duration = Duration::from_secs(1);
/// How often, at most, it is read while its output grows.
const SCREEN_AT_MOST: Duration = Duration::from_millis(10);

pub fn run(client: &Client) -> Result<ExitCode> {
    // Woken by every event recorded; the stream's own thread ends with the process.
    // The loop sleeps until an event is recorded or a key comes, each sent by its own thread
    // (which end with the process).
    let (tx, wakes) = mpsc::channel::<Wake>();
    let (stream, recorded, output) = (Client::new(client.dirs.clone()), tx.clone(), tx.clone());
    std::thread::spawn(move || {
        let q = EventsQuery { from: 0, follow: true, ..Default::default() };
        let _ = stream.events(q, |r| Ok(recorded.send(Wake::Recorded(Box::new(r))).is_ok()));
    });
    // The commits ahead of each workspace, counted by the daemon on a thread of its own.
    let (counter, counted) = (Client::new(client.dirs.clone()), tx.clone());
    std::thread::spawn(move || loop {
        let sent = counter.ahead().map(|ahead| counted.send(Wake::Ahead(ahead)));
        if matches!(sent, Ok(Err(_))) {
            return;
        }
        std::thread::sleep(AHEAD_EVERY);
    });
    let paused = Arc::new(AtomicBool::new(false));
    let reading = paused.clone();
    std::thread::spawn(move || loop {
        // While attached full screen, tmux reads the terminal, not this.
        if reading.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        match event::poll(Duration::from_millis(50)) {
            Ok(false) => {}
            Ok(true) => {
                let sent = event::read().map(|ev| tx.send(Wake::Term(ev)));
                if !matches!(sent, Ok(Ok(()))) {
                    return;
                }
            }
            Err(_) => return,
        }
    });
    let colors = std::env::var_os("NO_COLOR").is_none();
    let mut terminal = ratatui::init();
    let result = dash(client, &mut terminal, (&wakes, output), &paused, colors);
    ratatui::restore();
    result
}

/// What wakes the dashboard's loop.
enum Wake {
    Term(TermEvent),
    Recorded(Box<bosun_core::replay::Recorded>),
    /// The viewed agent's output grew (its session's output log was written).
    Output,
    /// What `gh` says of the pull request of agent `.0`'s branch.
    Pr(String, Option<String>),
    /// The commits ahead of each workspace, newly counted.
    Ahead(BTreeMap<WorkspaceId, u32>),
}

fn dash(
    client: &Client,
    terminal: &mut ratatui::DefaultTerminal,
    (wakes, output): (&mpsc::Receiver<Wake>, mpsc::Sender<Wake>),
    paused: &AtomicBool,
    colors: bool,
) -> Result<ExitCode> {
    let mut dash = Dashboard::new(client)?;
    loop {
        dash.look_at_viewed(terminal, &output)?;
        let detail = dash.detail.as_ref().map(|(_, d, _)| d);
        terminal.draw(|f| draw::draw(f, &dash.view, &dash.board, &dash.open, detail, colors))?;
        let mut woke: Vec<Wake> = wakes.recv_timeout(dash.wait()).into_iter().collect();
        woke.extend(wakes.try_iter());
        for wake in woke {
            if let Some(code) = dash.take(wake, terminal, paused)? {
                return Ok(code);
            }
        }
        dash.gather_if_stale()?;
    }
}

/// What the dashboard's loop keeps between wakes: the view, what it shows, and when each part
/// of it was last taken.
struct Dashboard<'a> {
    client: &'a Client,
    view: View,
    ahead: BTreeMap<WorkspaceId, u32>,
    board: Board,
    open: Vec<Open>,
    detail: Option<(String, Detail, Instant)>,
    last_board: Instant,
    stale: bool,
    // The agent's screen is read again when its output grows (the kernel says its output log
    // was written) or a key was typed into it, and at least every second: not on a timer.
    captured: Instant,
    grown: bool,
    watched: Option<(String, bosun_adapters::Changes)>,
    sized: Option<Sized<'a>>,
    /// A file of the viewed workspace was written since its git figures were taken.
    changed: bool,
    /// The pull request of the viewed agent's branch (`gh`, asked on its own thread), and when
    /// it was last asked for whom.
    pr: Option<(String, Option<String>)>,
    pr_asked: Option<(String, Instant)>,
}

impl<'a> Dashboard<'a> {
    fn new(client: &'a Client) -> Result<Self> {
        let ahead = BTreeMap::new();
        let (board, open) = gather(client, &ahead)?;
        Ok(Self {
            client,
            view: View::default(),
            ahead,
            board,
            open,
            detail: None,
            last_board: Instant::now(),
            stale: false,
            captured: Instant::now(),
            grown: false,
            watched: None,
            sized: None,
            changed: false,
            pr: None,
            pr_asked: None,
        })
    }

    /// The workspace view's agent looked at again, as much of it as is due; or, with no
    /// workspace view open, what was kept for one let go.
    fn look_at_viewed(&mut self, terminal: &ratatui::DefaultTerminal, output: &mpsc::Sender<Wake>) -> Result<()> {
        let client = self.client;
        let Mode::Workspace { id, .. } = &self.view.mode else {
            self.detail = None;
            self.watched = None;
            // The agent's window gets its size back when the view closes.
            self.sized = None;
            return Ok(());
        };
        let changed = self.changed;
        let again = self
            .detail
            .as_ref()
            .is_none_or(|(d, _, at)| d != id || at.elapsed() > GIT_EVERY || (changed && at.elapsed() > GIT_AT_MOST));
        if again {
            self.changed = false;
        }
        // Alive (or seen to end) when last shown: a death now is one seen while viewed.
        let was_live = self.detail.as_ref().is_some_and(|(d, shown, _)| d == id && (shown.live || shown.ended));
        let mut d = match self.detail.take() {
            Some((d, mut shown, at)) if &d == id && !again => {
                let due = self.captured.elapsed() >= SCREEN_AT_LEAST;
                if (self.grown && self.captured.elapsed() >= SCREEN_AT_MOST) || due {
                    shown.screen = screen(client, id);
                    (self.captured, self.grown) = (Instant::now(), false);
                }
                (d, shown, at)
            }
            _ => {
                let shown = look(client, id);
                (self.captured, self.grown) = (Instant::now(), false);
                (id.clone(), shown, Instant::now())
            }
        };
        if self.watched.as_ref().is_none_or(|(w, _)| w != id) {
            self.watched = watch_output(&d.1.output, output.clone()).map(|w| (id.clone(), w));
        }
        if self.pr_asked.as_ref().is_none_or(|(a, at)| a != id || at.elapsed() >= PR_EVERY) {
            self.pr_asked = Some((id.clone(), Instant::now()));
            let (tx, id, path) = (output.clone(), id.clone(), d.1.path.clone());
            std::thread::spawn(move || _ = tx.send(Wake::Pr(id, pull_request(&path))));
        }
        d.1.pr = self.pr.as_ref().filter(|(a, _)| a == id).and_then(|(_, p)| p.clone());
        d.1.ended = !d.1.live && (d.1.ended || was_live || detail_was_live(&self.board, id));
        if self.sized.as_ref().is_none_or(|s| &s.agent != id) {
            let area = terminal.size()?;
            self.sized = Sized::to_panel(client, id, area.width, area.height);
        }
        self.detail = Some(d);
        Ok(())
    }

    /// How long to sleep: awake for the screen of an open workspace view, for a board due, or
    /// for what comes.
    fn wait(&self) -> Duration {
        let board_due = BOARD_EVERY.saturating_sub(self.last_board.elapsed());
        match (self.detail.is_some(), self.stale) {
            (true, _) if self.grown => SCREEN_AT_MOST.saturating_sub(self.captured.elapsed()),
            (true, true) => SCREEN_AT_LEAST.saturating_sub(self.captured.elapsed()).min(board_due),
            (true, false) => SCREEN_AT_LEAST.saturating_sub(self.captured.elapsed()),
            (false, true) => board_due,
            (false, false) => Duration::from_secs(1),
        }
    }

    /// Takes what woke the loop; an exit code once the dashboard is to end.
    fn take(
        &mut self,
        wake: Wake,
        terminal: &mut ratatui::DefaultTerminal,
        paused: &AtomicBool,
    ) -> Result<Option<ExitCode>> {
        let read = match wake {
            Wake::Recorded(r) => {
                self.stale = true;
                // A file written in the viewed workspace: its git figures are due again.
                if let (
                    Event::Heartbeat { id, heartbeat: Heartbeat::FileWrite, .. },
                    Mode::Workspace { id: viewed, .. },
                ) = (&r.event, &self.view.mode)
                {
                    self.changed |= id.as_str() == viewed;
                }
                return Ok(None);
            }
            Wake::Output => {
                self.grown = true;
                return Ok(None);
            }
            Wake::Pr(agent, found) => {
                self.pr = Some((agent, found));
                return Ok(None);
            }
            Wake::Ahead(counted) => {
                self.ahead = counted;
                self.stale = true;
                return Ok(None);
            }
            Wake::Term(read) => read,
        };
        if let TermEvent::Resize(..) = read {
            // The agent's window is sized to the new panel.
            self.sized = None;
        }
        let TermEvent::Key(k) = read else { return Ok(None) };
        if k.kind == KeyEventKind::Release {
            return Ok(None);
        }
        let Some(key) = key_of(k.code, k.modifiers) else { return Ok(None) };
        let ids: Vec<u64> = self.open.iter().map(|o| o.id).collect();
        let action = self.view.key(&self.board, &ids, key);
        if let Some(code) = self.act(action, terminal, paused)? {
            return Ok(Some(code));
        }
        self.stale = true;
        Ok(None)
    }

    /// Does what a key asked for outside the view; an exit code once the dashboard is to end.
    fn act(
        &mut self,
        action: Action,
        terminal: &mut ratatui::DefaultTerminal,
        paused: &AtomicBool,
    ) -> Result<Option<ExitCode>> {
        let client = self.client;
        match action {
            Action::None => {}
            Action::Quit => return Ok(Some(ExitCode::SUCCESS)),
            Action::Attach(id) => {
                let argv = client.attach(id)?;
                paused.store(true, Ordering::SeqCst);
                ratatui::restore();
                let status = Command::new(&argv[0]).args(&argv[1..]).status();
                *terminal = ratatui::init();
                paused.store(false, Ordering::SeqCst);
                status.context("cannot run tmux to attach")?;
            }
            Action::AttachAndLeave(id) => {
                let argv = client.attach(id)?;
                // Its window gets its size back first: an exec runs no destructor.
                drop(self.sized.take());
                ratatui::restore();
                // Only returns when it could not be run.
                let e = std::os::unix::process::CommandExt::exec(Command::new(&argv[0]).args(&argv[1..]));
                return Err(anyhow::anyhow!("cannot run {} to attach: {e}", argv[0]));
            }
            Action::Send { id, text } => _ = client.send(id, text, false, false)?,
            Action::Kill(id) => _ = client.kill(id)?,
            Action::Resolve(e) => _ = client.resolve(format!("e{e}"), None, None)?,
            // Read at once (the echo is mostly there by then), and again when its output
            // log says the agent wrote more.
            Action::Forward { id, key } => {
                forward(client, &id, key);
                self.grown = true;
            }
        }
        Ok(None)
    }

    /// The board taken again once something changed and the last is old enough.
    fn gather_if_stale(&mut self) -> Result<()> {
        if !(self.stale && self.last_board.elapsed() >= BOARD_EVERY) {
            return Ok(());
        }
        (self.board, self.open) = gather(self.client, &self.ahead)?;
        self.last_board = Instant::now();
        self.stale = false;
        // The viewed agent died: its panel says its session ended, its sidebar ✗.
        let viewed = match &self.view.mode {
            Mode::Workspace { id, .. } => Some(id.as_str()),
            _ => None,
        };
        if let Some((id, d, _)) = self.detail.as_mut().filter(|(id, _, _)| Some(id.as_str()) == viewed) {
            if let Some(row) = self.board.rows.iter().find(|r| &r.id == id && r.state == board::Shown::Dead) {
                if d.live {
                    (d.live, d.ended, d.label) = (false, true, row.label.clone());
                }
            }
        }
        Ok(())
    }
}

/// Whether the board still shows the agent alive (so a death now is one seen while viewed).
fn detail_was_live(board: &Board, id: &str) -> bool {
    board.rows.iter().any(|r| r.id == id && r.state != board::Shown::Dead)
}

/// The board and the open escalations, from the daemon.
fn gather(client: &Client, ahead: &BTreeMap<WorkspaceId, u32>) -> Result<(Board, Vec<Open>)> {
    let listing = client.list()?;
    let jobs = client.job_list()?;
    let escalations = client.escalations(false)?;
    let board = Board::of(listing.now, &listing.agents, &listing.workspaces, &jobs.all, &escalations.all, ahead);
    let open = escalations
        .all
        .iter()
        .map(|e| Open { id: e.id.0, agent: e.agent.to_string(), text: e.reason.clone() })
        .collect();
    Ok((board, open))
}

/// What the workspace view shows of agent `id`: what it is, what it changed (git), what
/// happened to it lately, its task and its screen.
fn look(client: &Client, id: &str) -> Detail {
    let Ok(d) = client.show(id.to_owned()) else { return Detail::default() };
    let a = &d.agent;
    let mut history = Vec::new();
    let q = EventsQuery { from: 1, follow: false, agent: Some(a.id.to_string()), job: None };
    let _ = client.events(q, |r| {
        let kind = serde_json::to_value(&r.event).ok().and_then(|v| v["type"].as_str().map(str::to_owned));
        history.push((r.at, kind.unwrap_or_default().replace('_', " ")));
        if history.len() > 5 {
            history.remove(0);
        }
        Ok(true)
    });
    let path = d.workspace.as_ref().map(|w| w.path.clone()).unwrap_or_else(|| a.cwd.clone());
    let task = a.prompt.clone().or_else(|| std::fs::read_to_string(path.join(bosun_core::TASK_FILE)).ok());
    let mut shown = Detail {
        name: format!("{} ({})", a.name, a.id),
        label: board::Shown::words(&a.state, a.limited_until),
        live: !a.state.is_dead(),
        ended: false,
        kind: a.driver.kind().name().to_owned(),
        // The pull request `bosun pr` opened, until `gh` says more.
        pr: d.pull_request.as_ref().map(|p| p.url.clone()),
        commits: None,
        files: Vec::new(),
        history,
        task,
        screen: screen(client, id),
        output: a.output_log(),
        path: path.clone(),
    };
    // What `bosun diff` says of its workspace: commits, lines and files, committed or not.
    // Quick: a volume's branch as last brought back, not the volume read back every look.
    if let Ok(diff) = client.diff(id.to_owned(), false, false, true) {
        let (added, removed) = diff.totals();
        shown.commits = Some((diff.commits, added, removed));
        shown.files = diff.files.iter().map(|f| (f.change.letter(), f.path.clone())).collect();
    }
    shown
}

/// The agent's screen with its colours, as ratatui text.
fn screen(client: &Client, id: &str) -> ratatui::text::Text<'static> {
    use ansi_to_tui::IntoText;
    let raw = client.peek(id.to_owned(), true, 0).unwrap_or_default();
    raw.as_bytes().into_text().unwrap_or_default()
}

/// `#12 open`: the pull request `gh` knows for the branch checked out at `path`, if `gh` is
/// installed, logged in and knows one (it is never asked to prompt).
fn pull_request(path: &Path) -> Option<String> {
    let out = Command::new("gh")
        .args(["pr", "view", "--json", "number,state"])
        .current_dir(path)
        .env("GH_PROMPT_DISABLED", "1")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok().filter(|_| out.status.success())?;
    Some(format!("#{} {}", v["number"].as_u64()?, v["state"].as_str()?.to_lowercase()))
}

/// Wakes the loop whenever the agent's output log (`output`) is written.
fn watch_output(output: &Path, wake: mpsc::Sender<Wake>) -> Option<bosun_adapters::Changes> {
    let (dir, name) = (output.parent()?, output.file_name()?.to_owned());
    bosun_adapters::Changes::in_dir(dir, move |n| n == name, move || _ = wake.send(Wake::Output)).ok()
}

/// The agent's window made the size of the terminal panel while the view is open; its size
/// before is given back when this is dropped.
struct Sized<'a> {
    client: &'a Client,
    agent: String,
    before: (u16, u16),
}

impl<'a> Sized<'a> {
    fn to_panel(client: &'a Client, id: &str, width: u16, height: u16) -> Option<Self> {
        // The panel: 70 % of the width and all the height but the footer, inside its border.
        let cols = u16::try_from((u32::from(width) * 7 / 10).saturating_sub(2)).unwrap_or(u16::MAX).max(10);
        let rows = height.saturating_sub(3).max(3);
        let before = client.resize(id.to_owned(), cols, rows).ok()?;
        Some(Self { client, agent: id.to_owned(), before })
    }
}

impl Drop for Sized<'_> {
    fn drop(&mut self) {
        let _ = self.client.resize(self.agent.clone(), self.before.0, self.before.1);
    }
}

/// Types `key` into the agent's session, through the daemon. A key it cannot be given (a
/// control key that is no terminal's) is dropped, and so is a failure: the screen shows it.
fn forward(client: &Client, id: &str, key: TermKey) {
    let keys = vec![key];
    if TermKey::check(&keys).is_ok() {
        let _ = client.press(id.to_owned(), keys);
    }
}

/// The key a terminal reported, as the panel types it (a character as its text).
fn key_of(code: KeyCode, mods: KeyModifiers) -> Option<TermKey> {
    Some(match code {
        KeyCode::Char(c) if mods.contains(KeyModifiers::CONTROL) => TermKey::Ctrl(match c {
            '4' => '\\',
            '5' => ']',
            c => c,
        }),
        KeyCode::Char(c) if mods.contains(KeyModifiers::ALT) => TermKey::Alt(c),
        KeyCode::Char(c) => TermKey::Text(c.to_string()),
        KeyCode::Up => TermKey::Up,
        KeyCode::Down => TermKey::Down,
        KeyCode::Left => TermKey::Left,
        KeyCode::Right => TermKey::Right,
        KeyCode::Enter => TermKey::Enter,
        KeyCode::Esc => TermKey::Esc,
        KeyCode::Tab => TermKey::Tab,
        KeyCode::Backspace => TermKey::Backspace,
        KeyCode::Home => TermKey::Home,
        KeyCode::End => TermKey::End,
        KeyCode::PageUp => TermKey::PageUp,
        KeyCode::PageDown => TermKey::PageDown,
        KeyCode::Insert => TermKey::Insert,
        KeyCode::Delete => TermKey::Delete,
        KeyCode::BackTab => TermKey::BackTab,
        KeyCode::F(n) => TermKey::F(n),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_a_terminal_reports_is_one_the_panel_can_type() {
        let (none, ctrl, alt, shift) =
            (KeyModifiers::NONE, KeyModifiers::CONTROL, KeyModifiers::ALT, KeyModifiers::SHIFT);
        let cases = [
            (KeyCode::Char('x'), none, TermKey::Text("x".into())),
            (KeyCode::Char('X'), shift, TermKey::Text("X".into())),
            (KeyCode::Char('c'), ctrl, TermKey::Ctrl('c')),
            // Terminals report Ctrl+\ and Ctrl+] as Ctrl+4 and Ctrl+5.
            (KeyCode::Char('4'), ctrl, TermKey::Ctrl('\\')),
            (KeyCode::Char('5'), ctrl, TermKey::Ctrl(']')),
            (KeyCode::Char('b'), alt, TermKey::Alt('b')),
            (KeyCode::Home, none, TermKey::Home),
            (KeyCode::End, none, TermKey::End),
            (KeyCode::PageUp, none, TermKey::PageUp),
            (KeyCode::PageDown, none, TermKey::PageDown),
            (KeyCode::Insert, none, TermKey::Insert),
            (KeyCode::Delete, none, TermKey::Delete),
            (KeyCode::BackTab, shift, TermKey::BackTab),
            (KeyCode::F(7), none, TermKey::F(7)),
        ];
        for (code, mods, want) in cases {
            assert_eq!(key_of(code, mods), Some(want), "{code:?} {mods:?}");
        }
        assert_eq!(key_of(KeyCode::CapsLock, none), None, "a key no program sees is not typed");
    }
}
