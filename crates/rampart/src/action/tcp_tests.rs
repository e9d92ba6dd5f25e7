//! TCP rules: compiled from configurations (HAProxy's messages, recorded from
//! `haproxy -c` 2.6.12), then run on payloads that grow as they would on the wire.

use std::net::SocketAddr;

use super::capture::Captured;
use super::tcp::{run_tcp_rules, TcpExec, TcpFlow};
use super::RuleAt;
use crate::proxy::Runtime;
use crate::sample::ctx::{ConnInfo, Dir};
use crate::sample::fetch::tls_hello::tests::client_hello;
use crate::sample::testutil::config;
use crate::sample::vars::{Scope, VarStore, Vars};
use crate::sample::Sample;

const DEFAULTS: &str = "defaults\n mode tcp\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n";

fn runtime(body: &str) -> Runtime {
    let cfg = config(&format!("{DEFAULTS}{body}"));
    crate::build::build(&cfg, 100, 1)
        .unwrap_or_else(|e| panic!("runtime: {:#?}", e.iter().map(|d| &d.message).collect::<Vec<_>>()))
}

/// Alerts and warnings of a configuration, as `(kind, line, message)`.
fn diags(body: &str) -> Vec<(String, u32, String)> {
    let cfg = config(&format!("{DEFAULTS}{body}"));
    crate::build::check(&cfg)
        .into_iter()
        .map(|d| (d.level.tag().trim_matches(['[', ']', ' ']).to_owned(), d.span.map_or(0, |s| s.line), d.message))
        .collect()
}

/// One stream's state: its addresses, variables and capture slots.
struct Stream {
    conn: ConnInfo,
    sess: VarStore,
    txn: VarStore,
    req: VarStore,
    caps: Captured,
    scratch: Vec<u8>,
    last_rule: Option<RuleAt>,
    /// The socket options the rules asked for.
    fc: super::sockopt::FcPending,
}

impl Stream {
    fn new(rt: &Runtime) -> Stream {
        Stream {
            conn: ConnInfo::new(Some("192.168.1.10:40000".parse().unwrap()), -1),
            sess: VarStore::new(Scope::Sess),
            txn: VarStore::new(Scope::Txn),
            req: VarStore::new(Scope::Req),
            caps: {
                let mut c = Captured::default();
                c.reset(&rt.proxies[0].rules.captures);
                c
            },
            scratch: Vec::new(),
            last_rule: None,
            fc: Default::default(),
        }
    }

    /// Runs proxy 0's content rules over `payload`.
    fn content(&mut self, rt: &Runtime, payload: &[u8], final_data: bool) -> TcpFlow {
        let vars = Vars {
            proc: Some(&rt.proc_vars),
            sess: Some(&self.sess),
            txn: Some(&self.txn),
            reqres: Some(&self.req),
            check: None,
        };
        let mut x = TcpExec {
            rt,
            fe: 0,
            be: None,
            dir: Dir::Request,
            conn: &mut self.conn,
            payload: Some(payload),
            req: None,
            res: None,
            caps: &mut self.caps,
            vars,
            first_req: true,
            scratch: &mut self.scratch,
            last_rule: self.last_rule,
            log_level: Default::default(),
            sc: None,
            http: false,
            fc: self.fc,
            log: None,
            lua: None,
            final_data: false,
            resolving: None,
            chan: None,
        };
        let flow = run_tcp_rules(&rt.proxies[0].rules.tcp_req, final_data, &mut x);
        self.last_rule = x.last_rule;
        self.fc = x.fc;
        flow
    }

    fn var(&self, rt: &Runtime, name: &str) -> Option<Sample<'static>> {
        let vars = Vars {
            proc: Some(&rt.proc_vars),
            sess: Some(&self.sess),
            txn: Some(&self.txn),
            reqres: Some(&self.req),
            check: None,
        };
        vars.get(&crate::sample::vars::parse_name(name.as_bytes()).unwrap())
    }
}

