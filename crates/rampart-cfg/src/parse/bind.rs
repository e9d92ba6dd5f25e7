//! `bind <addr>[,<addr>...] [options]` lines.
//!
//! HAProxy counterparts: the `bind` branch of `cfg_parse_listen()`, `str2listener()`
//! (src/cfgparse.c) and `bind_parse_args_list()` (src/listener.c).

use crate::kw::{self, Support};
use crate::model::Bind;

use super::addr::parse_listen_addrs;
use super::ctx::Ctx;
use super::{arg, not_yet};

pub(super) fn parse_bind(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.is_defaults() {
        cx.alert("'bind' not allowed in 'defaults' section.");
        return;
    }
    // COMPAT: HAProxy warns and still builds the listeners of a backend, which are then
    // never used; we only warn.
    if cx.ignored_without(true, "bind", "") {
        return;
    }
    let section = cx.pb.kind.section_word();
    let span = cx.span.clone();
    let mut bind = bind_line(words, section, &span, &mut |m| cx.alert(m));
    if let Some(Err(msg)) = bind.as_mut().and_then(|b| {
        let ctx = &b.ctx;
        b.ssl
            .as_deref_mut()
            .map(|ssl| super::crt_store::resolve_bind_crts(ssl, cx.global_ssl).map_err(|m| format!("{ctx} : {m}")))
    }) {
        cx.alert(msg);
        return;
    }
    if let Some(b) = &bind {
        if let Some(msg) = id_taken(b, &cx.pb.px.binds) {
            cx.alert(msg);
            return;
        }
        if b.nice.is_some() {
            let why = "no task scheduler with priorities: each connection is a task served in turn";
            cx.warning(format!("{} : 'nice' is accepted but has no effect in rampart ({why}); ignored.", b.ctx));
        }
    }
    if let Some(b) = &mut bind {
        apply_unix_bind(b, cx.unix_bind);
        for word in cli_options(words) {
            cx.warning(format!(
                "{} : '{word}' only applies to a 'stats socket' (the CLI); it has no effect on a proxy's 'bind' line.",
                b.ctx
            ));
        }
        if let Some(v) = process_option(words) {
            cx.warning(format!("{} : 'process {v}' on 'bind' lines is deprecated and will be removed in 2.7.", b.ctx));
        }
    }
    cx.pb.px.binds.extend(bind);
}

/// HAProxy's message when `b`'s `id` is the one of an earlier line of the proxy.
fn id_taken(b: &Bind, earlier: &[Bind]) -> Option<String> {
    let id = b.id?;
    let other = earlier.iter().find(|o| o.id == Some(id))?;
    let spec = other.ctx.strip_prefix("'bind ").and_then(|r| r.split('\'').next()).unwrap_or("");
    Some(format!(
        "{} : 'id' : custom id {id} already used at {}:{} ('bind {spec}')",
        b.ctx, other.span.file, other.span.line
    ))
}

/// The global `unix-bind` settings on a proxy's `bind` line: the prefix before each unix
/// path (as text, as HAProxy's `str2sa_range()` prepends it), the socket file's mode and
/// owner.
fn apply_unix_bind(bind: &mut Bind, ub: &crate::model::UnixBind) {
    bind.unix_perms = ub.perms;
    let Some(prefix) = &ub.prefix else { return };
    for addr in &mut bind.addrs {
        if let crate::model::ListenAddr::Unix(path) = addr {
            let mut full = prefix.clone().into_os_string();
            full.push(path.as_os_str());
            *path = full.into();
        }
    }
}

