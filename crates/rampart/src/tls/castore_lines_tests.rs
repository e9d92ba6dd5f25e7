//! Unit tests of the CA store with crt-list lines: a line added at run time names a
//! file of the store (its committed contents win over the disk, a name the store does
//! not have is refused), `del` refuses a file a line uses, and a commit rebuilds the
//! configuration of the lines naming the file.

use rampart_cfg::model::{BindSsl, GlobalSsl, Verify};
use rustls::server::danger::ClientCertVerifier;
use rustls::server::Acceptor;
use rustls_pki_types::ServerName;

use super::super::bind::{build, FileLookup};
use super::super::certs::Certs;
use super::super::crtlist::{Ctx, LineOptions};
use super::tests::{pem_of, Pki};
use super::*;

/// A bind over `<dir>/l.lst` (`site.pem`, serving a.test) requiring client
/// certificates of CA1 (`ca1.crt`), strict-sni; `b.pem` (b.test) is a certificate
/// store no bind serves (`new ssl cert`, `set`, `commit`).
fn setup(pki: &Pki) -> (Arc<BindTls>, Certs, CaStore) {
    let pem = |name: &str, serial: u64| {
        let (cert, kp) = pki.leaf(0, name, serial);
        format!("{}{}", pem_of("CERTIFICATE", &cert), kp.serialize_pem())
    };
    std::fs::write(pki.path("site.pem"), pem("a.test", 1)).unwrap();
    std::fs::write(pki.path("l.lst"), format!("{}\n", pki.path("site.pem"))).unwrap();
    let ssl = BindSsl {
        enabled: true,
        strict_sni: true,
        crt_lists: vec![pki.path("l.lst").into()],
        verify: Some(Verify::Required),
        ca_file: Some(pki.path("ca1.crt").into()),
        ..Default::default()
    };
    let tls = Arc::new(build(&ssl, &GlobalSsl::default()).expect("the bind builds").0);
    let certs = Certs::new(vec![tls.clone()], Vec::new());
    let b = pki.path("b.pem");
    certs.new_cert(Some(&b));
    certs.set(Some(&b), Some(&pem("b.test", 2)));
    assert!(certs.commit(Some(&b)).ends_with("Success!\n"));
    let store = CaStore::new(vec![tls.clone()], Vec::new());
    (tls, certs, store)
}

/// Moves the TLS bytes `from` has to write into `to`.
fn pump(from: &mut impl FnMut(&mut Vec<u8>) -> bool, to: &mut impl FnMut(&[u8])) {
    let mut buf = Vec::new();
    while from(&mut buf) {}
    if !buf.is_empty() {
        to(&buf);
    }
}

/// A handshake in memory for `sni` with a client certificate of CA `ca`, the server
/// side configured as the bind chooses for the hello (a crt-list line's or its own).
fn handshake_sni(tls: &BindTls, pki: &Pki, sni: &str, ca: usize) -> Result<(), String> {
    let name = ServerName::try_from(sni.to_owned()).unwrap();
    let mut c = rustls::ClientConnection::new(pki.client(ca, 10 + ca as u64), name).map_err(|e| e.to_string())?;
    let mut hello = Vec::new();
    while c.wants_write() {
        c.write_tls(&mut hello).unwrap();
    }
    let mut acc = Acceptor::default();
    acc.read_tls(&mut &hello[..]).unwrap();
    let accepted = acc.accept().map_err(|(e, _)| e.to_string())?.ok_or("no client hello")?;
    let (config, _) = tls.choose(&accepted.client_hello()).map_err(str::to_owned)?;
    let mut s = accepted.into_connection(config).map_err(|(e, _)| e.to_string())?;
    for _ in 0..10 {
        pump(&mut |b| s.wants_write() && s.write_tls(b).is_ok(), &mut |b| {
            let _ = c.read_tls(&mut &b[..]);
        });
        c.process_new_packets().map_err(|e| e.to_string())?;
        pump(&mut |b| c.wants_write() && c.write_tls(b).is_ok(), &mut |b| {
            let _ = s.read_tls(&mut &b[..]);
        });
        s.process_new_packets().map_err(|e| e.to_string())?;
        if !c.is_handshaking() && !s.is_handshaking() {
            return Ok(());
        }
    }
    Err("the handshake did not finish".into())
}

