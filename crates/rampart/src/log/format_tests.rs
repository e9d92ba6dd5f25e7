//! Log-format tests. Renderings and messages were checked against haproxy 2.6.12
//! (`http-request return ... lf-string` in a backend, `option httplog`, and
//! `haproxy -c` on `http-request set-header X "<fmt>"`).

use super::format::{LfMode, LogFormat};
use crate::sample::ctx::{ConnInfo, SampleCtx};
use crate::sample::expr::{CompileCx, Place, Site};
use crate::sample::testutil::*;

const REQ: &[u8] = b"GET /a/b?x=1 HTTP/1.1\r\nHost: Ex.com\r\nq: a\"b\\c]d\r\n\r\n";

fn compile(fmt: &str, mode: LfMode, places: &[Place]) -> Result<LogFormat, String> {
    let cfg = config(CFG);
    let mut cx = CompileCx::new(&cfg, 1, Site::HttpReq);
    LogFormat::compile(fmt, &mut cx, mode, places).map_err(|e| e.msg)
}

/// Renders `fmt` for [`REQ`] from 127.0.0.1:33866, in backend `be`, status 200, with
/// the captures `Host` and (absent) `X-Nope`.
fn render(fmt: &str, mode: LfMode) -> String {
    let cfg = config(CFG);
    let rt = runtime(&cfg);
    let mut cx = CompileCx::new(&cfg, 1, Site::HttpReq);
    let lf = LogFormat::compile(fmt, &mut cx, mode, &[Place::BeHrqHdr]).unwrap_or_else(|e| panic!("{fmt}: {e}"));
    let conn = ConnInfo::new(Some("127.0.0.1:33866".parse().unwrap()), -1);
    let head = req_head(REQ);
    let caps = [Some(b"Ex.com".to_vec()), None];
    let ctx = SampleCtx {
        be: Some(1),
        req: Some(head.view(REQ)),
        req_caps: &caps,
        status: Some(200),
        ..SampleCtx::new(&rt, &conn, 0)
    };
    let mut out = b"prefix:".to_vec();
    lf.render(&ctx, &mut out);
    String::from_utf8(out[7..].to_vec()).unwrap()
}

#[test]
fn renders_like_haproxy() {
    let fmt = "1=%[req.hdr(host)] 2=%{+Q}[req.hdr(host)] 3=%ci:%cp 4=%f/%b/%s 5=%ST 6=%{+Q}HM %{+Q}HU %HP %HPO \
               %HQ %HV 7=%{+Q}r 8=%{+X}ci:%{+X}cp 9=100%% 10=%-x 11=%{+M}[req.hdr(nope)] 12=%{+Q}f \
               %{+E}[req.hdr(q)] 13=%hr %hrl %{+Q}hrl 14=%[int(42)] %[src] %[bool(1)] 15=%{+Q}o%f %b %{-Q}s \
               16=%ft";
    assert_eq!(
        render(fmt, LfMode::Http),
        "1=Ex.com 2=Ex.com 3=127.0.0.1:33866 4=fe/be/<NOSRV> 5=200 6=\"GET\" \"/a/b?x=1\" /a/b /a/b ?x=1 \
         HTTP/1.1 7=\"GET /a/b?x=1 HTTP/1.1\" 8=7F000001:844A 9=100% 10=-x 11= 12=\"fe\" a\\\"b\\\\c\\]d \
         13={Ex.com|} Ex.com - \"Ex.com\" \"\" 14=42 127.0.0.1 1 15=\"fe\" \"be\" <NOSRV> 16=\"fe\""
    );
}