#[test]
fn sni_routing_waits_for_the_whole_client_hello() {
    let rt = runtime(
        "frontend f\n bind :1\n tcp-request inspect-delay 5s\n\
         tcp-request content accept if { req_ssl_hello_type 1 }\n\
         use_backend tls if { req_ssl_sni -i example.com }\n default_backend plain\n\
         backend tls\n server s 127.0.0.1:1\nbackend plain\n server s 127.0.0.1:2\n",
    );
    let hello = client_hello("example.com");
    let mut st = Stream::new(&rt);
    assert_eq!(st.content(&rt, &[], false), TcpFlow::Wait, "nothing yet: wait");
    for cut in [1, 4, 5, 9, hello.len() - 1] {
        assert_eq!(st.content(&rt, &hello[..cut], false), TcpFlow::Wait, "a hello cut at {cut} may still complete");
    }
    assert_eq!(st.content(&rt, &hello, false), TcpFlow::Accept);
    // once the delay expired, what is missing counts as no match: the list accepts by default
    assert_eq!(st.content(&rt, &hello[..9], true), TcpFlow::Continue);
    // not TLS at all: no match, nothing to wait for
    assert_eq!(st.content(&rt, b"GET / HTTP/1.1\r\n", false), TcpFlow::Continue);
}

#[test]
fn a_miss_is_negated_into_a_miss_and_decided_when_final() {
    let rt = runtime(
        "frontend f\n bind :1\n tcp-request inspect-delay 5s\n\
         tcp-request content reject unless { req.len ge 4 }\n\
         tcp-request content reject if { req.payload(0,3) -m str BAD }\n\
         default_backend b\nbackend b\n server s 127.0.0.1:1\n",
    );
    let mut st = Stream::new(&rt);
    assert_eq!(st.content(&rt, b"ab", false), TcpFlow::Wait);
    assert_eq!(st.content(&rt, b"ab", true), TcpFlow::Reject, "too short once final");
    assert_eq!(st.content(&rt, b"BADxx", false), TcpFlow::Reject);
    assert_eq!(st.content(&rt, b"GOODx", false), TcpFlow::Continue);
}

#[test]
fn or_and_not_follow_haproxys_three_valued_logic() {
    let rt = runtime(
        "frontend f\n bind :1\n tcp-request inspect-delay 5s\n\
         acl long req.len ge 10\n acl local src 192.168.0.0/16\n acl other src 10.0.0.0/8\n\
         tcp-request content reject if long || local\n\
         default_backend b\nbackend b\n server s 127.0.0.1:1\n\
         frontend g\n bind :2\n tcp-request inspect-delay 5s\n\
         acl long req.len ge 10\n acl other src 10.0.0.0/8\n\
         tcp-request content reject if other long\n tcp-request content accept if long || other\n\
         default_backend b\n",
    );
    let mut st = Stream::new(&rt);
    // a pass in one group wins over the miss in the other
    assert_eq!(st.content(&rt, b"x", false), TcpFlow::Reject);
    // proxy g: `other long` fails on `other` (a fail wins over a miss); `long || other`
    // misses (a miss wins over a fail)
    let g = &rt.proxies[2].rules.tcp_req;
    let vars = Vars { proc: Some(&rt.proc_vars), ..Vars::default() };
    let mut x = TcpExec {
        rt: &rt,
        fe: 2,
        be: None,
        dir: Dir::Request,
        conn: &mut st.conn,
        payload: Some(b"x"),
        req: None,
        res: None,
        caps: &mut Captured::default(),
        vars,
        first_req: true,
        scratch: &mut Vec::new(),
        last_rule: None,
        log_level: Default::default(),
        sc: None,
        http: false,
        fc: Default::default(),
        log: None,
        lua: None,
        final_data: false,
        resolving: None,
        chan: None,
    };
    assert_eq!(run_tcp_rules(g, false, &mut x), TcpFlow::Wait);
    assert_eq!(run_tcp_rules(g, true, &mut x), TcpFlow::Continue);
}

