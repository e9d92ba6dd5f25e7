//! `core.tcp()`: the native side of the Socket class. A socket is a non-blocking
//! TCP (or unix) connection that the script drives with `try_read`/`try_write`; when
//! it would block, the method parks a future ([`crate::action::lua::park_io`]: the
//! connection attempt, or the socket turning readable or writable, bounded by the
//! socket's timeout) and returns [`IO`] with its token, and the prelude's wrapper
//! yields it to the stream or task that resumed the script, which awaits the future
//! and resumes the script, which calls the method again. The thread is never
//! blocked, and nothing runs on the loop for a socket no one waits on.
//! HAProxy counterpart: `hlua_socket_*()` (src/hlua.c), where a socket is an applet
//! stream of the internal `LUA-SOCKET` proxy.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mlua::{MultiValue, UserData, UserDataMethods, Value};
use tokio::io::Interest;
use tokio::net::{TcpStream, UnixStream};
use tokio::sync::oneshot;

use crate::action::lua::{park_io, IoFuture};

/// What a method returns when it must wait: the prelude yields it with the token.
pub(crate) const IO: &str = "\0rampart:io";

/// HAProxy's internal socket proxy connects within 5s unless `settimeout` says else.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How the HTTP client resolves a host name: through the `resolvers` section
/// `httpclient.resolvers.id` names (`default` when not set), as HAProxy 2.6's client
/// does with its `do-resolve` rule; `None`: no address.
pub type NameResolver = dyn Fn(String) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<std::net::IpAddr>> + Send>>
    + Send
    + Sync;

static HTTPCLIENT_RESOLVER: std::sync::OnceLock<Box<NameResolver>> = std::sync::OnceLock::new();

/// Installs the HTTP client's resolver (once per process; set by `crate::dns`).
pub fn set_httpclient_resolver(f: Box<NameResolver>) {
    let _ = HTTPCLIENT_RESOLVER.set(f);
}

/// The most a socket buffers of what it received and the script has not taken yet
/// (a `*a` or `*l` on an endless stream fails past it instead of growing memory that
/// `tune.lua.maxmem` does not see).
const RECV_MAX: usize = 16 << 20;

/// The connection under a socket, shared with the futures that wait on it.
#[derive(Clone)]
enum Conn {
    Tcp(Arc<TcpStream>),
    Unix(Arc<UnixStream>),
}

impl Conn {
    fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.try_read(buf),
            Conn::Unix(s) => s.try_read(buf),
        }
    }

    fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.try_write(buf),
            Conn::Unix(s) => s.try_write(buf),
        }
    }

    /// A future that ends once the socket is ready for `interest` or at `deadline`.
    fn ready(&self, interest: Interest, deadline: Option<Instant>) -> IoFuture {
        let conn = self.clone();
        Box::pin(async move {
            let ready = async {
                let _ = match &conn {
                    Conn::Tcp(s) => s.ready(interest).await,
                    Conn::Unix(s) => s.ready(interest).await,
                };
            };
            match deadline {
                Some(d) => drop(tokio::time::timeout_at(d.into(), ready).await),
                None => ready.await,
            }
        })
    }

    /// `ip:port`, `[ipv6]:port` or the unix path, as HAProxy prints them.
    fn name(&self, peer: bool) -> Option<String> {
        match self {
            Conn::Tcp(s) => {
                let a = if peer { s.peer_addr() } else { s.local_addr() }.ok()?;
                Some(a.to_string())
            }
            Conn::Unix(s) => {
                let a = if peer { s.peer_addr() } else { s.local_addr() }.ok()?;
                a.as_pathname().map(|p| p.display().to_string())
            }
        }
    }
}

/// Where to connect: a literal address, a name to resolve, or a unix socket.
enum Target {
    Inet(SocketAddr),
    Name(String, u16),
    Unix(std::path::PathBuf),
}

