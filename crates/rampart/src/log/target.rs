//! A `log` line's words turned into a target: where lines go (UDP, unix datagram
//! socket, stdout/stderr, a ring by name), the facility, the levels let through, the
//! maximum line length, the syslog header format and the sampling. rampart-cfg already checked the
//! words (`parse::log`); this resolves the address. Pure: no socket is opened here.
//! HAProxy counterpart: `parse_logsrv()` and `str2sa_range()` (src/log.c, src/tools.c).

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

/// Syslog facilities in their numeric order.
pub const FACILITIES: &[&str] = &[
    "kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron", "auth2", "ftp", "ntp", "audit",
    "alert", "cron2", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7",
];

/// Syslog levels in their numeric order (0: emerg ... 7: debug).
pub const LEVELS: &[&str] = &["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"];

/// Levels by name, for callers of [`super::send_global`].
pub mod level {
    pub const EMERG: u8 = 0;
    pub const ALERT: u8 = 1;
    pub const CRIT: u8 = 2;
    pub const ERR: u8 = 3;
    pub const WARNING: u8 = 4;
    pub const NOTICE: u8 = 5;
    pub const INFO: u8 = 6;
    pub const DEBUG: u8 = 7;
}

/// Where a target's lines go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dest {
    Udp(SocketAddr),
    /// A unix datagram socket (`/dev/log`, `unix@`, `uxdg@`).
    Unix(PathBuf),
    Stdout,
    Stderr,
    /// `ring@<name>`: a ring buffer ([`super::ring`]), resolved by name at startup.
    Ring(String),
}

/// The syslog header written before each line (`format ...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HdrFormat {
    /// `<PRI>Mmm dd hh:mm:ss [host ]tag[pid]: ` (HAProxy's default for sockets).
    Rfc3164,
    /// `<PRI>1 ISO-DATE host tag pid - - `.
    Rfc5424,
    /// `<PRI>` only.
    Priority,
    /// `<LEVEL>` only (for systemd).
    Short,
    /// `<LEVEL>ISO-DATE `.
    Timed,
    /// `ISO-DATE `.
    Iso,
    /// Nothing: the line alone (the default for stdout/stderr is `raw`).
    Raw,
    /// As rfc3164 without the host name, as a local syslog daemon expects.
    Local,
}

impl HdrFormat {
    /// The format of a `format` word.
    pub fn parse(name: &str) -> Option<HdrFormat> {
        Some(match name {
            "rfc3164" => HdrFormat::Rfc3164,
            "rfc5424" => HdrFormat::Rfc5424,
            "priority" => HdrFormat::Priority,
            "short" => HdrFormat::Short,
            "timed" => HdrFormat::Timed,
            "iso" => HdrFormat::Iso,
            "raw" => HdrFormat::Raw,
            "local" => HdrFormat::Local,
            _ => return None,
        })
    }
}

/// `sample <ranges>:<size>`: of each run of `size` lines, those whose position (from 1)
/// is in one of the ranges are sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sampling {
    pub ranges: Vec<(u32, u32)>,
    pub size: u32,
}

impl Sampling {
    /// Whether the `n`th line (from 0) is sent.
    pub fn keeps(&self, n: u64) -> bool {
        let pos = (n % u64::from(self.size.max(1))) as u32 + 1;
        self.ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&pos))
    }
}

/// One `log` line, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub dest: Dest,
    pub facility: u8,
    /// The highest (least severe) level sent.
    pub level: u8,
    /// The lowest level: more severe messages are sent with this level.
    pub minlevel: u8,
    /// `len`: lines are cut to this many bytes (header included).
    pub maxlen: usize,
    pub format: HdrFormat,
    /// `format` was given. COMPAT: HAProxy 2.6 writes a host name in an explicit
    /// `rfc3164` header even without `log-send-hostname` ("localhost"), and none in
    /// the default one; rampart does the same.
    pub explicit: bool,
    pub sample: Option<Sampling>,
    /// The address as written, for messages.
    pub name: String,
}

