//! systemd notifications (`-Ws`): one datagram per state change to the unix socket
//! named by `NOTIFY_SOCKET` (a path, or `@name` for the abstract namespace), as
//! sd_notify(3) sends them. Written here rather than through libsystemd: the protocol
//! is one `sendto()`. HAProxy counterpart: the `sd_notify()` calls of src/haproxy.c
//! and src/mworker.c.

use std::os::unix::net::UnixDatagram;

/// The variable naming the socket.
pub const NOTIFY_SOCKET: &str = "NOTIFY_SOCKET";

/// Where notifications go; `None` when not asked (`-W` without `s`) or not under
/// systemd. Reads the variable once: the workers never get it.
#[derive(Debug, Clone, Default)]
pub struct Notifier {
    target: Option<String>,
}

impl Notifier {
    /// From the environment when `enabled` (`-Ws`).
    pub fn from_env(enabled: bool) -> Notifier {
        let target = enabled.then(|| std::env::var(NOTIFY_SOCKET).ok()).flatten().filter(|t| !t.is_empty());
        Notifier { target }
    }

    /// Sends `state` (`READY=1`, `RELOADING=1`, `STATUS=...` lines); failures are
    /// ignored, as sd_notify callers do: systemd may be gone or not listening.
    pub fn send(&self, state: &str) {
        let Some(target) = &self.target else { return };
        let Ok(sock) = UnixDatagram::unbound() else { return };
        let _ = match target.strip_prefix('@') {
            Some(name) => abstract_addr(name).and_then(|a| sock.send_to_addr(state.as_bytes(), &a)),
            None => sock.send_to(state.as_bytes(), target),
        };
    }

    /// `READY=1` with the master's pid and a status line.
    pub fn ready(&self, status: &str) {
        self.send(&format!("READY=1\nMAINPID={}\nSTATUS={status}", std::process::id()));
    }

    /// `RELOADING=1` with the monotonic time systemd's `Type=notify-reload` asks for.
    pub fn reloading(&self) {
        let now = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
            .map(|t| t.tv_sec() as u64 * 1_000_000 + t.tv_nsec() as u64 / 1000)
            .unwrap_or(0);
        self.send(&format!("RELOADING=1\nMONOTONIC_USEC={now}\nSTATUS=Reloading."));
    }
}

fn abstract_addr(name: &str) -> std::io::Result<std::os::unix::net::SocketAddr> {
    use std::os::linux::net::SocketAddrExt;
    std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datagrams_reach_a_path_socket() {
        let path = std::env::temp_dir().join(format!("rampart-notify-{}.sock", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let rx = UnixDatagram::bind(&path).unwrap();
        let n = Notifier { target: Some(path.display().to_string()) };
        n.ready("Ready.");
        let mut buf = [0u8; 256];
        let len = rx.recv(&mut buf).unwrap();
        let text = String::from_utf8_lossy(&buf[..len]);
        assert!(text.starts_with("READY=1\nMAINPID="), "{text}");
        assert!(text.ends_with("\nSTATUS=Ready."), "{text}");
        Notifier::default().ready("nowhere");
        let _ = std::fs::remove_file(&path);
    }
}
