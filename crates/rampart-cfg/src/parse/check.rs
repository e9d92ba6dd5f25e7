//! Checks that need the whole configuration, run once every file is parsed: backend
//! references (resolved to indices), modes of linked proxies, duplicate server names,
//! missing timeouts, settings that `mode tcp` ignores. Each message points at the line
//! of the object it is about.
//!
//! HAProxy counterpart: the per-proxy loop of `check_config_validity()` (src/cfgparse.c)
//! and `proxy_cfg_ensure_no_http()` (src/proxy.c). HAProxy prints some of these without
//! a location; rampart adds it.

use std::collections::HashMap;

use crate::diag::Diag;
use crate::model::{BackendRef, BackendTarget, Config, Mode, Proxy, TcpReqAction, UseBackend};

use super::check_rules::{check_proxy_rules, collect_defaults};
use super::ctx::ProxyBuild;
use super::Parser;

/// Builds the final [`Config`] from the parser state, reporting into `p.diags`.
pub(super) fn finish(p: &mut Parser) -> Config {
    let mut global = std::mem::take(&mut p.global);
    // HAProxy keeps at least half of each buffer for data.
    global.maxrewrite = global.maxrewrite.min(global.bufsize / 2);
    super::cache::check_caches(&p.caches, &mut p.diags);
    super::filter::check_filters(p);
    let caches = std::mem::take(&mut p.caches);
    super::fcgi_app::finish(p);
    let fcgi_apps = std::mem::take(&mut p.fcgi_apps);
    super::resolvers::finish(p, global.lua.httpclient_resolvers.as_deref());
    super::peers::finish(p);
    let peers = std::mem::take(&mut p.peers);
    let localpeer = p.localpeer.clone();
    let resolvers = std::mem::take(&mut p.resolvers);
    let mut builds = std::mem::take(&mut p.proxies);
    let names = std::mem::take(&mut p.proxy_names);
    let http_errors = std::mem::take(&mut p.http_errors);
    let userlists = std::mem::take(&mut p.userlists);
    let mut proxies: Vec<Proxy> = builds.iter_mut().map(final_proxy).collect();
    let defaults = collect_defaults(&p.defaults, &mut proxies, &builds, &http_errors, &mut p.diags);
    for i in 0..builds.len() {
        check_proxy(Builds { all: &builds, names: &names }, i, &mut proxies, &mut p.diags);
        check_proxy_rules(&builds[i], &mut proxies[i], &http_errors, global.http_cookie_len, &mut p.diags);
        check_tcp_mode(&builds[i], &mut proxies[i], &mut p.diags);
        super::server::implicit_server(&mut proxies[i], &builds[i].px.span, &mut p.diags);
        super::healthcheck::check_rules_without_option(builds[i].kind.type_str(), &proxies[i], &mut p.diags);
        super::subsys::check_proxy(&mut proxies[i], builds[i].kind.type_str(), &global, &p.mailers, &mut p.diags);
        if proxies[i].disabled {
            stop_disabled(&mut proxies[i]);
        }
    }
    let mailers = std::mem::take(&mut p.mailers);
    let programs = std::mem::take(&mut p.programs);
    super::subsys::check_programs(&programs, &mut p.diags);
    super::userlist::check_userlists(&userlists, &mut p.diags);
    let mut rings = std::mem::take(&mut p.rings);
    super::ring::check_rings(&mut rings, &mut p.diags);
    let log_forwards = std::mem::take(&mut p.log_forwards);
    for lf in log_forwards.iter().filter(|lf| lf.binds.is_empty() && lf.dgram_binds.is_empty()) {
        let msg = format!(
            "frontend '{}' has no 'bind' directive. Please declare it as a backend if this was intended.",
            lf.name
        );
        p.diags.push(crate::diag::Diag::warning(None, msg));
    }
    Config {
        global,
        proxies,
        defaults,
        userlists,
        http_errors,
        rings,
        log_forwards,
        resolvers,
        caches,
        fcgi_apps,
        peers,
        localpeer,
        mailers,
        programs,
    }
}

/// The proxy the checks below complete, out of its parse state `b`. The checks read
/// the parsed proxy in `b.px` (as written, before any check changed it) and write the
/// copy; the servers, the bulk of a large configuration (100 000 in a generated one), are
/// moved rather than copied, and read from the copy (no check changes them before the
/// last read: `check_tcp_mode` is the first to).
fn final_proxy(b: &mut ProxyBuild) -> Proxy {
    let mut servers = std::mem::take(&mut b.px.servers);
    // the model is kept for the process's life: no room left from the parser's pushes
    servers.shrink_to_fit();
    let mut px = b.px.clone();
    px.servers = servers;
    px
}

