//! `bosun daemon run | start | stop | status | logs`: the daemon's life, systemctl-style.

use std::io::{IsTerminal, Read, Seek, SeekFrom, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use bosun_wire::{Request, Response};

use crate::args::DaemonCommand;
use crate::client::Client;
use crate::commands::print_json;

pub fn run(client: &Client, cmd: DaemonCommand) -> Result<ExitCode> {
    match cmd {
        DaemonCommand::Run { detach } => {
            let filter = tracing_subscriber::EnvFilter::try_from_env("BOSUN_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
            // Colours only on a terminal: in the background its stderr is daemon.log. A log it
            // cannot write (its disk full) is passed over: the fallback, a line on stderr, would
            // panic for the same reason and take the daemon down.
            let ansi = crate::commands::colors_wanted(std::io::stderr().is_terminal());
            tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_writer(std::io::stderr)
                .with_ansi(ansi)
                .log_internal_errors(false)
                .init();
            let exe = std::env::current_exe().context("cannot find the bosun executable")?;
            bosun_daemon::run(bosun_daemon::Options { dirs: client.dirs.clone(), exe, detach })?;
            Ok(ExitCode::SUCCESS)
        }
        DaemonCommand::Start => {
            if client.connect().is_some() {
                println!("the daemon already runs");
            } else {
                client.start_daemon()?;
                println!("daemon started (log: {})", client.dirs.log().display());
            }
            Ok(ExitCode::SUCCESS)
        }
        DaemonCommand::Stop => {
            let live = match client.request_if_running(Request::Status)? {
                Some(Response::Status(s)) => s.live_agents,
                _ => 0,
            };
            if client.request_if_running(Request::Shutdown)?.is_none() {
                println!("the daemon does not run");
                return Ok(ExitCode::SUCCESS);
            }
            let deadline = Instant::now() + Duration::from_secs(15);
            // Gone once it no longer holds its lock: a new daemon can start at once.
            while client.daemon_alive() {
                if Instant::now() > deadline {
                    bail!("the daemon did not stop within 15s; see {}", client.dirs.log().display());
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            match live {
                0 => println!("daemon stopped"),
                n => println!("daemon stopped; {n} agent(s) keep running in tmux and are adopted at the next start"),
            }
            Ok(ExitCode::SUCCESS)
        }
        DaemonCommand::Status(flag) => match client.request_if_running(Request::Status)? {
            Some(Response::Status(s)) => {
                if flag.json {
                    print_json(&serde_json::json!({ "running": true, "daemon": s }))?;
                } else {
                    println!("running   pid {} (version {})", s.pid, s.version);
                    println!("state     {}", s.state_dir.display());
                    println!("agents    {} ({} alive)", s.agents, s.live_agents);
                    println!("workspaces {}", s.workspaces);
                    println!("events    {}", s.events);
                    if s.version != bosun_wire::VERSION {
                        println!(
                            "note      this bosun is {}: run `bosun daemon stop` so the next command starts a matching daemon",
                            bosun_wire::VERSION
                        );
                    }
                }
                Ok(ExitCode::SUCCESS)
            }
            Some(_) => bail!("the daemon gave an unexpected answer"),
            None => {
                if flag.json {
                    print_json(&serde_json::json!({ "running": false, "state_dir": client.dirs.root() }))?;
                } else {
                    println!("not running (state directory {})", client.dirs.root().display());
                }
                Ok(ExitCode::from(crate::error::Kind::DaemonUnavailable.code()))
            }
        },
        DaemonCommand::Logs { lines, follow } => logs(client, lines, follow).map(|()| ExitCode::SUCCESS),
    }
}

fn logs(client: &Client, lines: usize, follow: bool) -> Result<()> {
    let path = client.dirs.log();
    let mut file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(_) if !follow => {
            println!("no log yet ({})", path.display());
            return Ok(());
        }
        Err(e) => return Err(e).with_context(|| format!("cannot open {}", path.display())),
    };
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    let all: Vec<&str> = text.lines().collect();
    let mut out = std::io::stdout().lock();
    for line in &all[all.len().saturating_sub(lines)..] {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    if !follow {
        return Ok(());
    }
    let mut pos = file.stream_position()?;
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let len = std::fs::metadata(&path)?.len();
        if len < pos {
            pos = 0;
        }
        if len > pos {
            file.seek(SeekFrom::Start(pos))?;
            let mut chunk = String::new();
            file.read_to_string(&mut chunk)?;
            pos += chunk.len() as u64;
            write!(out, "{chunk}")?;
            out.flush()?;
        }
    }
}
