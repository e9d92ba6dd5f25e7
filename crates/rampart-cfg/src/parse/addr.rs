//! Listening and server addresses as HAProxy writes them: `[proto@]host:port`,
//! `unix@/path`, `/path`, `fd@N`, comma lists and port ranges for `bind`. Host names are
//! resolved here, at parse time, like HAProxy's default `init-addr libc`.
//! HAProxy counterparts: `str2sa_range()` and `str2ip2()` in src/tools.c,
//! `str2listener()` in src/cfgparse.c. Error texts are HAProxy's.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use crate::model::{ListenAddr, ServerAddr};

/// `$NAME` and `${NAME}` in an address replaced by the environment variable's value,
/// an unset one by nothing: HAProxy's `env_expand()`, which `str2sa_range()` applies
/// to every address, quoted or not (a name is letters, digits and `_`).
pub fn env_expand(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('$') {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let braced = after.starts_with('{');
        let name_at = usize::from(braced);
        let name_len = after[name_at..].bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
        let name = &after[name_at..name_at + name_len];
        let mut next = name_at + name_len;
        if braced && after[next..].starts_with('}') {
            next += 1;
        }
        if let Ok(v) = std::env::var(name) {
            out.push_str(&v);
        }
        rest = &after[next..];
    }
    out.push_str(rest);
    out.into()
}

/// Address family forced by a prefix (`ipv4@`, `tcp6@`...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Any,
    V4,
    V6,
}

/// What an address string designates once its prefix is read.
enum Target<'a> {
    Inet(Family, &'a str),
    Unix(&'a str),
    Fd(&'a str),
}

/// Reads the protocol prefix of one address (`text`, its variables expanded). `Err` is
/// the final message, which quotes the address as written (`full`), as HAProxy does.
fn split_prefix<'a>(text: &'a str, full: &str) -> Result<Target<'a>, String> {
    // PERF: most addresses have no prefix (read per server of a large configuration)
    if !text.contains('@') && !text.starts_with("stream+") && !text.starts_with("dgram+") {
        return Ok(if text.starts_with('/') { Target::Unix(text) } else { Target::Inet(Family::Any, text) });
    }
    let mut s = text;
    if let Some(rest) = s.strip_prefix("stream+") {
        s = rest;
    } else if s.starts_with("dgram+") {
        return Err(format!("dgram-type address not acceptable in '{full}'"));
    }
    const DGRAM: [&str; 4] = ["udp@", "udp4@", "udp6@", "uxdg@"];
    if DGRAM.iter().any(|p| s.starts_with(p)) {
        return Err(format!("dgram-type address not acceptable in '{full}'"));
    }
    for p in ["abns@", "sockpair@", "quic4@", "quic6@"] {
        if s.starts_with(p) {
            return Err(format!("'{p}' addresses are not supported yet (in '{full}')"));
        }
    }
    let inet = [("ip@", Family::Any), ("tcp@", Family::Any), ("ipv4@", Family::V4), ("tcp4@", Family::V4)];
    let inet6 = [("ipv6@", Family::V6), ("tcp6@", Family::V6)];
    for (p, fam) in inet.into_iter().chain(inet6) {
        if let Some(rest) = s.strip_prefix(p) {
            return Ok(Target::Inet(fam, rest));
        }
    }
    if let Some(rest) = s.strip_prefix("unix@").or_else(|| s.strip_prefix("uxst@")) {
        return Ok(Target::Unix(rest));
    }
    if let Some(rest) = s.strip_prefix("fd@") {
        return Ok(Target::Fd(rest));
    }
    if s.starts_with('/') {
        return Ok(Target::Unix(s));
    }
    Ok(Target::Inet(Family::Any, s))
}

/// The port part of an inet address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ports {
    /// No port, an empty port, or a `+N`/`-N` offset (server port mapping).
    Mapped,
    Range(u16, u16),
}

