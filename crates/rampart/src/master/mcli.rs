//! The master CLI (`-S <addr>[,<options>]`, `fd@N` too): `show proc`, `reload`, `show version`,
//! `show startup-logs` (HAProxy 3.x's: the latest startup or reload attempt, beyond 2.6),
//! `help`, `prompt`, `quit`, and the routing prefixes `@<n>` (the n-th current worker),
//! `@!<pid>` (any worker, old ones too) and `@master`. A routed command runs in the
//! worker's own CLI, over a socket pair the master passes on the worker's channel.
//! HAProxy counterpart: src/mworker.c (`show proc`, `reload`) and the master CLI proxy
//! of src/cli.c (`pcli_*`).

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

use super::ipc::{self, Channel};
use super::state::{uptime, Phase, State};

/// What a CLI session asks of the supervisor.
#[derive(Debug)]
pub enum Request {
    /// `show proc`: the table.
    ShowProc(oneshot::Sender<String>),
    /// `reload`.
    Reload,
    /// `show startup-logs`: the messages of the latest startup or reload attempt.
    StartupLogs(oneshot::Sender<String>),
    /// The channel of a routing target (`@1`, `@!1234`).
    Route(Target, oneshot::Sender<Option<Arc<Channel>>>),
}

/// Where a routed command goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `@<n>`: the n-th worker not leaving, newest first (1-based).
    Relative(usize),
    /// `@!<pid>`.
    Pid(i32),
}

/// A parsed `-S` argument: the socket and what rampart acts on of its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// The address as typed (the key of the socket across reloads).
    pub addr: String,
    pub mode: Option<u32>,
}

/// Reads `<addr>[,<option words>]`. `Err`: an alert.
pub fn parse_spec(text: &str) -> Result<Spec, String> {
    let mut parts = text.split(',');
    let addr = parts.next().unwrap_or_default().trim().to_owned();
    if addr.is_empty() {
        return Err(format!("-S : missing address in '{text}'"));
    }
    let mut spec = Spec { addr, mode: None };
    for opt in parts {
        let words: Vec<&str> = opt.split_whitespace().collect();
        match words.as_slice() {
            ["mode", m] => {
                spec.mode = Some(u32::from_str_radix(m, 8).map_err(|_| format!("-S : invalid mode '{m}'"))?);
            }
            // COMPAT: every master CLI session is admin, as HAProxy's default.
            ["level", "admin"] => {}
            [] => {}
            _ => return Err(format!("-S : '{}' is not supported yet", opt.trim())),
        }
    }
    Ok(spec)
}

/// A bound master CLI socket.
#[derive(Debug)]
pub enum Bound {
    Unix(std::os::unix::net::UnixListener),
    Tcp(std::net::TcpListener),
}

impl Bound {
    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self {
            Bound::Unix(l) => l.as_fd(),
            Bound::Tcp(l) => l.as_fd(),
        }
    }

    /// A socket inherited across a re-exec.
    pub fn adopt(fd: OwnedFd) -> Bound {
        match crate::io::socket_family(fd.as_fd()) {
            Ok(crate::io::Family::Inet) => Bound::Tcp(fd.into()),
            _ => Bound::Unix(fd.into()),
        }
    }
}

/// Binds `spec` (`/path`, `unix@/path`, `ipv4@ip:port`, `ipv6@ip:port`, `ip:port`), or
/// adopts `fd@N` (a listening socket inherited from the parent, as VTest passes it).
pub fn bind(spec: &Spec) -> io::Result<Bound> {
    let addr = spec.addr.as_str();
    if let Some(n) = addr.strip_prefix("fd@") {
        let n = n.parse().map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "bad fd@ number"))?;
        let (fd, _) = crate::sys::adopt_inherited_fd(n, crate::io::socket_family)?;
        ipc::set_cloexec(fd.as_fd(), true)?;
        return Ok(Bound::adopt(fd));
    }
    let unix = addr.strip_prefix("unix@").or_else(|| addr.starts_with('/').then_some(addr));
    if let Some(path) = unix {
        if std::fs::symlink_metadata(path).is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type())) {
            let _ = std::fs::remove_file(path);
        }
        let l = std::os::unix::net::UnixListener::bind(path)?;
        if let Some(mode) = spec.mode {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
        }
        return Ok(Bound::Unix(l));
    }
    let inet = addr.strip_prefix("ipv4@").or_else(|| addr.strip_prefix("ipv6@")).unwrap_or(addr);
    let sa: std::net::SocketAddr = inet
        .trim_start_matches('[')
        .replace("]:", ":")
        .parse()
        .or_else(|_| inet.parse())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "unsupported address"))?;
    Ok(Bound::Tcp(std::net::TcpListener::bind(sa)?))
}

