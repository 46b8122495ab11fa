//! `bosun host serve` (the session host the daemon starts for an agent with `--session host`)
//! and `bosun host attach` (this terminal as that session's, until Ctrl+]).

use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use bosun_host::{HostClient, HostEndpoint, HostOptions, HostRequest, HostToken, Listen, SaveTo, TokenFrom};
use ratatui::crossterm::terminal;

use crate::args::HostCommand;

pub fn run(cmd: HostCommand) -> Result<ExitCode> {
    match cmd {
        HostCommand::Serve {
            socket,
            listen,
            token_file,
            token_env,
            address_file,
            session,
            size: (cols, rows),
            output,
            output_max,
            daemon,
            save_remote,
            save_bundle,
            save_branch,
            exit_file,
            relay,
            files_env,
            command,
        } => {
            // Its stderr is its log (`<state>/h/<session>.log`), never a terminal.
            let filter = tracing_subscriber::EnvFilter::try_from_env("BOSUN_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
            tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_writer(std::io::stderr)
                .with_ansi(false)
                .log_internal_errors(false)
                .init();
            let token = match (token_file, token_env) {
                (Some(file), None) => Some(TokenFrom::File(file)),
                (None, Some(name)) => Some(TokenFrom::Env(name)),
                (None, None) => None,
                (Some(_), Some(_)) => bail!("give --token-file or --token-env, not both"),
            };
            let listen = match (socket, listen, token, address_file) {
                (Some(socket), None, None, None) => Listen::Unix(socket),
                (None, Some(addr), Some(token), Some(address_file)) => Listen::Tcp { addr, token, address_file },
                _ => bail!("give --socket, or --listen with --token-file (or --token-env) and --address-file"),
            };
            let save = match (save_remote, save_bundle, save_branch) {
                (Some(remote), false, Some(branch)) => Some(SaveTo::Remote { remote, branch }),
                (None, true, Some(branch)) => Some(SaveTo::Bundle { branch }),
                (None, false, None) => None,
                _ => bail!("give --save-branch with one of --save-remote or --save-bundle"),
            };
            let opts = HostOptions {
                listen,
                session,
                command,
                output,
                output_max,
                cols,
                rows,
                daemon,
                save,
                exit_file,
                relay,
                files_var: files_env,
            };
            bosun_host::serve(opts)?;
            Ok(ExitCode::SUCCESS)
        }
        HostCommand::Attach { socket, address, address_file, token_file } => {
            let endpoint = match (socket, address, address_file, token_file) {
                (Some(socket), None, None, None) => HostEndpoint::Unix(socket),
                (None, Some(addr), None, Some(token_file)) => {
                    HostEndpoint::Tcp { addr, token: HostToken::read(&token_file)? }
                }
                (None, None, Some(address_file), Some(token_file)) => {
                    HostEndpoint::tcp_from_files(&address_file, &token_file)?
                }
                _ => bail!("give --socket, or --address or --address-file with --token-file"),
            };
            attach(&HostClient::new(endpoint))
        }
    }
}

/// The session sized to this terminal while attached (its size given back after), the
/// terminal raw, bytes both ways until Ctrl+] or the session's end.
fn attach(client: &HostClient) -> Result<ExitCode> {
    client.status().context("cannot attach")?;
    let before = match terminal::size() {
        Ok((cols, rows)) => match client.ask(&HostRequest::Resize { cols, rows }) {
            Ok(bosun_host::HostResponse::Resized { before }) => Some(before),
            _ => None,
        },
        Err(_) => None,
    };
    terminal::enable_raw_mode().context("cannot put the terminal in raw mode")?;
    let attached = bosun_host::attach(client, std::io::stdin(), std::io::stdout());
    let _ = terminal::disable_raw_mode();
    if let Some((cols, rows)) = before {
        let _ = client.ask(&HostRequest::Resize { cols, rows });
    }
    attached?;
    eprintln!("\r\n[detached]");
    Ok(ExitCode::SUCCESS)
}
