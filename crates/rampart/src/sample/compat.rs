//! docs/COMPATIBILITY.md's "Sample fetches" and "Converters" tables, rendered from the
//! keyword tables (`fetch::ALL`, `conv::ALL`) and HAProxy 2.6's names
//! (`haproxy26::FETCHES`, `rampart_cfg::kw::CONVERTERS`), so that a keyword is listed as
//! supported exactly when the code has it. The notes below only add words: a test fails
//! when a note calls a keyword supported that the tables lack, or "not yet" one they hold.
//! Run `RAMPART_BLESS=1 cargo test -p rampart --lib sample::compat` to rewrite the doc.

use std::collections::HashSet;

use super::haproxy26;
use super::{conv, fetch};

/// What a note says of its keywords.
#[derive(Clone, Copy)]
enum Say {
    /// Supported; the text adds a detail.
    Note(&'static str),
    /// Supported with a gap the text names.
    Partial(&'static str),
    /// Not implemented; the text says what it waits for. Names may end with `*`.
    NotYet(&'static str),
}

struct Row {
    names: &'static [&'static str],
    say: Say,
}

const fn note(names: &'static [&'static str], text: &'static str) -> Row {
    Row { names, say: Say::Note(text) }
}

const fn partial(names: &'static [&'static str], text: &'static str) -> Row {
    Row { names, say: Say::Partial(text) }
}

const fn not_yet(names: &'static [&'static str], text: &'static str) -> Row {
    Row { names, say: Say::NotYet(text) }
}