/// Accepts master CLI sessions forever.
pub async fn serve(l: Bound, requests: mpsc::UnboundedSender<Request>) {
    match l {
        Bound::Unix(std) => {
            let _ = std.set_nonblocking(true);
            let Ok(l) = tokio::net::UnixListener::from_std(std) else { return };
            while let Ok((conn, _)) = l.accept().await {
                tokio::spawn(session(conn, requests.clone()));
            }
        }
        Bound::Tcp(std) => {
            let _ = std.set_nonblocking(true);
            let Ok(l) = tokio::net::TcpListener::from_std(std) else { return };
            while let Ok((conn, _)) = l.accept().await {
                tokio::spawn(session(conn, requests.clone()));
            }
        }
    }
}

const PROMPT: &str = "master> ";

/// One session: a line of `;`-separated commands then close, or line after line
/// behind `master> ` once `prompt` was sent.
async fn session<S: AsyncRead + AsyncWrite + Unpin>(conn: S, requests: mpsc::UnboundedSender<Request>) {
    let (rd, mut wr) = tokio::io::split(conn);
    let mut rd = BufReader::new(rd);
    let mut prompt = false;
    let mut line = String::new();
    loop {
        line.clear();
        match rd.read_line(&mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let text = line.trim_end_matches(['\n', '\r']).trim();
        let mut quit = false;
        // each `;`-separated command goes where its own `@` prefix says (escaped `\;`
        // stay in the command, for the worker to unescape)
        let mut out = String::new();
        for cmd in split_commands(text).iter().map(|c| c.trim()).filter(|c| !c.is_empty()) {
            if let Some(routed) = cmd.strip_prefix('@').filter(|r| !r.starts_with("master")) {
                out.push_str(&route(routed, &requests).await);
                continue;
            }
            match cmd.strip_prefix("@master").unwrap_or(cmd).trim() {
                "" => {}
                "prompt" => prompt = !prompt,
                "quit" => quit = true,
                cmd => out.push_str(&run(cmd, &requests).await),
            }
        }
        let tail = if prompt && !quit { PROMPT } else { "" };
        if wr.write_all(format!("{out}{tail}").as_bytes()).await.is_err() || quit || !prompt {
            let _ = wr.shutdown().await;
            return;
        }
    }
}

/// The commands of a master CLI line: split at the `;` no backslash escapes, the
/// escapes kept.
fn split_commands(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut escaped = false;
    for c in line.chars() {
        let cur = out.last_mut().expect("one command at least");
        match c {
            ';' if !escaped => out.push(String::new()),
            c => {
                cur.push(c);
                escaped = c == '\\' && !escaped;
                continue;
            }
        }
        escaped = false;
    }
    out
}

/// A master command's answer (with its closing empty line).
async fn run(cmd: &str, requests: &mpsc::UnboundedSender<Request>) -> String {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    match words.as_slice() {
        ["show", "proc"] => {
            let (tx, rx) = oneshot::channel();
            let _ = requests.send(Request::ShowProc(tx));
            format!("{}\n", rx.await.unwrap_or_default())
        }
        ["show", "startup-logs"] => {
            let (tx, rx) = oneshot::channel();
            let _ = requests.send(Request::StartupLogs(tx));
            format!("{}\n", rx.await.unwrap_or_default())
        }
        ["show", "version"] => format!("{}\n\n", crate::version::version_string()),
        ["reload"] => {
            let _ = requests.send(Request::Reload);
            String::new()
        }
        ["help", ..] => format!("The following commands are valid at this level:\n{HELP}\n"),
        _ => format!("Unknown command, but maybe one of the following ones is a better match:\n{HELP}\n"),
    }
}

const HELP: &str = "\
  @!<pid>                                 : send a command to the <pid> process
  @<relative pid>                         : send a command to the <relative pid> process
  @master                                 : send a command to the master process
  reload                                  : reload rampart
  show proc                               : show processes status
  show startup-logs                       : show the messages of the latest startup or reload attempt
  show version                            : show version of the current process
  help [<command>]                        : list matching or all commands
  prompt                                  : toggle interactive mode with prompt
  quit                                    : disconnect
";

/// Runs `<target> <command>` in a worker's CLI and returns its whole answer.
async fn route(routed: &str, requests: &mpsc::UnboundedSender<Request>) -> String {
    let (prefix, cmd) = routed.split_once(char::is_whitespace).unwrap_or((routed, ""));
    let target = match prefix.strip_prefix('!') {
        Some(pid) => pid.parse().ok().map(Target::Pid),
        None => prefix.parse().ok().filter(|&n| n > 0).map(Target::Relative),
    };
    let not_found = format!("Can't find the target PID matching the prefix '@{prefix}'\n");
    let Some(target) = target else { return not_found };
    let (tx, rx) = oneshot::channel();
    let _ = requests.send(Request::Route(target, tx));
    let Some(ch) = rx.await.ok().flatten() else { return not_found };
    if cmd.trim().is_empty() {
        return String::new();
    }
    forward(&ch, cmd.trim()).await.unwrap_or_default()
}

async fn forward(ch: &Channel, cmd: &str) -> io::Result<String> {
    let (ours, theirs) = ipc::session_pair()?;
    ch.send(ipc::CLI, Some(theirs.as_fd())).await?;
    drop(theirs);
    let mut conn = tokio::net::UnixStream::from_std(std::os::unix::net::UnixStream::from(ours))?;
    conn.write_all(format!("{cmd}\n").as_bytes()).await?;
    let mut out = String::new();
    let read = conn.read_to_string(&mut out);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(30), read).await;
    Ok(out)
}

