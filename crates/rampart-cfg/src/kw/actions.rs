//! Actions of the rule lists, per list, in the order HAProxy 2.6 prints them in its
//! "expects ..." messages (its registration order), and the converter names that decide
//! how many words a sample expression takes.
//!
//! HAProxy counterparts: the `action_kw_list`s of src/http_act.c, src/tcp_act.c,
//! src/vars.c, src/stream.c, src/queue.c...; the built-in `tcp-request` and
//! `tcp-response` actions of src/tcp_rules.c; the converters are `haproxy -dKall`'s.

use super::ActionKw;
use super::Support::{self, No, Partial, Yes};

const fn act(name: &'static str, prefix: bool, support: Support) -> ActionKw {
    ActionKw { name, prefix, support }
}

/// `tcp-request content set-priority-*`: checked, then refused by the daemon (the
/// queues have priorities, but TCP streams do not carry one yet, TODO(#10)).
pub const PRIORITY: Support = Partial("parsed; refused at startup in tcp-request content (HTTP rules only)");

/// `set-log-level <level>|silent`: the severity of the stream's log line.
pub const LOG_LEVEL: Support = Yes;

/// `tcp-request content` / `tcp-response content` actions that need the client socket or the stream's log
/// record, which TCP-mode response rules do not reach (TODO(#28)).
/// `do-log` where no stream exists: HAProxy 3.2's line for a session alone; no
/// `log-profile`.
const DO_LOG_SESSION: Support = Partial(
    "HAProxy 3.x; no stream yet: the line is HAProxy 3.2's for a session alone (a request the proxy ended, \
     'PR', status 0, nothing measured but its total time); no 'profile'",
);
/// `do-log` in `tcp-request content`/`tcp-response content`.
const DO_LOG_TCP: Support = Partial("HAProxy 3.x; in TCP mode the line has what the stream measured when its content rules began (response rules: when it connected); no 'profile'");
pub const TCP_HTTP_ONLY: Support = Partial("HTTP mode; refused at startup in TCP mode");

/// `http-response set-mark|set-tos`: the options are set once the response went out.
pub const RES_FC: Support = Partial("set once the response is forwarded (HAProxy: when the rule runs)");

/// `http-request` actions.
pub static HTTP_REQUEST_ACTIONS: &[ActionKw] = &[
    act("wait-for-handshake", false, No),
    act("ot-group", false, No),
    act("set-log-level", false, LOG_LEVEL),
    act("set-nice", false, No),
    act(
        "use-service",
        false,
        Partial(
            "'prometheus-exporter' (HAProxy's metric names; see docs/COMPATIBILITY.md, section Runtime API) and \
             'lua.<name>' (http services; see docs/COMPATIBILITY.md, section Lua)",
        ),
    ),
    act("sc-inc-gpc", true, Yes),
    act("sc-inc-gpc0", true, Yes),
    act("sc-inc-gpc1", true, Yes),
    act("sc-set-gpt", true, Yes),
    act("sc-set-gpt0", true, Yes),
    act("send-spoe-group", false, Yes),
    act("do-resolve", true, Yes),
    act("cache-use", false, Yes),
    act("add-acl", true, Yes),
    act("add-header", false, Yes),
    act("allow", false, Yes),
    act("auth", false, Yes),
    act("capture", false, Yes),
    act("del-acl", true, Yes),
    act("del-header", false, Yes),
    act("del-map", true, Yes),
    act("deny", false, Yes),
    act("disable-l7-retry", false, Yes),
    act("early-hint", false, Yes),
    act("normalize-uri", false, Yes),
    act("redirect", false, Yes),
    act("reject", false, Yes),
    act("replace-header", false, Yes),
    act("replace-path", false, Yes),
    act("replace-pathq", false, Yes),
    act("replace-uri", false, Yes),
    act("replace-value", false, Yes),
    act("return", false, Yes),
    act("set-header", false, Yes),
    act("set-map", true, Yes),
    act("set-method", false, Yes),
    act("set-path", false, Yes),
    act("set-pathq", false, Yes),
    act("set-query", false, Yes),
    act("set-uri", false, Yes),
    act("strict-mode", false, Yes),
    act("tarpit", false, Yes),
    act("track-sc", true, Partial("track-sc0..2 (tune.stick-counters is 3)")),
    act("set-timeout", false, Yes),
    act("wait-for-body", false, Yes),
    act("set-var-fmt", true, Yes),
    act("set-var", true, Yes),
    act("unset-var", true, Yes),
    act("set-dst", false, Yes),
    act("set-dst-port", false, Yes),
    act("set-mark", false, Yes),
    act("set-src", false, Yes),
    act("set-src-port", false, Yes),
    act("set-tos", false, Yes),
    act("silent-drop", false, Yes),
    act("set-priority-class", false, Yes),
    act("set-priority-offset", false, Yes),
];