/// `new` + `set` + `commit` of CA file `name` holding CA `ca`'s certificate.
fn create(certs: &Certs, store: &CaStore, pki: &Pki, name: &str, ca: usize) {
    assert_eq!(store.new_file(Kind::Ca, Some(name)), format!("New CA file created '{name}'!\n"));
    assert_eq!(
        store.set(Kind::Ca, Some(name), Some(&pki.cas[ca].0.pem())),
        format!("transaction created for CA {name}!\n")
    );
    assert_eq!(certs.with_lines(|l| store.commit(Kind::Ca, Some(name), l)), format!("Committing {name}\nSuccess!\n"));
}

#[test]
fn a_line_names_a_ca_file_created_at_run_time() {
    let pki = Pki::new("lines-new");
    let (tls, certs, store) = setup(&pki);
    let list = pki.path("l.lst");
    let b = pki.path("b.pem");
    assert!(handshake_sni(&tls, &pki, "a.test", 0).is_ok());
    assert!(handshake_sni(&tls, &pki, "b.test", 1).is_err(), "b.test is not served yet");
    create(&certs, &store, &pki, "new_cafile.crt", 1);
    let files = |p: &str| store.contents(p);
    let out = certs.add_crtlist(&[&list], Some(&format!("{b} [ca-file new_cafile.crt] b.test\n")), &files);
    assert_eq!(out, format!("Inserting certificate '{b}' in crt-list '{list}'.\nSuccess!\n"));
    assert_eq!(handshake_sni(&tls, &pki, "b.test", 1), Ok(()), "the line verifies with the new file");
    assert!(handshake_sni(&tls, &pki, "b.test", 0).is_err(), "the line's ca-file replaces the bind's");
    assert!(handshake_sni(&tls, &pki, "a.test", 1).is_err(), "the bind still verifies with CA1");
    let shown = certs.with_lines(|l| store.show(Kind::Ca, Some("new_cafile.crt"), l));
    assert!(shown.starts_with("Filename: new_cafile.crt\nStatus: Used\n"), "{shown}");
    assert_eq!(
        certs.with_lines(|l| store.del_file(Kind::Ca, Some("new_cafile.crt"), l)),
        "Can't remove the CA file: CA file 'new_cafile.crt' in use, can't be deleted!\n\n"
    );
    // a commit changing the file rebuilds the line's configuration (one dot: the line)
    store.set(Kind::Ca, Some("new_cafile.crt"), Some(&pki.cas[0].0.pem()));
    assert_eq!(
        certs.with_lines(|l| store.commit(Kind::Ca, Some("new_cafile.crt"), l)),
        "Committing new_cafile.crt.\nSuccess!\n"
    );
    assert_eq!(handshake_sni(&tls, &pki, "b.test", 0), Ok(()), "CA1 now");
    assert!(handshake_sni(&tls, &pki, "b.test", 1).is_err(), "CA2 no more");
    assert_eq!(certs.del_crtlist(&[&list, &b]), format!("Entry '{b}' deleted in crtlist '{list}'!\n"));
    assert_eq!(
        certs.with_lines(|l| store.del_file(Kind::Ca, Some("new_cafile.crt"), l)),
        "CA file 'new_cafile.crt' deleted!\n"
    );
    assert!(!store.show(Kind::Ca, None, &()).contains("new_cafile.crt"));
    assert!(handshake_sni(&tls, &pki, "b.test", 0).is_err(), "strict-sni: b.test is not served any more");
}

#[test]
fn a_line_names_a_crl_file_created_at_run_time() {
    let pki = Pki::new("lines-crl");
    let (tls, certs, store) = setup(&pki);
    let (list, b) = (pki.path("l.lst"), pki.path("b.pem"));
    assert_eq!(store.new_file(Kind::Crl, Some("new.crl")), "New CRL file created 'new.crl'!\n");
    // the client certificate of CA1 `handshake_sni` makes has serial 10
    store.set(Kind::Crl, Some("new.crl"), Some(&pki.crl(0, &[10])));
    assert_eq!(certs.with_lines(|l| store.commit(Kind::Crl, Some("new.crl"), l)), "Committing new.crl\nSuccess!\n");
    let files = |p: &str| store.contents(p);
    let out = certs.add_crtlist(&[&list], Some(&format!("{b} [crl-file new.crl] b.test\n")), &files);
    assert!(out.ends_with("Success!\n"), "{out}");
    assert!(handshake_sni(&tls, &pki, "b.test", 0).is_err(), "revoked by the line's CRL");
    assert_eq!(handshake_sni(&tls, &pki, "a.test", 0), Ok(()), "the bind has no CRL");
    assert_eq!(
        certs.with_lines(|l| store.del_file(Kind::Crl, Some("new.crl"), l)),
        "Can't remove the CRL file: CRL file 'new.crl' in use, can't be deleted!\n\n"
    );
    certs.del_crtlist(&[&list, &b]);
    assert_eq!(certs.with_lines(|l| store.del_file(Kind::Crl, Some("new.crl"), l)), "CRL file 'new.crl' deleted!\n");
}

