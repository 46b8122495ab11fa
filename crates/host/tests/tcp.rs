//! A session host on TCP, run as a process of its own (this test binary, started again as the
//! host): a client with the right token is served; a wrong token, none, a garbage first frame,
//! an oversized one or silence each get nothing, are logged, and change nothing; a token file
//! others may read, or that is not the user's, is refused before anything runs.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bosun_core::TermKey;
use bosun_host::{
    HostClient, HostEndpoint, HostError, HostOptions, HostRequest, HostResponse, HostToken, Listen, TokenFrom,
};

const PATIENCE: Duration = Duration::from_secs(20);
/// Set in the host's process: its token and address files, a line each.
const AS_HOST: &str = "BOSUN_HOST_TEST_SERVE";

/// Not a test: the body of the host's process when `AS_HOST` is set.
#[test]
fn host_process() {
    let Ok(files) = std::env::var(AS_HOST) else { return };
    let (token_file, address_file) = files.split_once('\n').expect("two files");
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_ansi(false).init();
    let listen = Listen::Tcp {
        addr: "127.0.0.1:0".parse().unwrap(),
        token: match token_file.strip_prefix("env:") {
            Some(name) => TokenFrom::Env(name.into()),
            None => TokenFrom::File(token_file.into()),
        },
        address_file: address_file.into(),
    };
    let command = ["sh", "-c", "echo \"inherited [$HOST_TOKEN]\"; while read l; do echo \"got: $l\"; done"];
    let opts = HostOptions::new(listen, "tcp-test", command.map(String::from).to_vec());
    if let Err(e) = bosun_host::serve(opts) {
        eprintln!("host: {e}");
        std::process::exit(2);
    }
}

fn wait_for<T>(mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(found) = probe() {
            return Some(found);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A host process on TCP, killed (with its program) when dropped.
struct TcpHost {
    dir: tempfile::TempDir,
    child: Child,
    token: HostToken,
}

impl TcpHost {
    /// Starts a host whose token file was made by `prepare` (by default a private one).
    fn start_with(prepare: impl FnOnce(&Path, &HostToken)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let token = HostToken::generate().unwrap();
        prepare(&dir.path().join("h.token"), &token);
        let token_file = dir.path().join("h.token").display().to_string();
        Self::spawn(dir, token, token_file)
    }

    /// Starts a host that reads its token from the environment variable `HOST_TOKEN`.
    fn start_with_env() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let token = HostToken::generate().unwrap();
        Self::spawn(dir, token, "env:HOST_TOKEN".into())
    }

    fn spawn(dir: tempfile::TempDir, token: HostToken, token_file: String) -> Self {
        let log = std::fs::File::create(dir.path().join("h.log")).unwrap();
        let files = format!("{token_file}\n{}", dir.path().join("h.addr").display());
        let child = Command::new(std::env::current_exe().unwrap())
            .args(["host_process", "--exact", "--nocapture", "--test-threads=1"])
            .env(AS_HOST, files)
            .env("HOST_TOKEN", token.text())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        Self { dir, child, token }
    }

    fn start() -> Self {
        Self::start_with(|path, token| token.write(path).unwrap())
    }

    fn address_file(&self) -> PathBuf {
        self.dir.path().join("h.addr")
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("h.log")).unwrap_or_default()
    }

    /// Its address, once it wrote it.
    fn addr(&self) -> SocketAddr {
        let text = wait_for(|| std::fs::read_to_string(self.address_file()).ok().filter(|t| t.ends_with('\n')));
        text.unwrap_or_else(|| panic!("no address written: {}", self.log())).trim().parse().unwrap()
    }

    fn client(&self) -> HostClient {
        HostClient::new(HostEndpoint::Tcp { addr: self.addr(), token: self.token.clone() })
    }

    fn wait_screen(&self, text: &str) -> String {
        let client = self.client();
        let seen = wait_for(|| match client.ask(&HostRequest::Screen { colors: false, scrollback: 0 }) {
            Ok(HostResponse::Screen { text: s }) if s.contains(text) => Some(s),
            _ => None,
        });
        seen.unwrap_or_else(|| panic!("{text:?} never showed: {}", self.log()))
    }
}

