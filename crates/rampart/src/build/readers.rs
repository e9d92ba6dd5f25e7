//! Who reads each keyword rampart accepts: an explicit list, checked against the
//! keyword tables of rampart-cfg, so that no keyword is marked supported (or partial)
//! while nothing at runtime acts on it. A keyword is either read by the code named
//! here, or covered by a startup warning (`rampart_cfg::kw::Pending`), or refused with
//! "not supported yet". Adding a keyword to the tables means adding it here with the
//! code that reads it, or to a pending feature.

/// (keyword as `rampart_cfg::kw::every_keyword` names it, what reads it).
pub const READERS: &[(&str, &str)] = &[
    // sections
    ("global", "main.rs: load_config, start"),
    ("defaults", "rampart-cfg parse::proxy: inherited into each proxy"),
    ("frontend", "build::build, listener::bind_all"),
    ("backend", "build::build"),
    ("listen", "build::build, listener::bind_all"),
    ("log-forward", "log::forward::build, listener::bind_all"),
    ("log-forward backlog", "listener::bind_all (bind_log_forwards)"),
    (
        "log-forward bind",
        "listener::bind_all (bind_log_forwards), listener::log_forward::run_tcp (TLS: tls::bind::build)",
    ),
    ("log-forward dgram-bind", "listener::bind_all (bind_log_forwards), listener::log_forward::run_udp"),
    ("log-forward log", "log::forward::build (setup::Opener::sinks), Forwarder::relay"),
    ("log-forward maxconn", "listener::log_forward::run_tcp"),
    ("log-forward timeout", "listener::log_forward::serve (timeout client)"),
    ("ring", "log::setup::Opener::new (log::ring::Ring::from_cfg_tls, tls::client::ring_server), log::ring_fwd"),
    // global
    ("global chroot", "main.rs: leave_startup_state"),
    ("global daemon", "main.rs: resolve_modes"),
    ("global quiet", "main.rs: resolve_modes"),
    ("global insecure-fork-wanted", "nothing: rampart never forks (parse::global::parse_flag)"),
    ("global pidfile", "main.rs: leave_startup_state"),
    ("global user", "process::identity::resolve"),
    ("global group", "process::identity::resolve"),
    ("global uid", "process::identity::resolve"),
    ("global gid", "process::identity::resolve"),
    ("global hard-stop-after", "worker: soft stop"),
    ("global maxconn", "process::limits"),
    ("global ulimit-n", "process::limits"),
    ("global nbthread", "main.rs: start"),
    ("global tune.bufsize", "build::build: Runtime::bufsize"),
    ("global tune.maxrewrite", "build::build: Runtime::max_head"),
    ("global tune.h2.header-table-size", "build::build: Runtime::h2 (mux::h2::conn)"),
    ("global tune.h2.initial-window-size", "build::build: Runtime::h2 (mux::h2::conn)"),
    ("global tune.h2.max-concurrent-streams", "build::build: Runtime::h2 (mux::h2::conn)"),
    ("global tune.h2.max-frame-size", "build::build: Runtime::h2 (mux::h2::conn)"),
    ("global tune.idle-pool.shared", "build::build: ServerRt::pool_shared (conn_pool::take)"),
    ("global stats", "the stats table below"),
    ("global stats socket", "stats::socket::bind_all"),
    ("global stats timeout", "stats::Cli::timeout"),
    ("global stats maxconn", "stats::Cli::maxconn"),
    ("global ssl-default-bind-ciphers", "tls::bind::suites"),
    ("global ssl-default-bind-ciphersuites", "tls::bind::suites"),
    ("global ssl-default-bind-curves", "tls::bind::groups"),
    ("global ssl-default-bind-options", "tls::bind::versions, tls::bind::build"),
    ("global ca-base", "tls::bind::client_verifier"),
    ("global crt-base", "tls::bind::build"),
    ("global ssl-load-extra-del-ext", "tls::pem::key_path, tls::certs::Certs::set"),
    ("global tune.ssl.cachesize", "tls::bind::build (ServerSessionMemoryCache)"),
    ("global tune.ssl.lifetime", "rampart-cfg only: warned, rustls' ticket lifetime is fixed; TODO(#11)"),
    ("global tune.ssl.default-dh-param", "rampart-cfg only: rustls has no DHE (warned, nothing to size)"),
    ("global ssl-dh-param-file", "rampart-cfg only: file checked; rustls has no DHE (warned)"),
    ("global tune.ssl.ssl-ctx-cache-size", "tls::gencert::CertGen (cache of generated certificates)"),
    ("global tune.ssl.capture-buffer-size", "rampart-cfg only: sizes ssl_fc_cipherlist_* captures, not provided"),
    // proxy keywords
    ("stats", "build::build: ProxyRt::stats_page (stats::page, stream::stats_page)"),
    ("backlog", "listener::bind_all"),
    ("balance", "build::balancer::build"),
    ("cookie", "build::build: BackendRt::cookie (stream::ana::cookie)"),
    ("hash-type", "build::balancer::build: LbConfig::consistent, hasher"),
    ("fullconn", "proxy::fullconn: BackendRt::fullconn, backend::current_maxconn"),
    ("hash-balance-factor", "build::balancer::build: LbConfig::balance_factor"),
    ("bind", "listener::bind_all"),
    ("default-server", "rampart-cfg parse::server: copied into each server"),
    ("default_backend", "proxy::select_backend"),
    ("errorfile", "build::build: ErrorPages"),
    ("http-reuse", "build::build: ProxyRt::http_reuse"),
    ("maxconn", "build::build: FrontendRt::maxconn"),
    ("mode", "build::build: ProxyRt::mode"),
    ("option", "the option table below"),
    ("retries", "build::build: ProxyRt::retries"),
    ("retry-on", "build::build: ProxyRt::retries (none: 0)"),
    ("server", "build::build: BackendRt::servers"),
    ("timeout", "the timeout table below"),
    ("use_backend", "proxy::select_backend"),
    // timeouts
    ("timeout client", "proxy::timeouts"),
    ("timeout client-fin", "proxy::timeouts, splice"),
    ("timeout connect", "proxy::timeouts"),
    ("timeout http-keep-alive", "proxy::timeouts"),
    ("timeout http-request", "proxy::timeouts"),
    ("timeout queue", "proxy::timeouts, backend"),
    ("timeout server", "proxy::timeouts"),
    ("timeout server-fin", "proxy::timeouts, splice"),
    ("timeout tunnel", "proxy::timeouts, splice"),
    // options
    ("option abortonclose", "build::build: ProxyRt::abortonclose"),
    ("option allbackups", "build::balancer::build: BackendRt::lb_backup, backend::pick_server"),
    ("option forwardfor", "build::build: ProxyRt::forwardfor"),
    ("option http-keep-alive", "build::build: ProxyRt::http_conn_mode"),
    ("option http-server-close", "build::build: ProxyRt::http_conn_mode"),
    ("option httpclose", "build::build: ProxyRt::http_conn_mode"),
    ("option redispatch", "build::build: ProxyRt::redispatch"),
    ("option transparent", "build::build: the hidden ServerRt::transparent (backend::server_target)"),
    ("dispatch", "build::build: the hidden server of Proxy::implicit_server"),
    ("option tcpka", "build::build: ProxyRt::clitcpka/srvtcpka (session::start, backend::connect_addr)"),
    ("option clitcpka", "build::build: ProxyRt::clitcpka (session::start)"),
    ("option srvtcpka", "build::build: ProxyRt::srvtcpka (backend::connect_addr)"),
    ("clitcpka-cnt", "build::build: ProxyRt::clitcpka"),
    ("clitcpka-idle", "build::build: ProxyRt::clitcpka"),
    ("clitcpka-intvl", "build::build: ProxyRt::clitcpka"),
    ("srvtcpka-cnt", "build::build: ProxyRt::srvtcpka"),
    ("srvtcpka-idle", "build::build: ProxyRt::srvtcpka"),
    ("srvtcpka-intvl", "build::build: ProxyRt::srvtcpka"),
    ("option http-no-delay", "by design: rampart never delays data"),
    ("option tcp-smart-accept", "by design: acknowledgements are left to the kernel"),
    ("option tcp-smart-connect", "by design: acknowledgements are left to the kernel"),
    ("option splice-auto", "by design: splice (the 'no' form is refused)"),
    ("option splice-request", "by design: splice (the 'no' form is refused)"),
    ("option splice-response", "by design: splice (the 'no' form is refused)"),
    // logs (issue 7)
    ("global log", "log::setup::Opener::new"),
    ("global log-send-hostname", "log::setup::Opener::new: sink::Ident"),
    ("global log-tag", "log::setup::Opener::new: sink::Ident"),
    ("log", "log::setup::Opener::proxy"),
    ("log-format", "log::setup::Opener::proxy"),
    ("error-log-format", "log::setup::Opener::proxy"),
    ("log-format-sd", "log::setup::Opener::proxy: ProxyLog::sd_format"),
    ("log-tag", "log::setup::Opener::proxy"),
    ("option httplog", "log::setup::Opener::proxy"),
    ("option tcplog", "log::setup::Opener::proxy"),
    // COMPAT: fc_err is always 0 (log::setup::httpslog_format)
    ("option httpslog", "log::setup::Opener::proxy: httpslog_format"),
    ("option dontlognull", "log::emit"),
    ("option dontlog-normal", "log::emit"),
    ("option log-separate-errors", "log::emit"),
    // COMPAT: partial, TCP lines are sent at the end of the session (docs/COMPATIBILITY.md, section Logging)
    ("option logasap", "stream::log_asap, log::vars"),
    // balance algorithms
    ("balance roundrobin", "lb::roundrobin"),
    ("balance static-rr", "lb::roundrobin"),
    ("balance leastconn", "lb::leastconn"),
    ("balance first", "lb::first"),
    ("balance random", "lb::random"),
    ("balance source", "backend::key, lb::chash, lb::map"),
    ("balance uri", "backend::key, lb::chash, lb::map"),
    ("balance url_param", "backend::key, lb::chash, lb::map"),
    ("balance hdr", "backend::key, lb::chash, lb::map"),
    ("balance hash", "proxy::balancer (expression), backend::key"),
    ("balance peak-ewma", "lb::peak_ewma, backend::ResponseProbe"),
    // bind options
    ("bind backlog", "listener::bind_all"),
    ("bind name", "build::build: ListenerRt::name (so_name)"),
    ("bind v4v6", "listener::bind_inet"),
    ("bind v6only", "listener::bind_inet"),
    ("bind accept-proxy", "build::build: ListenerRt::accept_proxy (session::pp)"),
    ("bind mss", "listener::bind_inet (TCP_MAXSEG)"),
    ("bind defer-accept", "listener::set_listen_options (TCP_DEFER_ACCEPT)"),
    ("bind tfo", "listener::set_listen_options (TCP_FASTOPEN)"),
    ("bind tcp-ut", "listener::set_listen_options (TCP_USER_TIMEOUT)"),
    ("bind ssl", "build::build: ListenerRt::tls (session::tls_handshake)"),
    ("bind crt", "tls::bind::build, tls::pem"),
    ("bind crt-list", "tls::crtlist, tls::bind::build"),
    ("bind ca-file", "tls::bind::client_verifier"),
    ("bind crl-file", "tls::bind::client_verifier, tls::crl"),
    ("bind ca-verify-file", "tls::bind::client_verifier"),
    ("bind ca-ignore-err", "tls::verify::ClientVerify::refusal"),
    ("bind crt-ignore-err", "tls::verify::ClientVerify::refusal"),
    ("bind verify", "tls::bind::client_verifier"),
    ("bind alpn", "tls::bind::alpn"),
    ("bind proto", "build::build: ListenerRt::proto (mux::protocol)"),
    ("bind npn", "rampart-cfg parse::ssl: refused (rustls has no NPN)"),
    ("bind ciphers", "tls::bind::suites"),
    ("bind ciphersuites", "tls::bind::suites"),
    ("bind curves", "tls::bind::groups"),
    ("bind ecdhe", "tls::bind::groups"),
    ("bind generate-certificates", "tls::gencert::CertGen (tls::sni::SniResolver)"),
    ("bind ca-sign-file", "tls::gencert::CertGen::load"),
    ("bind strict-sni", "tls::bind::BindTls::choose"),
    ("bind ssl-min-ver", "tls::bind::versions"),
    ("bind ssl-max-ver", "tls::bind::versions"),
    ("bind no-sslv3", "tls::bind::versions"),
    ("bind no-tlsv10", "tls::bind::versions"),
    ("bind no-tlsv11", "tls::bind::versions"),
    ("bind no-tlsv12", "tls::bind::versions"),
    ("bind no-tlsv13", "tls::bind::versions"),
    ("bind force-sslv3", "tls::bind::versions (refused: not in rustls)"),
    ("bind force-tlsv10", "tls::bind::versions (refused: not in rustls)"),
    ("bind force-tlsv11", "tls::bind::versions (refused: not in rustls)"),
    ("bind force-tlsv12", "tls::bind::versions"),
    ("bind force-tlsv13", "tls::bind::versions"),
    ("bind no-tls-tickets", "tls::bind::build (send_tls13_tickets, ticketer)"),
    ("bind tls-ticket-keys", "tls::ticket_keys (KeyFileTicketer), tls::bind::build_keyed"),
    ("bind prefer-client-ciphers", "tls::bind::build (ignore_client_order)"),
    // server options
    ("server backup", "build::build: ServerRt::backup"),
    ("server cookie", "build::build: ServerRt::cookie (stream::ana::cookie)"),
    ("server proto", "build::build: ServerRt::proto (back::BackConn::new, back::h2)"),
    ("server pool-max-conn", "backend::ServerConn::park (conn_pool::put)"),
    ("server pool-low-conn", "build::build: ServerRt::pool_low_conn (conn_pool::take)"),
    ("server id", "build::balancer::server_ids (ring positions, `first` order)"),
    ("server disabled", "build::build: ServerRt::disabled"),
    ("server weight", "build::build: Lb weights"),
    ("server maxconn", "build::build: ServerRt::maxconn, backend::try_claim"),
    ("server minconn", "backend::current_maxconn (server::queue::dynamic_maxconn)"),
    ("server maxqueue", "backend::assign_server: ServerRt::maxqueue"),
    // health checks
    ("server check", "check::build: ServerRt::check"),
    ("server no-check", "check::build: ServerRt::check"),
    ("server agent-check", "check::build_agent: ServerRt::agent"),
    ("server observe", "check::build: CheckRt::observe, health::observe"),
    ("server check-send-proxy", "check::build: CheckRt::proxy_header"),
    ("server no-check-send-proxy", "check::build: CheckRt::proxy_header"),
    ("server track", "health::resolve_tracks: ServerRt::track"),
    ("server slowstart", "check::build: CheckRt::slowstart, health::probe::Ramp"),
    ("server error-limit", "check::build: CheckRt::error_limit"),
    ("server on-error", "check::build: CheckRt::on_error"),
    ("server no-agent-check", "check::build_agent: ServerRt::agent"),
    ("server agent-port", "check::build_agent: AgentRt::addr"),
    ("server agent-addr", "check::build_agent: AgentRt::addr"),
    ("server agent-inter", "check::build_agent: AgentRt::inter"),
    ("server agent-send", "check::build_agent: AgentRt::send"),
    ("server addr", "check::build: CheckRt::addr"),
    ("server port", "check::build: CheckRt::addr"),
    ("server inter", "check::build: CheckRt::inter"),
    ("server fastinter", "check::build: CheckRt::fastinter"),
    ("server downinter", "check::build: CheckRt::downinter"),
    ("server rise", "check::build: CheckRt::rise"),
    ("server fall", "check::build: CheckRt::fall"),
    ("timeout check", "check::build: CheckRt::timeout_check"),
    ("option log-health-checks", "check::build: CheckRt::log_health_checks"),
    ("option httpchk", "check::compile_backend: HttpChk"),
    ("option tcp-check", "check::compile_backend: TcpChk"),
    ("option redis-check", "check::compile_backend: TcpChk"),
    ("option smtpchk", "check::compile_backend: TcpChk"),
    ("option mysql-check", "check::compile_backend: TcpChk (check::proto)"),
    ("option pgsql-check", "check::compile_backend: TcpChk (check::proto)"),
    ("option ldap-check", "check::compile_backend: TcpChk (check::proto)"),
    ("option spop-check", "check::compile_backend: TcpChk (check::proto)"),
    ("option ssl-hello-chk", "check::compile_backend: TcpChk (check::proto)"),
    ("tcp-check", "check::compile_backend: TcpChk"),
    ("http-check", "check::compile_backend: HttpChk"),
    ("global spread-checks", "check::build: CheckRt::spread"),
    ("server enabled", "rampart-cfg parse::server: clears 'disabled'"),
    ("server source", "build::build: ServerRt::source (backend::connect_addr)"),
    ("server socks4", "build::build: ServerRt::socks4 (backend::connect_addr, io::socks4)"),
    ("server check-via-socks4", "check::build: CheckRt::socks4 (check::conn::connect)"),
    ("server on-marked-down", "health::report::cut_sessions: ServerRt::sessions"),
    ("server on-marked-up", "health::report::cut_sessions: ServerRt::sessions"),
    ("source", "build::build: ServerRt::source (backend::connect_addr)"),
    ("server send-proxy", "backend::send_proxy"),
    ("server send-proxy-v2", "backend::send_proxy"),
    ("server no-send-proxy", "backend::send_proxy"),
    ("server no-send-proxy-v2", "backend::send_proxy"),
    ("server proxy-v2-options", "backend::send_proxy"),
    // TLS towards servers
    ("server ssl", "tls::client::build: ServerTlsRt::traffic (backend::connect)"),
    ("server no-ssl", "tls::client::build: ServerTlsRt::traffic"),
    ("server verify", "tls::client::build: Verify / NoVerify"),
    ("server verifyhost", "tls::client::build: Verify::host"),
    ("server ca-file", "tls::client::build: Verify (pem::load_ca_file)"),
    ("server crl-file", "tls::client::build: Verify (tls::crl, tls::verify::revocation_errors)"),
    ("server crt", "tls::client::build: tls::server_crt::ServerCrt (pem::load_cert_key)"),
    ("server sni", "tls::client::build: ServerTlsRt::sni (stream: ConnectCtx::sni)"),
    ("server alpn", "tls::client::build: ClientConfig::alpn_protocols"),
    ("server ssl-min-ver", "tls::client::build: versions"),
    ("server ssl-max-ver", "tls::client::build: versions"),
    ("server ciphers", "tls::client::build: suites::select"),
    ("server ciphersuites", "tls::client::build: suites::select"),
    ("server ssl-reuse", "tls::client::build: ClientConfig::resumption"),
    ("server no-ssl-reuse", "tls::client::build: ClientConfig::resumption"),
    ("server tls-tickets", "tls::client::build: ClientConfig::resumption"),
    ("server no-tls-tickets", "tls::client::build: ClientConfig::resumption"),
    ("server check-ssl", "tls::client::build: ServerTlsRt::check (health::probe)"),
    ("server no-check-ssl", "tls::client::build: ServerTlsRt::check"),
    ("server check-sni", "tls::client::build: ServerTlsRt::check_sni (health::probe)"),
    ("server check-alpn", "tls::client::build: ServerTlsRt::check (health::probe)"),
    ("server no-sslv3", "tls::client::build: versions"),
    ("server no-tlsv10", "tls::client::build: versions"),
    ("server no-tlsv11", "tls::client::build: versions"),
    ("server no-tlsv12", "tls::client::build: versions"),
    ("server no-tlsv13", "tls::client::build: versions"),
    ("server force-sslv3", "tls::client::build: versions"),
    ("server force-tlsv10", "tls::client::build: versions"),
    ("server force-tlsv11", "tls::client::build: versions"),
    ("server force-tlsv12", "tls::client::build: versions"),
    ("server force-tlsv13", "tls::client::build: versions"),
    ("global ssl-default-server-ciphers", "tls::client::build: SslServerDefaults"),
    ("global ssl-default-server-ciphersuites", "tls::client::build: SslServerDefaults"),
    ("global ssl-default-server-options", "tls::client::build: SslServerDefaults"),
    ("global ssl-server-verify", "tls::client::build: SslServerDefaults"),
    // sections and keywords of the rules work (read, or refused at startup by name)
    ("userlist", "sample::fetch::http (http_auth), action::compile (http-request auth)"),
    ("http-errors", "rampart-cfg: 'errorfiles' copies them into proxies (errors::ErrorPages)"),
    ("global expose-experimental-directives", "rampart-cfg parse: gates experimental directives"),
    ("global presetenv", "rampart-cfg envops: applied to the environment while reading"),
    ("global resetenv", "rampart-cfg envops: applied to the environment while reading"),
    ("global setenv", "rampart-cfg envops: applied to the environment while reading"),
    ("global unsetenv", "rampart-cfg envops: applied to the environment while reading"),
    ("global set-var", "proxy::global_set_vars"),
    ("global set-var-fmt", "proxy::global_set_vars"),
    ("global tune.vars.check-max-size", "proxy::var_limits"),
    ("global tune.vars.global-max-size", "proxy::var_limits"),
    ("global tune.vars.proc-max-size", "proxy::var_limits"),
    ("global tune.vars.reqres-max-size", "proxy::var_limits"),
    ("global tune.vars.sess-max-size", "proxy::var_limits"),
    ("global tune.vars.txn-max-size", "proxy::var_limits"),
    ("acl", "action::compile_proxy: acl::compile_acl_defs"),
    ("capture", "action::capture (headers), stream::ana::cookie (capture cookie)"),
    ("declare", "proxy::unsupported: refused at startup"),
    ("errorfiles", "rampart-cfg: resolved into each proxy's errorfiles (errors::ErrorPages)"),
    ("http-error", "errors::ErrorPages ('errorfile' replies); proxy::unsupported refuses the others"),
    ("monitor", "proxy::unsupported: refused at startup"),
    ("monitor-uri", "proxy::unsupported: refused at startup"),
    ("redirect", "action::compile_proxy: redirects"),
    ("unique-id-format", "proxy::unsupported: refused at startup"),
    ("unique-id-header", "proxy::unsupported: refused at startup"),
    ("use-server", "action::compile_proxy: switching"),
    ("timeout tarpit", "action::compile_proxy: ProxyRules::tarpit"),
    ("option http-buffer-request", "proxy::unsupported: refused at startup"),
    ("option http-restrict-req-hdr-names", "proxy::unsupported: 'delete'/'reject' refused at startup"),
    ("option originalto", "proxy::unsupported: refused at startup"),
];

