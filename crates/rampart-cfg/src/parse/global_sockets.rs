//! `global` keywords about the sockets rampart creates: `tune.rcvbuf.client|server`,
//! `tune.sndbuf.client|server` and `unix-bind`.
//!
//! HAProxy counterpart: the same keywords in `cfg_parse_global()` (src/cfgparse-global.c,
//! 2.6), with its messages.

use crate::span::Span;

use super::global::{already_specified, lookup_id, too_many};
use super::value::atol;
use super::{arg, Parser};

/// `tune.rcvbuf.*` / `tune.sndbuf.* <bytes>`, read as C's `atol()` into an int; 0 sets
/// nothing (and lets a later line set it, as HAProxy's "already specified" test is `!= 0`).
pub(super) fn parse_sockbuf(p: &mut Parser, words: &[String], span: &Span) {
    let word = words[0].as_str();
    if too_many(p, words, 1, span) {
        return;
    }
    let b = &mut p.global.sockbufs;
    let slot = match word {
        "tune.rcvbuf.client" => &mut b.client_rcv,
        "tune.rcvbuf.server" => &mut b.server_rcv,
        "tune.sndbuf.client" => &mut b.client_snd,
        _ => &mut b.server_snd,
    };
    if slot.is_some() {
        return already_specified(p, span, format!("'{word}' already specified. Continuing."));
    }
    let text = arg(words, 1);
    if text.is_empty() {
        p.alert(span, format!("'{word}' expects an integer argument."));
        return;
    }
    // COMPAT: HAProxy keeps an int and hands it to setsockopt() as is.
    let v = atol(text) as i32;
    *slot = (v != 0).then_some(v as u32);
}

/// `unix-bind [prefix <path>] [mode <octal>] [uid <n>|user <name>] [gid <n>|group <name>]`.
pub(super) fn parse_unix_bind(p: &mut Parser, words: &[String], span: &Span) {
    let mut i = 1;
    while i < words.len() && !words[i].is_empty() {
        let (opt, value) = (words[i].as_str(), arg(words, i + 1));
        i += 2;
        let ub = &mut p.global.unix_bind;
        match opt {
            "prefix" if ub.prefix.is_some() => {
                already_specified(p, span, format!("unix-bind '{opt}' already specified. Continuing."));
            }
            "prefix" if value.is_empty() => {
                return p.alert(span, format!("unix_bind '{opt}' expects a path as an argument."));
            }
            "prefix" => ub.prefix = Some(value.into()),
            "mode" => ub.perms.mode = Some(strtol_octal(value)).filter(|&m| m != 0),
            "uid" => ub.perms.uid = Some(atol(value) as u32),
            "gid" => ub.perms.gid = Some(atol(value) as u32),
            "user" | "group" => {
                let (db, what) = if opt == "user" { ("/etc/passwd", "user") } else { ("/etc/group", "group") };
                let Some(id) = lookup_id(db, value) else {
                    return p.alert(span, format!("'unix-bind' : '{value}' unknown {what}."));
                };
                if opt == "user" {
                    ub.perms.uid = Some(id);
                } else {
                    ub.perms.gid = Some(id);
                }
            }
            _ => {
                let msg = "'unix-bind' only supports the 'prefix', 'mode', 'uid', 'gid', 'user' and 'group' options.";
                return p.alert(span, msg);
            }
        }
    }
}

/// C's `strtol(text, NULL, 8)`: leading octal digits, 0 when there are none.
fn strtol_octal(text: &str) -> u32 {
    let t = text.trim_start_matches([' ', '\t']);
    let (neg, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let v = t
        .bytes()
        .take_while(|b| (b'0'..=b'7').contains(b))
        .fold(0u32, |v, b| v.wrapping_mul(8).wrapping_add(u32::from(b - b'0')));
    if neg {
        v.wrapping_neg()
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{SockBufs, UnixPerms};
    use crate::parse::tests::{alerts, parse_ok, warnings};

    #[test]
    fn sockbufs() {
        let cfg = parse_ok(
            "global\n tune.rcvbuf.client 65536\n tune.sndbuf.client 0\n tune.sndbuf.client 8k\n \
             tune.rcvbuf.server 1000\n tune.sndbuf.server 2000\n",
        );
        let want =
            SockBufs { client_rcv: Some(65536), client_snd: Some(8), server_rcv: Some(1000), server_snd: Some(2000) };
        assert_eq!(cfg.global.sockbufs, want);
        assert_eq!(
            warnings("global\n tune.rcvbuf.client 1\n tune.rcvbuf.client 2\n"),
            ["'tune.rcvbuf.client' already specified. Continuing."]
        );
        assert_eq!(alerts("global\n tune.sndbuf.server\n"), ["'tune.sndbuf.server' expects an integer argument."]);
        assert_eq!(
            alerts("global\n tune.sndbuf.server 1 2\n"),
            ["'tune.sndbuf.server' cannot handle unexpected argument '2'."]
        );
    }

    #[test]
    fn unix_bind() {
        let cfg = parse_ok("global\n unix-bind prefix /run/rp/ mode 0660 uid 12 gid 34\nfrontend f\n bind /s.sock\n");
        assert_eq!(cfg.global.unix_bind.prefix.as_deref(), Some(std::path::Path::new("/run/rp/")));
        let perms = UnixPerms { mode: Some(0o660), uid: Some(12), gid: Some(34) };
        assert_eq!(cfg.global.unix_bind.perms, perms);
        let bind = &cfg.proxies[0].binds[0];
        assert_eq!(bind.addrs, [crate::model::ListenAddr::Unix("/run/rp//s.sock".into())]);
        assert_eq!(bind.unix_perms, perms);
        let cfg = parse_ok("global\n unix-bind user root group root mode x\n");
        assert_eq!(cfg.global.unix_bind.perms, UnixPerms { mode: None, uid: Some(0), gid: Some(0) });
        assert_eq!(
            alerts("global\n unix-bind owner x\n"),
            ["'unix-bind' only supports the 'prefix', 'mode', 'uid', 'gid', 'user' and 'group' options."]
        );
        assert_eq!(alerts("global\n unix-bind prefix\n"), ["unix_bind 'prefix' expects a path as an argument."]);
        assert_eq!(
            alerts("global\n unix-bind user no-such-user-rp\n"),
            ["'unix-bind' : 'no-such-user-rp' unknown user."]
        );
        assert_eq!(
            warnings("global\n unix-bind prefix /a\n unix-bind prefix /b\n"),
            ["unix-bind 'prefix' already specified. Continuing."]
        );
    }
}