impl Drop for TcpHost {
    fn drop(&mut self) {
        let addr = std::fs::read_to_string(self.address_file()).ok().and_then(|t| t.trim().parse().ok());
        if let Some(addr) = addr {
            let _ = HostClient::new(HostEndpoint::Tcp { addr, token: self.token.clone() }).ask(&HostRequest::Kill);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_token_from_the_environment_admits_its_client_and_is_not_the_programs() {
    let host = TcpHost::start_with_env();
    let screen = host.wait_screen("inherited [");
    assert!(screen.contains("inherited []"), "the program does not inherit the token's variable: {screen}");
    assert!(!screen.contains(host.token.text()));
    let wrong = HostClient::new(HostEndpoint::Tcp { addr: host.addr(), token: HostToken::generate().unwrap() });
    assert!(wrong.status().is_err(), "another token is refused");
    assert_eq!(host.client().status().unwrap().session, "tcp-test");
}

#[test]
fn a_tcp_host_serves_a_client_with_its_token_and_writes_its_address_privately() {
    let host = TcpHost::start();
    let client = host.client();
    let status = client.status().unwrap();
    assert_eq!((status.session.as_str(), status.cols, status.rows, status.exit), ("tcp-test", 80, 24, None));
    let mode = std::fs::metadata(host.address_file()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "its address file is private");
    let keys = vec![TermKey::Text("over tcp".into()), TermKey::Enter];
    assert!(matches!(client.ask(&HostRequest::Press { keys }), Ok(HostResponse::Ok)));
    host.wait_screen("got: over tcp");

    // Attached over TCP: the screen, then what is typed comes back.
    let mut conn = client.attach().unwrap();
    conn.set_read_timeout(Some(PATIENCE)).unwrap();
    conn.write_all(b"attached\r").unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("got: attached") {
        let n = conn.read(&mut buf).expect("its output while attached");
        assert!(n > 0, "the host closed the attach: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
}

/// Sends `bytes` on a fresh connection and returns all the host answered before it closed.
fn raw(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(PATIENCE)).unwrap();
    let _ = c.write_all(bytes);
    let mut answer = Vec::new();
    let _ = c.read_to_end(&mut answer);
    answer
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = (body.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(body);
    out
}

#[test]
fn a_wrong_or_missing_token_or_a_garbage_or_oversized_first_frame_gets_nothing_and_changes_nothing() {
    let host = TcpHost::start();
    let client = host.client();
    let before = host.wait_screen("");
    let pid = client.status().unwrap().pid.expect("its program's pid");
    let addr = host.addr();

    let wrong = HostClient::new(HostEndpoint::Tcp { addr, token: HostToken::generate().unwrap() });
    let keys = vec![TermKey::Text("planted".into()), TermKey::Enter];
    match wrong.ask(&HostRequest::Press { keys: keys.clone() }) {
        Err(HostError::Refused { message, .. }) => assert!(message.contains("hello"), "{message}"),
        other => panic!("a wrong token was served: {other:?}"),
    }
    let secret = std::fs::read_to_string(host.dir.path().join("h.token")).unwrap();
    let press = serde_json::to_vec(&HostRequest::Press { keys }).unwrap();
    let hello_without_token = br#"{"type":"hello"}"#;
    let hello_with_more = format!(r#"{{"type":"hello","token":"{secret}","keys":"planted"}}"#);
    let attempts: Vec<(&str, Vec<u8>)> = vec![
        ("a request with no hello", frame(&press)),
        ("a hello without its token", frame(hello_without_token)),
        ("a hello with more than its token", frame(hello_with_more.as_bytes())),
        ("a garbage frame", frame(b"{{{{ not json")),
        ("garbage with no frame", b"GET / HTTP/1.1\r\n\r\n".to_vec()),
        ("a length of 4 GiB", b"\xff\xff\xff\xff".to_vec()),
        ("an oversized hello", frame(format!(r#"{{"type":"hello","token":"{}"}}"#, "a".repeat(64 * 1024)).as_bytes())),
        ("nothing", Vec::new()),
    ];
    for (what, bytes) in &attempts {
        let answer = raw(addr, bytes);
        assert!(answer.is_empty(), "{what} was answered: {:?}", String::from_utf8_lossy(&answer));
    }

    let status = client.status().unwrap();
    assert_eq!((status.pid, status.exit), (Some(pid), None), "its program runs on");
    match client.ask(&HostRequest::Screen { colors: false, scrollback: 0 }).unwrap() {
        HostResponse::Screen { text } => assert_eq!(text, before, "nothing was typed"),
        other => panic!("{other:?}"),
    }
    let logged =
        wait_for(|| Some(host.log()).filter(|l| l.matches("refused a connection from").count() > attempts.len()));
    let log = logged.unwrap_or_else(|| panic!("not each refusal is logged: {}", host.log()));
    assert!(!log.contains(&secret), "the token is never logged");
    assert!(log.contains("the wrong token") && log.contains("not a hello") && log.contains("said no hello"), "{log}");
}

#[test]
fn a_token_file_others_may_read_or_of_another_user_is_refused_before_anything_runs() {
    let mut open = TcpHost::start_with(|path, token| {
        token.write(path).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
    });
    let status = open.child.wait().unwrap();
    assert!(!status.success(), "it served with a token others may read");
    let log = open.log();
    assert!(log.contains("h.token") && log.contains("0600"), "{log}");
    assert!(!open.address_file().exists(), "it listened on nothing");

    if nix::unistd::geteuid().is_root() {
        let mut theirs = TcpHost::start_with(|path, token| {
            token.write(path).unwrap();
            nix::unistd::chown(path, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
        });
        assert!(!theirs.child.wait().unwrap().success(), "it served with another user's token");
        assert!(theirs.log().contains("owned by uid 65534"), "{}", theirs.log());
    }
}
