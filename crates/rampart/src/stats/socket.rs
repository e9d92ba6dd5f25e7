//! `stats socket` listeners: bound with the other listeners (before chroot and the
//! privilege drop), with their `mode`, `user`/`uid`, `group`/`gid` and `level`; served
//! on the worker's main thread. Each connection is a CLI session: one line of
//! `;`-separated commands then close (one-shot), or line after line behind a `> `
//! prompt once `prompt` was sent. A session idle for `stats timeout`, or sending a
//! line longer than [`MAX_LINE`], is closed; at most `stats maxconn` sessions per socket
//! are served at once, the others wait in the backlog. HAProxy counterpart: cli.c
//! (cli_io_handler, bind_parse_level), sock_unix.c.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use rampart_cfg::model::{ListenAddr, StatsSocket};
use rampart_cfg::{Config, Diag};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Semaphore;

use super::cmd::{run_line, Level, Session};
use super::Cli;

/// The longest command line a session may send (HAProxy's buffer size).
pub const MAX_LINE: usize = 16384;

/// One bound `stats socket`.
#[derive(Debug)]
pub struct CliListener {
    sock: Bound,
    level: Level,
    /// `expose-fd listeners`: `_getsocks` hands out the listening sockets.
    expose_fd: bool,
}

#[derive(Debug)]
enum Bound {
    Unix(std::os::unix::net::UnixListener),
    Tcp(std::net::TcpListener),
}

/// The options of a `stats socket` line that rampart acts on.
#[derive(Debug, Default)]
struct Options {
    level: Option<Level>,
    mode: Option<u32>,
    uid: Option<u32>,
    gid: Option<u32>,
    /// `expose-fd listeners`: `_getsocks` hands out the listening sockets.
    expose_fd: bool,
}

/// Binds every `stats socket` of `cfg`. Returns the listeners, or alerts (one per
/// socket that could not be set up). What [`check`] refuses is refused here too.
pub fn bind_all(cfg: &Config) -> Result<Vec<CliListener>, Vec<String>> {
    let (mut out, mut alerts) = (Vec::new(), Vec::new());
    for s in &cfg.global.stats_sockets {
        let opts = options(s).map_err(|what| format!("parsing [{}] : {}", s.span, not_yet(&what)));
        match opts.and_then(|o| bind_one(s, &o).map(|sock| (sock, o))) {
            Ok((sock, o)) => {
                out.push(CliListener { sock, level: o.level.unwrap_or(Level::Operator), expose_fd: o.expose_fd })
            }
            Err(msg) => alerts.push(msg),
        }
    }
    if alerts.is_empty() {
        Ok(out)
    } else {
        Err(alerts)
    }
}

/// The configuration checks of the stats sockets (with `-c` too): what rampart cannot do
/// yet is refused.
pub fn check(cfg: &Config) -> Vec<Diag> {
    let mut out = Vec::new();
    for s in &cfg.global.stats_sockets {
        if let Err(what) = options(s) {
            out.push(Diag::alert(Some(s.span.clone()), not_yet(&what)));
        }
    }
    out
}

/// Whether a `stats socket` of `cfg` has `expose-fd listeners` (then the listening
/// sockets are kept for `_getsocks`).
pub fn exposes_fds(cfg: &Config) -> bool {
    cfg.global.stats_sockets.iter().any(|s| options(s).is_ok_and(|o| o.expose_fd))
}

fn not_yet(what: &str) -> String {
    format!("'{what}' is not supported yet")
}

/// Reads the options of `s` (their values were checked by the parser); `Err` names an
/// option rampart does not support.
fn options(s: &StatsSocket) -> Result<Options, String> {
    let mut o = Options::default();
    let mut i = 0;
    let words = &s.options;
    while let Some(word) = words.get(i) {
        let value = words.get(i + 1).map(String::as_str).unwrap_or("");
        let args = rampart_cfg::kw::bind_option(word).map_or(0, |k| k.args);
        match word.as_str() {
            "level" => o.level = Level::parse(value),
            "mode" => o.mode = u32::from_str_radix(value, 8).ok(),
            "uid" => o.uid = value.parse().ok(),
            "gid" => o.gid = value.parse().ok(),
            "user" => o.uid = nix::unistd::User::from_name(value).ok().flatten().map(|u| u.uid.as_raw()),
            "group" => o.gid = nix::unistd::Group::from_name(value).ok().flatten().map(|g| g.gid.as_raw()),
            // only names the socket in `show cli sockets`
            "name" => {}
            "expose-fd" => o.expose_fd = true,
            "severity-output" if value == "none" => {}
            other => return Err(format!("stats socket ... {other}")),
        }
        i += 1 + args;
    }
    Ok(o)
}