/// A `disabled` proxy is not started (HAProxy 2.6 skips it in `check_config_validity()`
/// and never binds its listeners): no listener, no server (a stream sent to it gets a
/// 503, as in HAProxy), hence no health check either.
fn stop_disabled(px: &mut Proxy) {
    px.binds.clear();
    px.servers.clear();
    px.implicit_server = None;
    px.dispatch = None;
}

fn mode_str(m: Mode) -> &'static str {
    match m {
        Mode::Tcp => "tcp",
        Mode::Http => "http",
    }
}

/// The parsed proxies, with their indices by name.
#[derive(Clone, Copy)]
struct Builds<'a> {
    all: &'a [ProxyBuild],
    names: &'a HashMap<String, Vec<usize>>,
}

fn check_proxy(builds: Builds<'_>, i: usize, proxies: &mut [Proxy], out: &mut Vec<Diag>) {
    let b = &builds.all[i];
    let span = Some(b.px.span.clone());
    let (kind, name) = (b.kind.type_str(), b.px.name.as_str());
    if b.px.mode == Mode::Tcp && b.px.options.httplog {
        let at = b.logformat_span.clone().or_else(|| span.clone());
        let https = b.px.options.log_format.as_deref() == Some(crate::model::HTTPS_LOG_FORMAT);
        let opt = if https { "httpslog" } else { "httplog" };
        out.push(Diag::warning(
            at,
            format!(
                "'option {opt}' not usable with {kind} '{name}' (needs 'mode http'). Falling back to 'option tcplog'."
            ),
        ));
        proxies[i].options.httplog = false;
        proxies[i].options.tcplog = true;
        proxies[i].options.log_format = Some(crate::model::TCP_LOG_FORMAT.to_owned());
    }
    if b.px.cap.frontend && b.px.binds.is_empty() {
        out.push(Diag::warning(
            span.clone(),
            format!("{kind} '{name}' has no 'bind' directive. Please declare it as a backend if this was intended."),
        ));
    }
    if let Some(r) = &b.px.default_backend {
        proxies[i].default_backend = resolve_ref(builds, i, r, "default_backend", "as its default backend", out);
        if proxies[i].default_backend.is_some() && !proxies[i].servers.is_empty() {
            out.push(Diag::warning(
                Some(r.span.clone()),
                format!("In proxy '{name}', the 'default_backend' rule always has precedence over the servers, which will never be used."),
            ));
        }
    }
    let mut kept = Vec::new();
    for ub in &b.px.use_backends {
        let target = match &ub.target {
            BackendTarget::Static(r) => {
                match resolve_ref(builds, i, r, "use_backend", "in a 'use_backend' rule", out) {
                    Some(backend) => BackendTarget::Static(backend),
                    None => continue,
                }
            }
            BackendTarget::Dynamic(f) => BackendTarget::Dynamic(f.clone()),
        };
        kept.push(UseBackend { target, cond: ub.cond.clone(), span: ub.span.clone() });
    }
    proxies[i].use_backends = kept;
    if !b.px.cap.frontend {
        // Checked above like HAProxy does, but a backend never switches.
        proxies[i].default_backend = None;
        proxies[i].use_backends.clear();
    }
    check_timeouts(b, &mut proxies[i], out);
    check_server_names(b, &proxies[i].servers, out);
    check_rdp_ports(b, &proxies[i].servers, out);
}

/// Finds the backend a frontend names; reports a missing one, a loop, or a mode the
/// frontend cannot use (an HTTP frontend cannot hand over to a TCP backend; the reverse
/// is an implicit upgrade and fine).
fn resolve_ref(
    builds: Builds<'_>,
    i: usize,
    r: &BackendRef,
    what: &str,
    usage: &str,
    out: &mut Vec<Diag>,
) -> Option<BackendRef> {
    let me = &builds.all[i];
    let at = Some(r.span.clone());
    let mut named = builds.names.get(&r.name).into_iter().flatten().copied();
    let Some(t) = named.find(|&o| builds.all[o].px.cap.backend) else {
        out.push(Diag::alert(at, format!("Proxy '{}': unable to find required {what}: '{}'.", me.px.name, r.name)));
        return None;
    };
    if t == i {
        out.push(Diag::alert(at, format!("Proxy '{}': loop detected for {what}: '{}'.", me.px.name, r.name)));
        return None;
    }
    let target = &builds.all[t];
    if target.px.mode != me.px.mode && !(me.px.mode == Mode::Tcp && target.px.mode == Mode::Http) {
        out.push(Diag::alert(
            at,
            format!(
                "{} {} '{}' ({}) tries to use incompatible {} {} '{}' ({}) {usage} (see 'mode').",
                mode_str(me.px.mode),
                me.kind.type_str(),
                me.px.name,
                me.px.span,
                mode_str(target.px.mode),
                target.kind.type_str(),
                target.px.name,
                target.px.span
            ),
        ));
        return None;
    }
    Some(BackendRef { name: r.name.clone(), index: t, span: r.span.clone() })
}