#[test]
fn frontend_transport_marks_tls_with_a_tilde() {
    let cfg = config(CFG);
    let rt = runtime(&cfg);
    let mut cx = CompileCx::new(&cfg, 1, Site::HttpReq);
    let lf = LogFormat::compile("%ft %f", &mut cx, LfMode::Log, &[]).expect("compiles");
    let mut conn = ConnInfo::new(Some("127.0.0.1:33866".parse().unwrap()), -1);
    conn.set_tls(crate::tls::TlsInfo {
        sni: None,
        version: "TLSv1.3",
        cipher: "TLS_AES_128_GCM_SHA256",
        bits: 128,
        alpn: None,
        resumed: false,
        peer_certs: Vec::new(),
        local_cert: None,
        verify: Default::default(),
    });
    let mut out = Vec::new();
    lf.render(&SampleCtx::new(&rt, &conn, 0), &mut out);
    assert_eq!(String::from_utf8(out).unwrap(), "fe~ fe");
}

#[test]
fn ssl_version_and_cipher_of_the_client_connection() {
    let cfg = config(CFG);
    let rt = runtime(&cfg);
    let render = |fmt: &str, mode: LfMode, tls: bool| {
        let mut cx = CompileCx::new(&cfg, 1, Site::HttpReq);
        let lf = LogFormat::compile(fmt, &mut cx, mode, &[]).expect("compiles");
        let mut conn = ConnInfo::new(Some("127.0.0.1:33866".parse().unwrap()), -1);
        if tls {
            conn.set_tls(crate::tls::TlsInfo {
                sni: None,
                version: "TLSv1.2",
                cipher: "ECDHE-ECDSA-AES128-GCM-SHA256",
                bits: 128,
                alpn: None,
                resumed: false,
                peer_certs: Vec::new(),
                local_cert: None,
                verify: Default::default(),
            });
        }
        let mut out = Vec::new();
        lf.render(&SampleCtx::new(&rt, &conn, 0), &mut out);
        String::from_utf8(out).unwrap()
    };
    let fmt = "%sslv/%sslc %{+Q}sslv %{+Q}sslc";
    assert_eq!(
        render(fmt, LfMode::Log, true),
        "TLSv1.2/ECDHE-ECDSA-AES128-GCM-SHA256 \"TLSv1.2\" \"ECDHE-ECDSA-AES128-GCM-SHA256\""
    );
    // the same names as the fetches
    assert_eq!(
        render("%[ssl_fc_protocol]/%[ssl_fc_cipher]", LfMode::Log, true),
        render("%sslv/%sslc", LfMode::Log, true)
    );
    // a plain connection: absent, `-` in a log line, `""` quoted, nothing in a header
    assert_eq!(render(fmt, LfMode::Log, false), "-/- \"\" \"\"");
    assert_eq!(render("[%sslv][%sslc]", LfMode::Http, false), "[][]");
    assert_eq!(render("%sslv", LfMode::Http, true), "TLSv1.2");
}

#[test]
fn log_lines_merge_spaces_and_dash_absent_values() {
    assert_eq!(render("  %[req.hdr(nope)]   %f  %{+Q}[req.hdr(nope)] end ", LfMode::Log), "- fe \"\" end ");
    assert_eq!(render("%{+Q}[req.hdr(host)]", LfMode::Log), "\"Ex.com\"");
    assert_eq!(render("%ID|%{+Q}ID", LfMode::Log), "-|\"\"");
    assert_eq!(render("%ID", LfMode::Http), "");
}

#[test]
fn http_formats_encode_control_characters() {
    assert_eq!(render(r"%[str(a\tb\nc)]", LfMode::Http), "a\tb%0Ac");
    assert_eq!(render("%[bin(41017F42)]", LfMode::Http), "A%01%7FB");
    assert_eq!(render("%[bin(410042)]", LfMode::Http), "A", "a binary is cut at NUL as a string");
    // Log lines do not encode expressions.
    assert_eq!(render(r"%[str(a\nb)]", LfMode::Log), "a\nb");
}

#[test]
fn constant_formats_are_text() {
    let lf = compile("plain text, 100%%", LfMode::Http, &[]).unwrap();
    assert_eq!(lf.as_text(), Some(&b"plain text, 100%"[..]));
    assert_eq!(compile("", LfMode::Http, &[]).unwrap().as_text(), Some(&b""[..]));
    assert_eq!(compile("%f", LfMode::Http, &[]).unwrap().as_text(), None);
}