/// Parses `connect(host [, port])` as HAProxy does (`host:` then the port, so that a
/// bare IPv6 address works): `ip:port`, `[ipv6]:port`, `ipv4@`/`ipv6@` prefixes,
/// `unix@path`, a host name (resolved off the thread).
fn target(host: &str, port: Option<i64>) -> Result<Target, String> {
    let text = match port {
        Some(p) if p > 0 => format!("{host}:"),
        _ => host.to_owned(),
    };
    let bad = || format!("connect: cannot parse destination address '{text}'");
    let port = port.filter(|p| *p > 0).map(|p| u16::try_from(p).map_err(|_| bad())).transpose()?;
    if let Some(name) = rampart_cfg::parse::server_target_name(&text) {
        let written = text.rsplit_once(':').and_then(|(_, p)| p.parse::<u16>().ok()).filter(|p| *p > 0);
        return match port.or(written) {
            Some(p) => Ok(Target::Name(name, p)),
            None => Err("connect: port missing".to_owned()),
        };
    }
    match rampart_cfg::parse::parse_server_target(&text).map_err(|_| bad())? {
        (rampart_cfg::model::ServerAddr::Unix(p), _) => Ok(Target::Unix(p)),
        (rampart_cfg::model::ServerAddr::Inet(mut a), _) => {
            if a.port() == 0 {
                a.set_port(port.ok_or("connect: port missing")?);
            }
            Ok(Target::Inet(a))
        }
    }
}

/// Connects to `to` within `timeout`; a name is resolved by the HTTP client's resolver
/// for the HTTP client (`httpclient`), by the system's otherwise.
async fn connect(to: Target, timeout: Duration, httpclient: bool) -> io::Result<Conn> {
    let attempt = async {
        match to {
            Target::Unix(p) => Ok(Conn::Unix(Arc::new(UnixStream::connect(p).await?))),
            Target::Inet(a) => connect_tcp(a).await,
            Target::Name(name, port) => {
                let a = match HTTPCLIENT_RESOLVER.get().filter(|_| httpclient) {
                    Some(resolve) => resolve(name).await.map(|ip| SocketAddr::new(ip, port)),
                    None => tokio::net::lookup_host((name.as_str(), port)).await?.next(),
                };
                connect_tcp(a.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?).await
            }
        }
    };
    tokio::time::timeout(timeout, attempt).await.unwrap_or_else(|_| Err(io::ErrorKind::TimedOut.into()))
}

async fn connect_tcp(a: SocketAddr) -> io::Result<Conn> {
    let s = TcpStream::connect(a).await?;
    s.set_nodelay(true)?;
    Ok(Conn::Tcp(Arc::new(s)))
}

/// Where a socket is in its life.
enum State {
    /// Made by `core.tcp()`, not connected yet.
    New,
    /// A connection attempt in progress (its future is parked).
    Connecting(oneshot::Receiver<io::Result<Conn>>),
    Open(Conn),
    /// Closed by the script, the peer, an error or a timeout.
    Closed,
}

/// How much `receive` wants.
#[derive(Clone, Copy)]
enum Want {
    Line,
    All,
    Bytes(usize),
}

/// A Lua socket.
pub(crate) struct LuaSock {
    state: State,
    /// Received, not yet returned to the script.
    rbuf: Vec<u8>,
    /// The peer closed its side (or the connection broke).
    eof: bool,
    /// What `send` has left to write.
    wbuf: Vec<u8>,
    /// `settimeout`: the time one operation may wait (none: forever, connections 5s).
    timeout: Option<Duration>,
    /// When the operation in progress gives up.
    deadline: Option<Instant>,
    /// `connect_ssl`: the TLS session over the connection (set once connected).
    tls: Option<Box<rustls::ClientConnection>>,
    /// `connect_ssl` asked for TLS, to this server name.
    tls_name: Option<rustls_pki_types::ServerName<'static>>,
    /// The HTTP client's TLS (its verification settings), not `connect_ssl`'s.
    hc_tls: bool,
}