/// A `bind <addr> [options]` line of section `section` (a proxy or a `log-forward`);
/// `None` after the alerts of a refused line.
pub(super) fn bind_line(
    words: &[String],
    section: &str,
    span: &crate::span::Span,
    alert: &mut dyn FnMut(String),
) -> Option<Bind> {
    let spec = arg(words, 1);
    if spec.is_empty() {
        alert("'bind' expects {<path>|[addr1]:port1[-end1]}{,[addr]:port[-end]}... as arguments.".into());
        return None;
    }
    let addrs = match parse_listen_addrs(spec) {
        Ok(a) => a,
        Err(e) => {
            alert(format!("'bind' : {e}"));
            return None;
        }
    };
    let ctx = format!("'bind {spec}' in section '{section}'");
    let opts = parse_bind_options(alert, &words[2..], &ctx)?;
    let v6only = if opts.v6only { Some(true) } else { opts.v4v6.then_some(false) };
    if opts.id.is_some() && addrs.len() > 1 {
        alert(format!("{ctx} : 'id' can only be used with a single socket"));
        return None;
    }
    let BindOpts { name, backlog, accept_proxy, mss, defer_accept, tfo, tcp_ut, ssl, proto, .. } = opts;
    let BindOpts { id, maxconn, interface, transparent, nice, .. } = opts;
    Some(Bind {
        addrs,
        name,
        v6only,
        backlog,
        accept_proxy,
        mss,
        defer_accept,
        tfo,
        tcp_ut,
        ctx,
        ssl,
        proto,
        id,
        maxconn,
        interface,
        transparent,
        nice,
        unix_perms: Default::default(),
        span: span.clone(),
    })
}

/// The supported options of one `bind` line.
#[derive(Default)]
struct BindOpts {
    name: Option<String>,
    v4v6: bool,
    v6only: bool,
    backlog: Option<u32>,
    accept_proxy: bool,
    mss: Option<i32>,
    defer_accept: bool,
    tfo: bool,
    tcp_ut: Option<u32>,
    ssl: Option<Box<crate::model::BindSsl>>,
    proto: Option<crate::model::BindProto>,
    id: Option<u32>,
    maxconn: Option<u32>,
    interface: Option<String>,
    transparent: bool,
    nice: Option<i32>,
}

/// Parses the options after the address; `None` on error (already reported). A
/// refused option does not stop the others from being checked, so that one run lists
/// every refusal of the line; an unknown word does, since how many words it takes is
/// unknown (HAProxy stops at the first error of a line).
fn parse_bind_options(alert: &mut dyn FnMut(String), opts: &[String], ctx: &str) -> Option<BindOpts> {
    let mut out = BindOpts::default();
    let mut ok = true;
    let mut i = 0;
    while let Some(word) = opts.get(i) {
        let Some(k) = kw::bind_option(word) else {
            let msg = match kw::suggest_bind_option(word) {
                Some(best) => format!("{ctx}: unknown keyword '{word}'; did you mean '{best}' maybe ?"),
                None => format!("{ctx}: unknown keyword '{word}'."),
            };
            alert(msg);
            return None;
        };
        i += 1 + k.args;
        if k.support == Support::No {
            alert(format!("{ctx} : {}", not_yet(word)));
            ok = false;
            continue;
        }
        let value = opts.get(i - k.args).filter(|v| k.args > 0 && !v.is_empty());
        if let Err(msg) = apply_bind_option(&mut out, k.name, value) {
            alert(format!("{ctx} : {msg}"));
            ok = false;
        }
    }
    ok.then_some(out)
}

