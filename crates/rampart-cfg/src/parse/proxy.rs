//! Proxy sections: `defaults`, `frontend`, `backend`, `listen` headers, what a proxy
//! inherits from its `defaults` section, and the dispatch of proxy keywords to their
//! parsers. The section being built and the context keyword parsers get are in `ctx`.
//!
//! HAProxy counterparts: the head of `cfg_parse_listen()` (src/cfgparse-listen.c),
//! `proxy_defproxy_cpy()` (src/proxy.c).

use crate::kw::{self, Support};
use crate::span::Span;

use super::ctx::{fresh_build, Ctx, Kind, ProxyBuild};
use super::inherit::{inherit, take_default_rules, warn_mixed_refs};
use super::value::{atol, invalid_char};
use super::{arg, not_yet, too_many_args, Modifier, Parser};

/// Which section a keyword line belongs to.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target {
    Defaults(usize),
    Proxy(usize),
}

/// Looks a `defaults` section up by name for `from`; reports and returns `None` when it
/// does not exist.
fn find_defaults(p: &mut Parser, name: &str, who: &str, span: &Span) -> Option<usize> {
    let matches: Vec<usize> = (0..p.defaults.len()).filter(|&i| p.defaults[i].px.name == name).collect();
    let Some(&first) = matches.first() else {
        p.alert(span, format!("defaults section '{name}' not found for {who}."));
        return None;
    };
    if let Some(&second) = matches.get(1) {
        let (a, b) = (p.defaults[first].px.span.clone(), p.defaults[second].px.span.clone());
        p.alert(
            span,
            format!("ambiguous defaults section name '{name}' referenced by {who} exists at least at {a} and {b}."),
        );
    }
    if let Some(c) = invalid_char(name) {
        let at = p.defaults[first].px.span.clone();
        p.alert(
            span,
            format!(
                "character '{c}' is not permitted in defaults section name '{name}' when designated by its name (section found at {at})."
            ),
        );
    }
    p.defaults[first].explicit_ref = true;
    Some(first)
}

/// `defaults [<name>] [from <defaults>]`. Returns the new section's index.
pub(crate) fn open_defaults(p: &mut Parser, words: &[String], span: &Span) -> Option<usize> {
    let (name, from_at) = if arg(words, 1) == "from" && words.len() == 3 { ("", 1) } else { (arg(words, 1), 2) };
    let mut pb = match arg(words, from_at) {
        "from" => {
            let who = format!("defaults '{name}'");
            let src = find_defaults(p, arg(words, from_at + 1), &who, span)?;
            let def = &p.defaults[src];
            let pb = inherit(def, name, Kind::Defaults, span);
            let at = def.px.span.clone();
            let (has_rules, has_captures) = (
                def.px.rules.has_rules(),
                !(def.px.captures.request.is_empty() && def.px.captures.response.is_empty()),
            );
            if has_rules {
                p.alert(span, format!("a defaults section cannot inherit from a defaults section defining TCP/HTTP rules (defaults section at {at})."));
            }
            if has_captures {
                p.alert(span, format!("backend or defaults sections cannot inherit from a defaults section defining capptures (defaults section at {at})."));
            }
            pb
        }
        "" => fresh_build(name, Kind::Defaults, span),
        // COMPAT: HAProxy silently ignores extra words here; we say so.
        extra => {
            p.warning(span, format!("'defaults' : unexpected argument '{extra}' ignored."));
            fresh_build(name, Kind::Defaults, span)
        }
    };
    pb.px.span = span.clone();
    p.defaults.push(pb);
    let idx = p.defaults.len() - 1;
    p.last_defaults = Some(idx);
    Some(idx)
}

