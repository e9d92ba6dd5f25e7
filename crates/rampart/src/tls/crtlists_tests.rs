//! Unit tests of `tls::crtlists` through [`super::super::certs::Certs`]: the replies
//! of `show/add/del ssl crt-list` and what the binds serve after them.

use rampart_cfg::model::{BindSsl, GlobalSsl};
use rustls::SignatureScheme;

use super::super::bind::build;
use super::super::certs::Certs;
use super::*;

fn pem_for(name: &str, serial: u64) -> String {
    let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let mut p = rcgen::CertificateParams::new(vec![name.to_string()]).unwrap();
    p.serial_number = Some(serial.into());
    p.distinguished_name.push(rcgen::DnType::CommonName, name);
    let c = p.self_signed(&kp).unwrap();
    format!("{}{}", c.pem(), kp.serialize_pem())
}

/// The CA store of a test: no file.
fn no_files(_: &str) -> Option<super::super::castore::Contents> {
    None
}

const ALL: &[SignatureScheme] = &[SignatureScheme::ECDSA_NISTP256_SHA256, SignatureScheme::RSA_PSS_SHA256];

fn served(tls: &BindTls, sni: Option<&str>) -> Option<Vec<u8>> {
    let ck = tls.store.load().choose(sni, ALL)?;
    let (_, c) = x509_parser::parse_x509_certificate(&ck.cert[0]).unwrap();
    Some(c.raw_serial().to_vec())
}