/// `http-response` actions.
pub static HTTP_RESPONSE_ACTIONS: &[ActionKw] = &[
    act("ot-group", false, No),
    act("set-log-level", false, LOG_LEVEL),
    act("set-nice", false, No),
    act("sc-inc-gpc", true, Yes),
    act("sc-inc-gpc0", true, Yes),
    act("sc-inc-gpc1", true, Yes),
    act("sc-set-gpt", true, Yes),
    act("sc-set-gpt0", true, Yes),
    act("send-spoe-group", false, No),
    act("cache-store", false, Yes),
    act("add-acl", true, Yes),
    act("add-header", false, Yes),
    act("allow", false, Yes),
    act("capture", false, Yes),
    act("del-acl", true, Yes),
    act("del-header", false, Yes),
    act("del-map", true, Yes),
    act("deny", false, Yes),
    act("redirect", false, Yes),
    act("replace-header", false, Yes),
    act("replace-value", false, Yes),
    act("return", false, Yes),
    act("set-header", false, Yes),
    act("set-map", true, Yes),
    act("set-status", false, Yes),
    act("strict-mode", false, Yes),
    act("track-sc", true, Partial("track-sc0..2 (tune.stick-counters is 3)")),
    act("wait-for-body", false, Yes),
    act("set-var-fmt", true, Yes),
    act("set-var", true, Yes),
    act("unset-var", true, Yes),
    act("set-mark", false, RES_FC),
    act("set-tos", false, RES_FC),
    act("silent-drop", false, Yes),
];

/// `http-after-response` actions.
pub static HTTP_AFTER_RESPONSE_ACTIONS: &[ActionKw] = &[
    act("ot-group", false, No),
    act("add-header", false, Yes),
    act("allow", false, Yes),
    act("capture", false, Yes),
    act("del-header", false, Yes),
    act("replace-header", false, Yes),
    act("replace-value", false, Yes),
    act("set-header", false, Yes),
    act("set-status", false, Yes),
    act("strict-mode", false, Yes),
    act("set-var-fmt", true, Yes),
    act("set-var", true, Yes),
    act("unset-var", true, Yes),
];

/// The `tcp-request` actions built into the rule parser, listed first in its message.
pub static TCP_REQUEST_BUILTIN_ACTIONS: &[ActionKw] = &[
    act("accept", false, Yes),
    act("reject", false, Yes),
    act("capture", false, Yes),
    act("expect-proxy", false, No),
    act("expect-netscaler-cip", false, No),
    act("track-sc", true, Partial("track-sc0..2 (tune.stick-counters is 3)")),
];

/// `tcp-request connection` actions (after the built-in ones); `tcp-request session`
/// has the same list.
pub static TCP_REQUEST_CONNECTION_ACTIONS: &[ActionKw] = &[
    act("sc-inc-gpc", true, Yes),
    act("sc-inc-gpc0", true, Yes),
    act("sc-inc-gpc1", true, Yes),
    act("sc-set-gpt", true, Yes),
    act("sc-set-gpt0", true, Yes),
    act("set-var-fmt", true, Yes),
    act("set-var", true, Yes),
    act("unset-var", true, Yes),
    act("set-dst", false, Yes),
    act("set-dst-port", false, Yes),
    act("set-mark", false, Yes),
    act("set-src", false, Yes),
    act("set-src-port", false, Yes),
    act("set-tos", false, Yes),
    act("silent-drop", false, Yes),
];