/// `frontend|backend|listen <name> [from <defaults>]`. Returns the new proxy's index.
pub(crate) fn open_proxy(p: &mut Parser, words: &[String], span: &Span) -> Option<usize> {
    let kind = Kind::from_word(&words[0]);
    let name = arg(words, 1);
    if name.is_empty() {
        p.alert(span, format!("'{}' expects an <id> argument", words[0]));
        return None;
    }
    if let Some(c) = invalid_char(name) {
        p.alert(span, format!("character '{c}' is not permitted in '{}' name '{name}'.", words[0]));
    }
    report_name_clash(p, kind, name, span);
    if !header_args_ok(p, kind, words, span) {
        return None;
    }
    let who = format!("{} '{name}'", kind.type_str());
    let def_idx =
        if arg(words, 2) == "from" { Some(find_defaults(p, arg(words, 3), &who, span)?) } else { p.last_defaults };
    let mut pb = match def_idx {
        Some(i) => inherit(&p.defaults[i], name, kind, span),
        None => fresh_build(name, kind, span),
    };
    if let Some(i) = def_idx {
        if arg(words, 2) != "from" {
            p.defaults[i].implicit_ref = true;
        }
        warn_mixed_refs(p, i, span);
        take_default_rules(p, i, kind, &mut pb, span);
    }
    p.proxies.push(pb);
    p.proxy_names.entry(name.to_string()).or_default().push(p.proxies.len() - 1);
    Some(p.proxies.len() - 1)
}

/// Extra words after the name: only `from <defaults>` is allowed.
fn header_args_ok(p: &mut Parser, kind: Kind, words: &[String], span: &Span) -> bool {
    let bad_from = !arg(words, 2).is_empty() && (arg(words, 3).is_empty() || arg(words, 2) != "from");
    if !bad_from && words.len() <= 4 {
        return true;
    }
    if !bad_from {
        p.alert(span, too_many_args(&words[0], &words[4]));
    }
    if kind != Kind::Backend {
        let msg = "please use the 'bind' keyword for listening addresses.";
        let hint = format!(
            "write '{} {}' then, under it, 'bind {}' (rampart --migrate rewrites the file)",
            words[0], words[1], words[2]
        );
        p.diags.push(crate::diag::Diag::alert(Some(span.clone()), msg).with_hint(hint));
    } else if bad_from {
        // COMPAT: HAProxy 2.6 drops such a backend header without a word; we report it.
        p.alert(span, too_many_args(&words[0], &words[2]));
    }
    false
}

/// HAProxy refuses two proxies with a frontend capability, or a backend after a
/// proxy with a backend capability, of the same name.
fn report_name_clash(p: &mut Parser, kind: Kind, name: &str, span: &Span) {
    let cap = kind.cap();
    let clash = same_name(p, name).find(|o| if cap.frontend { o.px.cap.frontend } else { o.px.cap.backend });
    if let Some(o) = clash {
        let msg = format!(
            "{} '{name}' has the same name as {} '{name}' declared at {}.",
            kind.type_str(),
            o.kind.type_str(),
            o.px.span
        );
        p.alert(span, msg);
        return;
    }
    // HAProxy 2.6 accepts a listen named like an earlier backend; references then go to
    // the first one. Worth a word.
    if kind == Kind::Listen {
        let earlier = same_name(p, name).find(|o| o.px.cap.backend);
        if let Some(msg) = earlier.map(|o| {
            format!(
                "proxy '{name}' has the same name as {} '{name}' declared at {}; backend references will use the first one.",
                o.kind.type_str(),
                o.px.span
            )
        }) {
            p.warning(span, msg);
        }
    }
}

/// The proxies declared so far under `name`, in order.
fn same_name<'a>(p: &'a Parser, name: &str) -> impl Iterator<Item = &'a ProxyBuild> {
    p.proxy_names.get(name).into_iter().flatten().map(|&i| &p.proxies[i])
}

/// `id <n>`: the proxy's number in the stats, unique among proxies.
fn parse_id(p: &mut Parser, target: Target, words: &[String], span: &Span) {
    let Target::Proxy(i) = target else {
        return p.alert(span, "'id' not allowed in 'defaults' section.");
    };
    if words.len() > 2 {
        return p.alert(span, too_many_args(&words[0], &words[2]));
    }
    if arg(words, 1).is_empty() {
        return p.alert(span, "'id' expects an integer argument.");
    }
    let Some(id) = u32::try_from(atol(&words[1])).ok().filter(|&v| v > 0 && v <= i32::MAX as u32) else {
        return p.alert(span, "custom id has to be > 0.");
    };
    let me = &p.proxies[i];
    if let Some(o) = p.proxies.iter().find(|o| o.px.id == Some(id)) {
        let msg = format!(
            "{} {} reuses same custom id as {} {} (declared at {}).",
            me.kind.type_str(),
            me.px.name,
            o.kind.type_str(),
            o.px.name,
            o.px.span
        );
        return p.alert(span, msg);
    }
    p.proxies[i].px.id = Some(id);
}

