//! `option <name> [args]` in proxy and `defaults` sections, with the `no` / `default`
//! prefixes.
//!
//! HAProxy counterpart: the `option` branch of `cfg_parse_listen()` and the `cfg_opts`
//! tables (src/cfgparse-listen.c, src/proxy.c).

use crate::kw::{self, Support};
use crate::model::{
    ForwardFor, HttpConnMode, OriginalTo, RestrictHdrNames, CLF_HTTP_LOG_FORMAT, HTTPS_LOG_FORMAT, HTTP_LOG_FORMAT,
    TCP_LOG_FORMAT,
};

use super::ctx::{Ctx, Kind};
use super::value::{atol, parse_net};
use super::{arg, not_yet, Modifier};

pub(super) fn parse_option(cx: &mut Ctx<'_>, words: &[String], kwm: Modifier) {
    let name = arg(words, 1);
    if name.is_empty() {
        cx.alert("'option' expects an option name.");
        return;
    }
    let before = cx.diags.len();
    dispatch_option(cx, words, kwm, name);
    let refused = cx.diags[before..].iter().any(|d| d.level == crate::diag::Level::Alert);
    if kwm == Modifier::Std && !refused {
        cx.note(&format!("option {name}"));
    }
}

fn dispatch_option(cx: &mut Ctx<'_>, words: &[String], kwm: Modifier, name: &str) {
    let Some(opt) = kw::option_kw(name) else {
        let msg = match kw::suggest_option(name) {
            Some(best) => format!("unknown option '{name}'; did you mean '{best}' maybe ?"),
            None => format!("unknown option '{name}'."),
        };
        cx.alert(msg);
        return;
    };
    match (opt.support, name) {
        (Support::Rejected, _) => cx.alert_legacy(removed_option(name), words),
        // HAProxy ignores the on/off options outside the sections they apply to, with a
        // warning; rampart does the same rather than refuse one it lacks.
        (Support::No, _) if opt.negatable && misplaced(cx, opt.caps) => {
            cx.ignored_without(!opt.caps.has(kw::Caps::BACKEND), name, "");
        }
        (Support::No, _) => cx.alert(not_yet(&format!("option {name}"))),
        (
            _,
            "dontlognull"
            | "abortonclose"
            | "log-health-checks"
            | "http-buffer-request"
            | "dontlog-normal"
            | "log-separate-errors"
            | "logasap"
            | "allbackups"
            | "persist"
            | "transparent"
            | "http-pretend-keepalive"
            | "accept-invalid-http-request"
            | "accept-invalid-http-response"
            | "socket-stats"
            | "http-ignore-probes"
            | "disable-h2-upgrade"
            | "prefer-last-server"
            | "http-use-proxy-header"
            | "idle-close-on-response"
            | "checkcache"
            | "independent-streams"
            | "h1-case-adjust-bogus-client"
            | "h1-case-adjust-bogus-server",
        ) => flag_option(cx, words, kwm, name),
        (_, "nolinger") => nolinger_option(cx, words, kwm),
        (_, "httpclose" | "http-server-close" | "http-keep-alive") => conn_mode_option(cx, words, kwm, name),
        (_, "tcpka" | "clitcpka" | "srvtcpka") => tcpka_option(cx, words, kwm, name),
        // rampart always forwards data as it comes (no delay) and splices where it pays
        // off: these options ask for what it does anyway.
        (_, "http-no-delay" | "splice-auto" | "splice-request" | "splice-response") if kwm == Modifier::Std => {
            let _ = cx.too_many(words, 0, 1);
        }
        (_, "http-no-delay") => {
            // the HAProxy default (small delays allowed); rampart never delays
            let _ = cx.too_many(words, 0, 1);
        }
        // rampart splices where it pays off and cannot be told not to yet
        (_, "splice-auto" | "splice-request" | "splice-response") => {
            let prefix = if kwm == Modifier::No { "no" } else { "default" };
            cx.alert(not_yet(&format!("{prefix} option {name}")));
        }
        (_, "redispatch") => redispatch_option(cx, words, kwm),
        // COMPAT: ACK-saving socket tweaks (TCP_QUICKACK off on accept or connect);
        // rampart leaves acknowledgements to the kernel whether they are on or off.
        (_, "tcp-smart-accept" | "tcp-smart-connect") => {
            let _ = cx.too_many(words, 0, 1);
        }
        _ if kwm != Modifier::Std => {
            cx.alert(format!("negation/default is not supported for option '{name}'."));
        }
        (_, "httplog") => httplog_option(cx, words),
        (_, "httpslog") => httpslog_option(cx, words),
        (_, "httpchk") => super::healthcheck::parse_option_httpchk(cx, words),
        (_, "external-check") => super::subsys::parse_option_external_check(cx, words),
        (
            _,
            "tcp-check" | "redis-check" | "smtpchk" | "mysql-check" | "pgsql-check" | "ldap-check" | "spop-check"
            | "ssl-hello-chk",
        ) => super::tcpcheck::parse_proto_option(cx, words, name),
        (_, "tcplog") => tcplog_option(cx, words),
        (_, "forwardfor") => forwardfor_option(cx, words),
        (_, "originalto") => originalto_option(cx, words),
        (_, "http-restrict-req-hdr-names") => restrict_hdr_names_option(cx, words),
        _ => cx.alert(not_yet(&format!("option {name}"))),
    }
}