/// Applies one supported option; `Err` is the message after the line's context.
fn apply_bind_option(out: &mut BindOpts, name: &str, value: Option<&String>) -> Result<(), String> {
    match (name, value) {
        ("v4v6", _) => out.v4v6 = true,
        ("v6only", _) => out.v6only = true,
        ("accept-proxy", _) => out.accept_proxy = true,
        ("defer-accept", _) => out.defer_accept = true,
        ("tfo", _) => out.tfo = true,
        ("tcp-ut", Some(v)) => out.tcp_ut = Some(parse_tcp_ut(v)?),
        ("tcp-ut", None) => return Err("'tcp-ut' : missing TCP User Timeout value".into()),
        ("mss", v) => {
            // strtol() as HAProxy reads it: leading digits, 0 when none
            let n = v.map_or(0, |v| super::value::atol(v));
            if n == 0 || n.abs() > 65535 {
                return Err("'mss' : expects an MSS with and absolute value between 1 and 65535".into());
            }
            out.mss = i32::try_from(n).ok();
        }
        ("name", Some(n)) => out.name = Some(n.clone()),
        ("id", v) => out.id = Some(parse_id(v.map_or("", String::as_str))?),
        // `maxconn 0`: the frontend's limit only
        ("maxconn", Some(v)) => match super::value::atol(v) {
            n if n < 0 => return Err(format!("'maxconn' : invalid value {n}, must be >= 0")),
            n => out.maxconn = u32::try_from(n).ok().filter(|&n| n > 0),
        },
        ("maxconn", None) => return Err("'maxconn' : missing value".into()),
        ("interface", Some(v)) => out.interface = Some(v.clone()),
        ("interface", None) => return Err("'interface' : missing interface name".into()),
        ("transparent", _) => out.transparent = true,
        ("nice", Some(v)) => match super::value::atol(v) {
            n if !(-1024..=1024).contains(&n) => {
                return Err(format!("'nice' : invalid value {n}, allowed range is -1024..1024"))
            }
            n => out.nice = i32::try_from(n).ok(),
        },
        ("nice", None) => return Err("'nice' : missing value".into()),
        ("name", None) => return Err("'name' : missing name".into()),
        ("backlog", Some(v)) => out.backlog = parse_backlog(v)?,
        ("backlog", None) => return Err("'backlog' : missing value".into()),
        ("proto", Some(v)) => out.proto = Some(parse_proto(v)?),
        ("proto", None) => return Err("'proto' : missing MUX protocol name".into()),
        ("expose-fd" | "level" | "severity-output", v) => check_cli_option(name, v.map_or("", String::as_str))?,
        ("process", v) => check_process(v.map_or("", String::as_str))?,
        (n, v) if super::ssl::is_bind_ssl_option(n) => {
            super::ssl::apply_bind_ssl(out.ssl.get_or_insert_default(), n, v)?
        }
        // A table entry marked supported without a parser here: refuse, never ignore.
        (other, _) => return Err(not_yet(other)),
    }
    Ok(())
}

/// `id <n>`: the listener's number (`so_id`), a positive integer written in full.
fn parse_id(v: &str) -> Result<u32, String> {
    if v.is_empty() {
        return Err("'id' : expects an integer argument".into());
    }
    let n: i64 = v.parse().map_err(|_| format!("'id' : expects an integer argument, found '{v}'"))?;
    u32::try_from(n)
        .ok()
        .filter(|&n| n > 0 && n <= i32::MAX as u32)
        .ok_or_else(|| "'id' : custom id has to be > 0".into())
}

/// `process <process-set>`, deprecated in HAProxy 2.6: with threads there is one
/// process, so the set must name it (`1`, `all`, `odd` ...) and changes nothing; a
/// thread set (`process 1/2`, HAProxy's way to bind some threads only) is refused, as
/// `thread` is.
fn check_process(v: &str) -> Result<(), String> {
    let (procs, threads) = match v.split_once('/') {
        Some((p, t)) => (p, Some(t)),
        None => (v, None),
    };
    if !matches!(procs, "all" | "odd" | "even") {
        let dash = procs.find('-');
        let stray = procs.char_indices().any(|(i, c)| !c.is_ascii_digit() && Some(i) != dash);
        let in_range = |t: &str| t.is_empty() || t.trim_start_matches('0') == "1";
        let ok = !stray
            && match dash {
                Some(i) => !procs[..i].is_empty() && in_range(&procs[..i]) && in_range(&procs[i + 1..]),
                None => !procs.is_empty() && in_range(procs),
            };
        if stray {
            return Err(format!("'process' : '{procs}' is not a valid number/range."));
        }
        if !ok {
            return Err(format!("'process' : '{procs}' is not a valid number/range. It supports numbers from 1 to 1."));
        }
    }
    match threads {
        Some(_) => Err(format!(
            "'process {v}' is not supported yet: a thread set binds some threads only, and rampart runs every \
             listener on all threads (use 'process {procs}', or none)"
        )),
        None => Ok(()),
    }
}