/// Resolves the words after `log` (not `global`). `Err`: HAProxy-style message naming
/// the target.
pub fn parse(args: &[String]) -> Result<Target, String> {
    let arg = |i: usize| args.get(i).map_or("", String::as_str);
    let name = arg(0).to_owned();
    let mut i = 1;
    let mut maxlen = 1024;
    if arg(i) == "len" {
        maxlen = arg(i + 1).parse().map_err(|_| format!("log : invalid log length '{}'", arg(i + 1)))?;
        i += 2;
    }
    let dest = dest(&rampart_cfg::parse::env_expand(&name))?;
    let std_stream = matches!(dest, Dest::Stdout | Dest::Stderr);
    let mut format = if std_stream { HdrFormat::Raw } else { HdrFormat::Rfc3164 };
    let mut explicit = false;
    if arg(i) == "format" {
        format = HdrFormat::parse(arg(i + 1)).ok_or_else(|| format!("log : unknown log format '{}'", arg(i + 1)))?;
        explicit = true;
        i += 2;
    }
    let mut sample = None;
    if arg(i) == "sample" {
        sample = Some(sampling(arg(i + 1))?);
        i += 2;
    }
    let pos = |list: &[&str], w: &str| list.iter().position(|n| *n == w).map(|p| p as u8);
    let facility = pos(FACILITIES, arg(i)).ok_or_else(|| format!("log : unknown log facility '{}'", arg(i)))?;
    let level = if arg(i + 1).is_empty() { level::DEBUG } else { pos(LEVELS, arg(i + 1)).unwrap_or(level::DEBUG) };
    let minlevel = if arg(i + 2).is_empty() { level::EMERG } else { pos(LEVELS, arg(i + 2)).unwrap_or(level::EMERG) };
    Ok(Target { dest, facility, level, minlevel, maxlen, format, explicit, sample, name })
}

/// The address of a `log` line.
fn dest(addr: &str) -> Result<Dest, String> {
    let not_yet = |what: &str| format!("log : '{what}' targets are not supported yet ('{addr}')");
    match addr {
        "stdout" | "fd@1" => return Ok(Dest::Stdout),
        "stderr" | "fd@2" => return Ok(Dest::Stderr),
        _ => {}
    }
    if addr.starts_with('/') {
        return Ok(Dest::Unix(PathBuf::from(addr)));
    }
    let (proto, rest) = match addr.split_once('@') {
        Some((p, r)) => (p, r),
        None => ("", addr),
    };
    match proto {
        "unix" | "uxdg" => Ok(Dest::Unix(PathBuf::from(rest))),
        "" | "udp" | "udp4" | "udp6" | "ipv4" | "ipv6" => inet(rest, proto, addr).map(Dest::Udp),
        "ring" => Ok(Dest::Ring(rest.to_owned())),
        "tcp" | "tcp4" | "tcp6" => Err(not_yet("tcp@")),
        "fd" => Err(not_yet("fd@")),
        _ => Err(format!("log : unknown address family '{proto}' in '{addr}'")),
    }
}

/// `host[:port]`, `a.b.c.d[:port]`, `[v6][:port]` or `v6:port`; port 514 by default.
fn inet(rest: &str, proto: &str, whole: &str) -> Result<SocketAddr, String> {
    let want6 = matches!(proto, "udp6" | "ipv6");
    let want4 = matches!(proto, "udp4" | "ipv4");
    // an empty host is the any address (`${UNSET}:${UNSET}` reads as ":")
    let rest = match rest.strip_prefix(':') {
        Some(port) if !port.contains(':') => format!("0.0.0.0:{port}"),
        _ => rest.to_owned(),
    };
    let rest = rest.strip_suffix(':').unwrap_or(&rest);
    // as HAProxy, the last colon of an unbracketed IPv6 address starts the port
    let with_port = if let Ok(ip) = rest.parse::<std::net::Ipv4Addr>() {
        SocketAddr::new(ip.into(), 514).to_string()
    } else if rest.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok()) {
        rest.to_owned()
    } else {
        format!("{rest}:514")
    };
    let v6 = with_port.strip_prefix('[').is_none() && with_port.matches(':').count() > 1;
    let spelled = if v6 {
        // `::1:514`: the last colon starts the port, as HAProxy reads it
        let (ip, port) = with_port.rsplit_once(':').unwrap_or((&with_port, "514"));
        format!("[{ip}]:{port}")
    } else {
        with_port
    };
    let unresolved = || format!("log : unable to resolve address '{whole}'");
    let addrs = spelled.to_socket_addrs().map_err(|_| unresolved())?;
    addrs.into_iter().find(|a| (!want6 || a.is_ipv6()) && (!want4 || a.is_ipv4())).ok_or_else(unresolved)
}

