//! Where a host listens and who it lets in. On a Unix socket (mode 0600, in its owner's
//! directory) every peer must be the host's own user (`SO_PEERCRED`). On TCP (in a container,
//! where a socket in a bound directory would do) every connection must first present the
//! host's token in a hello, within a deadline and a small size, and only so many may be
//! waiting to; the rest are closed with nothing served, and logged. The token is read once, at
//! start, from a file only its user may read; the address really bound is written to a file
//! beside it for the daemon to find.

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bosun_wire::write_frame;

use crate::conn::HostConn;
use crate::protocol::{HostHello, HostResponse};
use crate::{private_file, HostError, HostToken};

/// How long a TCP connection has to present its hello.
const HELLO_WAIT: Duration = Duration::from_secs(5);
/// The largest hello read: a token is 64 characters.
const HELLO_MOST: usize = 4096;
/// How many TCP connections may wait to say hello at once; more are closed at once.
const PENDING_MOST: usize = 32;

/// Where a host is to listen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listen {
    /// A Unix socket, made with mode 0600.
    Unix(PathBuf),
    /// A TCP address (port 0: any free one), the token each connection must present read from
    /// `token`, the address really bound written to `address_file`.
    Tcp { addr: SocketAddr, token: TokenFrom, address_file: PathBuf },
}

/// Where a TCP host reads its token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenFrom {
    /// A private file of this user's (the daemon writes it, on this machine or bound into a
    /// container).
    File(PathBuf),
    /// An environment variable (in a pod: set from a secret, so it is in no file and no
    /// spec); the host's program does not inherit it.
    Env(String),
}

impl TokenFrom {
    pub fn read(&self) -> Result<HostToken, HostError> {
        match self {
            Self::File(path) => HostToken::read(path),
            Self::Env(name) => HostToken::from_env(name),
        }
    }

    /// The variable the host's program must not inherit, if the token came in one.
    pub fn hidden_var(&self) -> Option<&str> {
        match self {
            Self::Env(name) => Some(name),
            Self::File(_) => None,
        }
    }
}

pub(crate) enum Listener {
    Unix { listener: UnixListener, path: PathBuf },
    Tcp { listener: TcpListener, token: Arc<HostToken>, address_file: PathBuf },
}

impl Listener {
    /// Listens as `listen` says; a token file that is not private, or a socket another host
    /// answers on, is refused.
    pub fn bind(listen: &Listen) -> Result<Self, HostError> {
        match listen {
            Listen::Unix(path) => Ok(Self::Unix { listener: bind_unix(path)?, path: path.clone() }),
            Listen::Tcp { addr, token, address_file } => {
                let token = token.read()?;
                let listener =
                    TcpListener::bind(addr).map_err(|e| HostError::io(format!("listening on tcp:{addr}"), e))?;
                let bound = listener.local_addr().map_err(|e| HostError::io("reading the address bound", e))?;
                private_file::write(address_file, format!("{bound}\n").as_bytes())?;
                tracing::info!("listening on tcp:{bound}");
                Ok(Self::Tcp { listener, token: Arc::new(token), address_file: address_file.clone() })
            }
        }
    }

    /// The file whose going means the host's state directory went: its socket or address file.
    pub fn marker(&self) -> &Path {
        match self {
            Self::Unix { path, .. } => path,
            Self::Tcp { address_file, .. } => address_file,
        }
    }

    /// The next connection let in, on this thread: for a host that serves one at a time (while
    /// it waits for its seed). None for one refused.
    pub fn accept(&self) -> Option<HostConn> {
        match self {
            Self::Unix { listener, .. } => {
                let (conn, _) = listener.accept().ok()?;
                match same_user(&conn) {
                    Ok(()) => Some(HostConn::Unix(conn)),
                    Err(why) => {
                        tracing::warn!("refused a connection: {why}");
                        None
                    }
                }
            }
            Self::Tcp { listener, token, .. } => {
                let (conn, peer) = listener.accept().ok()?;
                match admit(conn, token) {
                    Ok(conn) => Some(HostConn::Tcp(conn)),
                    Err(why) => {
                        tracing::warn!("refused a connection from {peer}: {why}");
                        None
                    }
                }
            }
        }
    }