/// Splits `host:port` at the last colon that is not inside brackets, as HAProxy does,
/// so `::1:80` is host `::1` port 80 and `[::1]` has no port.
fn split_host_port(s: &str) -> (&str, Option<&str>) {
    match s.rfind([':', ']']) {
        Some(i) if s.as_bytes()[i] == b':' => (&s[..i], Some(&s[i + 1..])),
        _ => (s, None),
    }
}

/// Parses the port text. `mandatory`: a port of at least 1 is required (`bind`);
/// `range`: `a-b` is accepted.
fn parse_ports(port: Option<&str>, full: &str, mandatory: bool, range: bool) -> Result<Ports, String> {
    let missing = || format!("missing port specification in '{full}'");
    let Some(p) = port else {
        return if mandatory { Err(missing()) } else { Ok(Ports::Mapped) };
    };
    match p.chars().next() {
        None if mandatory => Err(missing()),
        None => Ok(Ports::Mapped),
        Some('+' | '-') if !mandatory => Ok(Ports::Mapped),
        Some('+' | '-') => Err(format!("port offset not permitted here in '{full}'")),
        Some(c) if c.is_ascii_digit() => {
            let (lo, hi) = match p.split_once('-') {
                Some(_) if !range => return Err(format!("port range not permitted here in '{full}'")),
                Some((lo, hi)) => (lo, hi),
                None => (p, p),
            };
            // COMPAT: HAProxy reads each port with atoi(), so trailing junk is ignored.
            let min = i64::from(mandatory);
            let (l, h) = (super::value::atol(lo), super::value::atol(hi));
            if !(min..=65535).contains(&l) {
                return Err(format!("invalid port '{lo}'"));
            }
            if !(min..=65535).contains(&h) {
                return Err(format!("invalid port '{hi}'"));
            }
            if l > h {
                return Err(format!("invalid port range '{l}-{h}'"));
            }
            if l == 0 {
                return Ok(Ports::Mapped);
            }
            Ok(Ports::Range(l as u16, h as u16))
        }
        Some(c) => Err(format!("invalid character '{c}' in port number '{p}' in '{full}'")),
    }
}

/// How a host part resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Host {
    /// Empty, `*` or `::`: every address of the family.
    Wildcard(IpAddr),
    Ip(IpAddr),
}

/// Resolves the host part: `[v6]`, `::`, `*` or empty, literal IPv6 then IPv4, then a
/// name through the system resolver (first answer of the wanted family).
fn parse_host(host: &str, fam: Family) -> Option<Host> {
    let host = match host.strip_prefix('[') {
        Some(inner) => inner.strip_suffix(']').filter(|h| h.len() >= 2)?,
        None => host,
    };
    if host == "::" {
        return (fam != Family::V4).then_some(Host::Wildcard(IpAddr::V6(Ipv6Addr::UNSPECIFIED)));
    }
    if host.is_empty() || host == "*" {
        let any = if fam == Family::V6 { IpAddr::V6(Ipv6Addr::UNSPECIFIED) } else { IpAddr::V4(Ipv4Addr::UNSPECIFIED) };
        return Some(Host::Wildcard(any));
    }
    // every IPv6 address has a colon (PERF: most hosts are IPv4 addresses)
    if fam != Family::V4 && host.contains(':') {
        if let Ok(v6) = host.parse::<Ipv6Addr>() {
            return Some(Host::Ip(IpAddr::V6(v6)));
        }
    }
    if fam != Family::V6 {
        if let Ok(v4) = host.parse::<Ipv4Addr>() {
            return Some(Host::Ip(IpAddr::V4(v4)));
        }
    }
    resolve(host, fam).map(Host::Ip)
}

fn resolve(host: &str, fam: Family) -> Option<IpAddr> {
    let wanted = |ip: &IpAddr| match fam {
        Family::Any => true,
        Family::V4 => ip.is_ipv4(),
        Family::V6 => ip.is_ipv6(),
    };
    (host, 0).to_socket_addrs().ok()?.map(|sa| sa.ip()).find(wanted)
}