#[test]
fn variables_and_captures_take_what_arrived() {
    let rt = runtime(
        "frontend f\n bind :1\n tcp-request inspect-delay 5s\n\
         tcp-request content set-var(txn.first) req.payload(0,4)\n\
         tcp-request content set-var-fmt(sess.fmt) len=%[req.len]\n\
         tcp-request content capture req.payload(0,0) len 6\n\
         tcp-request content set-var(txn.cap) capture.req.hdr(0)\n\
         tcp-request content unset-var(txn.first) if { req.len gt 100 }\n\
         default_backend b\nbackend b\n server s 127.0.0.1:1\n",
    );
    let mut st = Stream::new(&rt);
    assert_eq!(st.content(&rt, b"PING\x00pong and more", true), TcpFlow::Continue);
    assert_eq!(st.var(&rt, "txn.first"), Some(Sample::Bin(b"PING".to_vec().into())));
    assert_eq!(st.var(&rt, "sess.fmt"), Some(Sample::Str(b"len=18".to_vec().into())));
    // cut at 6 bytes, and at the NUL byte HAProxy's C string ends on
    assert_eq!(st.caps.req, vec![Some(b"PING".to_vec())]);
    assert_eq!(st.var(&rt, "txn.cap"), Some(Sample::Str(b"PING".to_vec().into())));
}

#[test]
fn addresses_change_as_haproxy_changes_them() {
    let rt = runtime(
        "frontend f\n bind :1\n\
         tcp-request content set-src str(10.1.2.3)\n\
         tcp-request content set-src-port int(1234)\n\
         tcp-request content set-dst ipv6(2001:db8::1)\n\
         tcp-request content set-dst-port int(8443)\n\
         tcp-request content set-var(txn.src) src\n\
         tcp-request content set-var(txn.dst) dst\n\
         default_backend b\nbackend b\n server s 127.0.0.1:1\n",
    );
    let mut st = Stream::new(&rt);
    st.content(&rt, b"", true);
    assert_eq!(st.conn.src, Some("10.1.2.3:1234".parse::<SocketAddr>().unwrap()));
    // no local address before (no socket): the port of nothing is 0, then set
    assert_eq!(st.conn.dst(), Some("[2001:db8::1]:8443".parse::<SocketAddr>().unwrap()));
    assert_eq!(st.var(&rt, "txn.src"), Some(Sample::Ipv4("10.1.2.3".parse().unwrap())));
    assert_eq!(st.var(&rt, "txn.dst"), Some(Sample::Ipv6("2001:db8::1".parse().unwrap())));

    // a port set where there was no address gives 0.0.0.0
    let rt = runtime(
        "frontend f\n bind :1\n tcp-request content set-dst-port int(70000)\n\
         default_backend b\nbackend b\n server s 127.0.0.1:1\n",
    );
    let mut st = Stream::new(&rt);
    st.content(&rt, b"", true);
    // 70000 wraps in 16 bits as in HAProxy (htons)
    assert_eq!(st.conn.dst(), Some("0.0.0.0:4464".parse::<SocketAddr>().unwrap()));
}

#[test]
fn accept_reject_and_silent_drop_end_the_list() {
    let rt = runtime(
        "frontend f\n bind :1\n\
         tcp-request content accept if { req.payload(0,1) -m str A }\n\
         tcp-request content silent-drop if { req.payload(0,1) -m str S }\n\
         tcp-request content set-log-level debug\n\
         tcp-request content reject\n\
         tcp-request content set-var(txn.never) str(x)\n\
         default_backend b\nbackend b\n server s 127.0.0.1:1\n",
    );
    let mut st = Stream::new(&rt);
    assert_eq!(st.content(&rt, b"A", true), TcpFlow::Accept);
    assert_eq!(st.content(&rt, b"S", true), TcpFlow::SilentDrop);
    assert_eq!(st.content(&rt, b"R", true), TcpFlow::Reject);
    assert_eq!(st.var(&rt, "txn.never"), None);
}