/// A connection as `std::io` reader and writer that never blocks (for rustls).
struct NoWait<'a>(&'a Conn);

impl io::Read for NoWait<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.try_read(buf)
    }
}

impl io::Write for NoWait<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.try_write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One result of a method: the values for the script, or a wait.
type Ret = mlua::Result<MultiValue>;

fn vals(lua: &mlua::Lua, v: Vec<Value>) -> Ret {
    let _ = lua;
    Ok(MultiValue::from_vec(v))
}

fn wait(lua: &mlua::Lua, f: IoFuture) -> Ret {
    let token = park_io(f);
    vals(lua, vec![Value::String(lua.create_string(IO)?), Value::Integer(token as i64)])
}

fn closed(lua: &mlua::Lua, prefix: Vec<u8>) -> Ret {
    if !prefix.is_empty() {
        return vals(lua, vec![Value::String(lua.create_string(prefix)?)]);
    }
    vals(lua, vec![Value::Nil, Value::String(lua.create_string("connection closed.")?)])
}

impl LuaSock {
    pub fn new() -> LuaSock {
        LuaSock {
            state: State::New,
            rbuf: Vec::new(),
            eof: false,
            wbuf: Vec::new(),
            timeout: None,
            deadline: None,
            tls: None,
            tls_name: None,
            hc_tls: false,
        }
    }

    /// Starts an operation (`first`) or checks the one in progress against its
    /// deadline: `true` once it is past.
    fn timed_out(&mut self, first: bool) -> bool {
        let now = Instant::now();
        if first {
            self.deadline = self.timeout.map(|t| now + t);
            return false;
        }
        self.deadline.is_some_and(|d| now >= d)
    }

    fn conn(&self) -> Option<Conn> {
        match &self.state {
            State::Open(c) => Some(c.clone()),
            _ => None,
        }
    }

