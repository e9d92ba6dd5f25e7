//! The keyword lists of sections, `global` and proxy sections (names only). Options of
//! `bind` and `server` lines are in `args.rs`, rule actions in `actions.rs`.

use super::Support::{No, Partial, Rejected, Yes};
use super::{Caps, Kw, OptionKw, ProxyKw, Support};

const fn kw(name: &'static str, support: Support) -> Kw {
    Kw { name, support }
}

const D: u8 = Caps::DEFAULTS;
const F: u8 = Caps::FRONTEND;
const L: u8 = Caps::LISTEN;
const B: u8 = Caps::BACKEND;
const NAMED: u8 = Caps::NAMED_DEFAULTS_ONLY;
const ALL: u8 = D | F | L | B;

const fn px(name: &'static str, caps: u8, support: Support) -> ProxyKw {
    ProxyKw { name, caps: Caps(caps), support }
}

const fn opt(name: &'static str, caps: u8, negatable: bool, support: Support) -> OptionKw {
    OptionKw { name, caps: Caps(caps), negatable, support }
}

/// Top-level section keywords of HAProxy 2.6.
pub static SECTIONS: &[Kw] = &[
    kw("global", Yes),
    kw("defaults", Yes),
    kw("frontend", Yes),
    kw("backend", Yes),
    kw("listen", Yes),
    kw("userlist", Partial(USERLIST_PARTIAL)),
    kw("peers", Partial(PEERS_PARTIAL)),
    kw("mailers", Yes),
    kw("resolvers", Yes),
    kw("cache", Yes),
    kw("http-errors", Yes),
    kw("ring", Partial(RING_PARTIAL)),
    kw("log-forward", Partial(LOG_FORWARD_PARTIAL)),
    kw("program", Yes),
    kw("fcgi-app", Partial(FCGI_APP_PARTIAL)),
    kw("namespace_list", No),
    kw(
        "crt-store",
        Partial(
            "HAProxy 3.x: `crt-base`, `key-base`, `load crt <file> [key <file>] [alias <name>]`, named by `bind ... \
             crt @<store>/<name>` (an unnamed store: by the name alone); `ocsp`, `issuer`, `sctl`, `ocsp-update` not yet",
        ),
    ),
];

const LUA_LOAD_PARTIAL: &str = "Lua 5.4; one Lua state shared by all threads, its calls serialized, as HAProxy; \
     the API subset of docs/COMPATIBILITY.md, section Lua";

const LOG_FORWARD_PARTIAL: &str =
    "UDP and TCP (inet) receivers, TCP over TLS (bind ... ssl crt); no PROXY protocol or unix sockets";

/// Keywords of `log-forward` sections.
pub static LOG_FORWARD: &[Kw] = &[
    kw("backlog", Yes),
    kw(
        "bind",
        Partial(
            "inet addresses; name, backlog, v4v6, v6only, mss, defer-accept, tfo, tcp-ut, and the TLS options \
             of a proxy's bind (ssl, crt, crt-list, ca-file, verify, crl-file, ciphers, versions, ...); not \
             accept-proxy, alpn, npn, generate-certificates",
        ),
    ),
    kw("dgram-bind", Partial("inet addresses; name, backlog")),
    kw("log", Partial(LOG_PARTIAL)),
    kw("maxconn", Yes),
    kw("timeout", Partial("timeout client only, as HAProxy")),
];
const RING_PARTIAL: &str = "description, format, maxlen, size, timeout connect/server, server (TCP, log-proto, \
     send-proxy[-v2], and TLS: ssl, verify, verifyhost, ca-file, crl-file, crt, ciphers, ciphersuites, alpn, \
     versions, ssl-reuse, tls-tickets); not backing-file, nor sni, check-* or other server options";

const LOG_PARTIAL: &str =
    "udp@/udp6@/ipv4/ipv6, unix@/uxdg@/paths (datagram), stdout/stderr, fd@1/fd@2, ring@; not tcp@";

const PEERS_PARTIAL: &str = "peer, server, bind, default-bind, default-server, table, disabled, enabled, with \
     TLS on peer links; only the TLS options on peer/server/default-server lines; no 'log'";