fn parse_fd(text: &str, full: &str) -> Result<i32, String> {
    match text.parse::<i32>() {
        Ok(fd) if fd >= 0 && super::value::is_integer(text) => Ok(fd),
        _ => Err(format!("file descriptor '{text}' is not a valid integer in '{full}'")),
    }
}

/// Parses the argument of `bind` (or `stats socket`): a comma-separated list where each
/// address may carry a port range; returns every address it expands to.
pub fn parse_listen_addrs(text: &str) -> Result<Vec<ListenAddr>, String> {
    if text.is_empty() {
        return Err(format!("'{text}' resolves to an empty address (environment variable missing?)"));
    }
    let mut out = Vec::new();
    let mut pieces: Vec<&str> = text.split(',').collect();
    // A trailing comma ends the list, as in HAProxy ("a:1," is one address).
    if pieces.len() > 1 && pieces.last() == Some(&"") {
        pieces.pop();
    }
    for piece in pieces {
        if piece.is_empty() {
            return Err(format!("'{piece}' resolves to an empty address (environment variable missing?)"));
        }
        parse_one_listen(piece, &mut out)?;
    }
    Ok(out)
}

/// One address of a `bind` list, its `$VAR`/`${VAR}` expanded first ([`env_expand`]),
/// as `str2listener()` hands each piece to `str2sa_range()`.
fn parse_one_listen(full: &str, out: &mut Vec<ListenAddr>) -> Result<(), String> {
    let text = env_expand(full);
    if text.is_empty() {
        return Err(format!("'{full}' resolves to an empty address (environment variable missing?)"));
    }
    match split_prefix(&text, full)? {
        Target::Unix(path) => out.push(ListenAddr::Unix(PathBuf::from(path))),
        Target::Fd(fd) => out.push(ListenAddr::Fd(parse_fd(fd, full)?)),
        Target::Inet(fam, rest) => {
            let (host, port) = split_host_port(rest);
            let Ports::Range(lo, hi) = parse_ports(port, full, true, true)? else {
                return Err(format!("missing port specification in '{full}'"));
            };
            let ip = match parse_host(host, fam) {
                Some(Host::Wildcard(ip) | Host::Ip(ip)) => ip,
                None => return Err(format!("invalid address: '{host}' in '{full}'")),
            };
            out.extend((lo..=hi).map(|p| ListenAddr::Inet(SocketAddr::new(ip, p))));
        }
    }
    Ok(())
}

/// Parses the address of a `server` line.
/// A server address that may map ports: no port, port 0, or `+N`/`-N` give the offset
/// to add to the port the client connected to (`Some(offset)`, the address's own port
/// then being 0). HAProxy's `str2sa_range()` with `PA_O_PORT_OFS`.
///
/// `$VAR` / `${VAR}` are expanded first ([`env_expand`]); an empty or wildcard host
/// (`0.0.0.0`, `::`, `*`) is a server without address, which connects to the client's
/// destination address.
pub fn parse_server_target(full: &str) -> Result<(ServerAddr, Option<i32>), String> {
    server_target_of(&env_expand(full), full)
}

/// What the address of a `server` line designates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerTarget {
    /// A literal address (or none, or a unix socket) and its port offset
    /// ([`parse_server_target`]).
    Addr(ServerAddr, Option<i32>),
    /// A host name ([`server_target_name`]) with the address as written but unresolved
    /// ([`parse_server_target_unresolved`]).
    Name(String, ServerAddr, Option<i32>),
}

/// The address of a `server` line read once: a host name ([`server_target_name`]) with
/// its unresolved address, else the literal address ([`parse_server_target`]); their
/// errors.
pub fn server_target(full: &str) -> Result<ServerTarget, String> {
    let text = env_expand(full);
    match target_name_of(&text, full) {
        Some(name) => unresolved_of(&text, full).map(|(a, o)| ServerTarget::Name(name, a, o)),
        None => server_target_of(&text, full).map(|(a, o)| ServerTarget::Addr(a, o)),
    }
}