/// `<ranges>:<size>`: `1,3-5:10`.
fn sampling(spec: &str) -> Result<Sampling, String> {
    let bad = || format!("log : invalid sample expression '{spec}'");
    let (ranges, size) = spec.rsplit_once(':').ok_or_else(bad)?;
    let size: u32 = size.parse().map_err(|_| bad())?;
    if size == 0 {
        return Err(bad());
    }
    let mut out = Vec::new();
    for r in ranges.split(',') {
        let (lo, hi) = match r.split_once('-') {
            Some((a, b)) => (a.parse::<u32>().map_err(|_| bad())?, b.parse::<u32>().map_err(|_| bad())?),
            None => {
                let n = r.parse::<u32>().map_err(|_| bad())?;
                (n, n)
            }
        };
        if lo == 0 || hi < lo || hi > size {
            return Err(bad());
        }
        out.push((lo, hi));
    }
    Ok(Sampling { ranges: out, size })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(line: &str) -> Result<Target, String> {
        let args: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        parse(&args)
    }

    #[test]
    fn addresses() {
        assert_eq!(t("127.0.0.1:5140 local0").unwrap().dest, Dest::Udp("127.0.0.1:5140".parse().unwrap()));
        assert_eq!(t("127.0.0.1 local0").unwrap().dest, Dest::Udp("127.0.0.1:514".parse().unwrap()));
        // addresses expand `$VAR`s, unset ones to nothing, as HAProxy's str2sa_range()
        assert_eq!(t(":5140 local0").unwrap().dest, Dest::Udp("0.0.0.0:5140".parse().unwrap()));
        assert_eq!(
            t("${RAMPART_UNSET_X}:${RAMPART_UNSET_Y} daemon").unwrap().dest,
            Dest::Udp("0.0.0.0:514".parse().unwrap())
        );
        assert_eq!(t("udp@127.0.0.1:9 local0").unwrap().dest, Dest::Udp("127.0.0.1:9".parse().unwrap()));
        assert_eq!(t("udp6@[::1]:9 local0").unwrap().dest, Dest::Udp("[::1]:9".parse().unwrap()));
        assert_eq!(t("ipv6@::1:9 local0").unwrap().dest, Dest::Udp("[::1]:9".parse().unwrap()));
        assert_eq!(t("[::1] local0").unwrap().dest, Dest::Udp("[::1]:514".parse().unwrap()));
        assert_eq!(t("/dev/log local0").unwrap().dest, Dest::Unix("/dev/log".into()));
        assert_eq!(t("uxdg@/run/x local0").unwrap().dest, Dest::Unix("/run/x".into()));
        assert_eq!(t("unix@/run/y local0").unwrap().dest, Dest::Unix("/run/y".into()));
        assert_eq!(t("stdout local0").unwrap().dest, Dest::Stdout);
        assert_eq!(t("fd@2 local0").unwrap().dest, Dest::Stderr);
        assert_eq!(t("ring@buf local0").unwrap().dest, Dest::Ring("buf".into()));
        assert!(t("tcp@127.0.0.1:1 local0").unwrap_err().contains("not supported yet"));
        assert!(t("no.such.host.invalid:514 local0").unwrap_err().contains("unable to resolve"));
    }

    #[test]
    fn facility_levels_length_format() {
        let x = t("127.0.0.1 len 2048 format rfc5424 local3 notice err").unwrap();
        assert_eq!((x.facility, x.level, x.minlevel, x.maxlen), (19, 5, 3, 2048));
        assert_eq!(x.format, HdrFormat::Rfc5424);
        let d = t("127.0.0.1 user").unwrap();
        assert_eq!((d.facility, d.level, d.minlevel, d.maxlen, d.format), (1, 7, 0, 1024, HdrFormat::Rfc3164));
        assert_eq!(t("stdout local0").unwrap().format, HdrFormat::Raw);
        assert_eq!(t("stderr format short daemon").unwrap().format, HdrFormat::Short);
    }

    #[test]
    fn sampling_ranges() {
        let x = t("127.0.0.1 sample 1,3-4:5 local0").unwrap();
        let s = x.sample.unwrap();
        let kept: Vec<bool> = (0..10).map(|n| s.keeps(n)).collect();
        assert_eq!(kept, [true, false, true, true, false, true, false, true, true, false]);
        assert!(t("127.0.0.1 sample 6:5 local0").is_err());
        assert!(t("127.0.0.1 sample 0:5 local0").is_err());
        assert!(t("127.0.0.1 sample x:5 local0").is_err());
    }
}