    /// Hands each connection let in to `serve`, each on a thread of its own, while it can accept.
    pub fn run(&self, serve: impl Fn(HostConn) + Clone + Send + 'static) {
        match self {
            Self::Unix { listener, .. } => {
                for conn in listener.incoming() {
                    let Ok(conn) = conn else { continue };
                    // The socket's mode is not all that keeps others out: its peer must be this user.
                    if let Err(why) = same_user(&conn) {
                        tracing::warn!("refused a connection: {why}");
                        continue;
                    }
                    let serve = serve.clone();
                    std::thread::spawn(move || serve(HostConn::Unix(conn)));
                }
            }
            Self::Tcp { listener, token, .. } => {
                let pending = Arc::new(AtomicUsize::new(0));
                for conn in listener.incoming() {
                    let Ok(conn) = conn else { continue };
                    let peer = conn.peer_addr().map_or_else(|_| "an unknown peer".to_owned(), |a| a.to_string());
                    if pending.fetch_add(1, Ordering::SeqCst) >= PENDING_MOST {
                        pending.fetch_sub(1, Ordering::SeqCst);
                        tracing::warn!("refused a connection from {peer}: {PENDING_MOST} others wait to say hello");
                        continue;
                    }
                    let (serve, token, pending) = (serve.clone(), token.clone(), pending.clone());
                    std::thread::spawn(move || {
                        let admitted = admit(conn, &token);
                        pending.fetch_sub(1, Ordering::SeqCst);
                        match admitted {
                            Ok(conn) => serve(HostConn::Tcp(conn)),
                            Err(why) => tracing::warn!("refused a connection from {peer}: {why}"),
                        }
                    });
                }
            }
        }
    }
}

/// Why a connection was not let in.
#[derive(Debug, thiserror::Error)]
enum Refusal {
    #[error("it said no hello within {secs} s", secs = HELLO_WAIT.as_secs())]
    NoHello,
    #[error("it closed before its hello")]
    ClosedEarly,
    #[error("reading its hello: {0}")]
    Hello(std::io::Error),
    #[error("its first frame is {0} bytes, more than a hello's {HELLO_MOST}")]
    TooLarge(usize),
    #[error("its first frame is not a hello")]
    NotHello,
    #[error("its hello has the wrong token")]
    WrongToken,
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Frame(#[from] bosun_wire::FrameError),
    #[error("its peer is uid {peer}, not this host's uid {me}")]
    Stranger { peer: u32, me: u32 },
    #[error("cannot tell who its peer is: {0}")]
    Unknown(nix::Error),
}

/// The connection, once it presented `token` in its first frame and was told `Ok`.
fn admit(mut conn: TcpStream, token: &HostToken) -> Result<TcpStream, Refusal> {
    let mut until = Until { conn: &conn, deadline: Instant::now() + HELLO_WAIT };
    let late = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => Refusal::NoHello,
        std::io::ErrorKind::UnexpectedEof => Refusal::ClosedEarly,
        _ => Refusal::Hello(e),
    };
    let mut len = [0u8; 4];
    until.read_exact(&mut len).map_err(late)?;
    let len = u32::from_be_bytes(len) as usize;
    if len > HELLO_MOST {
        return Err(Refusal::TooLarge(len));
    }
    let mut body = vec![0u8; len];
    until.read_exact(&mut body).map_err(late)?;
    let HostHello::Hello { token: offered } = bosun_wire::decode(&body).map_err(|_| Refusal::NotHello)?;
    if !token.admits(&offered) {
        return Err(Refusal::WrongToken);
    }
    conn.set_read_timeout(None)?;
    write_frame(&mut conn, &HostResponse::Ok)?;
    Ok(conn)
}

/// Reads from `conn` until `deadline` at the latest, however slowly the bytes come.
struct Until<'a> {
    conn: &'a TcpStream,
    deadline: Instant,
}

impl Read for Until<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        self.conn.set_read_timeout(Some(left))?;
        (&mut &*self.conn).read(buf)
    }
}

/// The peer of `conn` is this process's user (`SO_PEERCRED`).
fn same_user(conn: &UnixStream) -> Result<(), Refusal> {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    let me = nix::unistd::geteuid().as_raw();
    match getsockopt(conn, PeerCredentials) {
        Ok(cred) if cred.uid() == me => Ok(()),
        Ok(cred) => Err(Refusal::Stranger { peer: cred.uid(), me }),
        Err(e) => Err(Refusal::Unknown(e)),
    }
}

/// Binds `path` with mode 0600, replacing a stale socket; refuses one a live host answers on.
fn bind_unix(path: &Path) -> Result<UnixListener, HostError> {
    if UnixStream::connect(path).is_ok() {
        return Err(HostError::Refused {
            at: path.display().to_string(),
            message: "a session host already answers there".into(),
        });
    }
    let _ = std::fs::remove_file(path);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| HostError::io(format!("creating {}", dir.display()), e))?;
    }
    // Made private before it can be connected to: bound under a umask that leaves only the owner.
    let old = nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o177));
    let bound = UnixListener::bind(path);
    nix::sys::stat::umask(old);
    let listener = bound.map_err(|e| HostError::io(format!("listening on {}", path.display()), e))?;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    Ok(listener)
}