const FETCH_NOTES: &[Row] = &[
    note(&["var"], "scopes `proc sess txn req res check`"),
    note(&["uuid"], "version 4 (random) UUIDs, the only version HAProxy 2.6 knows"),
    note(&["thread"], "the evaluating thread's number from 0, HAProxy's `tid` (Lua's `core.thread` numbers the per-thread states from 1)"),
    note(&["fc_pp_tlv"], "from HAProxy 2.9 (not in 2.6): a TLV of the PROXY v2 header by number or name"),
    note(&["fc_glitches"], "from HAProxy 3.0 (not in 2.6): the protocol glitches the HTTP/2 mux counted on the client connection (see HTTP/2); no value on HTTP/1 connections, as in HAProxy 3.2"),
    note(
        &["so_id"],
        "listeners, each address of the `bind` lines: its `bind ... id`, else numbered as HAProxy does (from its position in declaration order, skipping numbers taken)",
    ),
    partial(&["be_conn"], "counts connections in use to the servers (HAProxy counts the backend's streams, queued ones included)"),
    note(&["srv_is_up"], "not in maintenance and not marked DOWN by its health checks"),
    note(&["nbsrv"], "servers the balancer may pick (the active ones, else the backups)"),
    note(&["url_param", "urlp", "urlp_val"], "with the delimiter argument"),
    note(&["req.body", "req.body_len", "req.body_size", "req.body_param"], "what the stream buffered (`option http-buffer-request`, `wait-for-body`)"),
    partial(
        &["res.body", "res.body_len", "res.body_size"],
        "what `http-response wait-for-body` buffered; without it, nothing (HAProxy: the bytes that came with the head); not in health checks yet",
    ),
    note(
        &["capture.req.method", "capture.req.uri", "capture.req.ver"],
        "the request line as the client sent it, whatever rules rewrote since (`capture.req.uri`: the path and query, an absolute-form target without scheme and authority, nothing for `*`); in response rules too. `capture.req.ver` is `HTTP/1.0` or `HTTP/1.1`. COMPAT: HAProxy keeps the line only when the frontend logs it or has an HTTP fetch in one of its log-format strings (else these are empty); rampart keeps it in every frontend once any rule reads it",
    ),
    note(&["unique-id"], "rendered from `unique-id-format` on first use, then kept for the stream"),
    note(&["req.proto_http", "req_proto_http"], "waits for a complete head in TCP mode"),
    note(
        &["req.hdr", "req.fhdr", "req.hdr_cnt", "req.fhdr_cnt", "req.hdr_ip", "req.hdr_val", "res.hdr", "res.fhdr", "res.hdr_cnt", "res.fhdr_cnt", "res.hdr_ip", "res.hdr_val"],
        "occurrences as HAProxy, -10 at most",
    ),
    note(
        &["http_auth", "http_auth_group", "http_auth_type", "http_auth_user", "http_auth_pass", "http_auth_bearer"],
        "see \"Userlists and HTTP authentication\"",
    ),
    note(
        &["req.ssl_sni", "req_ssl_sni", "req.ssl_hello_type", "req_ssl_hello_type", "res.ssl_hello_type", "rep_ssl_hello_type", "req.ssl_ver", "req_ssl_ver", "req.ssl_alpn", "req.ssl_ec_ext", "req.ssl_st_ext"],
        "the ClientHello in the first record",
    ),
    note(
        &["req.len", "req_len", "res.len"],
        "the bytes waiting in a TCP stream's buffer; on an HTTP stream, what HAProxy 2.6 reports there, the size of its internal (HTX) message: 20 bytes plus the start line's parts, each header's name and value, 1, and the request body held",
    ),
    note(
        &["wait_end"],
        "true once the content inspection is final, \"not yet\" before (HAProxy's `SMP_F_MAY_CHANGE`: a `tcp-request content` / `tcp-response content` rule waits, even negated with `unless`). Final as in HAProxy's `tcp_inspect_request()`/`tcp_inspect_response()`: inspect delay expired (or none set), buffer full (`tune.bufsize - tune.maxrewrite`), input ended; in HTTP mode a request is also final once it is complete. Everywhere else (http rules, logs) it is true. COMPAT: in an HTTP backend, `tcp-response content` decides on the response head (final at once), where HAProxy also waits for a response body still arriving",
    ),
    note(
        &["last_rule_file"],
        "the configuration file (as given to `-f`) of the last rule that ended one of the stream's rule lists with a final action (`tcp-request content`/`tcp-response content`, `http-request`, `http-response`, `http-after-response`); no value when none did. Not `tcp-request connection`/`session` rules nor proxy-level `redirect` rules, as in HAProxy",
    ),
    note(&["last_rule_line"], "that rule's line; no value when none did"),
    note(&["ssl_fc_has_sni"], "false on a plain connection, as HAProxy"),
    note(&["ssl_fc_is_resumed"], "false (0) on a plain connection, as HAProxy"),
    note(&["ssl_fc_err"], "always 0: a connection that reaches the rules has completed its handshake"),
    partial(
        &["ssl_c_s_dn", "ssl_c_i_dn", "ssl_f_s_dn", "ssl_f_i_dn", "ssl_s_s_dn", "ssl_s_i_dn"],
        "OpenSSL's one-line form `/C=../CN=..`, or `(<entry>[,<occ>])`; the `format` argument (`rfc2253`) is not yet",
    ),
    note(&["ssl_bc_alg_keysize", "ssl_bc_use_keysize"], "rustls' AEAD suites: both the key size"),
    not_yet(&["src_is_local", "dst_is_local", "fc_src_is_local", "fc_dst_is_local"], "local address checks"),
    not_yet(&["fc_err", "fc_err_str"], "connection error codes"),
    partial(
        &["sc_*", "sc0_*", "sc1_*", "sc2_*", "src_*"],
        "see [Stick tables](#stick-tables): `http_err_*` count every 4xx the client got, `http_fail_*` every \
         5xx but 501 and 505, `bytes_*` the bytes on the wire; `*_gpc0`, `*_gpc1`, `*_gpt0` read the arrays' \
         first elements in a table that stores `gpc(<n>)`/`gpc_rate`/`gpt` instead, as HAProxy",
    ),
    not_yet(&["src_updt_conn_cnt"], "a fetch that writes `conn_cnt`"),
    not_yet(
        &["fc_rtt", "fc_rttvar", "fc_unacked", "fc_sacked", "fc_retrans", "fc_fackets", "fc_lost", "fc_reordering"],
        "TCP_INFO",
    ),
    not_yet(&["bc_*"], "the server connection's addresses and errors"),
    note(
        &["fe_req_rate", "fe_sess_rate", "be_sess_rate", "srv_sess_rate"],
        "COMPAT: the count of the last whole second (sampled once a second), where HAProxy slides a one-second window",
    ),
    note(&["srv_uweight"], "COMPAT: the weight in use, as `srv_weight` (rampart keeps one effective weight)"),
    not_yet(&["cpu_*", "lat_ns_*"], "task profiling"),
    not_yet(&["internal.*"], "HAProxy's HTX debugging fetches"),
    not_yet(&["fcgi.*"], "FastCGI applications"),
];