/// Keywords of `peers` sections.
pub static PEERS: &[Kw] = &[
    kw(
        "bind",
        Partial("one inet or fd@ address; name, backlog, v4v6, v6only, mss, defer-accept, tfo, tcp-ut, and the TLS options (ssl, crt, ca-file, verify ...: remote nodes connect over TLS)"),
    ),
    kw("default-bind", Partial("backlog and the TLS options of 'bind'")),
    kw("default-server", Partial("the TLS options of 'server' (ssl, crt, ca-file, verify, ciphers, ssl-min-ver ...); the others are refused")),
    kw("disabled", Yes),
    kw("enabled", Yes),
    kw(
        "log",
        Partial("the targets of a proxy's 'log' (not tcp@); as HAProxy 2.6, only the section's 'Paused proxy <local>.' and 'Resumed ...' messages (SIGTTOU/SIGTTIN) go there"),
    ),
    kw("peer", Partial("name, address and the TLS options of 'server' (ssl, crt, ca-file, verify ...: this node connects over TLS); the other server options are refused")),
    kw("server", Partial("name, address and the TLS options of 'server' (as 'peer'); the other server options are refused")),
    kw("table", Yes),
];

/// Keywords of `mailers` sections.
pub static MAILERS: &[Kw] = &[kw("mailer", Partial("IPv4 and IPv6 addresses; no SSL")), kw("timeout", Yes)];

/// Keywords of `program` sections.
pub static PROGRAM: &[Kw] = &[kw("command", Yes), kw("group", Yes), kw("option", Yes), kw("user", Yes)];
const FCGI_APP_PARTIAL: &str = "FastCGI servers (server ... proto fcgi, use-fcgi-app): docroot, index, path-info, \
     set-param, pass-header, log-stderr, options; not acl (see the fcgi-app keywords); one request per connection \
     at a time";

/// Keywords of `fcgi-app` sections.
pub static FCGI_APP: &[Kw] = &[
    kw("acl", No),
    kw("docroot", Yes),
    kw("index", Yes),
    kw("log-stderr", Yes),
    kw("option get-values", Partial("a new connection first sends GET_VALUES (`FCGI_MAX_REQS`, `FCGI_MPXS_CONNS`) and its first request waits for the answer, as HAProxy 2.6; the answer is checked (COMPAT: anything else fails the request with a 502 at once, where HAProxy counts a connection failure: retries, then 503) but changes nothing: rampart sends one request per connection at a time")),
    kw("option keep-conn", Yes),
    kw("option max-reqs", Partial("accepted (HAProxy's warning without `mpxs-conns` or `get-values`); one request per connection at a time: requests are not multiplexed yet")),
    kw("option mpxs-conns", Partial("accepted; requests are not multiplexed on a connection yet (one at a time, ids 1, 3, 5 ... as HAProxy numbers them), whatever GET_VALUES answered")),
    kw("pass-header", Partial("without a condition (if/unless not yet)")),
    kw("path-info", Yes),
    kw(
        "set-param",
        Partial("runs as the backend's last http-request rule; a condition cannot name an ACL (no acl in fcgi-app)"),
    ),
];

/// Keywords of `resolvers` sections.
pub static RESOLVERS: &[Kw] = &[
    kw("accepted_payload_size", Yes),
    kw("hold", Yes),
    kw("nameserver", Yes),
    kw("parse-resolv-conf", Yes),
    kw("resolve_retries", Yes),
    kw("timeout", Yes),
];

const STRICT_LIMITS_PARTIAL: &str = "as in HAProxy when set: a descriptor, memory or core-dump limit that cannot be \
     set stops the startup; but off by default (HAProxy 2.6: on), so that without the keyword rampart warns and \
     lowers maxconn to what the descriptor limit allows";

