//! `bosun host attach`: this terminal as the session's a host serves, until Ctrl+].

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use bosun_host::{HostClient, HostEndpoint, HostRequest, HostToken};
use clap::Args;
use ratatui::crossterm::terminal;

/// Attach this terminal to the session a host serves, on its Unix socket (--socket) or on
/// TCP (--address or --address-file, with --token-file); detach with Ctrl+]
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("where").required(true).args(["socket", "address", "address_file"])))]
pub struct AttachArgs {
    /// The host's Unix socket
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// The host's TCP address, ADDR:PORT
    #[arg(long, value_name = "ADDR:PORT", requires = "token_file")]
    address: Option<std::net::SocketAddr>,
    /// The file the host wrote its TCP address to
    #[arg(long, value_name = "FILE", requires = "token_file")]
    address_file: Option<PathBuf>,
    /// The file holding the TCP host's token (this user's, mode 0600)
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
}

pub fn run(args: AttachArgs) -> Result<ExitCode> {
    let AttachArgs { socket, address, address_file, token_file } = args;
    let endpoint = match (socket, address, address_file, token_file) {
        (Some(socket), None, None, None) => HostEndpoint::Unix(socket),
        (None, Some(addr), None, Some(token_file)) => HostEndpoint::Tcp { addr, token: HostToken::read(&token_file)? },
        (None, None, Some(address_file), Some(token_file)) => HostEndpoint::tcp_from_files(&address_file, &token_file)?,
        _ => bail!("give --socket, or --address or --address-file with --token-file"),
    };
    attach(&HostClient::new(endpoint))
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