const CONV_NOTES: &[Row] = &[
    note(&["add", "sub"], "saturating; operand integer or variable†"),
    note(&["mul"], "saturating"),
    note(&["div"], "by 0 gives 2^63-1"),
    note(&["mod"], "by 0 gives 0"),
    note(&["add_item", "and", "concat", "or", "xor", "secure_memcmp", "strcmp"], "†"),
    note(&["b64dec"], "COMPAT: padding inside the input (`YQ==YQ==`) and `X===` are refused, HAProxy decodes them"),
    note(&["ub64dec"], "COMPAT: `=` inside the input is refused, HAProxy decodes it into garbage"),
    note(&["bytes"], "borrows its input; negative offset/length compare as unsigned, as HAProxy"),
    note(&["field", "word"], "borrows its input"),
    note(&["crc32"], "crc32fast"),
    note(&["crc32c"], "crc32c crate"),
    note(&["xxh3", "xxh32", "xxh64"], "xxhash-rust"),
    partial(
        &["digest"],
        "md5, sha1, sha224/256/384/512, sha512-224/256, sha3-224/256/384/512 with OpenSSL's names and aliases; blake2b512, blake2s256, ripemd160, sm3, shake128/256, md5-sha1 are refused as \"not supported yet\"; md4 and whirlpool are accepted and always absent, as in HAProxy with OpenSSL 3",
    ),
    partial(&["hmac"], "the algorithms of `digest`; key as base64 constant or variable†"),
    note(&["fix_is_valid"], "`true`/`false` once the message is whole or broken; absent while it can still complete, and then \"may change\", so `tcp-request`/`tcp-response content` rules wait (as HAProxy)"),
    note(&["fix_tag_value"], "a tag by number or by the names HAProxy knows (`BeginString`, `BodyLength`, `CheckSum`, `MsgType`, `SenderCompID`, `TargetCompID`, any case); the value is borrowed from the input; as HAProxy, an empty value reads as \"not yet\" and the search stops at `CheckSum`"),
    note(&["http_date"], "s, ms, us units"),
    note(&["json"], "ascii, utf8, utf8s, utf8p, utf8ps"),
    note(
        &["json_query"],
        "a JSON scanner and path matcher of rampart's own (`conv/json_scan.rs`) giving mjson's results, quirks included: `$`, `.key` (`\\.` escapes a dot), `[n]` with a single-digit index, input checked only up to the value found, numbers printed as C's `%g`, `int` read as `strtoll(.., 0)` within ±(2^53-1), strings unescaped (`\\uXXXX` only for `\\u00XX`, `\\/` fails), `null`/objects/arrays absent. COMPAT: HAProxy reads a number that ends the input past its end; rampart stops at the end",
    ),
    note(&["ltime"], "strftime implemented after glibc's, process time zone"),
    note(&["map*"], "see \"Map converters\""),
    note(&["mqtt_field_value"], "CONNECT and CONNACK fields of MQTT 3.1, 3.1.1 and 5.0, names and property ids checked per packet type with HAProxy's messages; user properties (`38`) are never extracted, as in HAProxy"),
    note(&["mqtt_is_valid"], "CONNECT and CONNACK (any other packet type is invalid, as in HAProxy); absent and \"may change\" until the announced length is there"),
    note(&["regsub"], "COMPAT: the regex crate's syntax, and look-behind assertions (`\\b`) see the bytes before the current match position where PCRE's NOTBOL run does not"),
    note(&["set-var", "unset-var"], "`sample/vars.rs`"),
    not_yet(&["aes_gcm_dec"], "the crypto work"),
    note(&["jwt_header_query", "jwt_payload_query"], "the part base64url-decoded, or `json_query` on it"),
    note(
        &["jwt_verify"],
        "HS256/384/512, RS256/384/512, ES256/384/512 (aws-lc-rs); keys are PEM `PUBLIC KEY` files named as literal arguments, read at startup (a variable must name one of them: else -5); PS* refused at startup, as in HAProxy 2.6",
    ),
    not_yet(&["capture-req", "capture-res"], "the stream's capture slots"),
    not_yet(&["debug"], "event sinks / `show events`"),
    not_yet(&["table_expire", "table_idle"], "an entry's expiry date and idle time in converters"),
    note(&["in_table"], "a key absent from the table: false"),
    note(
        &["table_*"],
        "a key absent from the table reads 0; a data type the table does not store: no value",
    ),
    not_yet(&["nbsrv", "srv_queue"], "server state in the converter context"),
    not_yet(&["protobuf", "ungrpc"], "protocol buffers"),
];

