use std::sync::Arc;

use rampart_cfg::model::{BindSsl, GlobalSsl};
use rustls::HandshakeKind;
use rustls_pki_types::ServerName;

use super::super::bind::{build, build_keyed, BindTls};
use super::super::ticket_keys_cli::KeyFilesCli;
use super::*;
use rampart_cfg::strtol_whole;

/// A key of `len` bytes, each `fill`.
fn key(fill: u8, len: usize) -> String {
    B64.encode(vec![fill; len])
}

/// A key file of keys filled with `fills`, `len` bytes each.
fn file(fills: &[u8], len: usize) -> String {
    fills.iter().map(|&f| key(f, len) + "\n").collect()
}

fn ring(fills: &[u8]) -> KeyRing {
    parse(file(fills, 48).as_bytes()).expect("a good file")
}

fn fills(r: &KeyRing) -> Vec<u8> {
    r.keys().iter().map(|k| k.raw[0]).collect()
}

#[test]
fn the_last_three_keys_are_in_use() {
    let r = ring(&[1, 2, 3, 4]);
    assert_eq!(fills(&r), [2, 3, 4]);
    assert_eq!(r.keys()[0].bits(), 128);
    let r = parse(file(&[7, 8, 9], 80).as_bytes()).unwrap();
    assert_eq!(fills(&r), [7, 8, 9]);
    assert_eq!(r.keys()[2].bits(), 256);
    assert_eq!(r.keys()[2].base64(), key(9, 80));
    // CRLF lines, no newline at the end
    let crlf = format!("{}\r\n{}\r\n{}", key(1, 48), key(2, 48), key(3, 48));
    assert_eq!(fills(&parse(crlf.as_bytes()).unwrap()), [1, 2, 3]);
    // the parts of a key
    let k = TicketKey::new(&(0..80).collect::<Vec<u8>>()).unwrap();
    assert_eq!(
        (k.name()[0], k.hmac_key()[0], k.hmac_key().len(), k.aes_key()[0], k.aes_key().len()),
        (0, 16, 32, 48, 32)
    );
    let k = TicketKey::new(&(0..48).collect::<Vec<u8>>()).unwrap();
    assert_eq!((k.hmac_key()[0], k.hmac_key().len(), k.aes_key()[0], k.aes_key().len()), (16, 16, 32, 16));
}

#[test]
fn bad_files_are_refused_with_the_line() {
    let two = file(&[1, 2], 48);
    let p = |s: String| parse(s.as_bytes()).map(|_| ()).unwrap_err();
    assert_eq!(p(two.clone()), KeyFileError::TooFew);
    assert_eq!(p(String::new()), KeyFileError::TooFew);
    assert_eq!(p(format!("{two}not*base64!\n")), KeyFileError::Base64(3));
    assert_eq!(p(format!("{two}{}\n", key(3, 32))), KeyFileError::Size(3));
    // every key has the size of the first
    assert_eq!(p(format!("{two}{}\n", key(3, 80))), KeyFileError::Size(3));
    assert_eq!(p(format!("{}\n{two}", key(3, 80))), KeyFileError::Size(2));
    assert_eq!(p(format!("{}\n\n{two}", key(1, 48))), KeyFileError::Size(2));
    // more than a key decodes to does not decode
    assert_eq!(p(format!("{}\n{two}", key(1, 100))), KeyFileError::Base64(1));
    assert_eq!(p("\n".into()), KeyFileError::Size(1));
}

#[test]
fn alerts_name_the_file_as_haproxy_does() {
    let f = "/k";
    assert_eq!(alert(f, &KeyFileError::Open), "'/k' : unable to load ssl tickets keys file");
    assert_eq!(alert(f, &KeyFileError::Base64(2)), "'/k' : unable to decode base64 key on line 2");
    assert_eq!(alert(f, &KeyFileError::Size(3)), "'/k' : wrong sized key on line 3");
    assert_eq!(alert(f, &KeyFileError::TooFew), "'/k' : please supply at least 3 keys in the tls-tickets-file");
    let missing = std::env::temp_dir().join("rampart-no-such-ticket-keys");
    let m = missing.display().to_string();
    assert_eq!(load(&m).unwrap_err(), format!("'{m}' : unable to load ssl tickets keys file"));
}