/// [`parse_server_target`] of `text`, the address `full` with its variables expanded.
fn server_target_of(text: &str, full: &str) -> Result<(ServerAddr, Option<i32>), String> {
    if text.is_empty() {
        return Err(format!("'{full}' resolves to an empty address (environment variable missing?)"));
    }
    match split_prefix(text, full)? {
        Target::Unix(path) => Ok((ServerAddr::Unix(PathBuf::from(path)), None)),
        Target::Fd(_) => Err(format!("a file descriptor is not acceptable here in '{full}'")),
        Target::Inet(fam, rest) => {
            let (host, port) = split_host_port(rest);
            let ports = parse_ports(port, full, false, false)?;
            let ip = match parse_host(host, fam) {
                Some(Host::Ip(ip) | Host::Wildcard(ip)) => ip,
                None => return Err(format!("could not resolve address '{host}'.")),
            };
            match ports {
                Ports::Range(p, _) => Ok((ServerAddr::Inet(SocketAddr::new(ip, p)), None)),
                Ports::Mapped => {
                    // "", "0", "+N" or "-N"; atol() like HAProxy (strtol on the offset)
                    let offset = port.map_or(0, super::value::atol);
                    let offset = i32::try_from(offset).map_err(|_| format!("invalid port offset in '{full}'"))?;
                    Ok((ServerAddr::Inet(SocketAddr::new(ip, 0)), Some(offset)))
                }
            }
        }
    }
}

/// The address of a `nameserver`: `[udp@|udp4@|udp6@|ipv4@|ipv6@]<host>:<port>` for
/// UDP, `tcp@|tcp4@|tcp6@...` for DNS over TCP; a port is required. `Ok((addr, tcp))`.
pub fn parse_dns_addr(full: &str) -> Result<(SocketAddr, bool), String> {
    let text = env_expand(full);
    let mut rest: &str = &text;
    let mut tcp = false;
    let mut fam = Family::Any;
    let prefixes = [
        ("udp@", false, Family::Any),
        ("udp4@", false, Family::V4),
        ("udp6@", false, Family::V6),
        ("ipv4@", false, Family::V4),
        ("ipv6@", false, Family::V6),
        ("tcp@", true, Family::Any),
        ("tcp4@", true, Family::V4),
        ("tcp6@", true, Family::V6),
    ];
    for (p, is_tcp, f) in prefixes {
        if let Some(r) = rest.strip_prefix(p) {
            (rest, tcp, fam) = (r, is_tcp, f);
            break;
        }
    }
    if rest.starts_with('/') || rest.contains('@') {
        return Err(format!("address family not supported in '{full}'"));
    }
    let (host, port) = split_host_port(rest);
    let Ports::Range(port, _) = parse_ports(port, full, true, false)? else {
        return Err(format!("missing port specification in '{full}'"));
    };
    match parse_host(host, fam) {
        Some(Host::Ip(ip) | Host::Wildcard(ip)) => Ok((SocketAddr::new(ip, port), tcp)),
        None => Err(format!("could not resolve address '{host}'")),
    }
}

/// A server address whose host is a name rather than a literal address: the name
/// (`None` for a literal, a unix socket ...), read without resolving it, as the
/// address then comes from `init-addr` or from DNS at run time.
pub fn server_target_name(full: &str) -> Option<String> {
    target_name_of(&env_expand(full), full)
}

/// [`server_target_name`] of `text`, the address `full` with its variables expanded.
fn target_name_of(text: &str, full: &str) -> Option<String> {
    let Ok(Target::Inet(_, rest)) = split_prefix(text, full) else { return None };
    let (host, _) = split_host_port(rest);
    let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    if bare.is_empty() || bare == "*" || bare.parse::<IpAddr>().is_ok() {
        return None;
    }
    Some(bare.strip_suffix('.').unwrap_or(bare).to_owned())
}