fn bind_one(s: &StatsSocket, o: &Options) -> Result<Bound, String> {
    let fail = |what: String| format!("Binding [{}] for proxy GLOBAL: {what}", s.span);
    match &s.addr {
        ListenAddr::Unix(path) => bind_unix(path, o)
            .map(Bound::Unix)
            .map_err(|e| fail(format!("cannot bind UNIX socket ({}) [{}]", errno_text(&e), path.display()))),
        ListenAddr::Inet(sa) => bind_tcp(*sa)
            .map(Bound::Tcp)
            .map_err(|e| fail(format!("cannot bind socket ({}) for [{}:{}]", errno_text(&e), sa.ip(), sa.port()))),
        ListenAddr::Fd(n) => {
            adopt_fd(*n).map_err(|e| fail(format!("cannot use inherited socket fd@{n} ({})", errno_text(&e))))
        }
    }
}

/// An inherited socket already listening (`fd@N`: how VTest hands its CLI socket to the
/// proxy under test), checked before it is owned, as the `bind fd@N` listeners are.
fn adopt_fd(n: i32) -> io::Result<Bound> {
    use crate::io::Family;
    let (fd, family) = crate::sys::adopt_inherited_fd(n, crate::io::socket_family)?;
    Ok(match family {
        Family::Unix => Bound::Unix(std::os::unix::net::UnixListener::from(fd)),
        Family::Inet => Bound::Tcp(std::net::TcpListener::from(fd)),
    })
}

/// Binds a TCP socket; `SO_REUSEPORT` as for the other listeners, so that a new
/// process started with `-sf` binds it while the old one still holds it.
fn bind_tcp(sa: std::net::SocketAddr) -> io::Result<std::net::TcpListener> {
    let sock =
        socket2::Socket::new(socket2::Domain::for_address(sa), socket2::Type::STREAM.nonblocking().cloexec(), None)?;
    sock.set_reuse_address(true)?;
    sock.set_reuse_port(true)?;
    sock.bind(&sa.into())?;
    sock.listen(128)?;
    Ok(sock.into())
}

/// Binds a unix socket in place of a stale one, then applies `mode` and ownership.
fn bind_unix(path: &Path, o: &Options) -> io::Result<std::os::unix::net::UnixListener> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        use std::os::unix::fs::FileTypeExt;
        if meta.file_type().is_socket() {
            let _ = std::fs::remove_file(path);
        }
    }
    let l = std::os::unix::net::UnixListener::bind(path)?;
    l.set_nonblocking(true)?;
    if let Some(mode) = o.mode {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    }
    if o.uid.is_some() || o.gid.is_some() {
        nix::unistd::chown(path, o.uid.map(nix::unistd::Uid::from_raw), o.gid.map(nix::unistd::Gid::from_raw))
            .map_err(io::Error::from)?;
    }
    Ok(l)
}

fn errno_text(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(n) => nix::errno::Errno::from_raw(n).desc().to_string(),
        None => e.to_string(),
    }
}