/// HAProxy's `show proc` table at `now` (seconds since the epoch).
pub fn show_proc(state: &State, now: u64, version: &str) -> String {
    let row = |pid: i32, kind: &str, reloads: &str, started: u64, version: &str| {
        format!("{pid:<15} {kind:<15} {reloads:<15} {:<15} {version:<15}\n", uptime(now.saturating_sub(started)))
    };
    let mut out =
        format!("#{:<14} {:<15} {:<15} {:<15} {:<15}\n", "<PID>", "<type>", "<reloads>", "<uptime>", "<version>");
    let reloads = format!("{} [failed: {}]", state.reloads, state.failed_reloads);
    out.push_str(&row(std::process::id() as i32, "master", &reloads, state.started, version));
    out.push_str("# workers\n");
    let (old, current): (Vec<_>, Vec<_>) = state.workers.iter().partition(|w| w.phase == Phase::Leaving);
    for w in current {
        out.push_str(&row(w.pid, "worker", &w.reloads.to_string(), w.started, version));
    }
    if !old.is_empty() {
        out.push_str("# old workers\n");
        for w in old {
            out.push_str(&row(w.pid, "worker", &w.reloads.to_string(), w.started, version));
        }
    }
    out.push_str("# programs\n");
    let (old, current): (Vec<_>, Vec<_>) = state.programs.iter().partition(|p| p.leaving);
    for p in current {
        out.push_str(&row(p.pid, &p.name, &p.reloads.to_string(), p.started, "-"));
    }
    if !old.is_empty() {
        out.push_str("# old programs\n");
        for p in old {
            out.push_str(&row(p.pid, &p.name, &p.reloads.to_string(), p.started, "-"));
        }
    }
    out
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::master::state::{Prog, Worker};

    #[test]
    fn a_line_splits_at_unescaped_semicolons_keeping_escapes() {
        let cmds = split_commands("@1 add acl f Mon\\ User\\ Agent\\;;@1 show acl f");
        assert_eq!(cmds, ["@1 add acl f Mon\\ User\\ Agent\\;", "@1 show acl f"]);
        assert_eq!(split_commands("a\\\\;b"), ["a\\\\", "b"]);
        assert_eq!(split_commands("show proc"), ["show proc"]);
    }

    #[test]
    fn show_proc_has_haproxy_columns() {
        let state = State {
            started: 100,
            reloads: 2,
            failed_reloads: 1,
            workers: vec![
                Worker { pid: 11, ipc: 5, reloads: 1, started: 150, phase: Phase::Leaving },
                Worker { pid: 12, ipc: 6, reloads: 0, started: 190, phase: Phase::Current },
            ],
            programs: vec![
                Prog { pid: 21, name: "old".into(), reloads: 1, started: 150, leaving: true },
                Prog { pid: 22, name: "agent".into(), reloads: 0, started: 195, leaving: false },
            ],
        };
        let text = show_proc(&state, 200, "2.6.0");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "#<PID>          <type>          <reloads>       <uptime>        <version>      ");
        assert!(lines[1].ends_with("master          2 [failed: 1]   0d00h01m40s     2.6.0          "), "{}", lines[1]);
        assert_eq!(lines[2], "# workers");
        assert_eq!(lines[3], "12              worker          0               0d00h00m10s     2.6.0          ");
        assert_eq!(lines[4], "# old workers");
        assert_eq!(lines[5], "11              worker          1               0d00h00m50s     2.6.0          ");
        assert_eq!(lines[6], "# programs");
        assert_eq!(lines[7], "22              agent           0               0d00h00m05s     -              ");
        assert_eq!(lines[8], "# old programs");
        assert_eq!(lines[9], "21              old             1               0d00h00m50s     -              ");
    }

    #[test]
    fn specs() {
        assert_eq!(parse_spec("/run/m.sock").unwrap(), Spec { addr: "/run/m.sock".into(), mode: None });
        assert_eq!(parse_spec("/run/m.sock,mode 600,level admin").unwrap().mode, Some(0o600));
        assert!(parse_spec("/run/m.sock,user bob").unwrap_err().contains("'user bob' is not supported yet"));
        assert!(parse_spec("").is_err());
    }
}
