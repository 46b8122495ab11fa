//! `bosun host serve -- COMMAND`: the session host the daemon starts for an agent with
//! `--session host`; it outlives the daemon.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Result};
use bosun_host::{HostOptions, Listen, SaveTo, TokenFrom};
use clap::Args;

/// Run COMMAND in a pseudo-terminal and serve it until killed, on a Unix socket (--socket)
/// or on TCP to whoever presents a token (--listen, for an agent in a container with the
/// network); the daemon starts this, and it outlives the daemon, which finds it again by its
/// socket or address file
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("where").required(true).args(["socket", "listen"])))]
pub struct ServeArgs {
    /// The Unix socket to listen on (made with mode 0600); its peers must be this user
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Listen on TCP instead, `tcp:ADDR:PORT` (port 0: any free port); every connection must
    /// first present the token in --token-file
    #[arg(long, value_name = "tcp:ADDR:PORT", value_parser = parse_listen, requires = "address_file")]
    listen: Option<std::net::SocketAddr>,
    /// With --listen: the file holding the token (read once at start; it must be this user's
    /// and mode 0600)
    #[arg(long, value_name = "FILE", requires = "listen", conflicts_with = "token_env")]
    token_file: Option<PathBuf>,
    /// With --listen, instead of --token-file: the environment variable holding the token
    /// (in a pod, set from a secret); the program served does not inherit it
    #[arg(long, value_name = "NAME", requires = "listen")]
    token_env: Option<String>,
    /// With --listen: where to write the address really bound (mode 0600, written whole)
    #[arg(long, value_name = "FILE", requires = "listen")]
    address_file: Option<PathBuf>,
    /// The session's name, as the daemon knows it
    #[arg(long)]
    session: String,
    /// The terminal's size, COLSxROWS
    #[arg(long, default_value = "160x48", value_parser = parse_size)]
    size: (u16, u16),
    /// A file the program's output is appended to
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Where the output file rotates, in bytes
    #[arg(long, default_value_t = bosun_adapters::output_log::OUTPUT_LOG_MAX)]
    output_max: u64,
    /// The daemon's socket, told at once when the program exits
    #[arg(long, value_name = "PATH")]
    daemon: Option<PathBuf>,
    /// Where `save` requests push the workspace's branch (--save-branch), for a host whose
    /// workspace lives only beside it (in a pod)
    #[arg(long, value_name = "URL", requires = "save_branch", conflicts_with = "save_bundle")]
    save_remote: Option<String>,
    /// Take the workspace's branch (--save-branch) as a git bundle from the daemon before
    /// the program starts (unless the workspace holds it already), and give it back as one
    /// once the program ended: for a repository with no remote the pod could reach
    #[arg(long, requires = "save_branch")]
    save_bundle: bool,
    /// The branch that is saved
    #[arg(long, value_name = "BRANCH")]
    save_branch: Option<String>,
    /// End with the program: save (with --save-remote, or once the daemon fetched the
    /// bundle with --save-bundle), write how it ended and what the save did to FILE as JSON
    /// (in a pod, its termination message: /dev/termination-log), then exit with the
    /// program's status
    #[arg(long, value_name = "FILE")]
    exit_file: Option<PathBuf>,
    /// Listen at SOCKET for the agent's hook reports (where its hooks look for the
    /// daemon's socket) and relay them to the daemon that follows this host
    #[arg(long, value_name = "SOCKET")]
    relay: Option<PathBuf>,
    /// Before starting the program, write the files that variable VAR holds (a JSON object
    /// of absolute path to content; the program does not inherit VAR)
    #[arg(long, value_name = "VAR")]
    files_env: Option<String>,
    /// The program and its arguments
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

pub fn run(args: ServeArgs) -> Result<ExitCode> {
    let ServeArgs {
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
    } = args;
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

/// A `--listen` or `--size` that is not one.
#[derive(Debug, thiserror::Error)]
enum BadArg {
    #[error("{0:?} is not tcp:ADDR:PORT (say tcp:127.0.0.1:0)")]
    NotTcp(String),
    #[error("{0:?}: {1}")]
    Address(String, std::net::AddrParseError),
    #[error("{0:?} is not COLSxROWS (say 160x48)")]
    NotASize(String),
    #[error("{0}: {1}")]
    Side(&'static str, std::num::ParseIntError),
    #[error(transparent)]
    Size(#[from] bosun_core::KeysError),
}

/// `tcp:ADDR:PORT`.
fn parse_listen(text: &str) -> Result<std::net::SocketAddr, BadArg> {
    let addr = text.strip_prefix("tcp:").ok_or_else(|| BadArg::NotTcp(text.to_owned()))?;
    addr.parse().map_err(|e| BadArg::Address(addr.to_owned(), e))
}

/// `COLSxROWS`, each 1 to 1000.
fn parse_size(text: &str) -> Result<(u16, u16), BadArg> {
    let (c, r) = text.split_once('x').ok_or_else(|| BadArg::NotASize(text.to_owned()))?;
    let side = |what: &'static str, n: &str| n.parse::<u16>().map_err(|e| BadArg::Side(what, e));
    let (c, r) = (side("columns", c)?, side("rows", r)?);
    bosun_core::check_size(c, r)?;
    Ok((c, r))
}