/// `global` section keywords.
pub static GLOBAL: &[Kw] = &[
    kw("51degrees-cache-size", No),
    kw("51degrees-data-file", No),
    kw("51degrees-property-name-list", No),
    kw("51degrees-property-separator", No),
    kw("busy-polling", Partial("accepted with a startup warning, no effect: an idle rampart thread sleeps in epoll_wait; busy polling only trades CPU for wake-up latency")),
    kw("ca-base", Yes),
    kw("chroot", Yes),
    kw("close-spread-time", Partial("HTTP/1 and HTTP/2 client connections; a parked idle HTTP/1 connection closes at its own random moment of the window")),
    kw("cluster-secret", No),
    kw("cpu-map", Yes),
    kw("crt-base", Yes),
    kw("daemon", Yes),
    kw(
        "default-path",
        Partial(
            "`current`, `config`, `parent`, `origin <path>`: the files the parser reads follow it line by line; the \
             daemon reads the others (certificates, maps, Lua...) from the directory in effect at the end of the last \
             file, where HAProxy is left too (a relative name in an earlier file with another directory differs)",
        ),
    ),
    kw("description", Yes),
    kw("deviceatlas-json-file", No),
    kw("deviceatlas-log-level", No),
    kw("deviceatlas-properties-cookie", No),
    kw("deviceatlas-separator", No),
    kw("expose-experimental-directives", Yes),
    kw("external-check", Yes),
    kw("fd-hard-limit", Partial("accepted with a warning: the descriptor limit is raised only to what maxconn or ulimit-n need")),
    kw("gid", Yes),
    kw("grace", Yes),
    kw("group", Yes),
    kw("h1-accept-payload-with-any-method", No),
    kw("h1-case-adjust", Yes),
    kw("h1-case-adjust-file", Yes),
    kw("h2-workaround-bogus-websocket-clients", Yes),
    kw("hard-stop-after", Yes),
    kw("httpclient.resolvers.id", Yes),
    kw("httpclient.resolvers.prefer", Yes),
    kw("httpclient.ssl.ca-file", Partial(HC_CA_PARTIAL)),
    kw("httpclient.ssl.verify", Yes),
    kw("insecure-fork-wanted", Yes),
    kw("insecure-setuid-wanted", Yes),
    kw("issuers-chain-path", No),
    kw("localpeer", Yes),
    kw("log", Partial(LOG_PARTIAL)),
    kw("log-send-hostname", Yes),
    kw("log-tag", Yes),
    kw("lua-load", Partial(LUA_LOAD_PARTIAL)),
    kw("lua-load-per-thread", Partial("each thread loads the file into its own Lua state, as HAProxy; the API subset of docs/COMPATIBILITY.md, section Lua")),
    kw("lua-prepend-path", Yes),
    kw("master-worker", Yes),
    kw("max-spread-checks", Yes),
    kw("maxcompcpuusage", Partial(MAXCOMPCPU_PARTIAL)),
    kw("maxcomprate", Yes),
    kw("maxconn", Yes),
    kw("maxconnrate", Yes),
    kw("maxpipes", No),
    kw("maxsessrate", Partial("counted at accept, as maxconnrate: a connection that tcp-request connection rules reject counts too")),
    kw("maxsslconn", Yes),
    kw("maxsslrate", Yes),
    kw("maxzlibmem", Yes),
    kw("mworker-max-reloads", Yes),
    kw("nbproc", Rejected),
    kw("nbthread", Yes),
    kw("no-memory-trimming", No),
    kw("node", Yes),
    kw("noepoll", Partial("accepted with a warning: the event loop always uses epoll")),
    kw("noevports", No),
    kw("nogetaddrinfo", Partial("accepted with a warning: names are resolved with getaddrinfo()")),
    kw("nokqueue", No),
    kw("nopoll", Yes),
    kw("noreuseport", Yes),
    kw("nosplice", Yes),
    kw("numa-cpu-mapping", No),
    kw("pidfile", Yes),
    kw("pp2-never-send-local", No),
    kw("presetenv", Yes),
    kw("profiling.tasks", No),
    kw("quiet", Yes),
    kw("resetenv", Yes),
    kw("server-state-base", Yes),
    kw("server-state-file", Yes),
    kw("set-dumpable", Yes),
    kw("set-var", Yes),
    kw("set-var-fmt", Yes),
    kw("setenv", Yes),
    kw("spread-checks", Yes),
    kw("ssl-default-bind-ciphers", Yes),
    kw("ssl-default-bind-ciphersuites", Yes),
    kw("ssl-default-bind-curves", Yes),
    kw("ssl-default-bind-options", Yes),
    kw("ssl-default-server-ciphers", Yes),
    kw("ssl-default-server-ciphersuites", Yes),
    kw("ssl-default-server-options", Yes),
    kw("ssl-dh-param-file", Partial("checked, then ignored with a warning: rustls has no DHE")),
    kw("ssl-engine", No),
    kw("ssl-load-extra-del-ext", Yes),
    kw("ssl-load-extra-files", No),
    kw("ssl-mode-async", Partial("accepted with a startup warning, no effect: it only matters with an asynchronous OpenSSL engine (`ssl-engine`), which rustls has no counterpart for")),
    kw("ssl-propquery", No),
    kw("ssl-provider", No),
    kw("ssl-provider-path", No),
    kw("ssl-server-verify", Yes),
    kw("ssl-skip-self-issued-ca", No),
    kw(
        "stats",
        Partial("'socket', 'timeout', 'maxconn' (the runtime API, see docs/COMPATIBILITY.md, section Runtime API); not 'bind-process'"),
    ),
    kw("strict-limits", Partial(STRICT_LIMITS_PARTIAL)),
    kw("thread-group", No),
    kw("thread-groups", No),
    kw("tune.buffers.limit", No),
    kw("tune.buffers.reserve", No),
    kw("tune.bufsize", Yes),
    kw("tune.comp.maxlevel", Yes),
    kw("tune.fail-alloc", No),
    kw("tune.fd.edge-triggered", Partial("accepted (experimental, as in HAProxy) with a startup warning, no effect: rampart's event loop (tokio) always registers descriptors edge-triggered")),
    kw("tune.h2.fe.glitches-threshold", Yes),
    kw("tune.h2.header-table-size", Yes),
    kw("tune.h2.initial-window-size", Yes),
    kw("tune.h2.max-concurrent-streams", Yes),
    kw("tune.h2.max-frame-size", Yes),
    kw("tune.http.cookielen", Yes),
    kw("tune.http.logurilen", Yes),
    kw("tune.http.maxhdr", Partial("HTTP/1 requests (400), responses (502) and trailers, as HAProxy; HTTP/2 header blocks are not counted against it")),
    kw("tune.idle-pool.shared", Yes),
    kw("tune.idletimer", Partial("accepted with a warning: buffers are not grown on idle streams")),
    kw("tune.listener.multi-queue", No),
    kw("tune.lua.forced-yield", Yes),
    kw("tune.lua.maxmem", Partial("one limit for every Lua state of the process, as HAProxy; states running at once on different threads (lua-load-per-thread) see each other's use as of their last count (each turn, each forced-yield period), not at each allocation")),
    kw("tune.lua.service-timeout", Yes),
    kw("tune.lua.session-timeout", Yes),
    kw("tune.lua.task-timeout", Yes),
    kw("tune.maxaccept", Partial("accepted with a warning: each listener accepts up to 64 connections per wake-up")),
    kw("tune.maxpollevents", Partial("accepted with a warning: the event loop sizes its own batches")),
    kw("tune.maxrewrite", Yes),
    kw("tune.pattern.cache-size", No),
    kw("tune.peers.max-updates-at-once", Yes),
    kw("tune.pipesize", Yes),
    kw("tune.pool-high-fd-ratio", Partial("no idle server connection is kept past this share of the descriptors; counted against the idle connections, not every descriptor in use as HAProxy")),
    kw("tune.pool-low-fd-ratio", Partial("past this share of the descriptors, an idle server connection is kept only when its thread has none to the server; counted against the idle connections, not every descriptor in use as HAProxy")),
    kw("tune.quic.frontend.conn-tx-buffers.limit", No),
    kw("tune.quic.frontend.max-idle-timeout", No),
    kw("tune.quic.frontend.max-streams-bidi", No),
    kw("tune.quic.retry-threshold", No),
    kw("tune.rcvbuf.client", Yes),
    kw("tune.rcvbuf.server", Partial(SRV_SOCKBUF_PARTIAL)),
    kw("tune.recv_enough", No),
    kw("tune.runqueue-depth", No),
    kw("tune.sched.low-latency", No),
    kw("tune.sndbuf.client", Yes),
    kw("tune.sndbuf.server", Partial(SRV_SOCKBUF_PARTIAL)),
    kw("tune.ssl.cachesize", Yes),
    kw("tune.ssl.capture-buffer-size", Yes),
    kw("tune.ssl.capture-cipherlist-size", No),
    kw("tune.ssl.default-dh-param", Partial("ignored with a warning: rustls has no DHE")),
    kw("tune.ssl.force-private-cache", No),
    kw("tune.ssl.hard-maxrecord", No),
    kw("tune.ssl.keylog", No),
    kw("tune.ssl.lifetime", Partial("parsed and warned about; rustls keeps tickets for its fixed 6 h")),
    kw("tune.ssl.maxrecord", Partial("every record the process sends to a client over TLS carries at most this many bytes (27 at least); HAProxy lifts the limit on a stream it sees streaming, rampart keeps it")),
    kw("tune.ssl.ssl-ctx-cache-size", Yes),
    kw("tune.vars.check-max-size", Yes),
    kw("tune.vars.global-max-size", Yes),
    kw("tune.vars.proc-max-size", Yes),
    kw("tune.vars.reqres-max-size", Yes),
    kw("tune.vars.sess-max-size", Yes),
    kw("tune.vars.txn-max-size", Yes),
    kw("tune.zlib.memlevel", Partial("checked (1..9); the compressor keeps zlib's default memory level 8 (flate2 does not expose it): the compression ratio may differ slightly")),
    kw("tune.zlib.windowsize", No),
    kw("uid", Yes),
    kw("ulimit-n", Yes),
    kw("unix-bind", Yes),
    kw("unsetenv", Yes),
    kw("user", Yes),
    kw("wurfl-cache-size", No),
    kw("wurfl-data-file", No),
    kw("wurfl-information-list", No),
    kw("wurfl-information-list-separator", No),
    kw("zero-warning", Yes),
];