    /// `connect(host [, port])` (and `connect_ssl` with `ssl`): 1, or nil and "Can't
    /// connect".
    fn connect(
        &mut self,
        lua: &mlua::Lua,
        first: bool,
        to: (String, Option<i64>),
        ssl: bool,
        hc: bool,
        sni: Option<String>,
    ) -> Ret {
        let (host, port) = to;
        let cant = |lua: &mlua::Lua| vals(lua, vec![Value::Nil, Value::String(lua.create_string("Can't connect")?)]);
        if first {
            if !matches!(self.state, State::New) {
                return cant(lua);
            }
            let to = target(&host, port).map_err(mlua::Error::runtime)?;
            if ssl && hc && super::settings().is_some_and(|s| s.hc_tls.is_none()) {
                // HAProxy 2.6's client has no TLS server then
                super::send_err("httpclient: SSL was disabled (wrong verify/ca-file)!");
                return cant(lua);
            }
            self.hc_tls = ssl && hc;
            if let Some(name) = sni.filter(|_| ssl).and_then(|n| rustls_pki_types::ServerName::try_from(n).ok()) {
                self.tls_name = Some(name);
            } else if ssl {
                let name = match &to {
                    Target::Inet(a) => rustls_pki_types::ServerName::IpAddress(a.ip().into()),
                    Target::Name(n, _) => {
                        rustls_pki_types::ServerName::try_from(n.clone()).map_err(mlua::Error::runtime)?
                    }
                    Target::Unix(_) => rustls_pki_types::ServerName::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()),
                };
                self.tls_name = Some(name);
            }
            // the connection and the TLS handshake
            self.deadline = Some(Instant::now() + self.timeout.unwrap_or(CONNECT_TIMEOUT));
            let (tx, rx) = oneshot::channel();
            let timeout = self.timeout.unwrap_or(CONNECT_TIMEOUT);
            self.state = State::Connecting(rx);
            return wait(
                lua,
                Box::pin(async move {
                    let _ = tx.send(connect(to, timeout, hc).await);
                }),
            );
        }
        match &mut self.state {
            State::Connecting(rx) => match rx.try_recv() {
                Ok(Ok(c)) => {
                    self.state = State::Open(c);
                    if let Some(name) = self.tls_name.take() {
                        let cfg = match super::settings().and_then(|s| s.hc_tls.clone()).filter(|_| self.hc_tls) {
                            Some(c) => c,
                            None => crate::tls::client::verify_none_config().map_err(mlua::Error::runtime)?,
                        };
                        let mut tls = rustls::ClientConnection::new(cfg, name).map_err(mlua::Error::runtime)?;
                        tls.set_buffer_limit(None);
                        self.tls = Some(Box::new(tls));
                    }
                }
                // the attempt failed, or its future was dropped
                _ => {
                    self.state = State::Closed;
                    return cant(lua);
                }
            },
            State::Open(_) => {}
            _ => return cant(lua),
        }
        if self.tls.as_ref().is_some_and(|t| t.is_handshaking()) {
            if self.timed_out(false) {
                self.state = State::Closed;
                return cant(lua);
            }
            match self.pump() {
                Ok(Some((conn, interest))) => return wait(lua, conn.ready(interest, self.deadline)),
                Ok(None) => {}
                Err(_) => {
                    self.state = State::Closed;
                    return cant(lua);
                }
            }
        }
        vals(lua, vec![Value::Integer(1)])
    }

    /// Moves the TLS session on without waiting: writes what it has to send, reads
    /// while the handshake needs it. `Some`: what to wait for.
    fn pump(&mut self) -> io::Result<Option<(Conn, Interest)>> {
        let (Some(conn), Some(tls)) = (self.conn(), self.tls.as_mut()) else { return Ok(None) };
        loop {
            while tls.wants_write() {
                match tls.write_tls(&mut NoWait(&conn)) {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Some((conn, Interest::WRITABLE))),
                    Err(e) => return Err(e),
                }
            }
            if !tls.is_handshaking() {
                return Ok(None);
            }
            match tls.read_tls(&mut NoWait(&conn)) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(_) => {
                    tls.process_new_packets().map_err(io::Error::other)?;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Some((conn, Interest::READABLE))),
                Err(e) => return Err(e),
            }
        }
    }

    /// [`fill`](Self::fill) through the TLS session.
    fn fill_tls(&mut self, conn: &Conn) -> bool {
        let before = self.rbuf.len();
        let tls = self.tls.as_mut().expect("a TLS socket");
        let mut chunk = [0u8; 16 * 1024];
        loop {
            // the plaintext already decrypted first
            loop {
                match io::Read::read(&mut tls.reader(), &mut chunk) {
                    Ok(0) => {
                        self.eof = true;
                        return true;
                    }
                    Ok(n) => self.rbuf.extend_from_slice(&chunk[..n]),
                    Err(_) => break,
                }
            }
            if self.rbuf.len() >= RECV_MAX {
                self.eof = true;
                return true;
            }
            match tls.read_tls(&mut NoWait(conn)) {
                Ok(0) => {
                    self.eof = true;
                    return true;
                }
                Ok(_) => {
                    if tls.process_new_packets().is_err() {
                        self.eof = true;
                        return true;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return self.rbuf.len() > before,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.eof = true;
                    return true;
                }
            }
        }
    }

    /// Takes what `want` asks from the received bytes, if there is enough.
    fn take(&mut self, want: Want) -> Option<Vec<u8>> {
        match want {
            Want::Line => {
                let i = self.rbuf.iter().position(|&b| b == b'\n')?;
                let mut line: Vec<u8> = self.rbuf.drain(..=i).collect();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                Some(line)
            }
            Want::All => self.eof.then(|| std::mem::take(&mut self.rbuf)),
            Want::Bytes(n) => (self.rbuf.len() >= n).then(|| self.rbuf.drain(..n).collect()),
        }
    }

    /// Reads what is there without waiting; `false` when nothing came and the socket
    /// would block.
    fn fill(&mut self) -> bool {
        let Some(conn) = self.conn() else {
            self.eof = true;
            return true;
        };
        if self.tls.is_some() {
            return self.fill_tls(&conn);
        }
        let mut chunk = [0u8; 16 * 1024];
        let before = self.rbuf.len();
        loop {
            if self.rbuf.len() >= RECV_MAX {
                self.eof = true;
                return true;
            }
            match conn.try_read(&mut chunk) {
                Ok(0) => {
                    self.eof = true;
                    return true;
                }
                Ok(n) => self.rbuf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return self.rbuf.len() > before,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.eof = true;
                    return true;
                }
            }
        }
    }

    /// `receive([pattern [, prefix]])`: HAProxy's semantics: a line without its
    /// CRLF, everything up to the close, or a count of bytes; at the close, what was
    /// read so far, else nil and "connection closed.".
    fn receive(&mut self, lua: &mlua::Lua, first: bool, want: Want, prefix: Vec<u8>) -> Ret {
        if self.timed_out(first) {
            self.state = State::Closed;
            self.eof = true;
        }
        loop {
            if let Some(mut got) = self.take(want) {
                if matches!(want, Want::All) && got.is_empty() {
                    return closed(lua, prefix);
                }
                let mut out = prefix;
                out.append(&mut got);
                return vals(lua, vec![Value::String(lua.create_string(out)?)]);
            }
            if self.eof {
                let mut out = prefix;
                out.append(&mut self.rbuf);
                return closed(lua, out);
            }
            if !self.fill() {
                break;
            }
        }
        let conn = self.conn().expect("an open socket would block");
        wait(lua, conn.ready(Interest::READABLE, self.deadline))
    }

    /// `send(data)`: the number of bytes sent once all are, -1 if the connection is
    /// closed.
    fn send(&mut self, lua: &mlua::Lua, first: bool, data: &[u8]) -> Ret {
        let Some(conn) = self.conn() else { return vals(lua, vec![Value::Integer(-1)]) };
        if first {
            self.wbuf = data.to_vec();
            self.timed_out(true);
        } else if self.timed_out(false) {
            self.state = State::Closed;
            return vals(lua, vec![Value::Integer(-1)]);
        }
        let total = data.len() as i64;
        if let Some(tls) = self.tls.as_mut() {
            if first {
                // unlimited buffer: the whole plaintext is taken
                let _ = io::Write::write_all(&mut tls.writer(), data);
                self.wbuf.clear();
            }
            return match self.pump() {
                Ok(Some((conn, interest))) => wait(lua, conn.ready(interest, self.deadline)),
                Ok(None) => vals(lua, vec![Value::Integer(total)]),
                Err(_) => {
                    self.state = State::Closed;
                    vals(lua, vec![Value::Integer(-1)])
                }
            };
        }
        while !self.wbuf.is_empty() {
            match conn.try_write(&self.wbuf) {
                Ok(n) => drop(self.wbuf.drain(..n)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return wait(lua, conn.ready(Interest::WRITABLE, self.deadline));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.state = State::Closed;
                    return vals(lua, vec![Value::Integer(-1)]);
                }
            }
        }
        vals(lua, vec![Value::Integer(total)])
    }

    fn settimeout(&mut self, t: f64) -> mlua::Result<i64> {
        let ms = t * 1000.0;
        if ms < 0.0 {
            return Err(mlua::Error::runtime("settimeout: cannot set negatives values"));
        }
        if ms > f64::from(i32::MAX) {
            return Err(mlua::Error::runtime(format!("settimeout: cannot set values larger than {} ms", i32::MAX)));
        }
        self.timeout = Some(Duration::from_millis((ms as u64).max(1)));
        Ok(1)
    }
}

