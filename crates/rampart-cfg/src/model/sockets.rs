//! Global settings of the sockets rampart creates: `tune.rcvbuf.*`/`tune.sndbuf.*` and
//! `unix-bind`. HAProxy counterparts: `global.tune.{client,server}_{rcv,snd}buf` and
//! `global.unix_bind` (include/haproxy/global-t.h).

use std::path::PathBuf;

/// `tune.rcvbuf.client|server` and `tune.sndbuf.client|server`: SO_RCVBUF/SO_SNDBUF of
/// each accepted (client) or connected (server) socket; `None` leaves the system's size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SockBufs {
    pub client_rcv: Option<u32>,
    pub client_snd: Option<u32>,
    pub server_rcv: Option<u32>,
    pub server_snd: Option<u32>,
}

impl SockBufs {
    /// Whether any client-side size is set (a single branch per accepted connection).
    pub fn client_set(&self) -> bool {
        self.client_rcv.is_some() || self.client_snd.is_some()
    }

    /// Whether any server-side size is set.
    pub fn server_set(&self) -> bool {
        self.server_rcv.is_some() || self.server_snd.is_some()
    }
}

/// Permissions of a unix listening socket file: the `unix-bind` defaults copied into
/// each `bind` line parsed after them (as HAProxy copies them into its bind_conf).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnixPerms {
    /// `mode <octal>`; `None` (or 0): the umask decides.
    pub mode: Option<u32>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
}

impl UnixPerms {
    pub fn is_set(&self) -> bool {
        self.mode.is_some() || self.uid.is_some() || self.gid.is_some()
    }
}

/// `unix-bind [prefix <p>] [mode <m>] [user|uid <u>] [group|gid <g>]` (global).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnixBind {
    /// Prepended (as text, no separator added) to the path of each unix `bind` address
    /// of a proxy parsed after it; not to the stats socket, as HAProxy.
    pub prefix: Option<PathBuf>,
    pub perms: UnixPerms,
}