/// Second words of `stats` in the `global` section.
pub static STATS_GLOBAL: &[Kw] = &[
    kw(
        "socket",
        Partial("unix path, ipv4@/ipv6@ addresses and inherited fd@N sockets, with mode, user, group, uid, gid, level, name; expose-fd listeners (`_getsocks` hands the listening sockets to a new process started with -x); not the other bind options"),
    ),
    kw("timeout", Yes),
    kw("maxconn", Yes),
    kw("bind-process", Partial("accepted with a warning: no effect (one process)")),
];

const SRV_SOCKBUF_PARTIAL: &str = "on the connections to servers; not yet on health-check connections";
const SERVER_PARTIAL: &str = "address (IPv4, IPv6, hostname resolved once, unix@) and the options listed below";
const BIND_PARTIAL: &str = "addresses (all forms but abns@/sockpair@/quic) and the 'name' option";
const TCPCHK_PARTIAL: &str = "every rule (connect with all its options, send, send-binary, send-lf, send-binary-lf, \
     expect with every pattern and option, comment, set-var, set-var-fmt, unset-var); not: connect addr with a host \
     name, expect custom";
const HTTPCHK_PARTIAL: &str = "every rule (connect, send with uri-lf/hdr/body-lf, expect status/rstatus/string/\
     rstring/string-lf/hdr/fhdr with every option, set-var, set-var-fmt, unset-var, comment, disable-on-404, \
     send-state), several send/expect steps, HTTP/2 (connect proto h2, alpn h2); not: connect proto fcgi, \
     connect addr with a host name";