#[test]
fn named_defaults_rules_run_first_and_their_accept_ends_all() {
    let rt = runtime(&format!(
        "defaults d\n mode tcp\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n\
         tcp-request content accept if {{ req.payload(0,1) -m str A }}\n\
         frontend f from d\n bind :1\n tcp-request content reject\n\
         default_backend b\n{DEFAULTS}backend b\n server s 127.0.0.1:1\n"
    ));
    let mut st = Stream::new(&rt);
    assert_eq!(st.content(&rt, b"A", true), TcpFlow::Accept);
    assert_eq!(st.content(&rt, b"B", true), TcpFlow::Reject);
}

#[test]
fn misplaced_samples_are_reported_as_haproxy_does() {
    let got = diags(
        "frontend f\n bind :1\n\
         acl pl req.len gt 0\n acl mixed req.len gt 0\n acl mixed src 1.2.3.4\n\
         tcp-request connection reject if pl\n\
         tcp-request connection reject if mixed\n\
         tcp-request session reject if { req.len gt 0 }\n\
         tcp-request content reject if { res.len gt 0 }\n\
         tcp-request connection set-var(sess.x) req.payload(0,1)\n\
         tcp-request content set-var(txn.y) res.len\n\
         tcp-request content capture res.len len 3\n\
         tcp-request connection set-var-fmt(txn.b) %[req.len]\n\
         tcp-request connection set-src req.len\n\
         default_backend b\n\
         backend b\n server s 127.0.0.1:1\n\
         tcp-response content set-var(txn.z) req.len\n\
         tcp-response content reject if { req.len gt 0 }\n",
    );
    let expected = [
        ("WARNING", 11, "acl 'pl' will never match in 'tcp-request connection' because it only involves keywords that are incompatible with 'frontend tcp-request connection rule'"),
        ("WARNING", 12, "acl 'mixed' involves keyword 'req.len' which is incompatible with 'frontend tcp-request connection rule'"),
        ("WARNING", 13, "anonymous acl will never match in 'tcp-request session' because it uses keyword 'req.len' which is incompatible with 'frontend tcp-request session rule'"),
        ("WARNING", 14, "anonymous acl will never match in 'tcp-request content' because it uses keyword 'res.len' which is incompatible with 'frontend tcp-request content rule'"),
        ("ALERT", 15, "fetch method 'set-var(sess.x)' extracts information from 'request buffer', none of which is available here"),
        ("ALERT", 16, "fetch method 'set-var(txn.y)' extracts information from 'response buffer', none of which is available here"),
        ("ALERT", 17, "'tcp-request content capture' : fetch method 'res.len' extracts information from 'response buffer', none of which is available here"),
        ("ALERT", 18, "sample fetch <req.len]> may not be reliably used here because it needs 'request buffer' which is not available here"),
        ("ALERT", 23, "fetch method 'set-var(txn.z)' extracts information from 'request buffer', none of which is available here"),
        ("WARNING", 24, "anonymous acl will never match in 'tcp-response content' because it uses keyword 'req.len' which is incompatible with 'backend tcp-response content rule'"),
    ];
    for (kind, line, msg) in expected {
        assert!(
            got.iter().any(|(k, l, m)| k == kind && *l == line && m == msg),
            "missing {kind} at line {line}: {msg}\ngot {got:#?}"
        );
    }
    // `set-src` is not checked (HAProxy neither): no message for line 19
    assert!(!got.iter().any(|(_, l, _)| *l == 19), "{got:#?}");
}