/// The CLI's bind options (`expose-fd listeners`, `level`, `severity-output`), checked
/// as HAProxy's `bind_parse_expose_fd()`, `bind_parse_level()` and
/// `bind_parse_severity_output()` (src/cli.c) check them. They mean something on a
/// `stats socket` only (parsed there); on a proxy's `bind` line HAProxy 2.6 accepts
/// them with no effect, rampart too, with a warning ([`cli_options`]).
fn check_cli_option(name: &str, v: &str) -> Result<(), String> {
    let (missing, allowed, quoted): (&str, &[&str], &str) = match name {
        "expose-fd" => ("fd type", &["listeners"], "'listeners'"),
        "level" => ("level", &["user", "operator", "admin"], "'user', 'operator', and 'admin'"),
        _ => ("severity format", &["none", "number", "string"], "'none', 'number', and 'string'"),
    };
    match v {
        "" => Err(format!("'{name}' : missing {missing}")),
        v if allowed.contains(&v) => Ok(()),
        v => Err(format!("'{name}' only supports {quoted} (got '{v}')")),
    }
}

/// The CLI's bind options on a proxy's `bind` line, for their warning.
fn cli_options(words: &[String]) -> Vec<&str> {
    let mut out = Vec::new();
    let mut i = 2;
    while let Some(w) = words.get(i) {
        let args = crate::kw::bind_option(w).map_or(0, |k| k.args);
        if matches!(w.as_str(), "expose-fd" | "level" | "severity-output") {
            out.push(w.as_str());
        }
        i += 1 + args;
    }
    out
}

/// The value of a `process` option of a `bind` line, for its deprecation warning.
fn process_option(words: &[String]) -> Option<&str> {
    let i = words.iter().skip(2).position(|w| w == "process")? + 3;
    Some(words.get(i).map_or("", String::as_str))
}

/// `proto`'s multiplexer name (whether the frontend's mode can use it is checked
/// once the section is read).
fn parse_proto(v: &str) -> Result<crate::model::BindProto, String> {
    use crate::model::BindProto;
    match v {
        "h1" => Ok(BindProto::H1),
        "h2" => Ok(BindProto::H2),
        "none" => Ok(BindProto::None),
        "fcgi" => Ok(BindProto::Fcgi),
        _ => Err(format!("'proto' :  unknown MUX protocol '{v}'")),
    }
}

/// `tcp-ut`'s delay (milliseconds unless a unit is given), as HAProxy reads it.
fn parse_tcp_ut(v: &str) -> Result<u32, String> {
    match super::value::parse_time_ms(v) {
        Ok(t) if t.trailing.is_none() => Ok(t.ms),
        _ => Err("'tcp-ut' : expects a positive delay in milliseconds".into()),
    }
}

/// `backlog`'s value as HAProxy reads it (`atol`: leading digits, anything else is 0);
/// 0 means the frontend's backlog. A negative value is an error.
fn parse_backlog(v: &str) -> Result<Option<u32>, String> {
    let (neg, digits) = match v.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, v.strip_prefix('+').unwrap_or(v)),
    };
    let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
    let n: u64 = digits[..end].parse().unwrap_or(0);
    if neg && n > 0 {
        return Err(format!("'backlog' : invalid value -{n}, must be > 0"));
    }
    Ok(u32::try_from(n).ok().filter(|&n| n > 0))
}

#[cfg(test)]
mod tests {
    use crate::model::ListenAddr;
    use crate::parse::tests::{alerts, parse_ok, warnings};