/// `tcp-request content` actions (after the built-in ones).
pub static TCP_REQUEST_CONTENT_ACTIONS: &[ActionKw] = &[
    act("ot-group", false, No),
    act("set-log-level", false, LOG_LEVEL),
    act("set-nice", false, No),
    act("switch-mode", false, Yes),
    act(
        "use-service",
        false,
        Partial("Lua `tcp` services (`lua.<name>`) in TCP proxies; `prometheus-exporter` is an HTTP service"),
    ),
    act("sc-inc-gpc", true, Yes),
    act("sc-inc-gpc0", true, Yes),
    act("sc-inc-gpc1", true, Yes),
    act("sc-set-gpt", true, Yes),
    act("sc-set-gpt0", true, Yes),
    act("send-spoe-group", false, No),
    act("do-resolve", true, Yes),
    act("set-var-fmt", true, Yes),
    act("set-var", true, Yes),
    act("unset-var", true, Yes),
    act("set-src", false, Yes),
    act("set-src-port", false, Yes),
    act("set-dst", false, Yes),
    act("set-dst-port", false, Yes),
    act("set-mark", false, Yes),
    act("set-tos", false, Yes),
    act("silent-drop", false, Yes),
    act("set-priority-class", false, PRIORITY),
    act("set-priority-offset", false, PRIORITY),
];

/// The `tcp-response content` actions built into the rule parser.
pub static TCP_RESPONSE_BUILTIN_ACTIONS: &[ActionKw] = &[
    act("accept", false, Yes),
    act("reject", false, Yes),
    act("close", false, Partial("TCP backends; refused at startup in HTTP backends")),
];

/// `tcp-response content` actions (after the built-in ones).
pub static TCP_RESPONSE_CONTENT_ACTIONS: &[ActionKw] = &[
    act("ot-group", false, No),
    act("set-log-level", false, LOG_LEVEL),
    act("set-nice", false, No),
    act("sc-inc-gpc", true, No),
    act("sc-inc-gpc0", true, No),
    act("sc-inc-gpc1", true, No),
    act("sc-set-gpt", true, No),
    act("sc-set-gpt0", true, No),
    act("send-spoe-group", false, No),
    act("set-var-fmt", true, Yes),
    act("set-var", true, Yes),
    act("unset-var", true, Yes),
    act("set-mark", false, TCP_HTTP_ONLY),
    act("set-tos", false, TCP_HTTP_ONLY),
    act("silent-drop", false, Yes),
];

// === HAProxy 3.x ===

/// The HAProxy 3.x actions rampart accepts beside 2.6's lists: each list's own, looked up
/// after it and left out of its "expects ..." message (which stays 2.6's).
/// `set-fc-mark`/`set-fc-tos` are 3.x's names of `set-mark`/`set-tos`, which also take a
/// sample expression there.
const FC_V3: [ActionKw; 2] = [act("set-fc-mark", false, Yes), act("set-fc-tos", false, Yes)];
/// `set-bc-mark`/`set-bc-tos` (3.x): the same options of the server connection, set
/// before it connects; connections differing by them are not reused for each other.
const BC_V3: [ActionKw; 2] = [act("set-bc-mark", false, Yes), act("set-bc-tos", false, Yes)];

pub static HTTP_REQUEST_V3_ACTIONS: &[ActionKw] = &[act("do-log", false, Yes), FC_V3[0], FC_V3[1], BC_V3[0], BC_V3[1]];
pub static HTTP_RESPONSE_V3_ACTIONS: &[ActionKw] =
    &[act("do-log", false, Yes), act("set-fc-mark", false, RES_FC), act("set-fc-tos", false, RES_FC)];