/// The "missing timeouts" warning, and the queue timeout that defaults to the connect
/// timeout in a backend.
fn check_timeouts(b: &ProxyBuild, px: &mut Proxy, out: &mut Vec<Diag>) {
    let t = &b.px.timeouts;
    let front_missing = b.px.cap.frontend && t.client.is_none();
    let back_missing = b.px.cap.backend
        && !px.servers.is_empty()
        && (t.connect.is_none() || (t.server.is_none() && (b.px.mode == Mode::Http || t.tunnel.is_none())));
    if front_missing || back_missing {
        out.push(Diag::warning(
            Some(b.px.span.clone()),
            format!(
                "missing timeouts for {} '{}'.\n   | While not properly invalid, you will certainly encounter various problems\n   | with such a configuration. To fix this, please ensure that all following\n   | timeouts are set to a non-zero value: 'client', 'connect', 'server'.",
                b.kind.type_str(),
                b.px.name
            ),
        ));
    }
    if b.px.cap.backend && px.timeouts.queue.is_none() {
        px.timeouts.queue = px.timeouts.connect;
    }
}

fn check_server_names(b: &ProxyBuild, servers: &[crate::model::Server], out: &mut Vec<Diag>) {
    for (n, s) in servers.iter().enumerate() {
        if let Some(first) = servers[..n].iter().find(|o| o.name == s.name) {
            out.push(Diag::alert(
                Some(s.span.clone()),
                format!(
                    "{} '{}', another server named '{}' was already defined at line {}, please use distinct names.",
                    b.kind.type_str(),
                    b.px.name,
                    s.name,
                    first.span.line
                ),
            ));
        }
    }
}

/// `persist rdp-cookie` names a server by address and port: a server whose port follows
/// the client's (no port, `+N`, `-N`) can never match.
fn check_rdp_ports(b: &ProxyBuild, servers: &[crate::model::Server], out: &mut Vec<Diag>) {
    if b.px.persist_rdp_cookie.is_none() {
        return;
    }
    for s in servers.iter().filter(|s| s.port_offset.is_some()) {
        out.push(Diag::warning(
            Some(s.span.clone()),
            format!(
                "{} '{}' : RDP cookie persistence will not work for server '{}' because it lacks an explicit port number.",
                b.kind.type_str(),
                b.px.name,
                s.name
            ),
        ));
    }
}