#[test]
fn tickets_open_with_the_keys_that_sealed_them() {
    for len in [48, 80] {
        let r = parse(file(&[1, 2, 3, 4], len).as_bytes()).unwrap();
        let t = r.seal(b"rustls session state").unwrap();
        // the penultimate key's name in clear, a 16-byte IV, padded data, a 32-byte MAC
        assert_eq!(&t[..16], &[3; 16]);
        assert_eq!(t.len(), 16 + 16 + 32 + 32);
        assert_eq!(r.open(&t).as_deref(), Some(&b"rustls session state"[..]));
        // a fresh IV each time
        assert_ne!(r.seal(b"rustls session state").unwrap(), t);
        for i in [0, 16, 40, t.len() - 1] {
            let mut bad = t.clone();
            bad[i] ^= 1;
            assert_eq!(r.open(&bad), None, "byte {i} changed");
        }
        assert_eq!(r.open(&t[..t.len() - 1]), None);
        assert_eq!(r.open(&t[..40]), None);
        assert_eq!(r.open(b""), None);
        // other keys of the same names do not open it
        let mut changed = vec![3u8; len];
        changed[len - 1] = 0;
        let text = file(&[1, 2, 3, 4], len).replace(&key(3, len), &B64.encode(changed));
        let other = parse(text.as_bytes()).unwrap();
        assert_eq!(other.open(&t), None);
    }
}

#[test]
fn appending_a_key_rotates() {
    let old = ring(&[1, 2, 3, 4]);
    let t = old.seal(b"state").unwrap();
    let next = ring(&[1, 2, 3, 4, 5]);
    assert_eq!(next.open(&t).as_deref(), Some(&b"state"[..]), "the old penultimate key still opens");
    assert_eq!(&next.seal(b"x").unwrap()[..16], &[4; 16], "the old newest key seals");
    assert_eq!(ring(&[1, 2, 3, 4, 5, 6]).open(&t), None, "two keys later it is gone");
}

#[test]
fn set_ssl_tls_key_pushes_a_key() {
    let keys = TicketKeys::new("/k", 0, ring(&[1, 2, 3]));
    let t = keys.ring().seal(b"s").unwrap();
    assert!(keys.push(&TicketKey::new(&[4; 48]).unwrap()));
    assert_eq!(fills(&keys.ring()), [2, 3, 4]);
    assert_eq!(keys.ring().open(&t).as_deref(), Some(&b"s"[..]));
    assert!(!keys.push(&TicketKey::new(&[5; 80]).unwrap()), "all keys have one size");
    assert_eq!(fills(&keys.ring()), [2, 3, 4]);
    let ticketer = KeyFileTicketer { keys: Arc::new(keys) };
    assert!(ticketer.enabled());
    let t = ticketer.encrypt(b"abc").unwrap();
    assert_eq!(&t[..16], &[3; 16]);
    assert_eq!(ticketer.decrypt(&t).as_deref(), Some(&b"abc"[..]));
}