pub static HTTP_AFTER_RESPONSE_V3_ACTIONS: &[ActionKw] = &[act("do-log", false, Yes)];
/// `tcp-request connection` and `tcp-request session`: no stream exists yet; `do-log`
/// renders the frontend's format over the session alone.
pub static TCP_REQUEST_CONNECTION_V3_ACTIONS: &[ActionKw] = &[act("do-log", false, DO_LOG_SESSION), FC_V3[0], FC_V3[1]];
pub static TCP_REQUEST_CONTENT_V3_ACTIONS: &[ActionKw] =
    &[act("do-log", false, DO_LOG_TCP), FC_V3[0], FC_V3[1], BC_V3[0], BC_V3[1]];
pub static TCP_RESPONSE_CONTENT_V3_ACTIONS: &[ActionKw] = &[
    act("do-log", false, DO_LOG_TCP),
    act("set-fc-mark", false, TCP_HTTP_ONLY),
    act("set-fc-tos", false, TCP_HTTP_ONLY),
];

/// HAProxy 2.6's sample converters. A word of a rule that starts with one of these names
/// continues the sample expression before it (`req.hdr(host) lower`).
pub static CONVERTERS: &[&str] = &[
    "add",
    "add_item",
    "aes_gcm_dec",
    "and",
    "b64dec",
    "base64",
    "be2dec",
    "be2hex",
    "bool",
    "bytes",
    "capture-req",
    "capture-res",
    "concat",
    "cpl",
    "crc32",
    "crc32c",
    "cut_crlf",
    "debug",
    "digest",
    "div",
    "djb2",
    "even",
    "field",
    "fix_is_valid",
    "fix_tag_value",
    "hex",
    "hex2i",
    "hmac",
    "host_only",
    "htonl",
    "http_date",
    "iif",
    "in_table",
    "ipmask",
    "json",
    "json_query",
    "jwt_header_query",
    "jwt_payload_query",
    "jwt_verify",
    "language",
    "length",
    "lower",
    "ltime",
    "ltrim",
    "map",
    "map_beg",
    "map_beg_int",
    "map_beg_ip",
    "map_dir",
    "map_dir_int",
    "map_dir_ip",
    "map_dom",
    "map_dom_int",
    "map_dom_ip",
    "map_end",
    "map_end_int",
    "map_end_ip",
    "map_int",
    "map_int_int",
    "map_int_ip",
    "map_ip",
    "map_ip_int",
    "map_ip_ip",
    "map_reg",
    "map_reg_int",
    "map_reg_ip",
    "map_regm",
    "map_str",
    "map_str_int",
    "map_str_ip",
    "map_sub",
    "map_sub_int",
    "map_sub_ip",
    "mod",
    "mqtt_field_value",
    "mqtt_is_valid",
    "mul",
    "nbsrv",
    "neg",
    "not",
    "odd",
    "or",
    "port_only",
    "protobuf",
    "regsub",
    "rtrim",
    "sdbm",
    "secure_memcmp",
    "set-var",
    "sha1",
    "sha2",
    "srv_queue",
    "strcmp",
    "sub",
    "table_bytes_in_rate",
    "table_bytes_out_rate",
    "table_conn_cnt",
    "table_conn_cur",
    "table_conn_rate",
    "table_expire",
    "table_gpc",
    "table_gpc0",
    "table_gpc0_rate",
    "table_gpc1",
    "table_gpc1_rate",
    "table_gpc_rate",
    "table_gpt",
    "table_gpt0",
    "table_http_err_cnt",
    "table_http_err_rate",
    "table_http_fail_cnt",
    "table_http_fail_rate",
    "table_http_req_cnt",
    "table_http_req_rate",
    "table_idle",
    "table_kbytes_in",
    "table_kbytes_out",
    "table_server_id",
    "table_sess_cnt",
    "table_sess_rate",
    "table_trackers",
    "ub64dec",
    "ub64enc",
    "ungrpc",
    "unset-var",
    "upper",
    "url_dec",
    "url_enc",
    "utime",
    "word",
    "wt6",
    "xor",
    "xxh3",
    "xxh32",
    "xxh64",
];