/// `receive`'s pattern: "*l" (the default), "*a", or a count.
fn want(v: &Value) -> mlua::Result<Want> {
    match v {
        Value::Nil => Ok(Want::Line),
        Value::String(s) => match &*s.as_bytes() {
            b"*a" => Ok(Want::All),
            b"*l" => Ok(Want::Line),
            other => std::str::from_utf8(other)
                .ok()
                .and_then(|t| t.parse::<usize>().ok())
                .map(Want::Bytes)
                .ok_or_else(|| mlua::Error::runtime("Unsupported pattern.")),
        },
        Value::Integer(n) if *n >= 0 => Ok(Want::Bytes(*n as usize)),
        Value::Number(n) if *n >= 0.0 => Ok(Want::Bytes(*n as usize)),
        Value::Integer(_) | Value::Number(_) => Err(mlua::Error::runtime("Unsupported size.")),
        _ => Ok(Want::Line),
    }
}

/// `connect`'s arguments: whether this is the first call (not a resume), host, port,
/// TLS, whether the HTTP client calls, and its TLS server name (the URL's host).
type ConnectArgs = (bool, String, Option<i64>, Option<bool>, Option<bool>, Option<String>);

impl UserData for LuaSock {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method_mut("connect", |lua, s, (first, host, port, ssl, hc, sni): ConnectArgs| {
            s.connect(lua, first, (host, port), ssl == Some(true), hc == Some(true), sni)
        });
        m.add_method_mut("receive", |lua, s, (first, pat, prefix): (bool, Value, Option<mlua::String>)| {
            let want = want(&pat)?;
            let prefix = prefix.map(|p| p.as_bytes().to_vec()).unwrap_or_default();
            s.receive(lua, first, want, prefix)
        });
        m.add_method_mut("send", |lua, s, (first, data): (bool, mlua::String)| s.send(lua, first, &data.as_bytes()));
        m.add_method_mut("settimeout", |_, s, t: f64| s.settimeout(t));
        m.add_method_mut("close", |_, s, ()| {
            s.state = State::Closed;
            Ok(())
        });
        m.add_method("getpeername", |_, s, ()| Ok(s.conn().and_then(|c| c.name(true))));
        m.add_method("getsockname", |_, s, ()| Ok(s.conn().and_then(|c| c.name(false))));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_as_haproxy_reads_them() {
        assert!(matches!(target("127.0.0.1", Some(80)), Ok(Target::Inet(a)) if a.to_string() == "127.0.0.1:80"));
        assert!(matches!(target("127.0.0.1:81", None), Ok(Target::Inet(a)) if a.port() == 81));
        assert!(matches!(target("::1", Some(80)), Ok(Target::Inet(a)) if a.to_string() == "[::1]:80"));
        assert!(matches!(target("unix@/tmp/x.sock", None), Ok(Target::Unix(p)) if p.to_str() == Some("/tmp/x.sock")));
        assert!(matches!(target("example.invalid", Some(25)), Ok(Target::Name(n, 25)) if n == "example.invalid"));
        assert_eq!(target("127.0.0.1", None).err().as_deref(), Some("connect: port missing"));
        assert!(target("1.2.3.4", Some(70000)).is_err());
    }

    #[test]
    fn lines_drop_their_crlf_and_counts_wait_for_enough() {
        let mut s = LuaSock::new();
        s.rbuf = b"a\r\nb\nrest".to_vec();
        assert_eq!(s.take(Want::Line).as_deref(), Some(&b"a"[..]));
        assert_eq!(s.take(Want::Line).as_deref(), Some(&b"b"[..]));
        assert_eq!(s.take(Want::Line), None);
        assert_eq!(s.take(Want::Bytes(5)), None);
        assert_eq!(s.take(Want::Bytes(4)).as_deref(), Some(&b"rest"[..]));
        assert_eq!(s.take(Want::All), None);
        s.eof = true;
        assert_eq!(s.take(Want::All).as_deref(), Some(&b""[..]));
    }
}