/// A directory with a certificate for `a.test` and key files.
struct Dir(std::path::PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("rampart-tk-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn write(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn key_files_are_shared_by_name_and_numbered_from_the_last() {
    let d = Dir::new("ids");
    let a = d.write("a.key", &file(&[1, 2, 3], 48));
    let b = d.write("b.key", &file(&[4, 5, 6], 80));
    let text = format!(
        "frontend f\n bind :1 ssl crt x.pem tls-ticket-keys {a}\n bind :2 ssl crt x.pem tls-ticket-keys {b}\n \
         bind :3 ssl crt x.pem tls-ticket-keys {a}\n"
    );
    let ctx = rampart_cfg::LexCtx { env: &|_| None, version: "2.6", features: &[] };
    let cfg = rampart_cfg::parse_str("t.cfg", &text, &ctx).into_model();
    let mut files = KeyFiles::new(&cfg);
    let ka = files.get(&a).unwrap();
    let kb = files.get(&b).unwrap();
    assert!(Arc::ptr_eq(&ka, &files.get(&a).unwrap()));
    assert_eq!((ka.id, kb.id), (1, 0));
    let cli = KeyFilesCli::from_files(vec![ka.clone(), kb.clone()]);
    assert_eq!(cli.show(None), format!("# id (file)\n0 ({b})\n1 ({a})\n"));
    let a_keys = format!("# 1 ({a})\n1.0 {}\n1.1 {}\n1.2 {}\n", key(1, 48), key(2, 48), key(3, 48));
    assert_eq!(cli.show(Some("#1")), format!("# id secret\n{a_keys}"));
    assert_eq!(cli.show(Some(&a)), format!("# id secret\n{a_keys}"));
    let all = cli.show(Some("*"));
    assert!(all.starts_with(&format!("# id secret\n# 0 ({b})\n0.0 {}\n", key(4, 80))) && all.ends_with(&a_keys));
    let nope = "'show tls-keys' unable to locate referenced filename\n";
    assert_eq!(
        (cli.show(Some("#2")), cli.show(Some("#1x")), cli.show(Some("/nope"))),
        (nope.into(), nope.into(), nope.into())
    );

    let set = |w: &[&str]| cli.set(&[&["set", "ssl", "tls-key"], w].concat());
    assert_eq!(set(&[]), "'set ssl tls-key' expects a filename and the new TLS key in base64 encoding.\n");
    assert_eq!(set(&["#1"]), "'set ssl tls-key' expects a filename and the new TLS key in base64 encoding.\n");
    assert_eq!(set(&["#9", "YWJj"]), "'set ssl tls-key' unable to locate referenced filename\n");
    assert_eq!(set(&["#1", "abc"]), "'set ssl tls-key' received invalid base64 encoded TLS key.\n");
    assert_eq!(set(&["#1", "YWJj"]), "'set ssl tls-key' received a key of wrong size.\n");
    assert_eq!(set(&["#1", &key(7, 80)]), "'set ssl tls-key' received a key of wrong size.\n");
    assert_eq!(set(&["#1", &key(7, 48)]), "TLS ticket key updated!\n");
    assert_eq!(set(&[&a, &key(8, 48)]), "TLS ticket key updated!\n");
    assert_eq!(fills(&ka.ring()), [3, 7, 8]);
    assert_eq!(fills(&kb.ring()), [4, 5, 6]);
}

#[test]
fn ids_read_as_strtol_reads_them() {
    assert_eq!(strtol_whole(""), Some(0));
    assert_eq!(strtol_whole("01"), Some(1));
    assert_eq!(strtol_whole(" +2"), Some(2));
    assert_eq!(strtol_whole("-1"), Some(-1));
    assert_eq!(strtol_whole("1x"), None);
    assert_eq!(strtol_whole(" "), None);
    assert_eq!(strtol_whole("-"), None);
}

/// A bind serving `a.test` with the key file `keys` (read again: another process).
fn bind(d: &Dir, keys: &str, no_tickets: bool) -> (BindTls, rustls::RootCertStore) {
    let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let c = rcgen::CertificateParams::new(vec!["a.test".to_string()]).unwrap().self_signed(&kp).unwrap();
    let crt = d.write(&format!("site-{:x}.pem", rand_u64()), &(c.pem() + &kp.serialize_pem()));
    let mut ssl =
        BindSsl { enabled: true, crts: vec![crt.into()], tls_ticket_keys: Some(keys.into()), ..BindSsl::default() };
    ssl.options.no_tls_tickets = no_tickets;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(c.der().clone()).unwrap();
    (build(&ssl, &GlobalSsl::default()).expect("the bind builds").0, roots)
}

fn rand_u64() -> u64 {
    let mut b = [0u8; 8];
    aws_lc_rs::rand::fill(&mut b).unwrap();
    u64::from_le_bytes(b)
}

/// Runs a handshake in memory, then lets the client read the server's tickets.
fn handshake(server: &BindTls, client: &Arc<rustls::ClientConfig>) -> HandshakeKind {
    let name = ServerName::try_from("a.test").unwrap();
    let mut c = rustls::ClientConnection::new(client.clone(), name).unwrap();
    let mut s = rustls::ServerConnection::new(server.config()).unwrap();
    for _ in 0..6 {
        let mut buf = Vec::new();
        while c.wants_write() {
            c.write_tls(&mut buf).unwrap();
        }
        s.read_tls(&mut &buf[..]).unwrap();
        s.process_new_packets().unwrap();
        let mut buf = Vec::new();
        while s.wants_write() {
            s.write_tls(&mut buf).unwrap();
        }
        c.read_tls(&mut &buf[..]).unwrap();
        c.process_new_packets().unwrap();
    }
    assert!(!s.is_handshaking());
    s.handshake_kind().unwrap()
}

/// A client trusting `roots` that keeps its sessions, speaking `version` only.
fn client(
    roots: rustls::RootCertStore,
    version: &'static rustls::SupportedProtocolVersion,
) -> Arc<rustls::ClientConfig> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[version])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    cfg.resumption = rustls::client::Resumption::in_memory_sessions(16);
    Arc::new(cfg)
}