/// Parses one keyword line of a proxy or `defaults` section.
pub(crate) fn parse_proxy_line(p: &mut Parser, target: Target, words: &[String], kwm: Modifier, span: &Span) {
    let (bufsize, maxrewrite) = (p.global.bufsize, p.global.maxrewrite);
    let experimental = p.global.expose_experimental;
    if words[0] == "id" && kwm == Modifier::Std {
        return parse_id(p, target, words, span);
    }
    let pb = match target {
        Target::Defaults(i) => &mut p.defaults[i],
        Target::Proxy(i) => &mut p.proxies[i],
    };
    let (unix_bind, global_ssl, base_dir) = (&p.global.unix_bind, &p.global.ssl, p.global.default_path.as_deref());
    let pending = &mut p.pending;
    let diags = &mut p.diags;
    let mut cx = Ctx { pb, diags, span, bufsize, maxrewrite, experimental, pending, unix_bind, global_ssl, base_dir };
    dispatch(&mut cx, words, kwm);
}

fn dispatch(cx: &mut Ctx<'_>, words: &[String], kwm: Modifier) {
    use super::{balance, bind, errorfile, http_errors, log, option, proxy_kw, rule, server, switching};
    match words[0].as_str() {
        "mode" => proxy_kw::parse_mode(cx, words),
        "bind" => bind::parse_bind(cx, words),
        "server" => server::parse_server(cx, words),
        "default-server" => server::parse_default_server(cx, words),
        "server-template" => server::parse_server_template(cx, words),
        "maxconn" => proxy_kw::parse_maxconn(cx, words),
        "backlog" => proxy_kw::parse_backlog(cx, words),
        "default_backend" => proxy_kw::parse_default_backend(cx, words),
        "use_backend" => switching::parse_use_backend(cx, words),
        "use-server" => switching::parse_use_server(cx, words),
        "force-persist" | "ignore-persist" => switching::parse_persist(cx, words),
        "persist" => switching::parse_persist_method(cx, words),
        "acl" => switching::parse_acl(cx, words),
        // as HAProxy 2.6 (one process, no effect)
        "bind-process" => {
            cx.warning("'bind-process' has no effect, is deprecated, and will be removed in version 2.7.")
        }
        "monitor-uri" => switching::parse_monitor_uri(cx, words),
        "stats" => super::stats::parse_stats(cx, words),
        "monitor" => switching::parse_monitor(cx, words),
        "capture" => switching::parse_capture(cx, words),
        "cookie" => super::cookie::parse_cookie(cx, words),
        "declare" => switching::parse_declare(cx, words),
        "unique-id-format" => switching::parse_unique_id_format(cx, words),
        "unique-id-header" => switching::parse_unique_id_header(cx, words),
        "redirect" => rule::parse_redirect_keyword(cx, words),
        "balance" => balance::parse_balance(cx, words),
        "hash-type" => balance::parse_hash_type(cx, words),
        "hash-balance-factor" => balance::parse_hash_balance_factor(cx, words),
        "load-server-state-from-file" => super::server_state::parse_load_from(cx, words),
        "server-state-file-name" => super::server_state::parse_file_name(cx, words),
        "fullconn" => proxy_kw::parse_fullconn(cx, words),
        "max-keep-alive-queue" => proxy_kw::parse_max_ka_queue(cx, words),
        "retry-on" => balance::parse_retry_on(cx, words),
        "timeout" => proxy_kw::parse_timeout(cx, words),
        "http-reuse" => proxy_kw::parse_http_reuse(cx, words),
        "retries" => proxy_kw::parse_retries(cx, words),
        "source" => proxy_kw::parse_source(cx, words),
        "dispatch" => proxy_kw::parse_dispatch(cx, words),
        "clitcpka-cnt" | "clitcpka-idle" | "clitcpka-intvl" | "srvtcpka-cnt" | "srvtcpka-idle" | "srvtcpka-intvl" => {
            proxy_kw::parse_tcpka(cx, words)
        }
        "errorfile" => errorfile::parse_errorfile(cx, words),
        "errorloc" | "errorloc302" | "errorloc303" => errorfile::parse_errorloc(cx, words),
        "description" => proxy_kw::parse_description(cx, words),
        "disabled" | "enabled" => proxy_kw::parse_disabled(cx, words),
        "http-send-name-header" => proxy_kw::parse_send_name_header(cx, words),
        "errorfiles" => http_errors::parse_errorfiles(cx, words),
        "http-error" => http_errors::parse_http_error(cx, words),
        "option" => option::parse_option(cx, words, kwm),
        "http-request" => rule::parse_http_request(cx, words),
        "http-response" => rule::parse_http_response(cx, words),
        "http-after-response" => rule::parse_http_after_response(cx, words),
        "tcp-request" => rule::parse_tcp_request(cx, words),
        "tcp-response" => rule::parse_tcp_response(cx, words),
        "log" => log::parse_proxy_log(cx, words, kwm),
        "log-format" | "log-format-sd" | "error-log-format" => log::parse_log_format(cx, words),
        "log-tag" => log::parse_proxy_log_tag(cx, words),
        "http-check" => super::healthcheck::parse_http_check(cx, words),
        "tcp-check" => super::tcpcheck::parse_tcp_check(cx, words),
        "compression" => super::filter::parse_compression(cx, words),
        "filter" => super::filter::parse_filter(cx, words),
        "email-alert" => super::subsys::parse_email_alert(cx, words),
        "external-check" if !cx.cap().frontend || cx.cap().backend => super::subsys::parse_external_check(cx, words),
        "use-fcgi-app" => super::fcgi_app::parse_use_fcgi_app(cx, words),
        "stick-table" if !cx.is_defaults() => super::stick::parse_stick_table(cx, words),
        "stick" if cx.cap().backend && !cx.is_defaults() => super::stick::parse_stick(cx, words),
        _ => unknown_or_not_yet(cx, words),
    }
}

