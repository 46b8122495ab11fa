//! `bosun dash`: the task manager and the workspace view (seed 004), in the terminal. The
//! daemon's event stream says when to look again; the view state and its keys are plain
//! functions (`view`), the drawing too (`draw`); this loop gathers, draws and acts.

mod board;
mod draw;
mod view;

use std::path::Path;
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use bosun_core::{Event, Heartbeat};
use bosun_wire::EventsQuery;
use ratatui::crossterm::event::{self, Event as TermEvent, KeyCode, KeyEventKind, KeyModifiers};

use crate::client::Client;
pub use board::Board;
pub use draw::{Detail, Open};
pub use view::{Action, Key, Mode, View};

/// How often, at most, the board is asked for again while events come in.
const BOARD_EVERY: Duration = Duration::from_millis(100);
/// How often the workspace view's git figures are taken again when nothing says they changed.
const GIT_EVERY: Duration = Duration::from_secs(10);
/// How often, at most, they are taken again while its files are being written.
const GIT_AT_MOST: Duration = Duration::from_secs(1);
/// How often the agent's screen is read when its output says nothing changed.
const SCREEN_AT_LEAST: Duration = Duration::from_secs(1);

pub fn run(client: &Client) -> Result<ExitCode> {
    // Woken by every event recorded; the stream's own thread ends with the process.
    // The loop sleeps until an event is recorded or a key comes, each sent by its own thread
    // (which end with the process).
    let (tx, wakes) = mpsc::channel::<Wake>();
    let (stream, recorded) = (Client::new(client.dirs.clone()), tx.clone());
    std::thread::spawn(move || {
        let q = EventsQuery { from: 0, follow: true, ..Default::default() };
        let _ = stream.events(q, |r| Ok(recorded.send(Wake::Recorded(Box::new(r))).is_ok()));
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
    let result = dash(client, &mut terminal, &wakes, &paused, colors);
    ratatui::restore();
    result
}

/// What wakes the dashboard's loop.
enum Wake {
    Term(TermEvent),
    Recorded(Box<bosun_core::replay::Recorded>),
}

fn dash(
    client: &Client,
    terminal: &mut ratatui::DefaultTerminal,
    wakes: &mpsc::Receiver<Wake>,
    paused: &AtomicBool,
    colors: bool,
) -> Result<ExitCode> {
    let mut view = View::default();
    let (mut board, mut open) = gather(client)?;
    let mut detail: Option<(String, Detail, Instant)> = None;
    let mut last_board = Instant::now();
    let mut stale = false;
    // The agent's screen is read again when its output grows (or a key was typed into it), and
    // at least every second: not on a fast timer.
    let (mut output_len, mut captured, mut typed) = (None, Instant::now(), false);
    let mut sized: Option<Sized> = None;
    // A file of the viewed workspace was written since its git figures were taken.
    let mut changed = false;
    loop {
        if let Mode::Workspace { id, .. } = &view.mode {
            let again = detail.as_ref().is_none_or(|(d, _, at)| {
                d != id || at.elapsed() > GIT_EVERY || (changed && at.elapsed() > GIT_AT_MOST)
            });
            if again {
                changed = false;
            }
            let mut d = match detail.take() {
                Some((d, mut shown, at)) if &d == id && !again => {
                    let len = std::fs::metadata(&shown.output).map(|m| m.len()).ok();
                    if len != output_len || typed || captured.elapsed() >= SCREEN_AT_LEAST {
                        shown.screen = screen(client, id);
                        (output_len, captured, typed) = (len, Instant::now(), false);
                    }
                    (d, shown, at)
                }
                _ => (id.clone(), look(client, id), Instant::now()),
            };
            d.1.ended = d.1.ended || (!d.1.live && detail_was_live(&board, id));
            if sized.as_ref().is_none_or(|s| &s.agent != id) {
                let area = terminal.size()?;
                sized = Sized::to_panel(client, id, area.width, area.height);
            }
            detail = Some(d);
        } else {
            detail = None;
            // The agent's window gets its size back when the view closes.
            sized = None;
        }
        terminal.draw(|f| draw::draw(f, &view, &board, &open, detail.as_ref().map(|(_, d, _)| d), colors))?;
        // Awake for the screen of an open workspace view, for a board due, or for what comes.
        let wait = match (detail.is_some(), stale) {
            (true, _) => Duration::from_millis(50),
            (false, true) => BOARD_EVERY.saturating_sub(last_board.elapsed()),
            (false, false) => Duration::from_secs(1),
        };
        let mut woke: Vec<Wake> = wakes.recv_timeout(wait).into_iter().collect();
        woke.extend(wakes.try_iter());
        for wake in woke {
            let read = match wake {
                Wake::Recorded(r) => {
                    stale = true;
                    // A file written in the viewed workspace: its git figures are due again.
                    if let (
                        Event::Heartbeat { id, heartbeat: Heartbeat::FileWrite, .. },
                        Mode::Workspace { id: viewed, .. },
                    ) = (&r.event, &view.mode)
                    {
                        changed |= id.as_str() == viewed;
                    }
                    continue;
                }
                Wake::Term(read) => read,
            };
            if let TermEvent::Resize(..) = read {
                // The agent's window is sized to the new panel.
                sized = None;
            }
            let TermEvent::Key(k) = read else { continue };
            if k.kind == KeyEventKind::Release {
                continue;
            }
            let Some(key) = key_of(k.code, k.modifiers) else { continue };
            let ids: Vec<u64> = open.iter().map(|o| o.id).collect();
            match view.key(&board, &ids, key) {
                Action::None => {}
                Action::Quit => return Ok(ExitCode::SUCCESS),
                Action::Attach(id) => {
                    let argv = client.attach(id)?;
                    paused.store(true, Ordering::SeqCst);
                    ratatui::restore();
                    let status = Command::new(&argv[0]).args(&argv[1..]).status();
                    *terminal = ratatui::init();
                    paused.store(false, Ordering::SeqCst);
                    status.context("cannot run tmux to attach")?;
                }
                Action::Send { id, text } => _ = client.send(id, text)?,
                Action::Kill(id) => _ = client.kill(id)?,
                Action::Resolve(e) => _ = client.resolve(format!("e{e}"), None, None)?,
                Action::Forward { id, key } => {
                    forward(client, &id, key)?;
                    typed = true;
                }
            }
            stale = true;
        }
        if stale && last_board.elapsed() >= BOARD_EVERY {
            (board, open) = gather(client)?;
            last_board = Instant::now();
            stale = false;
        }
    }
}

/// Whether the board still shows the agent alive (so a death now is one seen while viewed).
fn detail_was_live(board: &Board, id: &str) -> bool {
    board.rows.iter().any(|r| r.id == id && r.state != board::Shown::Dead)
}

/// The board and the open escalations, from the daemon.
fn gather(client: &Client) -> Result<(Board, Vec<Open>)> {
    let listing = client.list()?;
    let jobs = client.job_list()?;
    let escalations = client.escalations(false)?;
    let board = Board::of(listing.now, &listing.agents, &listing.workspaces, &jobs.all, &escalations.all);
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
    let base = d.workspace.as_ref().and_then(|w| w.kind.base()).map(str::to_owned);
    let task = a.prompt.clone().or_else(|| std::fs::read_to_string(path.join(bosun_core::TASK_FILE)).ok());
    let mut shown = Detail {
        name: format!("{} ({})", a.name, a.id),
        label: a.state.label(),
        live: !a.state.is_dead(),
        ended: false,
        kind: a.driver.kind().name().to_owned(),
        commits: None,
        files: Vec::new(),
        history,
        task,
        screen: screen(client, id),
        output: a.output_log(),
    };
    if let Some(base) = base {
        git_figures(&path, &base, &mut shown);
    }
    shown
}

/// The agent's screen with its colours, as ratatui text.
fn screen(client: &Client, id: &str) -> ratatui::text::Text<'static> {
    use ansi_to_tui::IntoText;
    let raw = client.peek(id.to_owned(), true).unwrap_or_default();
    raw.as_bytes().into_text().unwrap_or_default()
}

/// Commits since `base`, lines added and removed, and changed files (committed or not).
fn git_figures(path: &Path, base: &str, shown: &mut Detail) {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").arg("-C").arg(path).args(args).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let commits = git(&["rev-list", "--count", &format!("{base}..HEAD")]).and_then(|s| s.trim().parse().ok());
    let (mut added, mut removed) = (0, 0);
    for line in git(&["diff", "--numstat", base]).unwrap_or_default().lines() {
        let mut f = line.split_whitespace();
        added += f.next().and_then(|n| n.parse::<u32>().ok()).unwrap_or(0);
        removed += f.next().and_then(|n| n.parse::<u32>().ok()).unwrap_or(0);
    }
    let mut files: Vec<(char, String)> = git(&["diff", "--name-status", base])
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (status, name) = l.split_once('\t')?;
            Some((status.chars().next()?, name.rsplit('\t').next()?.to_owned()))
        })
        .collect();
    let untracked = git(&["ls-files", "--others", "--exclude-standard"]).unwrap_or_default();
    files.extend(untracked.lines().filter(|f| *f != bosun_core::TASK_FILE).map(|f| ('A', f.to_owned())));
    shown.commits = commits.map(|c| (c, added, removed));
    shown.files = files;
}