/// `true` when a frontend-only section uses a backend-only option or the reverse.
fn misplaced(cx: &Ctx<'_>, caps: kw::Caps) -> bool {
    let cap = cx.cap();
    (cap.frontend && !cap.backend && !caps.has(kw::Caps::FRONTEND))
        || (cap.backend && !cap.frontend && !caps.has(kw::Caps::BACKEND))
}

/// HAProxy 2.6's error for an option it removed.
fn removed_option(name: &str) -> String {
    match name {
        "forceclose" => format!(
            "option '{name}' is not supported any more since HAProxy 2.0, please just remove it, or use 'option httpclose' if absolutely needed."
        ),
        "http-tunnel" => format!(
            "option '{name}' is not supported any more since HAProxy 2.1, please just remove it, it shouldn't be needed."
        ),
        _ => format!(
            "option '{name}' is not supported any more since HAProxy 2.5. This option stopped working in HAProxy 1.9 and usually had nasty side effects. It can be more reliably implemented with combinations of 'http-request set-dst' and 'http-request set-uri', and even 'http-request do-resolve' if DNS resolution is desired."
        ),
    }
}

/// The plain on/off options of HAProxy's `cfg_opts` table.
fn flag_option(cx: &mut Ctx<'_>, words: &[String], kwm: Modifier, name: &str) {
    if cx.too_many(words, 0, 1) {
        return;
    }
    let need_frontend = matches!(
        name,
        "dontlognull"
            | "dontlog-normal"
            | "log-separate-errors"
            | "logasap"
            | "accept-invalid-http-request"
            | "socket-stats"
            | "http-ignore-probes"
            | "disable-h2-upgrade"
            | "http-use-proxy-header"
            | "idle-close-on-response"
            | "h1-case-adjust-bogus-client"
    );
    let both_sides = matches!(name, "http-buffer-request" | "independent-streams");
    if !both_sides && cx.ignored_without(need_frontend, name, "") {
        return;
    }
    let on = kwm == Modifier::Std;
    let opts = &mut cx.pb.px.options;
    match name {
        "dontlognull" => opts.dontlognull = on,
        "dontlog-normal" => opts.dontlog_normal = on,
        "log-separate-errors" => opts.log_separate_errors = on,
        "logasap" => opts.logasap = on,
        "log-health-checks" => opts.log_health_checks = on,
        "http-buffer-request" => opts.http_buffer_request = on,
        "allbackups" => opts.allbackups = on,
        "persist" => opts.persist = on,
        "transparent" => opts.transparent = on,
        "http-pretend-keepalive" => opts.http_pretend_keepalive = on,
        "accept-invalid-http-request" => opts.accept_invalid_req = on,
        "accept-invalid-http-response" => opts.accept_invalid_res = on,
        "socket-stats" => opts.socket_stats = on,
        "http-ignore-probes" => opts.http_ignore_probes = on,
        "disable-h2-upgrade" => opts.disable_h2_upgrade = on,
        "prefer-last-server" => opts.prefer_last_server = on,
        "http-use-proxy-header" => opts.http_use_proxy_header = on,
        "idle-close-on-response" => opts.idle_close_on_response = on,
        "checkcache" => opts.checkcache = on,
        "independent-streams" => opts.independent_streams = on,
        "h1-case-adjust-bogus-client" => opts.h1_case_adjust_bogus_client = on,
        "h1-case-adjust-bogus-server" => opts.h1_case_adjust_bogus_server = on,
        _ => opts.abortonclose = on,
    }
}

/// `nolinger`: connections of this proxy's side(s) are reset when closed (SO_LINGER 0).
fn nolinger_option(cx: &mut Ctx<'_>, words: &[String], kwm: Modifier) {
    if !cx.too_many(words, 0, 1) {
        cx.pb.px.options.nolinger = kwm == Modifier::Std;
    }
}