/// Resolves once a soft stop began (checked a few times a second: not a hot path).
/// The sockets kept for `_getsocks` are let go then.
async fn stopping(cli: &Cli) {
    while !cli.rt.global.is_stopping() {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    cli.exported.clear();
}

/// Accepts CLI sessions on `l` until a soft stop begins: then the socket closes (the
/// new process of a reload serves it), as HAProxy closes its listeners.
pub async fn serve(l: CliListener, cli: Arc<Cli>) {
    let slots = Arc::new(Semaphore::new(cli.maxconn as usize));
    let level = l.level;
    match l.sock {
        Bound::Unix(std) => {
            let Ok(listener) = tokio::net::UnixListener::from_std(std) else { return };
            loop {
                let Ok(permit) = slots.clone().acquire_owned().await else { return };
                let accepted = tokio::select! {
                    a = listener.accept() => a,
                    () = stopping(&cli) => return,
                };
                if let Ok((conn, _)) = accepted {
                    let cli = cli.clone();
                    // (a unix socket only: descriptors do not cross TCP)
                    let xfer =
                        if l.expose_fd { std::os::fd::AsFd::as_fd(&conn).try_clone_to_owned().ok() } else { None };
                    tokio::spawn(async move {
                        session_with_fds(conn, &cli, level, xfer).await;
                        drop(permit);
                    });
                }
            }
        }
        Bound::Tcp(std) => {
            let Ok(listener) = tokio::net::TcpListener::from_std(std) else { return };
            loop {
                let Ok(permit) = slots.clone().acquire_owned().await else { return };
                let accepted = tokio::select! {
                    a = listener.accept() => a,
                    () = stopping(&cli) => return,
                };
                if let Ok((conn, _)) = accepted {
                    let cli = cli.clone();
                    tokio::spawn(async move {
                        session(conn, &cli, level).await;
                        drop(permit);
                    });
                }
            }
        }
    }
}

/// One CLI session, until `quit`, the end of a one-shot line, the peer closing, a
/// timeout or an overlong line.
pub async fn session<S: AsyncRead + AsyncWrite + Unpin + Send>(conn: S, cli: &Cli, level: Level) {
    session_with_fds(conn, cli, level, None).await;
}

/// A session on a unix socket with `expose-fd listeners`: `xfer` is a `dup()` of its
/// socket, on which `_getsocks` hands out the listening sockets.
async fn session_with_fds<S: AsyncRead + AsyncWrite + Unpin + Send>(
    conn: S,
    cli: &Cli,
    level: Level,
    mut xfer: Option<std::os::fd::OwnedFd>,
) {
    cli.sessions.fetch_add(1, Ordering::Relaxed);
    cli.cum_sessions.fetch_add(1, Ordering::Relaxed);
    let (rd, mut wr) = tokio::io::split(conn);
    let mut rd = BufReader::new(rd);
    let mut sess =
        Session { level, prompt: false, timeout: cli.timeout, quit: false, payload: None, experimental: false };
    let mut line = Vec::with_capacity(256);
    loop {
        line.clear();
        let mut bounded = (&mut rd).take(MAX_LINE as u64);
        let read = tokio::time::timeout(sess.timeout, bounded.read_until(b'\n', &mut line));
        match read.await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break,
            Ok(Ok(_)) if line.len() >= MAX_LINE && line.last() != Some(&b'\n') => break,
            Ok(Ok(_)) => {}
        }
        let text = String::from_utf8_lossy(&line).into_owned();
        let mut text = text.trim_end_matches(['\n', '\r']);
        if let Some(cmd) = text.strip_suffix("<<") {
            text = cmd;
            match tokio::time::timeout(sess.timeout, read_payload(&mut rd)).await {
                Ok(Some(p)) => sess.payload = Some(p),
                _ => break,
            }
        }
        if text.trim() == "_getsocks" {
            // COMPAT: as HAProxy's `_getsocks`, the session ends after the transfer,
            // and a socket without `expose-fd listeners` ends it without an answer.
            if let Some(conn) = xfer.take() {
                send_sockets(cli, conn).await;
            }
            break;
        }
        let mut out = String::new();
        let timeout = sess.timeout;
        run_line(cli, &mut sess, text, &mut out, &mut CliIn { rd: &mut rd, timeout }).await;
        sess.payload = None;
        if sess.prompt && !sess.quit {
            out.push_str("> ");
        }
        let sent = tokio::time::timeout(sess.timeout, wr.write_all(out.as_bytes())).await;
        if !matches!(sent, Ok(Ok(()))) || sess.quit || !sess.prompt {
            break;
        }
    }
    let _ = wr.shutdown().await;
    cli.sessions.fetch_sub(1, Ordering::Relaxed);
}

/// What a Lua command reads of the session (what the client sends after it).
struct CliIn<'a, R> {
    rd: &'a mut BufReader<R>,
    timeout: std::time::Duration,
}

impl<R: AsyncRead + Unpin + Send> crate::lua::cli::CliInput for CliIn<'_, R> {
    fn next(&mut self) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<Vec<u8>>> + Send + '_>> {
        Box::pin(async move {
            let data = tokio::time::timeout(self.timeout, self.rd.fill_buf()).await.ok()?.ok()?;
            if data.is_empty() {
                return None;
            }
            let data = data.to_vec();
            self.rd.consume(data.len());
            Some(data)
        })
    }
}