/// The first address of `host` from the system resolver (`init-addr libc`).
pub fn resolve_libc(host: &str) -> Option<IpAddr> {
    resolve(host, Family::Any)
}

/// Parses a server address whose host is a name, without resolving it: the address is
/// the unspecified one (with the port as written), to be filled at startup or run time.
pub fn parse_server_target_unresolved(full: &str) -> Result<(ServerAddr, Option<i32>), String> {
    unresolved_of(&env_expand(full), full)
}

/// [`parse_server_target_unresolved`] of `text`, the address `full` with its variables
/// expanded.
fn unresolved_of(text: &str, full: &str) -> Result<(ServerAddr, Option<i32>), String> {
    let Target::Inet(_, rest) = split_prefix(text, full)? else {
        return server_target_of(text, full);
    };
    let (_, port) = split_host_port(rest);
    match parse_ports(port, full, false, false)? {
        Ports::Range(p, _) => Ok((ServerAddr::Inet(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), p)), None)),
        Ports::Mapped => {
            let offset = port.map_or(0, super::value::atol);
            let offset = i32::try_from(offset).map_err(|_| format!("invalid port offset in '{full}'"))?;
            Ok((ServerAddr::Inet(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0)), Some(offset)))
        }
    }
}

/// The address of a `source` keyword or server option: an IP address with an optional
/// port (none or 0: any port); `$VAR`/`${VAR}` expanded first.
pub fn parse_source_addr(full: &str) -> Result<SocketAddr, String> {
    let text = env_expand(full);
    match split_prefix(&text, full)? {
        Target::Inet(fam, rest) => {
            let (host, port) = split_host_port(rest);
            let port = match parse_ports(port, full, false, false)? {
                Ports::Range(p, _) => p,
                Ports::Mapped => 0,
            };
            match parse_host(host, fam) {
                Some(Host::Ip(ip) | Host::Wildcard(ip)) => Ok(SocketAddr::new(ip, port)),
                None => Err(format!("Unknown host in '{full}'")),
            }
        }
        Target::Unix(_) | Target::Fd(_) => Err(format!("'{full}' is not an IPv4/IPv6 address")),
    }
}