/// `tcpka` (both sides), `clitcpka`, `srvtcpka`: SO_KEEPALIVE on client and/or server
/// connections.
fn tcpka_option(cx: &mut Ctx<'_>, words: &[String], kwm: Modifier, name: &str) {
    if cx.too_many(words, 0, 1) {
        return;
    }
    if name != "tcpka" && cx.ignored_without(name == "clitcpka", name, "") {
        return;
    }
    let on = kwm == Modifier::Std;
    let opts = &mut cx.pb.px.options;
    if name != "srvtcpka" {
        opts.clitcpka.on = on;
    }
    if name != "clitcpka" {
        opts.srvtcpka.on = on;
    }
}

/// `httpclose`, `http-server-close`, `http-keep-alive`: one mode at a time; `no option
/// X` only cancels X if it is the mode in effect.
fn conn_mode_option(cx: &mut Ctx<'_>, words: &[String], kwm: Modifier, name: &str) {
    if cx.too_many(words, 0, 1) {
        return;
    }
    let mode = match name {
        "httpclose" => HttpConnMode::Close,
        "http-server-close" => HttpConnMode::ServerClose,
        _ => HttpConnMode::KeepAlive,
    };
    let cur = &mut cx.pb.px.options.http_conn_mode;
    match kwm {
        Modifier::Std => *cur = mode,
        Modifier::No if *cur == mode => *cur = HttpConnMode::default(),
        Modifier::No => {}
        Modifier::Default => cx.alert(format!("negation/default is not supported for option '{name}'.")),
    }
}

fn redispatch_option(cx: &mut Ctx<'_>, words: &[String], kwm: Modifier) {
    if cx.ignored_without(false, "redispatch", "") {
        return;
    }
    if kwm == Modifier::Std && !arg(words, 2).is_empty() && atol(arg(words, 2)) != -1 {
        cx.alert(not_yet("option redispatch <interval>"));
        return;
    }
    cx.pb.px.options.redispatch = kwm == Modifier::Std;
}

