//! A server for health-check tests whose behaviour changes on demand: it answers, or
//! refuses connections (listener closed), or accepts and never answers, or answers a
//! wrong status or body. It records when each connection arrived.

#![allow(clippy::disallowed_types)]
#![allow(dead_code)]

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// What the server does with the next connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Mode {
    /// `200 OK` with its name as body.
    Up = 0,
    /// Listener closed: connections are refused.
    Refuse = 1,
    /// Accepts, reads, never answers.
    Hang = 2,
    /// `500 Internal Server Error`.
    Status500 = 3,
    /// `200 OK` with body `nope`.
    WrongBody = 4,
}

pub struct FlappyBackend {
    addr: SocketAddr,
    mode: Arc<AtomicU8>,
    stop: Arc<AtomicBool>,
    accepts: Arc<Mutex<Vec<Instant>>>,
}

impl FlappyBackend {
    pub fn start(name: &str, mode: Mode) -> FlappyBackend {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let b = FlappyBackend {
            addr,
            mode: Arc::new(AtomicU8::new(mode as u8)),
            stop: Arc::new(AtomicBool::new(false)),
            accepts: Arc::new(Mutex::new(Vec::new())),
        };
        let (m, stop, acc, name) = (b.mode.clone(), b.stop.clone(), b.accepts.clone(), name.to_owned());
        thread::spawn(move || serve(Some(listener), addr, &m, &stop, &acc, &name));
        b
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn set(&self, mode: Mode) {
        self.mode.store(mode as u8, Ordering::SeqCst);
    }

    /// Connections accepted so far.
    pub fn accepts(&self) -> Vec<Instant> {
        self.accepts.lock().unwrap().clone()
    }
}

impl Drop for FlappyBackend {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn mode_of(m: &AtomicU8) -> Mode {
    match m.load(Ordering::SeqCst) {
        1 => Mode::Refuse,
        2 => Mode::Hang,
        3 => Mode::Status500,
        4 => Mode::WrongBody,
        _ => Mode::Up,
    }
}

fn serve(
    mut listener: Option<TcpListener>,
    addr: SocketAddr,
    m: &Arc<AtomicU8>,
    stop: &AtomicBool,
    acc: &Arc<Mutex<Vec<Instant>>>,
    name: &str,
) {
    while !stop.load(Ordering::SeqCst) {
        let mode = mode_of(m);
        if mode == Mode::Refuse {
            listener = None;
            thread::sleep(Duration::from_millis(2));
            continue;
        }
        let l = match &listener {
            Some(l) => l,
            None => match TcpListener::bind(addr) {
                Ok(l) => {
                    l.set_nonblocking(true).expect("nonblocking");
                    listener.insert(l)
                }
                Err(_) => {
                    thread::sleep(Duration::from_millis(5));
                    continue;
                }
            },
        };
        l.set_nonblocking(true).expect("nonblocking");
        match l.accept() {
            Ok((c, _)) => {
                acc.lock().unwrap().push(Instant::now());
                let (m, name) = (m.clone(), name.to_owned());
                thread::spawn(move || handle(c, &m, &name));
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => thread::sleep(Duration::from_millis(2)),
            Err(_) => thread::sleep(Duration::from_millis(2)),
        }
    }
}

/// Serves one connection: one reply per request head, closing after HTTP/1.0 or
/// `connection: close`, or when the peer closes.
fn handle(mut c: TcpStream, m: &AtomicU8, name: &str) {
    c.set_nonblocking(false).ok();
    c.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let mut buf = Vec::new();
    loop {
        let mut chunk = [0u8; 4096];
        let n = match c.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else { continue };
        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
        buf.drain(..end + 4);
        let reply = match mode_of(m) {
            Mode::Hang => {
                thread::sleep(Duration::from_secs(5));
                return;
            }
            Mode::Status500 => "HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n".to_owned(),
            Mode::WrongBody => "HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nnope".to_owned(),
            Mode::Up | Mode::Refuse => format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{name}", name.len()),
        };
        if c.write_all(reply.as_bytes()).is_err() {
            return;
        }
        if head.contains("http/1.0") || head.contains("connection: close") {
            return;
        }
    }
}

/// An agent for `agent-check`: answers every connection with its current line.
pub struct AgentBackend {
    addr: SocketAddr,
    line: Arc<Mutex<String>>,
    stop: Arc<AtomicBool>,
}

impl AgentBackend {
    pub fn start(line: &str) -> AgentBackend {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let a =
            AgentBackend { addr, line: Arc::new(Mutex::new(line.to_owned())), stop: Arc::new(AtomicBool::new(false)) };
        let (line, stop) = (a.line.clone(), a.stop.clone());
        thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((mut c, _)) => {
                        let text = line.lock().unwrap().clone();
                        let _ = c.write_all(text.as_bytes());
                    }
                    Err(_) => thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        a
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn say(&self, line: &str) {
        *self.line.lock().unwrap() = line.to_owned();
    }
}

impl Drop for AgentBackend {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}