/// `name` matches `pat`, where a trailing `*` stands for any suffix.
fn matches(pat: &str, name: &str) -> bool {
    match pat.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pat == name,
    }
}

/// The note row of an implemented keyword (exact names only).
fn note_of<'r>(rows: &'r [Row], name: &str) -> Option<&'r Row> {
    rows.iter().find(|r| !matches!(r.say, Say::NotYet(_)) && r.names.iter().any(|p| matches(p, name)))
}

fn status(say: Say) -> String {
    match say {
        Say::Note("†") => "supported†".to_owned(),
        Say::Note(t) => format!("supported: {t}"),
        Say::Partial(t) => format!("partial: {t}"),
        Say::NotYet(t) => format!("not yet ({t})"),
    }
}

fn cell(names: &[&str]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" ")
}

/// The fetch table: each family (one fetch file) as a row of its plain keywords, then
/// its noted ones; then what HAProxy 2.6 has and rampart does not.
pub fn fetch_markdown() -> String {
    let mut out = String::from("| fetch | status |\n| --- | --- |\n");
    let mut done: HashSet<*const Row> = HashSet::new();
    for table in fetch::ALL {
        let plain: Vec<&str> = table.iter().map(|k| k.name).filter(|n| note_of(FETCH_NOTES, n).is_none()).collect();
        if !plain.is_empty() {
            out.push_str(&format!("| {} | supported |\n", cell(&plain)));
        }
        for k in table.iter() {
            if let Some(row) = note_of(FETCH_NOTES, k.name) {
                if done.insert(row) {
                    out.push_str(&format!("| {} | {} |\n", cell(row.names), status(row.say)));
                }
            }
        }
    }
    missing_rows(&mut out, FETCH_NOTES, haproxy26::FETCHES, |n| fetch::find(n).is_some());
    out
}

/// The converter table: HAProxy 2.6's converters in its order, one row per keyword or
/// per note row.
pub fn conv_markdown() -> String {
    let mut out = String::from("| converter | status |\n| --- | --- |\n");
    let mut done: HashSet<*const Row> = HashSet::new();
    for &name in rampart_cfg::kw::CONVERTERS {
        let have = conv::find(name).is_some();
        let row = CONV_NOTES.iter().find(|r| r.names.iter().any(|p| matches(p, name)));
        match row {
            Some(r) if r.names.len() > 1 || r.names[0].ends_with('*') => {
                if done.insert(r) {
                    // a note of supported converters lists only those the code has
                    let names: Vec<&str> = expand(r.names, rampart_cfg::kw::CONVERTERS)
                        .into_iter()
                        .filter(|n| matches!(r.say, Say::NotYet(_)) || conv::find(n).is_some())
                        .collect();
                    out.push_str(&format!("| {} | {} |\n", cell(&names), status(r.say)));
                }
            }
            Some(r) => out.push_str(&format!("| `{name}` | {} |\n", status(r.say))),
            None if have => out.push_str(&format!("| `{name}` | supported |\n")),
            None => out.push_str(&format!("| `{name}` | not yet |\n")),
        }
    }
    out
}