/// The log format currently set, for the "overrides previous" warning of `defaults`.
pub(super) fn current_log_format(cx: &Ctx<'_>) -> Option<&'static str> {
    let o = &cx.pb.px.options;
    if o.httplog && o.log_format.as_deref() == Some(HTTPS_LOG_FORMAT) {
        Some("option httpslog")
    } else if o.httplog {
        Some("option httplog")
    } else if o.tcplog {
        Some("option tcplog")
    } else if o.log_format.is_some() {
        Some("log-format")
    } else {
        None
    }
}

fn httplog_option(cx: &mut Ctx<'_>, words: &[String]) {
    match arg(words, 2) {
        "" => {}
        "clf" => {
            set_log_format(cx, true, "httplog");
            cx.pb.px.options.log_format = cx.pb.px.options.httplog.then(|| CLF_HTTP_LOG_FORMAT.to_owned());
            return;
        }
        _ => {
            cx.alert("keyword 'httplog' only supports option 'clf'.");
            return;
        }
    }
    set_log_format(cx, true, "httplog");
}

/// `option httpslog`: HAProxy's HTTP format followed by the TLS fields.
fn httpslog_option(cx: &mut Ctx<'_>, words: &[String]) {
    // as HAProxy, the "overrides previous" warning of `defaults` says 'option httplog'
    set_log_format(cx, true, "httpslog");
    if cx.pb.px.options.httplog {
        cx.pb.px.options.log_format = Some(HTTPS_LOG_FORMAT.to_owned());
    }
    cx.too_many(words, 0, 1);
}

fn tcplog_option(cx: &mut Ctx<'_>, words: &[String]) {
    set_log_format(cx, false, "tcplog");
    cx.too_many(words, 0, 1);
}

/// Sets HAProxy's HTTP (or TCP) format; `option` is the option named when a backend
/// ignores it.
fn set_log_format(cx: &mut Ctx<'_>, http: bool, option: &str) {
    let name = if http { "httplog" } else { "tcplog" };
    if cx.is_defaults() {
        if let Some(old) = current_log_format(cx) {
            cx.warning(format!("'option {name}' overrides previous '{old}' in 'defaults' section."));
        }
    }
    let opts = &mut cx.pb.px.options;
    opts.httplog = http;
    opts.tcplog = !http;
    opts.log_format = Some(if http { HTTP_LOG_FORMAT } else { TCP_LOG_FORMAT }.to_owned());
    opts.log_format_span = Some(cx.span.clone());
    cx.pb.logformat_span = Some(cx.span.clone());
    if cx.pb.kind == Kind::Backend {
        let msg = format!("backend '{}' : 'option {option}' directive is ignored in backends.", cx.pb.px.name);
        cx.warning(msg);
        let opts = &mut cx.pb.px.options;
        opts.httplog = false;
        opts.tcplog = false;
        opts.log_format = None;
    }
}

fn forwardfor_option(cx: &mut Ctx<'_>, words: &[String]) {
    let mut ff = ForwardFor { except: None, header: "x-forwarded-for".to_owned(), if_none: false };
    let mut i = 2;
    while let Some(word) = words.get(i) {
        match word.as_str() {
            "except" => match words.get(i + 1).and_then(|n| parse_net(n)) {
                Some(net) => ff.except = Some(net),
                None => {
                    cx.alert("'option forwardfor except' expects <address>[/mask] as argument.");
                    return;
                }
            },
            "header" => match words.get(i + 1).filter(|h| !h.is_empty()) {
                Some(h) => ff.header = h.clone(),
                None => {
                    cx.alert("'option forwardfor header' expects <header_name> as argument.");
                    return;
                }
            },
            "if-none" => {
                ff.if_none = true;
                i += 1;
                continue;
            }
            _ => {
                cx.alert("'option forwardfor' only supports optional values: 'except', 'header' and 'if-none'.");
                return;
            }
        }
        i += 2;
    }
    cx.pb.px.options.forwardfor = Some(ff);
}

/// `option originalto [except <net>] [header <name>]`.
fn originalto_option(cx: &mut Ctx<'_>, words: &[String]) {
    let mut ot = OriginalTo { except: None, header: "x-original-to".to_owned() };
    let mut i = 2;
    while let Some(word) = words.get(i) {
        match word.as_str() {
            "except" => match words.get(i + 1).and_then(|n| parse_net(n)) {
                Some(net) => ot.except = Some(net),
                None => {
                    cx.alert("'option originalto except' expects <address>[/mask] as argument.");
                    return;
                }
            },
            "header" => match words.get(i + 1).filter(|h| !h.is_empty()) {
                Some(h) => ot.header = h.clone(),
                None => {
                    cx.alert("'option originalto header' expects <header_name> as argument.");
                    return;
                }
            },
            _ => {
                cx.alert("'option originalto' only supports optional values: 'except' and 'header'.");
                return;
            }
        }
        i += 2;
    }
    cx.pb.px.options.originalto = Some(ot);
}

/// `option http-restrict-req-hdr-names preserve|delete|reject`.
fn restrict_hdr_names_option(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.too_many(words, 2, 0) {
        return;
    }
    let policy = match arg(words, 2) {
        "preserve" => RestrictHdrNames::Preserve,
        "delete" => RestrictHdrNames::Delete,
        "reject" => RestrictHdrNames::Reject,
        "" => {
            cx.alert("missing parameter. option 'http-restrict-req-hdr-names' expects 'preserve', 'reject' or 'delete' option.");
            return;
        }
        other => {
            cx.alert(format!(
                "invalid parameter '{other}'. option 'http-restrict-req-hdr-names' expects 'preserve', 'reject' or 'delete' option."
            ));
            return;
        }
    };
    cx.pb.px.options.restrict_req_hdr_names = policy;
    cx.pb.px.options.restrict_req_hdr_names_set = true;
}

#[cfg(test)]
mod tests {
    use crate::model::{HttpConnMode, IpNet, RestrictHdrNames};
    use crate::parse::tests::{alerts, parse_ok, warnings};

    #[test]
    fn tcp_smart_options_are_accepted() {
        let cfg = parse_ok("defaults\n option tcp-smart-accept\n no option tcp-smart-connect\nlisten l\n bind :80\n");
        assert_eq!(cfg.proxies.len(), 1);
        assert_eq!(alerts("listen l\n option tcp-smart-accept x\n").len(), 1, "no argument");
    }

    #[test]
    fn boolean_options_and_negation() {
        let cfg = parse_ok(
            "defaults\n option dontlognull\n option redispatch\n option abortonclose\n\
             frontend f\n bind :80\n no option dontlognull\n default_backend b\n\
             backend b\n no option redispatch\n",
        );
        assert!(!cfg.proxies[0].options.dontlognull);
        assert!(cfg.proxies[0].options.abortonclose, "inherited from defaults");
        assert!(cfg.proxies[1].options.dontlognull, "inherited");
        assert!(!cfg.proxies[1].options.redispatch);
    }

    #[test]
    fn connection_modes_override_each_other() {
        let cfg = parse_ok(
            "defaults\n mode http\n option httpclose\nbackend a\nbackend b\n option http-server-close\n\
             backend c\n no option http-server-close\nbackend d\n no option httpclose\n",
        );
        let modes: Vec<_> = cfg.proxies.iter().map(|p| p.options.http_conn_mode).collect();
        assert_eq!(
            modes,
            [HttpConnMode::Close, HttpConnMode::ServerClose, HttpConnMode::Close, HttpConnMode::KeepAlive]
        );
    }

    #[test]
    fn forwardfor_arguments() {
        let cfg = parse_ok("backend b\n mode http\n option forwardfor except 10.0.0.0/8 header X-Client if-none\n");
        let ff = cfg.proxies[0].options.forwardfor.clone().expect("forwardfor");
        assert_eq!(ff.header, "X-Client");
        assert!(ff.if_none);
        assert_eq!(ff.except, Some(IpNet { addr: "10.0.0.0".parse().expect("ip"), prefix: 8 }));
        let cfg = parse_ok("backend b\n mode http\n option forwardfor\n");
        assert_eq!(cfg.proxies[0].options.forwardfor.as_ref().map(|f| f.header.as_str()), Some("x-forwarded-for"));
    }

    #[test]
    fn rules_options() {
        let cfg = parse_ok(
            "defaults\n mode http\n option http-buffer-request\n\
             frontend f\n bind :80\n option originalto except 127.0.0.0/8 header X-Dst\n\
             option http-restrict-req-hdr-names delete\nbackend b\n no option http-buffer-request\n option originalto\n",
        );
        let (f, b) = (&cfg.proxies[0].options, &cfg.proxies[1].options);
        assert!(f.http_buffer_request && !b.http_buffer_request);
        let ot = f.originalto.as_ref().expect("originalto");
        assert_eq!((ot.header.as_str(), ot.except.map(|n| n.prefix)), ("X-Dst", Some(8)));
        assert_eq!(b.originalto.as_ref().map(|o| o.header.as_str()), Some("x-original-to"));
        assert_eq!(
            (f.restrict_req_hdr_names, b.restrict_req_hdr_names),
            (RestrictHdrNames::Delete, RestrictHdrNames::Preserve)
        );
        let a = |l: &str| alerts(&format!("backend b\n mode http\n {l}\n"));
        assert_eq!(
            a("option originalto except x/99"),
            ["'option originalto except' expects <address>[/mask] as argument."]
        );
        assert_eq!(a("option originalto header"), ["'option originalto header' expects <header_name> as argument."]);
        assert_eq!(
            a("option originalto foo"),
            ["'option originalto' only supports optional values: 'except' and 'header'."]
        );
        assert!(a("option http-restrict-req-hdr-names")[0].starts_with("missing parameter. option 'http-restrict"));
        assert!(a("option http-restrict-req-hdr-names x")[0].starts_with("invalid parameter 'x'. option"));
        assert_eq!(
            a("option http-restrict-req-hdr-names delete x"),
            ["'option' cannot handle unexpected argument 'x'."]
        );
        assert_eq!(a("no option originalto"), ["negation/default is not supported for option 'originalto'."]);
    }

    #[test]
    fn option_errors() {
        assert_eq!(
            alerts("backend b\n option forwardfor except 1.2.3.4/33\n"),
            ["'option forwardfor except' expects <address>[/mask] as argument."]
        );
        assert_eq!(
            alerts("backend b\n option forwardfor foo\n"),
            ["'option forwardfor' only supports optional values: 'except', 'header' and 'if-none'."]
        );
        assert_eq!(
            alerts("backend b\n no option httplog\n"),
            ["negation/default is not supported for option 'httplog'."]
        );
        assert_eq!(
            alerts("backend b\n option dontlognul\n"),
            ["unknown option 'dontlognul'; did you mean 'dontlognull' maybe ?"]
        );
        assert_eq!(alerts("backend b\n option logasap\n"), Vec::<String>::new(), "ignored, as by HAProxy");
        assert_eq!(
            warnings("backend b\n option logasap\n"),
            ["'logasap' ignored because backend 'b' has no frontend capability."]
        );
        assert!(alerts("frontend f\n option httpslog\n").is_empty());
        assert_eq!(alerts("backend b\n option tcplog x\n"), ["'option tcplog' cannot handle unexpected argument 'x'."]);
        assert_eq!(alerts("backend b\n option httplog x\n"), ["keyword 'httplog' only supports option 'clf'."]);
        assert_eq!(alerts("backend b\n option\n"), ["'option' expects an option name."]);
        assert_eq!(
            alerts("backend b\n option redispatch 2\n"),
            ["'option redispatch <interval>' is not supported yet"]
        );
        assert!(alerts("backend b\n option http_proxy\n")[0].contains("not supported any more since HAProxy 2.5"));
    }
}