/// Validates the argument of the `addr` server option (a host with an optional port).
pub fn check_probe_addr(full: &str) -> Result<(), String> {
    let text = env_expand(full);
    let rest = match split_prefix(&text, full)? {
        Target::Inet(fam, rest) => (fam, rest),
        Target::Unix(_) | Target::Fd(_) => return Ok(()),
    };
    let (host, port) = split_host_port(rest.1);
    parse_ports(port, full, false, false)?;
    match parse_host(host, rest.0) {
        Some(_) => Ok(()),
        None => Err(format!("invalid address: '{host}' in '{full}'")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn env_expand_as_str2sa_range() {
        use super::env_expand;
        assert_eq!(env_expand("127.0.0.1:80"), "127.0.0.1:80");
        assert_eq!(env_expand("${RAMPART_SURELY_UNSET_A}:${RAMPART_SURELY_UNSET_B}"), ":");
        assert_eq!(env_expand("$RAMPART_SURELY_UNSET_A.x"), ".x");
        let path = std::env::var("PATH").unwrap_or_default();
        assert_eq!(env_expand("a${PATH}b"), format!("a{path}b"));
        assert_eq!(env_expand("a$PATH}b"), format!("a{path}}}b"));
        assert_eq!(env_expand("x$"), "x");
    }

    use super::*;

    fn inet(s: &str) -> ListenAddr {
        ListenAddr::Inet(s.parse().expect("socket addr"))
    }

    #[test]
    fn listen_forms() {
        assert_eq!(parse_listen_addrs(":8080"), Ok(vec![inet("0.0.0.0:8080")]));
        assert_eq!(parse_listen_addrs("*:8080"), Ok(vec![inet("0.0.0.0:8080")]));
        assert_eq!(parse_listen_addrs(":::8080"), Ok(vec![inet("[::]:8080")]));
        assert_eq!(parse_listen_addrs("ipv6@:8080"), Ok(vec![inet("[::]:8080")]));
        assert_eq!(parse_listen_addrs("ipv4@:8080"), Ok(vec![inet("0.0.0.0:8080")]));
        assert_eq!(parse_listen_addrs("::1:8080"), Ok(vec![inet("[::1]:8080")]));
        assert_eq!(parse_listen_addrs("[::1]:8080"), Ok(vec![inet("[::1]:8080")]));
        assert_eq!(parse_listen_addrs("127.0.0.1:80"), Ok(vec![inet("127.0.0.1:80")]));
        assert_eq!(parse_listen_addrs("unix@/tmp/s"), Ok(vec![ListenAddr::Unix("/tmp/s".into())]));
        assert_eq!(parse_listen_addrs("/tmp/s"), Ok(vec![ListenAddr::Unix("/tmp/s".into())]));
        assert_eq!(parse_listen_addrs("fd@3"), Ok(vec![ListenAddr::Fd(3)]));
        assert_eq!(parse_listen_addrs("localhost:80").map(|v| v.len()), Ok(1));
    }

    #[test]
    fn listen_lists_and_ranges() {
        let v = parse_listen_addrs("127.0.0.1:8000-8002,:9000").expect("addrs");
        assert_eq!(
            v,
            vec![inet("127.0.0.1:8000"), inet("127.0.0.1:8001"), inet("127.0.0.1:8002"), inet("0.0.0.0:9000")]
        );
        assert_eq!(parse_listen_addrs(":80,"), Ok(vec![inet("0.0.0.0:80")]));
    }

    #[test]
    fn listen_errors_are_haproxy_words() {
        let e = |s: &str| parse_listen_addrs(s).expect_err(s);
        assert_eq!(e("::1"), "invalid address: ':' in '::1'");
        assert_eq!(e("127.0.0.1"), "missing port specification in '127.0.0.1'");
        assert_eq!(e("127.0.0.1:0"), "invalid port '0'");
        assert_eq!(e("127.0.0.1:70000"), "invalid port '70000'");
        assert_eq!(e("127.0.0.1:abc"), "invalid character 'a' in port number 'abc' in '127.0.0.1:abc'");
        assert_eq!(e("127.0.0.1:8010-8000"), "invalid port range '8010-8000'");
        assert_eq!(e("127.0.0.1:+1"), "port offset not permitted here in '127.0.0.1:+1'");
        assert_eq!(e("fd@x"), "file descriptor 'x' is not a valid integer in 'fd@x'");
        assert_eq!(e("udp@:80"), "dgram-type address not acceptable in 'udp@:80'");
        assert_eq!(e(",:80"), "'' resolves to an empty address (environment variable missing?)");
        assert_eq!(e("256.1.1.1:80"), "invalid address: '256.1.1.1' in '256.1.1.1:80'");
        assert_eq!(e("ipv4@[::1]:80"), "invalid address: '[::1]' in 'ipv4@[::1]:80'");
        assert!(e("abns@x").contains("not supported yet"));
        // variables are expanded per piece, messages quote the text as written
        assert_eq!(
            e("${RAMPART_SURELY_UNSET_A}"),
            "'${RAMPART_SURELY_UNSET_A}' resolves to an empty address (environment variable missing?)"
        );
        assert_eq!(
            e("127.0.0.1:${RAMPART_SURELY_UNSET_A}"),
            "missing port specification in '127.0.0.1:${RAMPART_SURELY_UNSET_A}'"
        );
        assert_eq!(
            parse_listen_addrs(":80,$RAMPART_SURELY_UNSET_A:81"),
            Ok(vec![inet("0.0.0.0:80"), inet("0.0.0.0:81")])
        );
    }

    #[test]
    fn server_forms() {
        let ok = |s: &str| parse_server_target(s).expect(s).0;
        assert_eq!(ok("127.0.0.1:80"), ServerAddr::Inet("127.0.0.1:80".parse().expect("sa")));
        assert_eq!(ok("::1:80"), ServerAddr::Inet("[::1]:80".parse().expect("sa")));
        assert_eq!(ok("[::1]:80"), ServerAddr::Inet("[::1]:80".parse().expect("sa")));
        assert_eq!(ok("ipv6@::1:80"), ServerAddr::Inet("[::1]:80".parse().expect("sa")));
        assert_eq!(ok("/tmp/s"), ServerAddr::Unix("/tmp/s".into()));
        assert_eq!(ok("unix@/tmp/s"), ServerAddr::Unix("/tmp/s".into()));
        assert!(matches!(ok("localhost:80"), ServerAddr::Inet(sa) if sa.port() == 80 && sa.ip().is_loopback()));
    }

    #[test]
    fn server_port_mapping() {
        let ok = |s: &str| parse_server_target(s).expect(s);
        let ip = |s: &str| ServerAddr::Inet(s.parse().expect("sa"));
        assert_eq!(ok("127.0.0.1"), (ip("127.0.0.1:0"), Some(0)));
        assert_eq!(ok("127.0.0.1:+1000"), (ip("127.0.0.1:0"), Some(1000)));
        assert_eq!(ok("127.0.0.1:-80"), (ip("127.0.0.1:0"), Some(-80)));
        assert_eq!(ok("127.0.0.1:0"), (ip("127.0.0.1:0"), Some(0)));
        assert_eq!(ok("127.0.0.1:81"), (ip("127.0.0.1:81"), None));
    }

    #[test]
    fn server_errors() {
        let e = |s: &str| parse_server_target(s).expect_err(s);
        assert_eq!(e("127.0.0.1:8000-8001"), "port range not permitted here in '127.0.0.1:8000-8001'");
        assert_eq!(e("fd@3"), "a file descriptor is not acceptable here in 'fd@3'");
        assert_eq!(e("127.0.0.1:70000"), "invalid port '70000'");
        assert_eq!(e("nosuch.invalid:80"), "could not resolve address 'nosuch.invalid'.");
    }

    #[test]
    fn server_without_address_and_environment() {
        let ok = |s: &str| parse_server_target(s).expect(s);
        let ip = |s: &str| ServerAddr::Inet(s.parse().expect("sa"));
        // no address: the client's destination address (backend::server_target)
        assert_eq!(ok(":80"), (ip("0.0.0.0:80"), None));
        assert_eq!(ok("0.0.0.0"), (ip("0.0.0.0:0"), Some(0)));
        assert_eq!(ok("[::]:+1"), (ip("[::]:0"), Some(1)));
        // unset variables expand to nothing, as HAProxy's env_expand() (a VTest macro
        // of a server the test does not declare reaches HAProxy that way)
        assert_eq!(ok("${RAMPART_SURELY_UNSET_A}:${RAMPART_SURELY_UNSET_B}"), (ip("0.0.0.0:0"), Some(0)));
        assert_eq!(ok("127.0.0.1:$RAMPART_SURELY_UNSET_B"), (ip("127.0.0.1:0"), Some(0)));
        assert_eq!(
            parse_server_target("${RAMPART_SURELY_UNSET_A}").unwrap_err(),
            "'${RAMPART_SURELY_UNSET_A}' resolves to an empty address (environment variable missing?)",
            "the address as written, as haproxy 2.6.12 quotes it"
        );
    }

    #[test]
    fn probe_addr() {
        assert_eq!(check_probe_addr("1.2.3.4"), Ok(()));
        assert_eq!(check_probe_addr("1.2.3.4:80"), Ok(()));
        assert_eq!(
            check_probe_addr("nosuch.invalid"),
            Err("invalid address: 'nosuch.invalid' in 'nosuch.invalid'".into())
        );
    }
}