#[test]
fn binds_reading_one_key_file_resume_each_other() {
    let d = Dir::new("resume");
    let keys = d.write("t.key", &file(&[1, 2, 3], 48));
    let other = d.write("u.key", &file(&[4, 5, 6], 48));
    for version in [&rustls::version::TLS12, &rustls::version::TLS13] {
        let (a, roots) = bind(&d, &keys, false);
        // the same certificate, the same key file: a second process
        let mut b = build(&a.ssl, &GlobalSsl::default()).unwrap().0;
        let cl = client(roots.clone(), version);
        assert_eq!(handshake(&a, &cl), HandshakeKind::Full);
        assert_eq!(handshake(&b, &cl), HandshakeKind::Resumed, "{version:?}");
        // a process with other keys does not resume (a new client: its sessions
        // would be refreshed by the full handshake)
        let cl = client(roots.clone(), version);
        assert_eq!(handshake(&a, &cl), HandshakeKind::Full);
        b = build(&BindSsl { tls_ticket_keys: Some(other.clone()), ..a.ssl.clone() }, &GlobalSsl::default()).unwrap().0;
        assert_eq!(handshake(&b, &cl), HandshakeKind::Full, "{version:?}");
    }
    // binds of one configuration share the keys: `set ssl tls-key` reaches both
    let mut files = KeyFiles::default();
    let (a, _) = bind(&d, &keys, false);
    let b1 = build_keyed(&a.ssl, &GlobalSsl::default(), &mut files).unwrap().0;
    let b2 = build_keyed(&a.ssl, &GlobalSsl::default(), &mut files).unwrap().0;
    assert!(Arc::ptr_eq(b1.ticket_keys.as_ref().unwrap(), b2.ticket_keys.as_ref().unwrap()));
    // no-tls-tickets wins over the keys
    let (n, roots) = bind(&d, &keys, true);
    let cl = client(roots, &rustls::version::TLS12);
    assert_eq!(handshake(&n, &cl), HandshakeKind::Full);
    assert!(!n.config().ticketer.enabled());
}

#[test]
fn a_bad_key_file_refuses_the_bind() {
    let d = Dir::new("bad");
    let keys = d.write("t.key", &file(&[1, 2], 48));
    let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let c = rcgen::CertificateParams::new(vec!["a.test".to_string()]).unwrap().self_signed(&kp).unwrap();
    let crt = d.write("site.pem", &(c.pem() + &kp.serialize_pem()));
    let ssl =
        BindSsl { enabled: true, crts: vec![crt.into()], tls_ticket_keys: Some(keys.clone()), ..BindSsl::default() };
    assert_eq!(
        build(&ssl, &GlobalSsl::default()).map(|_| ()).unwrap_err(),
        [format!("'{keys}' : please supply at least 3 keys in the tls-tickets-file")]
    );
}