/// The agent's window made the size of the terminal panel while the view is open; its size
/// before is given back when this is dropped.
struct Sized {
    agent: String,
    tmux: Vec<String>,
    before: Option<(String, String)>,
}

impl Sized {
    fn to_panel(client: &Client, id: &str, width: u16, height: u16) -> Option<Self> {
        let (tmux, pane) = tmux_of(client, id)?;
        let run = |args: &[&str]| Command::new(&tmux[0]).args(&tmux[1..]).args(args).output().ok();
        let out = run(&["display-message", "-p", "-t", &pane, "#{window_width} #{window_height}"])?;
        let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let before = text.split_once(' ').map(|(w, h)| (w.to_owned(), h.to_owned()));
        // The panel: 70 % of the width and all the height but the footer, inside its border.
        let (w, h) = ((u32::from(width) * 7 / 10).saturating_sub(2).max(10), height.saturating_sub(3).max(3));
        run(&["resize-window", "-t", &pane, "-x", &w.to_string(), "-y", &h.to_string()]);
        Some(Self { agent: id.to_owned(), tmux: [tmux, vec![pane]].concat(), before })
    }
}

impl Drop for Sized {
    fn drop(&mut self) {
        let Some((pane, tmux)) = self.tmux.split_last() else { return };
        if let Some((w, h)) = &self.before {
            let _ =
                Command::new(&tmux[0]).args(&tmux[1..]).args(["resize-window", "-t", pane, "-x", w, "-y", h]).output();
        }
    }
}