#[test]
fn haproxy_messages() {
    let e = |f: &str| compile(f, LfMode::Http, &[Place::FeHrqHdr]).map(|_| ()).unwrap_err();
    assert_eq!(e("%{+Q}"), "parse argument modifier without variable name near '%{+Q}'");
    assert_eq!(e("%{+Q"), "truncated line after '+Q'");
    assert_eq!(e("%"), "truncated line after '%'");
    assert_eq!(
        e("50% off"),
        "unexpected variable name near ' ' at position 3 line : '50% off'. Maybe you want to write a single '%', \
         use the syntax '%%'"
    );
    assert_eq!(
        e("%Zz"),
        "no such format variable 'Zz'. If you wanted to emit the '%' character verbatim, you need to use '%%'"
    );
    assert_eq!(
        e("%{+Q}x"),
        "no such format variable 'x'. If you wanted to emit the '%' character verbatim, you need to use '%%'"
    );
    assert_eq!(e("%[int(1)"), "missing ']' after 'int(1)'");
    assert_eq!(e("a %{+Q}[int(1)"), "missing ']' after 'int(1)'");
    assert_eq!(e("%[req.hdr(host)lower]"), "expected ']' after 'req.hdr(host)', but found 'l'");
    assert_eq!(
        e("x%[req.hdrr(host)] y"),
        "failed to parse sample expression <req.hdrr(host)] y> : unknown fetch method 'req.hdrr'"
    );
    assert_eq!(
        e("%[res.hdr(foo)]"),
        "sample fetch <res.hdr(foo)]> may not be reliably used here because it needs 'HTTP response headers' \
         which is not available here"
    );
    assert_eq!(e("%Tq"), "'%Tq' is not supported yet in this context");
    assert_eq!(e("%{+Q}B"), "'%B' is not supported yet in this context");
}

#[test]
fn http_only_variables_need_an_http_proxy() {
    let cfg = config(&CFG.replace("defaults\n  mode http", "defaults\n  mode tcp"));
    let mut cx = CompileCx::new(&cfg, 0, Site::TcpReqCont);
    let e = LogFormat::compile("%HM", &mut cx, LfMode::Http, &[]).unwrap_err();
    assert_eq!(e.msg, "format variable 'HM' is reserved for HTTP mode");
    assert!(LogFormat::compile("%ci %[src]", &mut cx, LfMode::Http, &[]).is_ok());
}

#[test]
fn unknown_fetches_keep_their_hint_and_resolve_errors_their_kind() {
    let cfg = config(CFG);
    let mut cx = CompileCx::new(&cfg, 0, Site::HttpReq);
    let e = LogFormat::compile("%[strr(a)]", &mut cx, LfMode::Http, &[]).unwrap_err();
    assert_eq!(e.hint.as_deref(), Some("did you mean 'str' ?"));
    let e = LogFormat::compile("%[nbsrv(nope)]", &mut cx, LfMode::Http, &[]).unwrap_err();
    assert!(e.resolve && e.msg.starts_with("unable to find backend 'nope'"), "{e}");
}

#[test]
fn l6_fetches_warn_in_http_formats() {
    let cfg = config(CFG);
    let mut cx = CompileCx::new(&cfg, 0, Site::HttpReq);
    let lf = LogFormat::compile("%[req.len]", &mut cx, LfMode::Http, &[]).unwrap();
    assert_eq!(lf.warnings, ["L6 sample fetch <req.len]> ignored in HTTP log-format string."]);
}

#[test]
fn decimals_as_display_writes_them() {
    for n in [0i64, 7, -1, 10, 65_535, -4_200, i64::MAX, i64::MIN] {
        let mut out = b"x".to_vec();
        super::format::decimal(&mut out, n);
        assert_eq!(out, format!("x{n}").into_bytes());
    }
}

#[test]
fn ipv4_and_ports_with_and_without_quotes() {
    assert_eq!(render("%ci:%cp", LfMode::Log), "127.0.0.1:33866");
    assert_eq!(render("%{+Q}ci %{+X}cp", LfMode::Log), "\"127.0.0.1\" 844A");
}