const LOGS_PARTIAL: &str = "the variables listed in docs/COMPATIBILITY.md, section Logging";
const SPLICE_PARTIAL: &str = "rampart splices where it pays off anyway; 'no option' is not supported yet";
const HC_CA_PARTIAL: &str = "Lua's `core.httpclient()` over https (docs/COMPATIBILITY.md, section Lua); the \
     default `@system-ca` reads `SSL_CERT_FILE` or `/etc/ssl/certs/ca-certificates.crt`; checked only when a \
     script is loaded";
const USERLIST_PARTIAL: &str = "md5, sha256, sha512, bcrypt and yescrypt crypt(3) hashes and insecure \
     passwords; other crypt schemes (DES, ...) are refused at startup";
const HTTP_REQUEST_PARTIAL: &str = "every action of the http-request action table marked supported or partial";

const MAXCOMPCPU_PARTIAL: &str = "the CPU usage is the process's over the last second, per thread, \
     not each thread's idle time in its poller";
const FILTER_PARTIAL: &str =
    "compression, cache, trace, spoe (see the filters section and the SPOE tables); not fcgi-app, opentracing";

/// First words of proxy and `defaults` section lines, with the sections of the keyword
/// matrix (configuration.txt §4.1).
pub static PROXY: &[ProxyKw] = &[
    px("acl", ALL | NAMED, Yes),
    px("backlog", D | F | L, Yes),
    px("balance", D | L | B, Partial("every algorithm but 'url_param check_post'")),
    px("bind", F | L, Partial(BIND_PARTIAL)),
    px("bind-process", ALL, Partial("accepted with HAProxy 2.6's deprecation warning: no effect (one process)")),
    px("capture", F | L, Yes),
    px("clitcpka-cnt", D | F | L, Yes),
    px("clitcpka-idle", D | F | L, Yes),
    px("clitcpka-intvl", D | F | L, Yes),
    px("compression", ALL, Yes),
    px("cookie", D | L | B, Partial("every option but 'dynamic'")),
    px("declare", F | L, Yes),
    px("default-server", D | L | B, Partial("the same options as 'server'")),
    px("default_backend", D | F | L, Yes),
    px("description", F | L | B, Yes),
    px("disabled", ALL, Yes),
    px("dispatch", L | B, Yes),
    px("dynamic-cookie-key", D | L | B, No),
    px("email-alert", ALL, Yes),
    px("enabled", ALL, Yes),
    px("errorfile", ALL, Yes),
    px("errorfiles", ALL, Yes),
    px("errorloc", ALL, Yes),
    px("errorloc302", ALL, Yes),
    px("errorloc303", ALL, Yes),
    px("error-log-format", D | F | L, Yes),
    px("external-check", D | L | B, Yes),
    px("filter", F | L | B, Partial(FILTER_PARTIAL)),
    px("force-persist", L | B, Yes),
    px("fullconn", D | L | B, Yes),
    px("hash-balance-factor", D | L | B, Yes),
    px("hash-type", D | L | B, Yes),
    px("http-after-response", ALL | NAMED, Yes),
    px("http-check", D | L | B, Partial(HTTPCHK_PARTIAL)),
    px("http-error", ALL, Yes),
    px("http-request", ALL | NAMED, Partial(HTTP_REQUEST_PARTIAL)),
    px("http-response", ALL | NAMED, Yes),
    px("http-reuse", D | L | B, Yes),
    px(
        "http-send-name-header",
        L | B,
        Partial("to HTTP/1 servers; not to HTTP/2 servers (as HAProxy 2.6), nor to FastCGI servers (HAProxy passes a parameter)"),
    ),
    px("id", F | L | B, Yes),
    px("ignore-persist", L | B, Yes),
    px("load-server-state-from-file", D | L | B, Yes),
    px("log", ALL, Partial(LOG_PARTIAL)),
    px("log-format", D | F | L, Partial(LOGS_PARTIAL)),
    px("log-format-sd", D | F | L, Yes),
    px("log-tag", ALL, Yes),
    px(
        "max-keep-alive-queue",
        D | L | B,
        Partial("applies where rampart keeps a client's server connection (http-reuse never); see http-reuse"),
    ),
    px("max-session-srv-conns", D | F | L, No),
    px("maxconn", D | F | L, Yes),
    px("mode", ALL, Yes),
    px("monitor", F | L, Yes),
    px("monitor-uri", D | F | L, Yes),
    px("option", ALL, Partial("see the option table")),
    px("persist", D | L | B, Yes),
    px("rate-limit", D | F | L, No),
    px("redirect", F | L | B, Yes),
    px("retries", D | L | B, Yes),
    px("retry-on", D | L | B, Partial("every condition but '0rtt-rejected' (no TLS early data); HTTP/1 requests whose body was whole when sent")),
    px("server", L | B, Partial(SERVER_PARTIAL)),
    px("server-state-file-name", D | L | B, Yes),
    px("server-template", L | B, Yes),
    px("source", D | L | B, Yes),
    px("srvtcpka-cnt", D | L | B, Yes),
    px("srvtcpka-idle", D | L | B, Yes),
    px("srvtcpka-intvl", D | L | B, Yes),
    px(
        "stats",
        ALL,
        Partial("the HTML page and its ';csv' export: enable, uri, realm, auth, refresh, hide-version, show-node, show-desc, show-legends, show-modules, scope; not 'admin' or 'http-request'"),
    ),
    px("stick", L | B, Yes),
    px("stick-table", F | L | B, Yes),
    px("tcp-check", D | L | B, Partial(TCPCHK_PARTIAL)),
    px("tcp-request", ALL | NAMED, Yes),
    px("tcp-response", D | L | B | NAMED, Yes),
    px("timeout", ALL, Partial("see the timeout table")),
    px("transparent", D | L | B, No),
    px("unique-id-format", D | F | L, Yes),
    px("unique-id-header", D | F | L, Yes),
    px("use_backend", F | L, Yes),
    px("use-fcgi-app", L | B, Yes),
    px("use-server", L | B, Yes),
    px("appsession", ALL, Rejected),
    px("block", ALL, Rejected),
    px("monitor-net", ALL, Rejected),
    px("redispatch", ALL, Rejected),
    px("redisp", ALL, Rejected),
    px("grace", ALL, Rejected),
    px("clitimeout", ALL, Rejected),
    px("contimeout", ALL, Rejected),
    px("srvtimeout", ALL, Rejected),
    px("cliexp", ALL, Rejected),
    px("reqrep", ALL, Rejected),
    px("reqdel", ALL, Rejected),
    px("reqdeny", ALL, Rejected),
    px("reqpass", ALL, Rejected),
    px("reqallow", ALL, Rejected),
    px("reqtarpit", ALL, Rejected),
    px("reqirep", ALL, Rejected),
    px("reqidel", ALL, Rejected),
    px("reqideny", ALL, Rejected),
    px("reqipass", ALL, Rejected),
    px("reqiallow", ALL, Rejected),
    px("reqitarpit", ALL, Rejected),
    px("reqadd", ALL, Rejected),
    px("srvexp", ALL, Rejected),
    px("rsprep", ALL, Rejected),
    px("rspdel", ALL, Rejected),
    px("rspdeny", ALL, Rejected),
    px("rspirep", ALL, Rejected),
    px("rspidel", ALL, Rejected),
    px("rspideny", ALL, Rejected),
    px("rspadd", ALL, Rejected),
];