/// What HAProxy ignores, with a warning, when a proxy is not in HTTP mode (and does not
/// switch to it with `tcp-request content switch-mode http`); and the log format that
/// has nowhere to go. The HTTP rule lists are only warned about (HAProxy keeps them).
fn check_tcp_mode(b: &ProxyBuild, px: &mut Proxy, out: &mut Vec<Diag>) {
    let (kind, name) = (b.kind.type_str(), b.px.name.as_str());
    let span = Some(b.px.span.clone());
    let has_format = px.options.httplog || px.options.tcplog || px.options.log_format.is_some();
    if b.px.cap.frontend && b.px.logs.is_empty() && has_format {
        out.push(Diag::warning(
            span.clone(),
            format!("log format ignored for {kind} '{name}' since it has no log address."),
        ));
    }
    let upgrades =
        b.px.rules.tcp_request_content.iter().any(|r| matches!(r.action, TcpReqAction::SwitchModeHttp { .. }));
    if b.px.mode == Mode::Http || upgrades {
        return;
    }
    let mut warn = |what: String| out.push(Diag::warning(span.clone(), what));
    if px.cookie.take().is_some() {
        warn(format!("cookie will be ignored for {kind} '{name}' (needs 'mode http')."));
    }
    if px.captures.cookie.take().is_some() {
        warn(format!("'capture' statement ignored for {kind} '{name}' as it requires HTTP mode."));
    }
    let rules = &px.rules;
    let lists = [
        ("http-request", !rules.http_request.is_empty()),
        ("http-response", !rules.http_response.is_empty()),
        ("http-after-response", !rules.http_after_response.is_empty()),
        ("redirect", !px.redirects.is_empty()),
    ];
    // COMPAT: as HAProxy 2.6, the rules are kept despite the warning: they apply to the
    // streams that become HTTP (a TCP frontend whose backend is in `mode http`)
    for (what, present) in lists {
        if present {
            warn(format!("'{what}' rules ignored for {kind} '{name}' as they require HTTP mode."));
        }
    }
    let o = &mut px.options;
    if o.forwardfor.take().is_some() {
        warn(format!("'option forwardfor' ignored for {kind} '{name}' as it requires HTTP mode."));
    }
    if o.originalto.take().is_some() {
        warn(format!("'option originalto' ignored for {kind} '{name}' as it requires HTTP mode."));
    }
    if std::mem::take(&mut o.http_buffer_request) {
        warn(format!("'option http-buffer-request' ignored for {kind} '{name}' as it requires HTTP mode."));
    }
    for srv in &mut px.servers {
        if srv.cookie.take().is_some() {
            warn(format!("{kind} '{name}' : ignoring cookie for server '{}' as HTTP mode is disabled.", srv.name));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::diag::Level;
    use crate::parse::tests::{alerts, parse};

    const T: &str = "defaults\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n";

    #[test]
    fn backend_references() {
        let a = alerts(&format!(
            "{T}frontend f\n mode http\n bind :80\n default_backend nope\n use_backend f\n use_backend tb\n\
             listen l\n bind :81\n default_backend l\nbackend tb\n mode tcp\n"
        ));
        assert_eq!(
            a,
            [
                "Proxy 'f': unable to find required default_backend: 'nope'.",
                "Proxy 'f': unable to find required use_backend: 'f'.",
                "http frontend 'f' (t.cfg:5) tries to use incompatible tcp backend 'tb' (t.cfg:14) in a 'use_backend' rule (see 'mode').",
                "Proxy 'l': loop detected for default_backend: 'l'.",
            ]
        );
        let (_, diags) = parse(&format!("{T}frontend f\n bind :80\n default_backend nope\n"));
        let d = diags.list.iter().find(|d| d.level == Level::Alert).expect("alert");
        assert_eq!(d.span.as_ref().map(|s| s.line), Some(7), "points at the default_backend line");
    }

    #[test]
    fn backends_references_are_checked_then_dropped() {
        assert_eq!(
            alerts("backend b\n default_backend x\n"),
            ["Proxy 'b': unable to find required default_backend: 'x'."]
        );
        let (cfg, _) = parse("backend b\n default_backend c\n use_backend c\nbackend c\n");
        assert!(cfg.proxies[0].default_backend.is_none() && cfg.proxies[0].use_backends.is_empty());
    }

    #[test]
    fn tcp_frontend_may_use_http_backend() {
        assert!(alerts(&format!("{T}frontend f\n bind :80\n default_backend b\nbackend b\n mode http\n")).is_empty());
    }

    #[test]
    fn duplicate_servers() {
        assert_eq!(
            alerts(&format!("{T}backend b\n server a 127.0.0.1:1\n server a 127.0.0.1:2\n")),
            ["backend 'b', another server named 'a' was already defined at line 6, please use distinct names."]
        );
    }

    #[test]
    fn cookies_need_http_mode() {
        let (cfg, diags) = parse(&format!(
            "{T}listen l\n mode tcp\n bind :80\n cookie S insert\n capture cookie X len 10\n server s1 127.0.0.1:1 cookie a\n"
        ));
        let w: Vec<_> = diags.list.iter().filter(|d| d.level == Level::Warning).map(|d| d.message.as_str()).collect();
        assert_eq!(
            w,
            [
                "cookie will be ignored for proxy 'l' (needs 'mode http').",
                "'capture' statement ignored for proxy 'l' as it requires HTTP mode.",
                "proxy 'l' : ignoring cookie for server 's1' as HTTP mode is disabled.",
            ]
        );
        let l = &cfg.proxies[0];
        assert!(l.cookie.is_none() && l.servers[0].cookie.is_none() && l.captures.cookie.is_none());
    }

    #[test]
    fn final_warnings() {
        let warn = |text: &str| -> Vec<String> {
            let (_, diags) = parse(text);
            diags.list.iter().filter(|d| d.level == Level::Warning).map(|d| d.message.clone()).collect()
        };
        let w = warn("frontend f\n bind :80\n");
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("missing timeouts for frontend 'f'.\n   | While not properly invalid"));
        assert_eq!(
            warn(&format!("{T}frontend f\n")),
            ["frontend 'f' has no 'bind' directive. Please declare it as a backend if this was intended."]
        );
        assert!(warn(&format!("{T}backend b\n")).is_empty(), "no server, no timeout needed");
        assert!(warn("backend b\n").is_empty());
        // After a refused line, only alerts of the final checks are reported.
        assert!(warn("frontend f\n bind 127.0.0.1\n").is_empty());
    }

    #[test]
    fn tcp_mode_drops_http_options_keeps_rules() {
        let (cfg, _) = parse(&format!(
            "{T}frontend f\n bind :80\n option httplog\n option forwardfor\n http-request return status 200\n"
        ));
        let o = &cfg.proxies[0].options;
        assert!(!o.httplog && o.tcplog && o.forwardfor.is_none());
        // kept despite the warning, as HAProxy keeps them (for streams that become HTTP)
        assert_eq!(cfg.proxies[0].rules.http_request.len(), 1);
    }
}