/// A bind (strict-sni or not) over `<dir>/l.lst`: a.pem (a.test, the default) and
/// b.pem under filters with options; `c.pem` is on disk but loaded by nothing.
fn setup(name: &str, strict: bool) -> (Certs, Arc<BindTls>, String) {
    let dir = std::env::temp_dir().join(format!("rampart-crtlists-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (f, n, s) in [("a.pem", "a.test", 1), ("b.pem", "b.test", 2), ("c.pem", "c.test", 3)] {
        std::fs::write(dir.join(f), pem_for(n, s)).unwrap();
    }
    std::fs::write(dir.join("l.lst"), "a.pem\n# comment\nb.pem [alpn http/1.1 verify none] b.test !x.b.test\n")
        .unwrap();
    let ssl = BindSsl { enabled: true, strict_sni: strict, crt_lists: vec!["l.lst".into()], ..Default::default() };
    let g = GlobalSsl { crt_base: Some(dir.clone()), ..Default::default() };
    let (mut tls, warnings) = build(&ssl, &g).expect("built");
    assert!(warnings.is_empty(), "{warnings:?}");
    tls.origin =
        super::super::bind::BindOrigin { proxy: "fe".into(), addr: ":443".into(), file: "h.cfg".into(), line: 7 };
    let tls = Arc::new(tls);
    (Certs::new(vec![tls.clone()], Vec::new()), tls, dir.display().to_string())
}

#[test]
fn show_lists_and_lines_with_their_options() {
    let (certs, _, d) = setup("show", false);
    assert_eq!(certs.show_crtlist(&[]), format!("{d}/l.lst\n"));
    assert_eq!(
        certs.show_crtlist(&[&format!("{d}/l.lst//")]),
        format!("# {d}/l.lst\n{d}/a.pem\n{d}/b.pem [alpn http/1.1 verify none] b.test !x.b.test\n")
    );
    assert_eq!(
        certs.show_crtlist(&["-n", &format!("{d}/l.lst")]),
        format!("# {d}/l.lst\n{d}/a.pem:1\n{d}/b.pem:3 [alpn http/1.1 verify none] b.test !x.b.test\n")
    );
    assert_eq!(certs.show_crtlist(&["-n"]), "'show ssl crt-list -n' expects a filename or a directory\n");
    assert_eq!(certs.show_crtlist(&["/nope"]), "didn't find the specified filename\n");
}

#[test]
fn an_added_line_serves_at_once_and_a_deleted_one_stops() {
    let (certs, tls, d) = setup("adddel", false);
    let list = format!("{d}/l.lst");
    let c = format!("{d}/c.pem");
    assert_eq!(served(&tls, Some("c.test")), Some(vec![1]));
    // c.pem is not a store yet
    assert_eq!(
        certs.add_crtlist(&[&list, &c], None, &no_files),
        format!("Can't edit the crt-list: certificate '{c}' does not exist!\n")
    );
    certs.new_cert(Some(&c));
    assert_eq!(
        certs.add_crtlist(&[&list, &c], None, &no_files),
        format!("Can't edit the crt-list: certificate '{c}' is empty!\n")
    );
    certs.set(Some(&c), Some(&pem_for("c.test", 3)));
    certs.commit(Some(&c));
    let out = certs.add_crtlist(
        &[&format!("{list}/")],
        Some("c.pem [allow-0rtt ssl-min-ver SSLv3 verify none] c.test\n"),
        &no_files,
    );
    assert_eq!(
        out,
        format!(
            "Inserting certificate '{c}' in crt-list '{list}'.\nWarning: accepted but not applied: 'ssl-min-ver \
             SSLv3' (rustls speaks TLSv1.2 and TLSv1.3 only; TLSv1.2 is the minimum), 'allow-0rtt' (no TLS early \
             data).\nSuccess!\n"
        )
    );
    assert_eq!(served(&tls, Some("c.test")), Some(vec![3]));
    assert!(certs
        .show_crtlist(&["-n", &list])
        .ends_with(&format!("{c}:4 [verify none allow-0rtt ssl-min-ver SSLv3] c.test\n")));
    assert!(certs.show(Some(&c)).starts_with(&format!("Filename: {c}\nStatus: Used\n")));
    assert_eq!(
        certs.del_cert(Some(&c)),
        format!("Can't remove the certificate: certificate '{c}' in use, can't be deleted!\n\n")
    );
    // a second line for the same file: deleting needs the line number
    certs.add_crtlist(&[&list, &c], None, &no_files);
    assert_eq!(
        certs.del_crtlist(&[&list, &c]),
        format!(
            "Can't delete the entry: found the certificate '{c}' in several entries, please specify a line number \
             preceded by colons (4, 5)!\n"
        )
    );
    assert_eq!(
        certs.del_crtlist(&[&list, &format!("{c}:9")]),
        format!(
            "Can't delete the entry: found a certificate '{c}' but the line number is incorrect, please specify a \
             correct line number preceded by colons (4, 5)!\n"
        )
    );
    assert_eq!(
        certs.del_crtlist(&[&list, &format!("{c}:x")]),
        format!("Can't delete the entry: wrong line number after colons in '{c}:x'!\n")
    );
    assert_eq!(certs.del_crtlist(&[&list, &format!("{c}:4")]), format!("Entry '{c}' deleted in crtlist '{list}'!\n"));
    assert_eq!(served(&tls, Some("c.test")), Some(vec![3]), "line 5 serves c.pem under its own names");
    assert_eq!(certs.del_crtlist(&[&list, &c]), format!("Entry '{c}' deleted in crtlist '{list}'!\n"));
    assert_eq!(served(&tls, Some("c.test")), Some(vec![1]), "the default certificate again");
    assert!(certs.show(Some(&c)).starts_with(&format!("Filename: {c}\nStatus: Unused\n")));
    assert_eq!(certs.del_cert(Some(&c)), format!("Certificate '{c}' deleted!\n"));
}

#[test]
fn the_default_certificate_stays_without_strict_sni() {
    let (certs, tls, d) = setup("default", false);
    let (list, a) = (format!("{d}/l.lst"), format!("{d}/a.pem"));
    assert_eq!(
        certs.del_crtlist(&[&list, &a]),
        format!(
            "Can't delete the entry: certificate '{a}' cannot be deleted, it is used as default certificate by the \
             following frontends:\n\t- h.cfg:7\n\n"
        )
    );
    assert_eq!(served(&tls, None), Some(vec![1]));
    let (certs, tls, d) = setup("default-strict", true);
    let (list, a) = (format!("{d}/l.lst"), format!("{d}/a.pem"));
    assert_eq!(certs.del_crtlist(&[&list, &a]), format!("Entry '{a}' deleted in crtlist '{list}'!\n"));
    assert_eq!(served(&tls, None), Some(vec![2]));
}

#[test]
fn add_and_del_errors_are_haproxys() {
    let (certs, _, d) = setup("errors", false);
    let list = format!("{d}/l.lst");
    assert_eq!(
        certs.add_crtlist(&[&list], None, &no_files),
        "'add ssl crtlist' expects a filename and a certificate name\n"
    );
    assert_eq!(certs.del_crtlist(&[&list]), "'del ssl crtlist' expects a filename and a certificate name\n");
    assert_eq!(
        certs.add_crtlist(&["/no.lst", "a.pem"], None, &no_files),
        "Can't edit the crt-list: crt-list '/no.lst' does not exist!\n"
    );
    assert_eq!(
        certs.add_crtlist(&[&list], Some("a.pem\nb.pem\n"), &no_files),
        "Can't edit the crt-list: only one line of payload is supported!\n"
    );
    assert_eq!(
        certs.add_crtlist(&[&list], Some("a.pem [foo]\n"), &no_files),
        "Can't edit the crt-list: parsing [CLI:1]: unknown ssl keyword foo\n"
    );
    assert_eq!(
        certs.add_crtlist(&[&list], Some(&format!("a.pem [ca-file {d}/ca.crt] x.test\n")), &no_files),
        format!("Can't edit the crt-list: 'ca-file' : unable to load {d}/ca.crt\n")
    );
    assert_eq!(
        certs.add_crtlist(&[&list], Some("a.pem [verify required] v.test\n"), &no_files),
        format!(
            "Inserting certificate '{d}/a.pem' in crt-list '{list}'\nProxy 'fe': verify is enabled but no CA file \
             specified for bind ':443' at [h.cfg:7].\nFailed!\n"
        )
    );
    assert!(!certs.show_crtlist(&[&list]).contains("v.test"));
    // a warning of the line's configuration is one item of the reply's sentence
    let out = certs.add_crtlist(&[&list], Some("a.pem [alpn h3,http/1.1] h.test\n"), &no_files);
    assert_eq!(
        out,
        format!(
            "Inserting certificate '{d}/a.pem' in crt-list '{list}'.\nWarning: accepted but not applied: 'alpn': h3 \
             not served by rampart (HTTP/1 and h2 only), not offered.\nSuccess!\n"
        )
    );
    assert_eq!(
        certs.del_crtlist(&[&list, &format!("{d}/nope.pem")]),
        format!("Can't delete the entry: certificate '{d}/nope.pem' does not exist!\n")
    );
    assert_eq!(certs.del_crtlist(&["/no.lst", "x"]), "Can't delete the entry: crt-list '/no.lst' does not exist!\n");
}

#[test]
fn a_crt_directory_is_a_crt_list_of_its_files() {
    let dir = std::env::temp_dir().join(format!("rampart-crtlists-dir-{}", std::process::id()));
    let certs_dir = dir.join("certs");
    std::fs::create_dir_all(&certs_dir).unwrap();
    std::fs::write(certs_dir.join("a.pem"), pem_for("a.test", 1)).unwrap();
    std::fs::write(certs_dir.join("b.pem"), pem_for("b.test", 2)).unwrap();
    std::fs::write(dir.join("c.pem"), pem_for("c.test", 3)).unwrap();
    let ssl = BindSsl {
        enabled: true,
        strict_sni: true,
        crts: vec![format!("{}/", certs_dir.display()).into()],
        ..Default::default()
    };
    let (tls, _) = build(&ssl, &GlobalSsl::default()).expect("built");
    let tls = Arc::new(tls);
    let certs = Certs::new(vec![tls.clone()], Vec::new());
    let d = certs_dir.display().to_string();
    assert_eq!(certs.show_crtlist(&[]), format!("{d}\n"));
    assert_eq!(certs.show_crtlist(&["-n", &d]), format!("# {d}\n{d}/a.pem:0\n{d}/b.pem:0\n"));
    let c = dir.join("c.pem").display().to_string();
    assert_eq!(
        certs.add_crtlist(&[&d, &c], None, &no_files),
        format!(
            "Can't edit the crt-list: '{d}' is a directory, certificate path '{c}' must contain the directory path\n"
        )
    );
    assert_eq!(
        certs.add_crtlist(&[&d, &format!("{d}/a.pem")], None, &no_files),
        "Can't edit the crt-list: file already exists in this directory!\n"
    );
    assert_eq!(
        certs.del_crtlist(&[&d, &format!("{d}/b.pem")]),
        format!("Entry '{d}/b.pem' deleted in crtlist '{d}'!\n")
    );
    assert_eq!(served(&tls, Some("b.test")), Some(vec![1]), "b.test is not served by name any more");
    assert!(!tls.store.load().serves(Some("b.test")));
    assert!(tls.store.load().serves(Some("a.test")));
    let _ = std::fs::remove_dir_all(&dir);
}