/// Keyword families read as a whole: every rule action is compiled by
/// `action::compile_proxy`, which refuses at startup, by name and line, an action the
/// runtime cannot run yet.
pub const FAMILY_READERS: &[(&str, &str)] = &[
    ("http-request", "action::compile_proxy"),
    ("http-response", "action::compile_proxy"),
    ("http-after-response", "action::compile_proxy"),
    ("tcp-request", "action::compile_proxy, proxy::unsupported"),
    ("tcp-response", "action::compile_proxy, proxy::unsupported"),
];

/// Whether `keyword` (as `every_keyword` names it) has a reader.
pub fn is_read(keyword: &str) -> bool {
    READERS.iter().any(|(k, _)| *k == keyword)
        || FAMILY_READERS
            .iter()
            .any(|(f, _)| keyword == *f || keyword.strip_prefix(f).is_some_and(|r| r.starts_with(' ')))
}

#[cfg(test)]
mod tests {
    use super::{is_read, FAMILY_READERS, READERS};
    use rampart_cfg::kw::{every_keyword, Pending, Support};

    #[test]
    fn every_accepted_keyword_has_a_reader_or_a_startup_warning() {
        let mut missing = Vec::new();
        for (name, support) in every_keyword() {
            if !matches!(support, Support::Yes | Support::Partial(_)) {
                continue;
            }
            let read = is_read(&name);
            let pending = Pending::of(&name).is_some();
            if read == pending {
                missing.push(format!("{name}: read {read}, pending {pending}"));
            }
        }
        assert!(
            missing.is_empty(),
            "each accepted keyword needs exactly one of: a reader in READERS, a pending feature:\n{}",
            missing.join("\n")
        );
    }

    #[test]
    fn every_reader_names_an_accepted_keyword_once() {
        let all = every_keyword();
        for (i, (name, _)) in READERS.iter().enumerate() {
            let found = all.iter().find(|(k, _)| k == name);
            assert!(
                matches!(found, Some((_, Support::Yes | Support::Partial(_)))),
                "{name} is not an accepted keyword: {found:?}"
            );
            assert!(!READERS[..i].iter().any(|(k, _)| k == name), "{name} listed twice");
            assert!(!FAMILY_READERS.iter().any(|(f, _)| name.starts_with(f)), "{name} is read by its family");
        }
    }
}