/// `timeout <name>` in proxies (which sections accept each is checked by the parser, as
/// HAProxy does, with a warning).
pub static TIMEOUTS: &[Kw] = &[
    kw("check", Yes),
    kw("client", Yes),
    kw("client-fin", Yes),
    kw("connect", Yes),
    kw("http-keep-alive", Yes),
    kw("http-request", Yes),
    kw("queue", Yes),
    kw("server", Yes),
    kw("server-fin", Yes),
    kw("tarpit", Yes),
    kw("tunnel", Yes),
];

/// `option <name>` (configuration.txt §4.1, plus the options only listed in §4.2).
pub static OPTIONS: &[OptionKw] = &[
    opt("abortonclose", D | L | B, true, Yes),
    opt("accept-invalid-http-request", D | F | L, true, Partial("non-ASCII bytes and a fragment (`#`) in the target, any byte but CR, LF and colon in header names, an unchecked version; not HTTP/0.9 requests nor a Host differing from the target's authority (still refused); a request let through is listed by 'show errors', as HAProxy")),
    opt("accept-invalid-http-response", D | L | B, true, Partial("any byte but CR, LF and colon in header names, an unchecked version; responses are never listed by 'show errors' yet")),
    opt("allbackups", D | L | B, true, Yes),
    opt("checkcache", D | L | B, true, Partial("blocked with 502 as configuration.txt says (HAProxy 2.6.12 answers its 200 page there, a bug fixed later)")),
    opt("clitcpka", D | F | L, true, Yes),
    opt("contstats", D | F | L, true, No),
    opt("disable-h2-upgrade", D | F | L, true, Yes),
    opt("dontlog-normal", D | F | L, true, Yes),
    opt("dontlognull", D | F | L, true, Yes),
    opt("forwardfor", ALL, false, Yes),
    opt("h1-case-adjust-bogus-client", D | F | L, true, Partial("headers of the responses rampart writes from a parsed or built head; not of raw error pages (errorfiles sent as they are)")),
    opt("h1-case-adjust-bogus-server", D | L | B, true, Yes),
    opt("http-buffer-request", ALL, true, Yes),
    opt("http-ignore-probes", D | F | L, true, Yes),
    opt("http-keep-alive", ALL, true, Yes),
    opt("http-no-delay", ALL, true, Yes),
    opt("http-pretend-keepalive", D | L | B, true, Yes),
    opt("http-restrict-req-hdr-names", ALL, false, Yes),
    opt("http-server-close", ALL, true, Yes),
    opt(
        "http-use-proxy-header",
        D | F | L,
        true,
        Partial(
            "`http_auth*` fetches read `Proxy-Authorization` and `http-request auth` answers 407 with \
             `Proxy-Authenticate` for a target that is not a path nor `*`, as HAProxy 2.6; the target is looked at \
             as rules left it (HAProxy: as received)",
        ),
    ),
    opt("httpchk", D | L | B, false, Yes),
    opt("httpclose", ALL, true, Yes),
    opt("httplog", D | F | L, false, Partial(LOGS_PARTIAL)),
    opt(
        "httpslog",
        D | F | L,
        false,
        Partial(
            "the TLS fields are those of a plain connection, even on a TLS one: '-', and 0 for fc_err and ssl_fc_is_resumed",
        ),
    ),
    opt("idle-close-on-response", D | F | L, true, Yes),
    opt("independent-streams", ALL, true, Partial("TCP mode and HTTP/1 tunnels: a side's read timeout counts alone; when it expires the whole session ends (HAProxy only shuts that side's reading and forwards the close); HTTP/2 tunnels not")),
    opt("ldap-check", D | L | B, false, Yes),
    opt("external-check", D | L | B, false, Yes),
    opt("log-health-checks", D | L | B, true, Yes),
    opt("log-separate-errors", D | F | L, true, Yes),
    opt("logasap", D | F | L, true, Partial("HTTP lines go at the response head; TCP lines at the end of the session")),
    opt("mysql-check", D | L | B, false, Yes),
    opt("nolinger", ALL, true, Yes),
    opt("originalto", ALL, false, Yes),
    opt("persist", D | L | B, true, Yes),
    opt("pgsql-check", D | L | B, false, Yes),
    opt(
        "prefer-last-server",
        D | L | B,
        true,
        Partial(
            "as in HAProxy 2.6 it concerns private server connections (`http-reuse never`): a kept-alive client's \
             next request goes back to its server while that server is usable; COMPAT: rampart does so without \
             the option too, where HAProxy balances each request",
        ),
    ),
    opt("redispatch", D | L | B, true, Partial("without the <interval> argument")),
    opt("redis-check", D | L | B, false, Yes),
    opt("smtpchk", D | L | B, false, Yes),
    opt(
        "socket-stats",
        D | F | L,
        true,
        Partial("a show stat row and Prometheus metrics per listener; its dreq, dresp, ereq, wrew and eint are empty"),
    ),
    opt("splice-auto", ALL, true, Partial(SPLICE_PARTIAL)),
    opt("splice-request", ALL, true, Partial(SPLICE_PARTIAL)),
    opt("splice-response", ALL, true, Partial(SPLICE_PARTIAL)),
    opt("spop-check", B, false, Yes),
    opt("srvtcpka", D | L | B, true, Yes),
    opt("ssl-hello-chk", D | L | B, false, Yes),
    opt("tcp-check", D | L | B, false, Yes),
    opt("tcp-smart-accept", D | F | L, true, Yes),
    opt("tcp-smart-connect", D | L | B, true, Yes),
    opt("tcpka", ALL, false, Yes),
    opt("tcplog", ALL, false, Partial(LOGS_PARTIAL)),
    opt("transparent", D | L | B, true, Yes),
    opt("forceclose", ALL, false, Rejected),
    opt("http-tunnel", ALL, false, Rejected),
    opt("http_proxy", ALL, false, Rejected),
];