#[test]
fn a_name_the_store_does_not_have_is_refused_even_on_disk() {
    let pki = Pki::new("lines-unknown");
    let (_, certs, store) = setup(&pki);
    let (list, b) = (pki.path("l.lst"), pki.path("b.pem"));
    let files = |p: &str| store.contents(p);
    // ca2.crt is on disk, but no bind loaded it: HAProxy reads no file for the CLI
    let ca2 = pki.path("ca2.crt");
    assert_eq!(
        certs.add_crtlist(&[&list], Some(&format!("{b} [ca-file {ca2}] b.test\n")), &files),
        format!("Can't edit the crt-list: 'ca-file' : unable to load {ca2}\n")
    );
    assert_eq!(
        certs.add_crtlist(&[&list], Some(&format!("{b} [crl-file nope.crl] b.test\n")), &files),
        "Can't edit the crt-list: 'crl-file' : unable to load nope.crl\n"
    );
    // a file `new` created is usable once committed
    assert_eq!(store.new_file(Kind::Ca, Some("new.crt")), "New CA file created 'new.crt'!\n");
    assert_eq!(
        certs.add_crtlist(&[&list], Some(&format!("{b} [ca-file new.crt] b.test\n")), &files),
        "Can't edit the crt-list: 'ca-file' : unable to load new.crt\n"
    );
    // the bind's own file is in the store
    let ca1 = pki.path("ca1.crt");
    let out = certs.add_crtlist(&[&list], Some(&format!("{b} [ca-file {ca1}] b.test\n")), &files);
    assert!(out.ends_with("Success!\n"), "{out}");
}

#[test]
fn the_store_contents_win_over_the_disk() {
    let pki = Pki::new("lines-wins");
    let (tls, _, _) = setup(&pki);
    let ca1 = pki.path("ca1.crt");
    let usable = |_: &std::path::Path, _: bool| true;
    let ctx = Ctx { crt_base: None, ca_base: None, usable: &usable };
    let mut options = LineOptions::default();
    options.set("ca-file", Some(&ca1), &ctx).unwrap();
    // on disk, ca1.crt holds CA1; the store says CA2
    let ca2_der = pki.cas[1].0.der().clone();
    let stored = move |p: &str| (p == ca1).then(|| Contents::Ca(vec![ca2_der.clone()]));
    let lookups: [(FileLookup<'_>, usize); 2] = [(&stored, 1), (&super::super::bind::on_disk, 0)];
    for (files, trusted) in lookups {
        let (configs, _) = tls.line_configs(Some(&options), files).expect("builds");
        let v = configs.and_then(|c| c.client_verify.clone()).expect("a verifier");
        let mut expected = rustls::RootCertStore::empty();
        expected.add(pki.cas[trusted].0.der().clone()).unwrap();
        let hints: Vec<&[u8]> = v.root_hint_subjects().iter().map(|s| s.as_ref()).collect();
        let subjects = expected.subjects();
        assert_eq!(hints, vec![subjects[0].as_ref()], "trusts CA{}", trusted + 1);
    }
}

#[test]
fn a_commit_of_the_binds_file_rebuilds_the_lines_inheriting_it() {
    let pki = Pki::new("lines-inherit");
    let (tls, certs, store) = setup(&pki);
    let (list, b, ca1) = (pki.path("l.lst"), pki.path("b.pem"), pki.path("ca1.crt"));
    let files = |p: &str| store.contents(p);
    let out = certs.add_crtlist(&[&list], Some(&format!("{b} [alpn http/1.1] b.test\n")), &files);
    assert!(out.ends_with("Success!\n"), "{out}");
    assert_eq!(handshake_sni(&tls, &pki, "b.test", 0), Ok(()));
    assert!(handshake_sni(&tls, &pki, "b.test", 1).is_err());
    store.set(Kind::Ca, Some(&ca1), Some(&pki.cas[1].0.pem()));
    // one dot for the bind, one for the line's own configuration
    assert_eq!(certs.with_lines(|l| store.commit(Kind::Ca, Some(&ca1), l)), format!("Committing {ca1}..\nSuccess!\n"));
    assert_eq!(handshake_sni(&tls, &pki, "b.test", 1), Ok(()), "the line verifies with the committed CAs");
    assert_eq!(handshake_sni(&tls, &pki, "a.test", 1), Ok(()));
    // the line does not name the file: only the bind makes it used
    assert!(!certs.with_lines(|l| l.uses(&ca1)));
}
