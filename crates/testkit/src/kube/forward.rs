//! A port-forward as the API server gives one: the request is upgraded to a WebSocket of
//! subprotocol `v4.channel.k8s.io`, and one TCP connection to the pod's port is carried on it:
//! channel 0 its data and channel 1 its errors, each opened by a frame of the port number (two
//! bytes, little-endian). One thread per forward, polling both sides in turn.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use tungstenite::protocol::{Role, WebSocket};
use tungstenite::Message;

/// How long each side is waited on before the other is looked at.
const TURN: Duration = Duration::from_millis(5);

/// Answers the upgrade on `stream`, then carries a connection to `ip:port` until either side
/// ends.
pub fn serve(mut stream: TcpStream, ip: &str, port: u16, key: &str, protocol: &str) {
    let accept = tungstenite::handshake::derive_accept_key(key.as_bytes());
    let head = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Protocol: {protocol}\r\n\r\n"
    );
    if stream.write_all(head.as_bytes()).and_then(|()| stream.flush()).is_err() {
        return;
    }
    let mut ws = WebSocket::from_raw_socket(stream, Role::Server, None);
    let [lo, hi] = port.to_le_bytes();
    for channel in [0u8, 1] {
        if ws.send(Message::binary(vec![channel, lo, hi])).is_err() {
            return;
        }
    }
    let mut pod = match TcpStream::connect((ip, port)) {
        Ok(pod) => pod,
        Err(e) => {
            let mut said = vec![1u8];
            said.extend(format!("cannot connect to {ip}:{port}: {e}").as_bytes());
            let _ = ws.send(Message::binary(said));
            let _ = ws.close(None);
            let _ = ws.flush();
            return;
        }
    };
    let waiting = |e: &std::io::Error| matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut);
    if ws.get_ref().set_read_timeout(Some(TURN)).is_err() || pod.set_read_timeout(Some(TURN)).is_err() {
        return;
    }
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match ws.read() {
            Ok(Message::Binary(data)) => {
                if data.first() == Some(&0) && pod.write_all(&data[1..]).is_err() {
                    break;
                }
            }
            Ok(Message::Close(_)) => break,
            Ok(_) => {}
            Err(tungstenite::Error::Io(e)) if waiting(&e) => {}
            Err(_) => break,
        }
        match pod.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let mut data = Vec::with_capacity(n + 1);
                data.push(0);
                data.extend_from_slice(&buf[..n]);
                if ws.send(Message::binary(data)).is_err() {
                    break;
                }
            }
            Err(e) if waiting(&e) => {}
            Err(_) => break,
        }
    }
    let _ = ws.close(None);
    let _ = ws.flush();
}