/// Answers `_getsocks` on `conn` off the event loop (the transfer blocks, each step
/// for at most a second); a failure gets HAProxy's warning.
async fn send_sockets(cli: &Cli, conn: std::os::fd::OwnedFd) {
    let socks = match cli.exported.dups() {
        Ok(socks) => socks,
        Err(_) => return eprintln!("[WARNING]  ({}) : Failed to transfer sockets", std::process::id()),
    };
    let sent = tokio::task::spawn_blocking(move || crate::io::xfer::send(&conn, &socks)).await;
    if !matches!(sent, Ok(Ok(()))) {
        eprintln!("[WARNING]  ({}) : Failed to transfer sockets", std::process::id());
    }
}

/// The payload after a line ending with `<<`: the lines up to an empty one (or the
/// end of the input), at most [`MAX_LINE`] bytes in all; `None` past that size or on
/// a read error. HAProxy counterpart: the payload pattern of cli_parse_request().
async fn read_payload<R: AsyncRead + Unpin>(rd: &mut BufReader<R>) -> Option<String> {
    let mut payload = Vec::new();
    loop {
        let start = payload.len();
        let mut bounded = (&mut *rd).take((MAX_LINE - start.min(MAX_LINE)) as u64);
        let n = bounded.read_until(b'\n', &mut payload).await.ok()?;
        let line = &payload[start..];
        if n == 0 || line == b"\n" || line == b"\r\n" {
            payload.truncate(start);
            return Some(String::from_utf8_lossy(&payload).into_owned());
        }
        if payload.len() >= MAX_LINE && payload.last() != Some(&b'\n') {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cli() -> Cli {
        let ctx = rampart_cfg::LexCtx { env: &|_| None, version: "2.6", features: &[] };
        let text =
            "global\n stats socket /tmp/x.sock\ndefaults\n mode http\nfrontend fe\n bind :80\n default_backend be\n\
                    backend be\n server s1 127.0.0.1:1\n server s2 127.0.0.1:2 weight 3 disabled\n";
        let cfg = rampart_cfg::parse_str("t.cfg", text, &ctx).config.expect("valid");
        let rt = crate::build::build(&cfg, 100, 1).expect("built");
        Cli::new(Arc::new(cfg), Arc::new(rt))
    }

    /// What a session answers to `input`.
    async fn talk(cli: &Cli, level: Level, input: &str) -> String {
        let (mut client, server) = tokio::io::duplex(1 << 20);
        client.write_all(input.as_bytes()).await.unwrap();
        client.shutdown().await.unwrap();
        session(server, cli, level).await;
        let mut out = String::new();
        client.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn a_one_shot_line_runs_its_commands_then_closes() {
        let cli = cli();
        let out = talk(&cli, Level::Admin, "show backend; show backend\nshow backend\n").await;
        assert_eq!(out, "# name\nbe\n\n# name\nbe\n\n");
    }

    #[tokio::test]
    async fn prompt_mode_answers_line_after_line_until_quit() {
        let cli = cli();
        let out = talk(&cli, Level::Admin, "prompt\nshow backend\nset timeout cli 5\nquit\nshow backend\n").await;
        assert_eq!(out, "\n> # name\nbe\n\n> \n> ");
    }

    #[tokio::test]
    async fn a_command_above_the_level_is_denied() {
        let cli = cli();
        assert_eq!(talk(&cli, Level::User, "show env\n").await, "Permission denied\n\n");
        assert_eq!(talk(&cli, Level::User, "operator\n").await, "Permission denied\n\n");
        assert!(talk(&cli, Level::Operator, "show env PATH\n").await.starts_with("PATH="));
    }

    #[tokio::test]
    async fn show_startup_logs_needs_operator_and_shows_the_recorded_lines() {
        let cli = cli();
        assert_eq!(talk(&cli, Level::User, "show startup-logs\n").await, "Permission denied\n\n");
        crate::process::startup_log::record("[WARNING]  (1) : a startup warning\n");
        let out = talk(&cli, Level::Operator, "show startup-logs\n").await;
        assert!(out.contains("[WARNING]  (1) : a startup warning\n") && out.ends_with("\n\n"), "{out}");
    }

    #[tokio::test]
    async fn unknown_and_missing_commands_are_told_apart() {
        let cli = cli();
        let out = talk(&cli, Level::Admin, "bogus\n").await;
        assert!(out.starts_with("Unknown command, but maybe one of the following ones is a better match:\n"), "{out}");
        assert!(out.ends_with("  quit                                    : disconnect\n\n"), "{out}");
        let out = talk(&cli, Level::Admin, "set maxconn server be/s1 3\n").await;
        assert_eq!(out, "'set maxconn server' is not supported yet.\n\n");
        let out = talk(&cli, Level::Admin, "set server be/s1 check-addr 1.2.3.4\n").await;
        assert_eq!(out, "'set server <srv> check-addr' is not supported yet.\n\n");
        assert_eq!(talk(&cli, Level::Admin, "set server be/s1 state drain\n").await, "\n");
    }

    #[tokio::test]
    async fn servers_state_and_stat_rows_describe_the_configuration() {
        let cli = cli();
        let out = talk(&cli, Level::Admin, "show servers state\n").await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "1");
        assert!(lines[2].starts_with("3 be 1 s1 127.0.0.1 2 0 1 1 "), "{out}");
        assert!(lines[3].starts_with("3 be 2 s2 127.0.0.1 0 5 3 3 "), "{out}");
        assert!(lines[2].ends_with(" 1 0 2 0 0 0 0 - 1 - 0 0 - - 0"), "{out}");
        let out = talk(&cli, Level::Admin, "show stat\n").await;
        let rows: Vec<Vec<&str>> =
            out.lines().skip(1).filter(|l| !l.is_empty()).map(|l| l.split(',').collect()).collect();
        assert_eq!(rows.len(), 4, "{out}");
        assert_eq!(&rows[0][..2], ["fe", "FRONTEND"]);
        assert_eq!((rows[1][1], rows[1][17], rows[1][18]), ("s1", "no check", "1"));
        assert_eq!((rows[2][1], rows[2][17], rows[2][18]), ("s2", "MAINT", "3"));
        assert_eq!((rows[3][1], rows[3][17], rows[3][18], rows[3][19]), ("BACKEND", "UP", "1", "1"));
        assert!(rows.iter().all(|r| r.len() == 129 && r[103] == "-"));
        let user = talk(&cli, Level::User, "show stat -1 4 -1\n").await;
        assert_eq!(user.lines().filter(|l| !l.is_empty()).count(), 3, "{user}");
        assert!(!user.contains("127.0.0.1:1"), "user level hides addresses: {user}");
    }

    /// The `show servers state` line of `srv`, from `srv_op_state` to `srv_agent_state`
    /// without `srv_time_since_last_change`.
    async fn state_of(cli: &Cli, srv: &str) -> String {
        let out = talk(cli, Level::Admin, "show servers state be\n").await;
        let line = out.lines().find(|l| l.split(' ').nth(3) == Some(srv)).expect("a line").to_owned();
        let w: Vec<&str> = line.split(' ').collect();
        [&w[5..9], &w[10..15]].concat().join(" ")
    }

    #[tokio::test]
    async fn server_commands_move_the_admin_and_operational_states() {
        let cli = cli();
        assert_eq!(state_of(&cli, "s1").await, "2 0 1 1 1 0 2 0 0");
        assert_eq!(state_of(&cli, "s2").await, "0 5 3 3 1 0 0 8 0");
        assert_eq!(talk(&cli, Level::Operator, "disable server be/s1\n").await, "Permission denied\n\n");
        assert_eq!(
            talk(&cli, Level::Admin, "disable server be/s1; disable server fe/s1\n").await,
            "\nNo such backend.\n\n"
        );
        assert_eq!(state_of(&cli, "s1").await, "0 1 1 1 1 0 2 0 0");
        assert!(!cli.rt.proxies[1].be.servers[0].state.is_usable());
        // leaving maintenance keeps the configured one (CMAINT) as HAProxy does
        assert_eq!(talk(&cli, Level::Admin, "enable server be/s1; enable server be/s2\n").await, "\n\n");
        assert_eq!(state_of(&cli, "s1").await, "2 0 1 1 1 0 2 0 0");
        assert_eq!(state_of(&cli, "s2").await, "2 4 3 3 1 0 0 8 0");
        assert_eq!(talk(&cli, Level::Admin, "set server be/s1 state drain\n").await, "\n");
        assert_eq!(state_of(&cli, "s1").await, "2 8 1 1 1 0 2 0 0");
        assert_eq!(
            talk(&cli, Level::Admin, "set server be/s1 state ready; set server be/s1 health down\n").await,
            "\n\n"
        );
        assert_eq!(state_of(&cli, "s1").await, "0 0 1 1 1 0 0 0 0");
        assert_eq!(talk(&cli, Level::Admin, "set server be/s1 health stopping\n").await, "\n");
        assert_eq!(state_of(&cli, "s1").await, "3 0 1 1 1 0 4 0 0");
        assert_eq!(talk(&cli, Level::Admin, "set weight be/s2 50%; get weight be/s2\n").await, "\n1 (initial 3)\n\n");
        assert_eq!(state_of(&cli, "s2").await, "2 4 1 3 1 0 0 8 0");
        assert_eq!(
            talk(&cli, Level::Admin, "enable health be/s1\n").await,
            "Health check was not configured on this server, cannot enable.\n\n"
        );
    }

    #[tokio::test]
    async fn an_idle_session_is_closed_at_the_timeout() {
        let mut cli = cli();
        cli.timeout = std::time::Duration::from_millis(50);
        let (_client, server) = tokio::io::duplex(1024);
        let done = tokio::time::timeout(std::time::Duration::from_secs(5), session(server, &cli, Level::Admin));
        assert!(done.await.is_ok());
    }

    #[test]
    fn options_rampart_lacks_are_refused_and_expose_fd_is_served() {
        let ctx = rampart_cfg::LexCtx { env: &|_| None, version: "2.6", features: &[] };
        let text = "global\n stats socket /tmp/a.sock accept-proxy\n stats socket /tmp/b.sock level admin \
                    expose-fd listeners\n stats socket /tmp/c.sock mode 600 user root name x\n";
        let cfg = rampart_cfg::parse_str("t.cfg", text, &ctx).config.expect("valid");
        let got: Vec<(rampart_cfg::Level, String)> = check(&cfg).into_iter().map(|d| (d.level, d.message)).collect();
        assert_eq!(got, [(rampart_cfg::Level::Alert, "'stats socket ... accept-proxy' is not supported yet".into())]);
        assert!(exposes_fds(&cfg));
        let text = "global\n stats socket /tmp/b.sock level admin\n";
        assert!(!exposes_fds(&rampart_cfg::parse_str("t.cfg", text, &ctx).config.expect("valid")));
    }

    #[tokio::test]
    async fn a_payload_runs_to_the_empty_line_and_goes_to_its_command() {
        let mut rd = BufReader::new(&b"l1\nl2\n\nnext\n"[..]);
        assert_eq!(read_payload(&mut rd).await.as_deref(), Some("l1\nl2\n"));
        let mut rest = String::new();
        rd.read_to_string(&mut rest).await.unwrap();
        assert_eq!(rest, "next\n");
        let mut rd = BufReader::new(&b"l1\n"[..]);
        assert_eq!(read_payload(&mut rd).await.as_deref(), Some("l1\n"));
        let cli = cli();
        let out = talk(&cli, Level::Admin, "set ssl cert x.pem <<\n-----BEGIN X-----\n\n").await;
        assert_eq!(
            out,
            "Can't replace a certificate which is not referenced by the configuration!\nCan't update x.pem!\n\n"
        );
        let out = talk(&cli, Level::Admin, "set ssl cert x.pem\n").await;
        assert_eq!(out, "'set ssl cert expects a filename and a certificate as a payload\n\n");
        assert_eq!(talk(&cli, Level::Operator, "set ssl cert x.pem\n").await, "Permission denied\n\n");
        assert_eq!(talk(&cli, Level::Admin, "show ssl cert\n").await, "# filename\n\n");
    }

    #[tokio::test]
    async fn an_endless_line_is_cut_off() {
        let cli = cli();
        let long = "x".repeat(MAX_LINE + 10);
        assert_eq!(talk(&cli, Level::Admin, &long).await, "");
    }
}