/// `[tmux, -S, socket]` and the agent's pane target, from its attach command
/// (`tmux -S SOCKET attach-session -t =SESSION`): the same server, and the session's pane.
fn tmux_of(client: &Client, id: &str) -> Option<(Vec<String>, String)> {
    let argv = client.attach(id.to_owned()).ok()?;
    let (program, socket, target) = (argv.first()?, argv.get(2)?, argv.get(5)?);
    Some((vec![program.clone(), "-S".into(), socket.clone()], format!("{target}:")))
}

/// Types `key` into the agent's session (tmux `send-keys` on bosun's own server).
fn forward(client: &Client, id: &str, key: Key) -> Result<()> {
    let Some((tmux, pane)) = tmux_of(client, id) else { return Ok(()) };
    let mut cmd = Command::new(&tmux[0]);
    cmd.args(&tmux[1..]).args(["send-keys", "-t", &pane]);
    match key {
        Key::Char(c) => cmd.args(["-l", "--", &c.to_string()]),
        Key::Enter => cmd.arg("Enter"),
        Key::Tab => cmd.arg("Tab"),
        Key::Esc => cmd.arg("Escape"),
        Key::Backspace => cmd.arg("BSpace"),
        Key::Up => cmd.arg("Up"),
        Key::Down => cmd.arg("Down"),
        Key::Left => cmd.arg("Left"),
        Key::Right => cmd.arg("Right"),
        Key::Ctrl(c) => cmd.arg(format!("C-{c}")),
    };
    cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).status()?;
    Ok(())
}

fn key_of(code: KeyCode, mods: KeyModifiers) -> Option<Key> {
    Some(match code {
        KeyCode::Char(c) if mods.contains(KeyModifiers::CONTROL) => Key::Ctrl(match c {
            '4' => '\\',
            '5' => ']',
            c => c,
        }),
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::Left => Key::Left,
        KeyCode::Right => Key::Right,
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Tab => Key::Tab,
        KeyCode::Backspace => Key::Backspace,
        _ => return None,
    })
}