    #[test]
    fn bind_lines() {
        let cfg = parse_ok("frontend f\n bind :80,127.0.0.1:81-82 name web\n bind unix@/tmp/x.sock\n bind fd@4\n");
        let binds = &cfg.proxies[0].binds;
        assert_eq!(binds.len(), 3);
        assert_eq!(binds[0].addrs.len(), 3);
        assert_eq!(binds[0].name.as_deref(), Some("web"));
        assert_eq!(binds[0].span.line, 2);
        assert_eq!(binds[1].addrs, [ListenAddr::Unix("/tmp/x.sock".into())]);
        assert_eq!(binds[2].addrs, [ListenAddr::Fd(4)]);
    }

    #[test]
    fn cli_bind_options_are_checked_and_warned_about_on_a_proxy() {
        let text = "frontend f\n bind :80 expose-fd listeners level admin severity-output number name x\n";
        assert_eq!(parse_ok(text).proxies[0].binds[0].name.as_deref(), Some("x"));
        let w = warnings(text);
        assert_eq!(w.len(), 3, "{w:?}");
        assert_eq!(
            w[0],
            "'bind :80' in section 'frontend' : 'expose-fd' only applies to a 'stats socket' (the CLI); it has no \
             effect on a proxy's 'bind' line."
        );
        assert!(w[1].contains("'level' only applies") && w[2].contains("'severity-output' only applies"), "{w:?}");
        assert_eq!(
            alerts("frontend f\n bind :80 expose-fd bogus\n"),
            ["'bind :80' in section 'frontend' : 'expose-fd' only supports 'listeners' (got 'bogus')"]
        );
        assert_eq!(
            alerts("frontend f\n bind :80 level root\n"),
            ["'bind :80' in section 'frontend' : 'level' only supports 'user', 'operator', and 'admin' (got 'root')"]
        );
        assert_eq!(
            alerts("frontend f\n bind :80 expose-fd\n"),
            ["'bind :80' in section 'frontend' : 'expose-fd' : missing fd type"]
        );
    }

    #[test]
    fn bind_process_takes_the_one_process_and_refuses_thread_sets() {
        let text = "frontend f\n bind :80 process 1\n bind :81 process all\n bind :82 process odd\n";
        assert_eq!(parse_ok(text).proxies[0].binds.len(), 3);
        assert_eq!(
            warnings("frontend f\n bind :80 process all\n"),
            ["'bind :80' in section 'frontend' : 'process all' on 'bind' lines is deprecated and will be removed in 2.7."]
        );
        assert_eq!(
            alerts("frontend f\n bind :80 process 2\n"),
            ["'bind :80' in section 'frontend' : 'process' : '2' is not a valid number/range. It supports numbers from 1 to 1."]
        );
        assert_eq!(
            alerts("frontend f\n bind :80 process x\n"),
            ["'bind :80' in section 'frontend' : 'process' : 'x' is not a valid number/range."]
        );
        let refused = alerts("frontend f\n bind :80 process 1/2\n");
        assert!(refused[0].contains("'process 1/2' is not supported yet"), "{refused:?}");
    }

    #[test]
    fn bind_socket_options() {
        let cfg = parse_ok(
            "frontend f\n bind :::80 v4v6\n bind :::81 v6only\n bind :::82 v4v6 v6only\n bind :83 backlog 16\n \
             bind :84 backlog 0\n bind :85\n",
        );
        let b = &cfg.proxies[0].binds;
        let v6: Vec<_> = b.iter().map(|b| b.v6only).collect();
        assert_eq!(v6, [Some(false), Some(true), Some(true), None, None, None]);
        let backlog: Vec<_> = b.iter().map(|b| b.backlog).collect();
        assert_eq!(backlog, [None, None, None, Some(16), None, None]);
        assert_eq!(
            alerts("frontend f\n bind :80 backlog -3\n"),
            ["'bind :80' in section 'frontend' : 'backlog' : invalid value -3, must be > 0"]
        );
        assert_eq!(
            alerts("frontend f\n bind :80 backlog\n"),
            ["'bind :80' in section 'frontend' : 'backlog' : missing value"]
        );
    }