/// The names of `all` that `pats` match, in `all`'s order.
fn expand(pats: &[&str], all: &[&'static str]) -> Vec<&'static str> {
    all.iter().copied().filter(|n| pats.iter().any(|p| matches(p, n))).collect()
}

/// Rows for the keywords of `all` that `have` lacks: the not-yet notes first (a name
/// goes to the first that matches it), then the rest.
fn missing_rows(out: &mut String, rows: &[Row], all: &[&'static str], have: impl Fn(&str) -> bool) {
    let missing: Vec<&'static str> = all.iter().copied().filter(|n| !have(n)).collect();
    let mut taken: HashSet<&str> = HashSet::new();
    for r in rows.iter().filter(|r| matches!(r.say, Say::NotYet(_))) {
        let names: Vec<&str> = expand(r.names, &missing).into_iter().filter(|n| taken.insert(n)).collect();
        out.push_str(&format!("| {} | {} |\n", cell(&names), status(r.say)));
    }
    let rest: Vec<&str> = missing.into_iter().filter(|n| !taken.contains(n)).collect();
    if !rest.is_empty() {
        out.push_str(&format!("| {} | not yet |\n", cell(&rest)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each note says of its keywords what the tables hold: a supported (or partial)
    /// note names only implemented keywords, a "not yet" one only missing ones, and
    /// every pattern matches something.
    fn check_notes(rows: &[Row], all: &[&str], have: impl Fn(&str) -> bool) {
        for r in rows {
            for p in r.names {
                let hits: Vec<&str> = all.iter().copied().filter(|n| matches(p, n)).collect();
                match r.say {
                    Say::NotYet(_) => {
                        assert!(hits.iter().any(|n| !have(n)), "'{p}' is noted not yet but matches nothing missing");
                        if !p.ends_with('*') {
                            assert!(!have(p), "'{p}' is implemented but noted as not yet");
                        }
                    }
                    _ => assert!(p.ends_with('*') || have(p), "'{p}' is noted as supported but not implemented"),
                }
            }
        }
    }

    #[test]
    fn fetch_notes_agree_with_the_tables() {
        let mut all: Vec<&str> = haproxy26::FETCHES.to_vec();
        all.extend(fetch::names());
        check_notes(FETCH_NOTES, &all, |n| fetch::find(n).is_some());
        for n in fetch::names().filter(|n| haproxy26::FETCHES.binary_search(n).is_err()) {
            assert!(note_of(FETCH_NOTES, n).is_some(), "'{n}' is not a HAProxy 2.6 fetch: add a note saying so");
        }
    }

    #[test]
    fn conv_notes_agree_with_the_tables() {
        check_notes(CONV_NOTES, rampart_cfg::kw::CONVERTERS, |n| conv::find(n).is_some());
        for k in conv::ALL.iter().flat_map(|t| t.iter()) {
            assert!(rampart_cfg::kw::CONVERTERS.contains(&k.name), "'{}' is not a HAProxy 2.6 converter", k.name);
        }
    }

    #[test]
    fn haproxy_names_are_sorted() {
        assert!(haproxy26::FETCHES.windows(2).all(|w| w[0] < w[1]));
    }

    /// Replaces or checks the text between `<!-- BEGIN GENERATED: {tag} -->` and
    /// `<!-- END GENERATED -->` in docs/COMPATIBILITY.md.
    fn check_doc(tag: &str, generated: &str) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/COMPATIBILITY.md");
        let doc = std::fs::read_to_string(&path).expect("docs/COMPATIBILITY.md");
        let begin = format!("<!-- BEGIN GENERATED: {tag} -->\n");
        const END: &str = "<!-- END GENERATED -->\n";
        let b = doc.find(&begin).unwrap_or_else(|| panic!("no '{begin}' marker in COMPATIBILITY.md"));
        let e = b + doc[b..].find(END).expect("END marker");
        if std::env::var_os("RAMPART_BLESS").is_some() {
            let new = format!("{}{begin}{generated}{}", &doc[..b], &doc[e..]);
            std::fs::write(&path, new).expect("write COMPATIBILITY.md");
            return;
        }
        assert!(
            doc[b + begin.len()..e] == *generated,
            "docs/COMPATIBILITY.md is out of date with the {tag} tables; rerun with RAMPART_BLESS=1"
        );
    }

    #[test]
    fn compatibility_doc_lists_every_fetch() {
        check_doc("rampart sample::compat fetches", &fetch_markdown());
    }

    #[test]
    fn compatibility_doc_lists_every_converter() {
        check_doc("rampart sample::compat converters", &conv_markdown());
    }
}