/// `balance <algorithm>`.
pub static BALANCE_ALGOS: &[Kw] = &[
    kw("roundrobin", Yes),
    kw("static-rr", Yes),
    kw("leastconn", Yes),
    kw("first", Yes),
    kw("source", Yes),
    kw("uri", Yes),
    kw("url_param", Partial("'check_post' is not supported yet")),
    kw("hdr", Yes),
    kw("random", Yes),
    kw("rdp-cookie", Yes),
    kw("hash", Yes),
    kw("peak-ewma", Partial("rampart extension, not in HAProxy: response-time aware power of two choices")),
];

/// Words HAProxy compares last, in its order, when it looks for a proxy keyword close to
/// a misspelt one (`common_kw_list` of src/cfgparse-listen.c); the first of two equally
/// close words wins, so the order decides ties.
pub static PROXY_SUGGEST_ORDER: &[&str] = &[
    "listen",
    "frontend",
    "backend",
    "defaults",
    "server",
    "default-server",
    "server-template",
    "bind",
    "monitor-net",
    "monitor-uri",
    "mode",
    "id",
    "description",
    "disabled",
    "enabled",
    "bind-process",
    "acl",
    "dynamic-cookie-key",
    "cookie",
    "email-alert",
    "persist",
    "appsession",
    "load-server-state-from-file",
    "server-state-file-name",
    "max-session-srv-conns",
    "capture",
    "retries",
    "http-request",
    "http-response",
    "http-after-response",
    "http-send-name-header",
    "block",
    "redirect",
    "use_backend",
    "use-server",
    "force-persist",
    "ignore-persist",
    "stick-table",
    "stick",
    "stats",
    "option",
    "default_backend",
    "http-reuse",
    "monitor",
    "transparent",
    "maxconn",
    "backlog",
    "fullconn",
    "dispatch",
    "balance",
    "hash-type",
    "hash-balance-factor",
    "unique-id-format",
    "unique-id-header",
    "log-format",
    "log-format-sd",
    "log-tag",
    "log",
    "source",
    "usesrc",
    "error-log-format",
];