    #[test]
    fn bind_accept_proxy() {
        let cfg = parse_ok("frontend f\n bind :80 accept-proxy mss 1400\n bind :81 mss -20\n");
        let b = &cfg.proxies[0].binds;
        assert_eq!((b[0].accept_proxy, b[1].accept_proxy), (true, false));
        assert_eq!((b[0].mss, b[1].mss), (Some(1400), Some(-20)));
        assert_eq!(
            alerts("frontend f\n bind :80 mss 0\n"),
            ["'bind :80' in section 'frontend' : 'mss' : expects an MSS with and absolute value between 1 and 65535"]
        );
        let cfg = parse_ok("frontend f\n bind :80 defer-accept tfo tcp-ut 5s\n bind :81 tcp-ut 250\n");
        let b = &cfg.proxies[0].binds;
        assert_eq!((b[0].defer_accept, b[0].tfo, b[0].tcp_ut), (true, true, Some(5000)));
        assert_eq!((b[1].defer_accept, b[1].tfo, b[1].tcp_ut), (false, false, Some(250)));
        assert_eq!(
            alerts("frontend f\n bind :80 tcp-ut 1x\n bind :81 tcp-ut\n"),
            [
                "'bind :80' in section 'frontend' : 'tcp-ut' : expects a positive delay in milliseconds",
                "'bind :81' in section 'frontend' : 'tcp-ut' : missing TCP User Timeout value"
            ]
        );
    }

    #[test]
    fn bind_proto() {
        use crate::model::BindProto;
        let cfg = parse_ok("frontend f\n bind :80 proto h2\n bind :81 proto h1\n bind :82\n bind :83 proto none\n");
        let p: Vec<_> = cfg.proxies[0].binds.iter().map(|b| b.proto).collect();
        assert_eq!(p, [Some(BindProto::H2), Some(BindProto::H1), None, Some(BindProto::None)]);
        assert_eq!(
            alerts("frontend f\n bind :80 proto h3\n"),
            ["'bind :80' in section 'frontend' : 'proto' :  unknown MUX protocol 'h3'"]
        );
        assert!(BindProto::H2.usable(true) && !BindProto::H2.usable(false));
        assert!(BindProto::None.usable(false) && !BindProto::None.usable(true));
        assert!(!BindProto::Fcgi.usable(true) && !BindProto::Fcgi.usable(false));
    }

    #[test]
    fn bind_errors() {
        assert_eq!(
            alerts("frontend f\n bind :80 ssl crt-list /x.pem allow-0rtt\n"),
            ["'bind :80' in section 'frontend' : 'allow-0rtt' is not supported yet"]
        );
        // every refusal of the line is reported, up to an unknown word
        assert_eq!(
            alerts("frontend f\n bind :80 accept-proxy backlog -1 name n shards 2 bogus\n"),
            [
                "'bind :80' in section 'frontend' : 'backlog' : invalid value -1, must be > 0",
                "'bind :80' in section 'frontend' : 'shards' is not supported yet",
                "'bind :80' in section 'frontend': unknown keyword 'bogus'."
            ]
        );
        assert_eq!(
            alerts("listen f\n bind :80 nme x\n"),
            ["'bind :80' in section 'listen': unknown keyword 'nme'; did you mean 'name' maybe ?"]
        );
        assert_eq!(
            alerts("frontend f\n bind :80 name\n"),
            ["'bind :80' in section 'frontend' : 'name' : missing name"]
        );
        assert_eq!(alerts("frontend f\n bind 127.0.0.1\n"), ["'bind' : missing port specification in '127.0.0.1'"]);
        assert_eq!(
            alerts("frontend f\n bind\n"),
            ["'bind' expects {<path>|[addr1]:port1[-end1]}{,[addr]:port[-end]}... as arguments."]
        );
        assert_eq!(alerts("defaults\n bind :80\n"), ["'bind' not allowed in 'defaults' section."]);
        assert_eq!(
            warnings("backend b\n bind :80\n"),
            ["'bind' ignored because backend 'b' has no frontend capability."]
        );
    }
}