#[test]
fn bad_expressions_and_conditions_get_haproxys_messages() {
    let got = diags(
        "frontend f\n bind :1\n tcp-request inspect-delay 1s\n\
         tcp-request content set-var(txn.a) foo\n\
         tcp-request content set-src bar\n\
         tcp-request content capture baz len 3\n\
         tcp-request content accept if nosuch\n\
         tcp-request connection accept if { nosuch2 }\n\
         tcp-request content set-var-fmt(txn.b) %[qux]\n\
         tcp-request content set-var(txn.a) str(a),nosuchconv\n\
         tcp-request content set-var(txn.a) str(a) if { str(a) -m foo }\n\
         default_backend b\nbackend b\n server s 127.0.0.1:1\n\
         tcp-response content accept unless nosuch\n",
    );
    let expected = [
        (9, "unknown fetch method 'foo'"),
        (10, "unknown fetch method 'bar'"),
        (11, "'tcp-request content capture' : unknown fetch method 'baz'"),
        (12, "'tcp-request content accept' : error detected in frontend 'f' while parsing 'if' condition : no such ACL : 'nosuch'"),
        (13, "'tcp-request connection accept' : error detected in frontend 'f' while parsing 'if' condition : unknown fetch method 'nosuch2' in ACL expression 'nosuch2'"),
        (14, "failed to parse sample expression <qux]> : unknown fetch method 'qux'"),
        (15, "unknown converter 'nosuchconv'"),
        (16, "'tcp-request content set-var(txn.a)' : error detected in frontend 'f' while parsing 'if' condition : unknown matching method 'foo' when parsing ACL expression"),
        (20, "'tcp-response content accept' : error detected in backend 'b' while parsing 'unless' condition : no such ACL : 'nosuch'"),
    ];
    for (line, msg) in expected {
        assert!(
            got.iter().any(|(k, l, m)| k == "ALERT" && *l == line && m == msg),
            "missing alert at line {line}: {msg}\ngot {got:#?}"
        );
    }
}

#[test]
fn a_capture_without_inspect_delay_warns_that_it_reads_at_random() {
    let got = diags(
        "frontend f\n bind :1\n tcp-request content capture req.payload(0,3) len 3\n\
         tcp-request content capture src len 20\n default_backend b\nbackend b\n server s 127.0.0.1:1\n",
    );
    let warning = "frontend 'f' : a 'tcp-request capture' rule explicitly depending on request contents without \
                   any 'tcp-request inspect-delay' setting. This means that this rule will randomly find its \
                   contents. This can be fixed by setting the tcp-request inspect-delay.";
    assert_eq!(got.iter().filter(|(_, _, m)| m == warning).count(), 1, "{got:#?}");
}

#[test]
fn actions_rampart_lacks_are_refused_by_name() {
    let got = diags(
        "frontend f\n bind :1\n tcp-request content set-priority-class int(1)\n\
         tcp-request content set-priority-offset int(1)\n\
         default_backend b\nbackend b\n mode http\n server s 127.0.0.1:1\n\
         tcp-response content close\n",
    );
    for msg in [
        "'tcp-response content close' in an HTTP backend is not supported yet",
        "'tcp-request content set-priority-class' is not supported yet (TCP streams carry no queue priority yet)",
        "'tcp-request content set-priority-offset' is not supported yet (TCP streams carry no queue priority yet)",
    ] {
        assert!(got.iter().any(|(k, _, m)| k == "ALERT" && m == msg), "missing {msg}\ngot {got:#?}");
    }
}

#[test]
fn wait_end_holds_the_rules_until_the_inspection_is_final() {
    let rt = runtime(
        "frontend f\n bind :1\n tcp-request inspect-delay 5s\n\
         tcp-request content reject if { req.payload(0,3) -m str BAD }\n\
         tcp-request content accept if WAIT_END\n tcp-request content reject\n\
         default_backend b\nbackend b\n server s 127.0.0.1:1\n",
    );
    let mut st = Stream::new(&rt);
    assert_eq!(st.content(&rt, b"", false), TcpFlow::Wait, "nothing yet");
    assert_eq!(st.content(&rt, b"hello", false), TcpFlow::Wait, "data, but the delay runs");
    assert_eq!(st.content(&rt, b"hello", true), TcpFlow::Accept, "final: WAIT_END is true");
    assert_eq!(st.content(&rt, b"BADx", false), TcpFlow::Reject, "rules above it decide at once");
    // negated, a "not yet" stays one (HAProxy: `unless` of a miss is a miss)
    let rt = runtime(
        "frontend f\n bind :1\n tcp-request inspect-delay 5s\n\
         tcp-request content reject unless { wait_end }\n\
         default_backend b\nbackend b\n server s 127.0.0.1:1\n",
    );
    let mut st = Stream::new(&rt);
    assert_eq!(st.content(&rt, b"x", false), TcpFlow::Wait);
    assert_eq!(st.content(&rt, b"x", true), TcpFlow::Continue);
}