fn unknown_or_not_yet(cx: &mut Ctx<'_>, words: &[String]) {
    let word = words[0].as_str();
    match kw::proxy_kw(word) {
        Some(k) if k.support == Support::Rejected => {
            let msg = removed_keyword(word, arg(words, 1));
            cx.alert_legacy(msg, words);
        }
        Some(k) if ignored_when_misplaced(cx, k) => {}
        Some(_) => cx.alert(not_yet(word)),
        None => {
            let section = cx.pb.kind.section_word();
            let msg = match kw::suggest_proxy(word) {
                Some(best) => format!("unknown keyword '{word}' in '{section}' section; did you mean '{best}' maybe ?"),
                None => format!("unknown keyword '{word}' in '{section}' section"),
            };
            cx.alert(msg);
        }
    }
}

/// How HAProxy 2.6 words the warning when it ignores a keyword in a section that lacks
/// the capability the keyword needs.
enum Misplaced {
    /// `'kw' ignored because frontend 'f' has no backend capability.<hint>`
    Ignored(&'static str),
    /// `kw will be ignored because frontend 'f' has no backend capability`
    WillBeIgnored,
    /// `backend 'b' : 'kw' directive is ignored in backends.`
    IgnoredInBackends,
    /// Accepted without a word.
    Silent,
}

fn misplaced_wording(word: &str) -> Option<Misplaced> {
    Some(match word {
        "cookie"
        | "dispatch"
        | "hash-type"
        | "http-check"
        | "http-send-name-header"
        | "source"
        | "stick"
        | "force-persist"
        | "ignore-persist"
        | "dynamic-cookie-key"
        | "server-state-file-name"
        | "backlog"
        | "capture"
        | "max-session-srv-conns"
        | "monitor"
        | "monitor-uri" => Misplaced::Ignored(""),
        "fullconn" => Misplaced::Ignored(" Maybe you want 'maxconn' instead ?"),
        "clitcpka-cnt" | "clitcpka-idle" | "clitcpka-intvl" | "srvtcpka-cnt" | "srvtcpka-idle" | "srvtcpka-intvl" => {
            Misplaced::WillBeIgnored
        }
        "log-format" | "log-format-sd" | "error-log-format" => Misplaced::IgnoredInBackends,
        "unique-id-format" | "unique-id-header" | "hash-balance-factor" | "persist" | "transparent" => {
            Misplaced::Silent
        }
        _ => return None,
    })
}

/// A keyword rampart lacks, used where HAProxy 2.6 would ignore it anyway (a backend
/// keyword in a frontend, or the reverse): it is ignored with HAProxy's warning rather
/// than refused, since it has no effect there. Returns `true` when that is the case.
fn ignored_when_misplaced(cx: &mut Ctx<'_>, k: &kw::ProxyKw) -> bool {
    let cap = cx.cap();
    let needs_backend = !k.caps.has(kw::Caps::FRONTEND) && cap.frontend && !cap.backend;
    let needs_frontend = !k.caps.has(kw::Caps::BACKEND) && cap.backend && !cap.frontend;
    if !(needs_backend || needs_frontend) {
        return false;
    }
    let Some(wording) = misplaced_wording(k.name) else { return false };
    let (kind, name) = (cx.pb.kind.type_str(), cx.pb.px.name.clone());
    let missing = if needs_backend { "backend" } else { "frontend" };
    let w = k.name;
    match wording {
        Misplaced::Ignored(hint) => {
            cx.warning(format!("'{w}' ignored because {kind} '{name}' has no {missing} capability.{hint}"))
        }
        Misplaced::WillBeIgnored => {
            cx.warning(format!("{w} will be ignored because {kind} '{name}' has no {missing} capability"))
        }
        Misplaced::IgnoredInBackends => {
            cx.warning(format!("{kind} '{name}' : '{w}' directive is ignored in backends."))
        }
        Misplaced::Silent => {}
    }
    true
}

/// HAProxy 2.6's own error for a keyword it removed.
fn removed_keyword(word: &str, arg1: &str) -> String {
    let since21 = |hint: &str| format!("The '{word}' directive is not supported anymore since HAProxy 2.1. {hint}");
    match word {
        "appsession" => format!("'{word}' is not supported anymore since HAProxy 1.6."),
        "block" => since21("Use 'http-request deny' which uses the exact same syntax."),
        "monitor-net" => format!(
            "'monitor-net' doesn't exist anymore. Please use 'http-request return status 200 if {{ src {arg1} }}' instead."
        ),
        "redispatch" | "redisp" => {
            format!("keyword '{word}' directive is not supported anymore since HAProxy 2.1. Use 'option redispatch'.")
        }
        "grace" => format!("the '{word}' keyword is not supported any more since HAProxy version 2.5."),
        "clitimeout" | "contimeout" | "srvtimeout" => {
            let new = match word {
                "clitimeout" => "client",
                "contimeout" => "connect",
                _ => "server",
            };
            format!("the '{word}' directive is not supported anymore since HAProxy 2.1. Use 'timeout {new}'.")
        }
        "cliexp" | "reqrep" => since21(
            "Use 'http-request replace-path', 'http-request replace-uri' or 'http-request replace-header' instead.",
        ),
        "reqdel" | "reqidel" => since21("Use 'http-request del-header' instead."),
        "reqdeny" => format!("The '{word}' not supported anymore since HAProxy 2.1. Use 'http-request deny' instead."),
        "reqpass" => format!("The '{word}' not supported anymore since HAProxy 2.1."),
        "reqipass" => format!("The '{word}' directive is not supported anymore since HAProxy 2.1."),
        "reqallow" | "reqiallow" => since21("Use 'http-request allow' instead."),
        "reqtarpit" | "reqitarpit" => since21("Use 'http-request tarpit' instead."),
        "reqirep" => since21("Use 'http-request replace-header' instead."),
        "reqideny" => since21("Use 'http-request deny' instead."),
        "reqadd" => since21("Use 'http-request add-header' instead."),
        "srvexp" | "rsprep" | "rspirep" => since21("Use 'http-response replace-header' instead."),
        "rspdel" => since21("Use 'http-response del-header' ."),
        "rspidel" => since21("Use 'http-response del-header' instead."),
        "rspdeny" | "rspideny" => since21("Use 'http-response deny' instead."),
        "rspadd" => since21("Use 'http-response add-header' instead."),
        _ => not_yet(word),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::model::{Balance, HttpReuse, Mode};
    use crate::parse::tests::{alerts, parse_ok, soft_alerts, warnings};

    const DEFAULTS: &str = "defaults\n mode http\n maxconn 50\n balance static-rr\n retries 7\n http-reuse never\n\
         timeout client 1s\n timeout server 2s\n timeout connect 3s\n default_backend be\n\
         errorfile 503 tests/cfg/files/503.http\n log stdout local0\n";

    #[test]
    fn proxies_inherit_what_their_capabilities_use() {
        let cfg = parse_ok(&format!("{DEFAULTS}frontend fe\n bind :80\nbackend be\n server s 127.0.0.1:80\n"));
        let (fe, be) = (&cfg.proxies[0], &cfg.proxies[1]);
        assert_eq!((fe.mode, be.mode), (Mode::Http, Mode::Http));
        assert_eq!(fe.maxconn, Some(50));
        assert_eq!(be.maxconn, None, "maxconn is a frontend setting");
        assert_eq!(fe.default_backend.as_ref().map(|b| b.index), Some(1));
        assert!(be.default_backend.is_none());
        assert_eq!((be.balance.clone(), be.retries, be.http_reuse), (Balance::StaticRr, 7, HttpReuse::Never));
        assert_eq!(fe.timeouts.client, Some(Duration::from_secs(1)));
        assert_eq!((fe.timeouts.server, fe.timeouts.connect), (None, None));
        assert_eq!(be.timeouts.client, None);
        assert_eq!(
            (be.timeouts.server, be.timeouts.connect),
            (Some(Duration::from_secs(2)), Some(Duration::from_secs(3)))
        );
        assert_eq!(be.timeouts.queue, Some(Duration::from_secs(3)), "queue defaults to connect");
        assert_eq!((fe.errorfiles.len(), be.errorfiles.len()), (1, 1));
        assert_eq!((fe.logs.len(), be.logs.len()), (1, 1));
        assert_eq!(fe.span.line, 13);
    }

    #[test]
    fn a_new_defaults_section_starts_afresh() {
        let cfg = parse_ok("defaults\n mode http\ndefaults\n timeout client 1s\nfrontend fe\n bind :80\n");
        assert_eq!(cfg.proxies[0].mode, Mode::Tcp);
        assert_eq!(cfg.proxies[0].timeouts.client, Some(Duration::from_secs(1)));
    }

    #[test]
    fn named_defaults_and_from() {
        let cfg = parse_ok(
            "defaults a\n mode http\n timeout client 1s\ndefaults b from a\n timeout client 2s\n\
             defaults c\n timeout client 3s\nfrontend f1 from a\n bind :80\nfrontend f2 from b\n bind :81\n\
             frontend f3\n bind :82\n",
        );
        let t = |i: usize| cfg.proxies[i].timeouts.client;
        assert_eq!([t(0), t(1), t(2)], [1, 2, 3].map(|s| Some(Duration::from_secs(s))));
        assert_eq!(cfg.proxies[1].mode, Mode::Http, "b inherits a's mode");
        assert_eq!(cfg.proxies[2].mode, Mode::Tcp, "f3 uses the last defaults, c");
    }

    #[test]
    fn header_errors() {
        assert_eq!(alerts("frontend\n"), ["'frontend' expects an <id> argument"]);
        assert_eq!(alerts("frontend fe :80\n"), ["please use the 'bind' keyword for listening addresses."]);
        assert_eq!(alerts("backend be x\n"), ["'backend' cannot handle unexpected argument 'x'."]);
        assert_eq!(alerts("backend be from d x\n"), ["'backend' cannot handle unexpected argument 'x'."]);
        assert_eq!(alerts("backend b/x\n"), ["character '/' is not permitted in 'backend' name 'b/x'."]);
        assert_eq!(alerts("backend be from nosuch\n"), ["defaults section 'nosuch' not found for backend 'be'."]);
        assert_eq!(
            alerts("defaults d\ndefaults d\nbackend be from d\n"),
            ["ambiguous defaults section name 'd' referenced by backend 'be' exists at least at t.cfg:1 and t.cfg:2."]
        );
        assert_eq!(
            alerts("frontend fe\n bind :1\nlisten fe\n bind :2\n"),
            ["proxy 'fe' has the same name as frontend 'fe' declared at t.cfg:1."]
        );
        assert!(alerts("frontend fe\n bind :1\nbackend fe\n").is_empty(), "a frontend and a backend may share a name");
        assert!(warnings("defaults d\nbackend a from d\nbackend b\n").is_empty());
        assert!(parse_ok("defaults d\nbackend a from d\nbackend b\n").proxies.len() == 2, "an alert, not fatal");
        assert_eq!(
            soft_alerts("defaults d\nbackend a from d\nbackend b\n"),
            ["defaults section 'd' (declared at t.cfg:1) is explicitly referenced by another proxy and implicitly used here. \
              To avoid any ambiguity don't mix both usage. Add a last defaults section not explicitly used or always use explicit references."]
        );
    }

    #[test]
    fn misplaced_missing_keywords_are_ignored_like_haproxy() {
        assert!(alerts("frontend f\n bind :80\n cookie SRV insert\n fullconn 10\n persist rdp-cookie\n").is_empty());
        assert_eq!(
            warnings("frontend f\n cookie SRV insert\n fullconn 10\n persist rdp-cookie\n srvtcpka-cnt 3\n"),
            [
                "'cookie' ignored because frontend 'f' has no backend capability.",
                "'fullconn' ignored because frontend 'f' has no backend capability. Maybe you want 'maxconn' instead ?",
                "srvtcpka-cnt will be ignored because frontend 'f' has no backend capability",
            ]
        );
        assert_eq!(
            warnings("backend b\n log-format %t\n"),
            ["backend 'b' : 'log-format' directive is ignored in backends."]
        );
        assert_eq!(alerts("backend b\n dynamic-cookie-key k\n"), ["'dynamic-cookie-key' is not supported yet"]);
        assert_eq!(alerts("listen l\n backlog 10\n"), [] as [&str; 0]);
        assert_eq!(
            warnings("backend b\n backlog 10\n"),
            ["'backlog' ignored because backend 'b' has no frontend capability."]
        );
        assert_eq!(
            alerts("frontend f\n server-template s 3 127.0.0.1:80\n"),
            ["'server-template' not allowed because frontend 'f' has no backend capability."]
        );
    }

    #[test]
    fn description_disabled_and_send_name_header() {
        let cfg = parse_ok(
            "defaults\n disabled\n http-send-name-header X-Srv\nlisten a\n description  two   words\n enabled\n\
             bind :80\n server s 127.0.0.1:1\nbackend b\n server s 127.0.0.1:1\n",
        );
        let (a, b) = (&cfg.proxies[0], &cfg.proxies[1]);
        assert_eq!(a.description.as_deref(), Some("two words"));
        assert_eq!((a.disabled, b.disabled), (false, true), "inherited from defaults, cleared by enabled");
        assert!(b.servers.is_empty() && b.binds.is_empty(), "a disabled proxy is not started");
        assert_eq!((a.binds.len(), a.servers.len()), (1, 1));
        assert_eq!(b.send_name_header.as_deref(), Some("x-srv"));
        assert_eq!(
            alerts("defaults\n description x\nlisten l\n description\n disabled 1\n http-send-name-header\n"),
            [
                "'description' not allowed in 'defaults' section.",
                "'description' expects a string argument.",
                "'disabled' cannot handle unexpected argument '1'.",
                "'http-send-name-header' requires a header string.",
            ]
        );
        assert_eq!(
            warnings("frontend f\n bind :80\n http-send-name-header x\n"),
            ["'http-send-name-header' ignored because frontend 'f' has no backend capability."]
        );
    }

    #[test]
    fn lines_of_a_refused_section_are_skipped() {
        assert_eq!(alerts("backend\n foo\n bar\n"), ["'backend' expects an <id> argument"]);
        assert_eq!(alerts("namespace_list\n namespace x\n"), ["'namespace_list' is not supported yet"]);
    }

    #[test]
    fn proxy_ids_are_positive_and_unique() {
        let cfg = parse_ok("listen a\n id 3\nbackend b\n");
        assert_eq!((cfg.proxies[0].id, cfg.proxies[1].id), (Some(3), None));
        assert_eq!(
            alerts("listen a\n id 3\nbackend b\n id 3\nbackend c\n id 0\nbackend d\n id x\ndefaults\n id 4\n"),
            [
                "backend b reuses same custom id as proxy a (declared at t.cfg:1).",
                "custom id has to be > 0.",
                "custom id has to be > 0.",
                "'id' not allowed in 'defaults' section."
            ]
        );
    }

    #[test]
    fn legacy_lines_get_their_replacement_as_a_hint() {
        let hints = |text: &str| -> Vec<String> {
            let (_, diags) = crate::parse::tests::parse(text);
            diags.list.iter().flat_map(|d| d.hints.clone()).collect()
        };
        assert_eq!(
            hints("listen l\n reqadd X-A:\\ 1 if TRUE\n contimeout 5s\n option forceclose\n"),
            [
                "replace with: http-request add-header X-A 1 if TRUE (rampart --migrate rewrites the file)",
                "replace with: timeout connect 5s (rampart --migrate rewrites the file)",
                "replace with: option httpclose (rampart --migrate rewrites the file)",
            ]
        );
        assert_eq!(
            hints("listen web 0.0.0.0:80\n"),
            ["write 'listen web' then, under it, 'bind 0.0.0.0:80' (rampart --migrate rewrites the file)"]
        );
        assert_eq!(hints("global\n nbproc 2\n"), ["remove the line: it has no effect since HAProxy 2.5"]);
        assert_eq!(
            warnings("global\n stats bind-process 1\nlisten l\n bind-process 1\n"),
            [
                "'stats bind-process' has no effect (one process); remove it",
                "'bind-process' has no effect, is deprecated, and will be removed in version 2.7."
            ]
        );
    }

    #[test]
    fn unknown_and_removed_keywords() {
        assert_eq!(
            alerts("backend b\n balanse x\n"),
            ["unknown keyword 'balanse' in 'backend' section; did you mean 'balance' maybe ?"]
        );
        assert_eq!(alerts("listen l\n xyzzyqqq\n"), ["unknown keyword 'xyzzyqqq' in 'listen' section"]);
        assert!(alerts("backend b\n stick-table type ip size 1m write-to t\n").is_empty());
        assert_eq!(alerts("backend b\n appsession x\n"), ["'appsession' is not supported anymore since HAProxy 1.6."]);
        assert_eq!(
            alerts("backend b\n monitor-net 10.0.0.0/8\n"),
            ["'monitor-net' doesn't exist anymore. Please use 'http-request return status 200 if { src 10.0.0.0/8 }' instead."]
        );
        assert_eq!(
            alerts("backend b\n srvtimeout 5s\n"),
            ["the 'srvtimeout' directive is not supported anymore since HAProxy 2.1. Use 'timeout server'."]
        );
        assert_eq!(alerts("maxconn 10\n"), ["unknown keyword 'maxconn' out of section."]);
        assert_eq!(
            alerts("backend b\n no maxconn 10\n"),
            ["negation/default currently supported only for options, log, busy-polling, set-dumpable, strict-limits, insecure-fork-wanted and numa-cpu-mapping."]
        );
    }
}
