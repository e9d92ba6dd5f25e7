//! Unit tests of `tls::crtlist` and `tls::crtlist_opts`: line parsing as HAProxy 2.6
//! splits lines, option echo in HAProxy's order, errors.

use rampart_cfg::model::{BindSsl, TlsVersion, Verify};

use super::*;

fn all_usable(_: &Path, _: bool) -> bool {
    true
}

fn ctx(base: Option<&Path>) -> Ctx<'_> {
    Ctx { crt_base: base, ca_base: Some(Path::new("/ca")), usable: &all_usable }
}

#[test]
fn lines_filters_and_comments() {
    let text = "# certificates\n\n/a.pem\nb.pem www.b.test *.b.test !secret.b.test # end\n c.pem [] C.test\n   \n";
    let l = parse("x.lst", text, &ctx(Some(Path::new("/base")))).unwrap();
    assert_eq!(l.len(), 3);
    assert_eq!(l[0], CrtLine { crt: "/a.pem".into(), line: 3, options: None, filters: vec![] });
    assert_eq!(l[1].crt, PathBuf::from("/base/b.pem"));
    assert_eq!(l[1].line, 4);
    // a `#` after the first character is a filter, as in HAProxy
    assert_eq!(l[1].filters, ["www.b.test", "*.b.test", "!secret.b.test", "#", "end"]);
    assert_eq!(l[1].names(), ["www.b.test", "*.b.test", "#", "end"]);
    assert_eq!(l[1].excluded(), ["secret.b.test"]);
    assert_eq!(l[2].options, Some(LineOptions::default()));
    assert_eq!(l[2].names(), ["c.test"]);
    assert_eq!(l[2].echo(), " [] C.test");
    assert_eq!(line_count(text), 6);
}

#[test]
fn options_are_parsed_and_echoed_in_haproxys_order() {
    let line = "e.pem [ssl-min-ver SSLv3 verify none allow-0rtt alpn h2,http/1.1 ca-file ca.pem \
                crl-file /c/crl.pem ciphers ECDHE-RSA-AES128-GCM-SHA256 ssl-max-ver TLSv1.3 no-ca-names \
                npn h2 curves P-256 ecdhe prime256v1 ciphersuites TLS_AES_128_GCM_SHA256 ca-verify-file v.pem] \
                localhost !www.test1.com";
    let l = parse_line(line, "CLI", 1, &ctx(None)).unwrap().unwrap();
    let o = l.options.as_ref().unwrap();
    assert_eq!(o.verify, Some(Verify::None));
    assert_eq!(o.min_ver, Some(TlsVersion::SslV3));
    assert_eq!(o.ca_file.as_deref(), Some(Path::new("/ca/ca.pem")));
    assert_eq!(o.ca_verify_file.as_deref(), Some(Path::new("/ca/v.pem")));
    assert_eq!(
        l.echo(),
        " [npn h2 alpn h2,http/1.1 verify none no-ca-names allow-0rtt ca-file /ca/ca.pem crl-file /c/crl.pem \
         ciphers ECDHE-RSA-AES128-GCM-SHA256 ciphersuites TLS_AES_128_GCM_SHA256 curves P-256 ecdhe prime256v1 \
         ssl-min-ver SSLv3 ssl-max-ver TLSv1.3] localhost !www.test1.com"
    );
    // brackets split words wherever they are
    let l = parse_line("e.pem [verify none]a.test", "CLI", 1, &ctx(None)).unwrap().unwrap();
    assert_eq!(l.echo(), " [verify none] a.test");
    // words between the file and `[` are dropped, as HAProxy does
    let l = parse_line("e.pem a.test [verify none]", "CLI", 1, &ctx(None)).unwrap().unwrap();
    assert_eq!(l.echo(), " [verify none]");
    // `[` without `]`: the words become filters
    let l = parse_line("e.pem [alpn h2 a.test", "CLI", 1, &ctx(None)).unwrap().unwrap();
    assert_eq!(l.echo(), " [] alpn h2 a.test");
    assert_eq!(parse_line("   ", "CLI", 1, &ctx(None)), Ok(None));
}

#[test]
fn errors_are_haproxys() {
    let e = |line: &str| parse_line(line, "x.lst", 2, &ctx(None)).unwrap_err();
    assert_eq!(e("a.pem [foo bar] a.test"), "parsing [x.lst:2]: unknown ssl keyword foo");
    assert_eq!(e("a.pem [verify] a.test"), "parsing [x.lst:2]: ssl args out of '[]' for verify");
    assert_eq!(e("a.pem [verify none] [x]"), "parsing [x.lst:2]: too many '['");
    assert_eq!(e("a.pem [verify none]]"), "parsing [x.lst:2]: too many ']'");
    assert_eq!(e("a.pem verify none]"), "parsing [x.lst:2]: missing '['");
    assert_eq!(e("[verify none] a.pem"), "parsing [x.lst:2]: file must start with a cert");
    assert_eq!(e("a.pem [ssl-min-ver TLSv1.5]"), "'TLSv1.5' : unknown ssl/tls version");
    assert_eq!(
        e("a.pem [verify maybe]"),
        "'verify' : unknown verify method 'maybe', only 'none', 'optional', and 'required' are supported"
    );
    let none = |_: &Path, _: bool| false;
    let c = Ctx { crt_base: None, ca_base: None, usable: &none };
    assert_eq!(
        parse_line("a.pem [ca-file /x/ca.crt]", "CLI", 1, &c).unwrap_err(),
        "'ca-file' : unable to load /x/ca.crt"
    );
    assert_eq!(
        parse_line("a.pem [crl-file /x/c.crt]", "CLI", 1, &c).unwrap_err(),
        "'crl-file' : unable to load /x/c.crt"
    );
    assert_eq!(
        load(Path::new("/nonexistent.lst"), &ctx(None)).unwrap_err(),
        "cannot open file '/nonexistent.lst' : No such file or directory"
    );
}

#[test]
fn merged_over_the_bind_and_what_rustls_cannot_do() {
    let l = parse_line(
        "e.pem [ssl-min-ver SSLv3 verify optional allow-0rtt alpn http/1.1 ecdhe P-384]",
        "CLI",
        1,
        &ctx(None),
    )
    .unwrap()
    .unwrap();
    let bind = BindSsl { verify: Some(Verify::Required), ca_file: Some("/b/ca.pem".into()), ..Default::default() };
    let (m, not_done) = l.options.as_ref().unwrap().merged(&bind);
    assert_eq!(m.verify, Some(Verify::Optional));
    assert_eq!(m.ca_file.as_deref(), Some(Path::new("/b/ca.pem")));
    assert_eq!(m.alpn.as_deref(), Some(&["http/1.1".to_string()][..]));
    assert_eq!(m.curves.as_deref(), Some("P-384"));
    assert_eq!(m.options.min_ver, None);
    assert_eq!(
        not_done,
        [
            "'ssl-min-ver SSLv3' (rustls speaks TLSv1.2 and TLSv1.3 only; TLSv1.2 is the minimum)",
            "'allow-0rtt' (no TLS early data)"
        ]
    );
    assert!(l.options.as_ref().unwrap().changes_config());
    assert!(!LineOptions::default().changes_config());
}