/// Same for the `global` section (`common_kw_list` of src/cfgparse-global.c).
pub static GLOBAL_SUGGEST_ORDER: &[&str] = &[
    "global",
    "daemon",
    "master-worker",
    "noepoll",
    "nokqueue",
    "noevports",
    "nopoll",
    "busy-polling",
    "set-dumpable",
    "insecure-fork-wanted",
    "insecure-setuid-wanted",
    "nosplice",
    "nogetaddrinfo",
    "noreuseport",
    "quiet",
    "zero-warning",
    "tune.runqueue-depth",
    "tune.maxpollevents",
    "tune.maxaccept",
    "tune.recv_enough",
    "tune.buffers.limit",
    "tune.buffers.reserve",
    "tune.bufsize",
    "tune.maxrewrite",
    "tune.idletimer",
    "tune.rcvbuf.client",
    "tune.rcvbuf.server",
    "tune.sndbuf.client",
    "tune.sndbuf.server",
    "tune.pipesize",
    "tune.http.cookielen",
    "tune.http.logurilen",
    "tune.http.maxhdr",
    "tune.comp.maxlevel",
    "tune.pattern.cache-size",
    "uid",
    "gid",
    "external-check",
    "user",
    "group",
    "nbproc",
    "maxconn",
    "ssl-server-verify",
    "maxconnrate",
    "maxsessrate",
    "maxsslrate",
    "maxcomprate",
    "maxpipes",
    "maxzlibmem",
    "maxcompcpuusage",
    "ulimit-n",
    "chroot",
    "description",
    "node",
    "pidfile",
    "unix-bind",
    "log",
    "log-send-hostname",
    "server-state-base",
    "server-state-file",
    "log-tag",
    "spread-checks",
    "max-spread-checks",
    "cpu-map",
    "setenv",
    "presetenv",
    "unsetenv",
    "resetenv",
    "strict-limits",
    "localpeer",
    "numa-cpu-mapping",
    "defaults",
    "listen",
    "frontend",
    "backend",
    "peers",
    "resolvers",
    "cluster-secret",
];