#[test]
fn the_rule_that_ends_a_list_is_noted_with_its_file_and_line() {
    // lines: 1-5 DEFAULTS, 6 frontend, 7 bind, 8 inspect-delay, 9 set-var, 10 reject,
    // 11 accept
    let rt = runtime(
        "frontend f\n bind :1\n tcp-request inspect-delay 5s\n\
         tcp-request content set-var(txn.x) str(1)\n\
         tcp-request content reject if { req.payload(0,3) -m str BAD }\n\
         tcp-request content accept if { req.len ge 4 }\n\
         default_backend b\nbackend b\n server s 127.0.0.1:1\n",
    );
    assert_eq!(&*rt.rule_files, &["test.cfg".into()]);
    let mut st = Stream::new(&rt);
    assert_eq!(st.content(&rt, b"ab", false), TcpFlow::Wait);
    assert_eq!(st.last_rule, None, "set-var does not end the list, a wait decides nothing");
    assert_eq!(st.content(&rt, b"ab", true), TcpFlow::Continue);
    assert_eq!(st.last_rule, None, "no rule ended the list");
    assert_eq!(st.content(&rt, b"BADx", false), TcpFlow::Reject);
    assert_eq!(st.last_rule, Some(RuleAt { file: 0, line: 10 }));
    let mut st = Stream::new(&rt);
    assert_eq!(st.content(&rt, b"GOOD", false), TcpFlow::Accept);
    assert_eq!(st.last_rule, Some(RuleAt { file: 0, line: 11 }));
}

#[test]
fn set_mark_and_set_tos_are_noted_for_the_socket_holder() {
    let rt = runtime(
        "frontend f\n bind :1\n tcp-request inspect-delay 1s\n tcp-request content set-mark 0x2a\n\
         tcp-request content set-fc-tos req.len,mul(2) if { req.len gt 0 }\n\
         tcp-request content set-fc-mark var(txn.none) if { req.len gt 5 }\n default_backend b\n\
         backend b\n server s 127.0.0.1:1\n",
    );
    let mut st = Stream::new(&rt);
    assert_eq!(st.content(&rt, b"abc", true), TcpFlow::Continue);
    assert_eq!(st.fc, super::sockopt::FcPending { mark: Some(0x2a), tos: Some(6), back: Default::default() });
    // an expression without a value leaves the mark as it was
    assert_eq!(st.content(&rt, b"abcdefgh", true), TcpFlow::Continue);
    assert_eq!(
        st.fc.take(),
        Some(super::sockopt::FcPending { mark: Some(0x2a), tos: Some(16), back: Default::default() })
    );
    assert_eq!(st.fc.take(), None);
}

#[test]
fn do_log_in_tcp_mode_is_accepted_but_set_fc_on_responses_is_refused() {
    let d = diags(
        "listen l\n bind :1\n tcp-request connection do-log\n tcp-request content do-log\n\
         tcp-response content do-log\n server s 127.0.0.1:1\n\
         backend b\n tcp-response content set-fc-mark 1\n server s 127.0.0.1:1\n",
    );
    let msgs: Vec<&str> = d.iter().filter(|d| d.0 == "ALERT").map(|d| d.2.as_str()).collect();
    assert!(!msgs.iter().any(|m| m.contains("do-log")), "{msgs:?}");
    assert!(msgs.contains(&"'tcp-response content set-fc-mark' is not supported yet (in TCP mode)"), "{msgs:?}");
}
