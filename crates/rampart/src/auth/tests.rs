//! Password checks against hashes made by Debian 12's own tools, so that what rampart
//! accepts is what HAProxy's `crypt()` (libxcrypt) accepts:
//! `mkpasswd` (package `whois`) and `openssl passwd`, commands given beside each hash.

use rampart_cfg::model::{Group, Password, User, Userlist};
use rampart_cfg::{Level, Span};

use super::crypt::{self, md5_crypt, Parsed, Scheme};
use super::*;

/// (command that made it, password, hash).
const VECTORS: &[(&str, &str, &str)] = &[
    ("mkpasswd -m md5crypt -S rampart1 hunter2", "hunter2", "$1$rampart1$bNShj/o/Z/P3QcGSFaYZT0"),
    ("openssl passwd -1 -salt abc 'p@ss w0rd'", "p@ss w0rd", "$1$abc$b1Y7sLcCVp5fnycgiQNrK."),
    (
        "mkpasswd -m md5crypt -S xyzxyzxy a-password-longer-than-sixteen-bytes-for-the-loop",
        "a-password-longer-than-sixteen-bytes-for-the-loop",
        "$1$xyzxyzxy$d3e4uwTqjJ28CUFfjs0IH/",
    ),
    ("openssl passwd -1 -salt s ''", "", "$1$s$iXWZU0LDEJ7Jjmms7KFsH0"),
    ("openssl passwd -1 -salt '' a", "a", "$1$$Ij31LCAysPM23KuPlm1wA/"),
    ("mkpasswd -m sha256crypt -S saltsalt hunter2", "hunter2", "$5$saltsalt$OIdfjX.u4Y3SJ4I2bX8w5BMf1VAUhHABNUirScDzZi3"),
    (
        "mkpasswd -m sha256crypt -R 2000 -S saltsalt hunter2",
        "hunter2",
        "$5$rounds=2000$saltsalt$LRk6O1EjAArZZejR/wsj5iCe0nC6RdHcbrFmjRNP1v9",
    ),
    (
        "openssl passwd -5 -salt QWERTYUI 'correct horse'",
        "correct horse",
        "$5$QWERTYUI$hIYP2JHM8jXH9BIGezmmiyAWYM/72u/jViYG7BJUnM7",
    ),
    (
        "mkpasswd -m sha512crypt -S saltsalt hunter2",
        "hunter2",
        "$6$saltsalt$8iYtNHxjWRl.NF6oNZ5tF.iKFlQREaXBLlSmZKP6dy9l5z3vsooWNW0/GZ6Nej73/TFug6pIPSqbJoCT6dfnj.",
    ),
    (
        "openssl passwd -6 -salt QWERTYUI 'correct horse'",
        "correct horse",
        "$6$QWERTYUI$VndcsK6evmvqoXQ3BFKitfo15olqxKmW5q7kR05RSavWYBhSqDKn4l1/WxyaKrFLr/BUXpACMimhrfKnODZau/",
    ),
    (
        "mkpasswd -m sha512crypt -R 1000 -S 0123456789abcdef päss",
        "päss",
        "$6$rounds=1000$0123456789abcdef$.2xpjGSqtmOqEJUEBI3.EfXAr75ZTMlUQROw0NjCF9E8MQ2FkfsIZ/VdAWyBd7RMHkeeoL32aX5QMcMSOKIQB0",
    ),
    (
        "mkpasswd -m bcrypt -R 5 -S abcdefghijklmnopqrstuu hunter2",
        "hunter2",
        "$2b$05$abcdefghijklmnopqrstuuoXuKqgZXLiJqzfmMXDDhSFPIvxV7t8.",
    ),
    (
        "mkpasswd -m bcrypt-a -R 5 -S abcdefghijklmnopqrstuu hunter2",
        "hunter2",
        "$2a$05$abcdefghijklmnopqrstuuoXuKqgZXLiJqzfmMXDDhSFPIvxV7t8.",
    ),
    (
        "python3 crypt.crypt('hunter2', '$2y$05$abcdefghijklmnopqrstuu') (libxcrypt)",
        "hunter2",
        "$2y$05$abcdefghijklmnopqrstuuoXuKqgZXLiJqzfmMXDDhSFPIvxV7t8.",
    ),
    (
        "mkpasswd -m yescrypt hunter2",
        "hunter2",
        "$y$j9T$2yexaFBB7AQvs.wVSQk570$2TL/zjzeWb2BfKSVYIDYl0UhY3oLT2wfAOiqj30DtC.",
    ),
    (
        "mkpasswd -m yescrypt -R 7 'correct horse'",
        "correct horse",
        "$y$jBT$pDhVTWqQBO4DKk1J9R6eY/$4wD62r5IdrdKYcfjpqwYRoBoCBnyoag9sT7AA2tJxz1",
    ),
    (
        "mkpasswd -m yescrypt -R 5 'tr0ub4dor&3'",
        "tr0ub4dor&3",
        "$y$j9T$a1Vp629wOkmtFuIDVv1U1/$2h4oqAM/ogPA4M5fi.3foVMDZCdgPvbbv53NW8cAPw2",
    ),
    ("mkpasswd -m bcrypt -R 10 x", "x", "$2b$10$D0NUnEJYAJxKfqVk.08AduOWH1qBPmnlJHBHDz7qKHZe4hicie/NS"),
];

fn hash(text: &str) -> crypt::CryptHash {
    match crypt::parse(text) {
        Parsed::Hash(h) => h,
        other => panic!("{text}: {other:?}"),
    }
}

#[test]
fn hashes_from_mkpasswd_and_openssl_verify() {
    for (cmd, pw, h) in VECTORS {
        let h = hash(h);
        assert!(h.verify(pw.as_bytes()), "{cmd}: the right password");
        assert!(!h.verify(format!("{pw}x").as_bytes()), "{cmd}: a longer password");
        assert!(!h.verify(b"Hunter2"), "{cmd}: another password");
    }
}

#[test]
fn schemes_by_prefix() {
    let scheme = |t: &str| hash(t).scheme;
    assert_eq!(scheme(VECTORS[0].2), Scheme::Md5);
    assert_eq!(scheme(VECTORS[5].2), Scheme::Sha256);
    assert_eq!(scheme(VECTORS[8].2), Scheme::Sha512);
    assert_eq!(scheme(VECTORS[11].2), Scheme::Bcrypt);
    assert_eq!(scheme(VECTORS[14].2), Scheme::Yescrypt);
}

#[test]
fn md5_crypt_output_is_crypt3s() {
    // `mkpasswd -m md5crypt -S rampart1 hunter2`, and libxcrypt's output for a salt
    // longer than 8 characters (`crypt('pw', '$1$0123456789$')` keeps 8).
    assert_eq!(md5_crypt(b"hunter2", b"rampart1"), "$1$rampart1$bNShj/o/Z/P3QcGSFaYZT0");
    assert_eq!(md5_crypt(b"hunter2", b"rampart1-and-more"), "$1$rampart1$bNShj/o/Z/P3QcGSFaYZT0");
}

#[test]
fn unsupported_schemes_are_named() {
    // Made by `mkpasswd -m <scheme> hunter2` (and libxcrypt for $2x$, $sha1$).
    let cases = [
        ("ab0ozUNIgzCZ.", "descrypt"),
        ("_J9..6yhExvEdCWF232s", "bsdicrypt"),
        ("$gy$j9T$jYcfVpkPKJQH0BksLkV1C.$ncvwmRBz2AKLQSiccYDIh6KAJOxTqQ2G/Xxl3vfkET6", "gost-yescrypt"),
        ("$7$CU..../....xX8j2mGTY0D1T.KiUqBtn/$KZAwlLkL2yquRylD6k8MbmXm4Fx/3WrvUMCwlJXVia1", "scrypt"),
        ("$md5,rounds=38991$t/Euer4m$$FsznSsU7Apu3I6wsn9Rl3.", "sunmd5"),
        ("$3$$6608e4bc7b2b7a5f77ce3573570775af", "nt"),
        ("$2x$05$abcdefghijklmnopqrstuuoXuKqgZXLiJqzfmMXDDhSFPIvxV7t8.", "bcrypt-x"),
        ("$sha1$40000$salt$GfDek2QX5iVwVYyY92eyDvCOcikJ", "sha1crypt"),
    ];
    for (h, name) in cases {
        assert_eq!(crypt::parse(h), Parsed::Unsupported(name), "{h}");
    }
}

#[test]
fn strings_no_password_matches() {
    // libxcrypt returns a failure token ("*0") for these settings, or a string that
    // differs from the stored one: HAProxy then refuses every password.
    for h in [
        "",
        "*",
        "!",
        "x",
        "$9$salt$hash",
        "$6$saltsalt$tooshort",
        "$6$rounds=500$saltsalt$8iYtNHxjWRl.NF6oNZ5tF.iKFlQREaXBLlSmZKP6dy9l5z3vsooWNW0/GZ6Nej73/TFug6pIPSqbJoCT6dfnj.",
        "$6$rounds=01000$s$8iYtNHxjWRl.NF6oNZ5tF.iKFlQREaXBLlSmZKP6dy9l5z3vsooWNW0/GZ6Nej73/TFug6pIPSqbJoCT6dfnj.",
        "$5$0123456789abcdefg$OIdfjX.u4Y3SJ4I2bX8w5BMf1VAUhHABNUirScDzZi3",
        "$1$123456789$bNShj/o/Z/P3QcGSFaYZT0",
        "$1$rampart1",
        "$2b$03$abcdefghijklmnopqrstuuoXuKqgZXLiJqzfmMXDDhSFPIvxV7t8.",
        "$2b$05$short",
        "$y$j9T$salt",
    ] {
        assert!(matches!(crypt::parse(h), Parsed::Never(_)), "{h}: {:?}", crypt::parse(h));
    }
}

fn list(users: &[(&str, Option<Password>, &[&str])], groups: &[(&str, &[&str])]) -> Userlist {
    let span = Span::new("t.cfg".into(), 1);
    let strs = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    Userlist {
        name: "L".into(),
        groups: groups.iter().map(|(n, u)| Group { name: (*n).into(), users: strs(u), span: span.clone() }).collect(),
        users: users
            .iter()
            .map(|(n, pw, g)| User { name: (*n).into(), password: pw.clone(), groups: strs(g), span: span.clone() })
            .collect(),
        span,
    }
}

fn insecure(p: &str) -> Option<Password> {
    Some(Password::Insecure(p.into()))
}

fn crypted(p: &str) -> Option<Password> {
    Some(Password::Crypt(p.into()))
}

#[test]
fn check_user_as_haproxy() {
    let ul = UserlistRt::build(&list(
        &[
            ("alice", insecure("s3cret"), &["G2"]),
            ("bob", crypted(VECTORS[0].2), &[]),
            ("carol", None, &[]),
            ("dave", crypted("ab0ozUNIgzCZ."), &[]),
        ],
        &[("G1", &["bob", "alice"]), ("G2", &[]), ("G3", &[])],
    ));
    assert!(ul.check(b"alice", b"s3cret"));
    assert!(!ul.check(b"alice", b"s3cret "));
    assert!(!ul.check(b"alice", b"s3cre"));
    assert!(!ul.check(b"Alice", b"s3cret"), "user names are case-sensitive");
    assert!(ul.check(b"bob", b"hunter2"));
    assert!(ul.check(b"bob", b"hunter2"), "again, from the cache");
    assert!(!ul.check(b"bob", b"hunter3"));
    assert!(!ul.check(b"carol", b""), "no password: never");
    assert!(!ul.check(b"dave", b"hunter2"), "unsupported scheme: never (and refused at startup)");
    assert!(!ul.check(b"eve", b""));
    let alice = ul.user(b"alice").unwrap();
    assert_eq!(alice.group_names(&ul).collect::<Vec<_>>(), ["G1", "G2"], "from both sides, each once");
    let bob = ul.user(b"bob").unwrap();
    assert_eq!(bob.group_names(&ul).collect::<Vec<_>>(), ["G1"]);
    assert_eq!(ul.group("G3"), Some(2));
    assert_eq!(ul.group("g3"), None);
}

#[test]
fn cache_is_per_userlist_build() {
    let cfg = list(&[("bob", crypted(VECTORS[11].2), &[])], &[]);
    let (a, b) = (UserlistRt::build(&cfg), UserlistRt::build(&cfg));
    assert_ne!(a.id, b.id, "each build (generation) has its own id");
    assert!(a.check(b"bob", b"hunter2"));
    assert!(cache::contains(&cache::key(a.id, b"bob", b"hunter2")), "success remembered");
    assert!(!cache::contains(&cache::key(b.id, b"bob", b"hunter2")), "not for another generation");
    assert!(!a.check(b"bob", b"wrong"));
    assert!(!cache::contains(&cache::key(a.id, b"bob", b"wrong")), "failures are not remembered");
}

#[test]
fn debug_output_hides_secrets() {
    let ul = UserlistRt::build(&list(&[("a", insecure("topsecret"), &[]), ("b", crypted(VECTORS[0].2), &[])], &[]));
    let dbg = format!("{ul:?}");
    assert!(!dbg.contains("topsecret") && !dbg.contains("bNShj"), "{dbg}");
    assert!(dbg.contains("Md5"));
}

#[test]
fn startup_diagnostics() {
    let mut cfg = Config::default();
    cfg.userlists.push(list(
        &[
            ("ok", crypted(VECTORS[8].2), &[]),
            ("des", crypted("ab0ozUNIgzCZ."), &[]),
            ("locked", crypted("!"), &[]),
            ("plain", insecure("x"), &[]),
            ("none", None, &[]),
        ],
        &[],
    ));
    let d = diagnostics(&cfg);
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!(d[0].level, Level::Alert);
    assert_eq!(d[0].message, "user 'des' in userlist 'L': 'descrypt' password hashes are not supported yet.");
    assert!(d[0].hints[0].contains("mkpasswd -m yescrypt"));
    assert_eq!(d[1].level, Level::Warning);
    assert_eq!(
        d[1].message,
        "user 'locked' in userlist 'L': the password is not a usable crypt(3) hash (not a crypt(3) hash); \
         no password will match it."
    );
}

#[test]
fn userlists_are_built_once() {
    let mut cfg = Config::default();
    cfg.userlists.push(list(&[("a", insecure("x"), &[])], &[]));
    let lists = Userlists::default();
    let first = lists.find(&cfg, "L").unwrap();
    let again = lists.find(&cfg, "L").unwrap();
    assert!(Arc::ptr_eq(&first, &again));
    assert!(lists.find(&cfg, "l").is_none());
}
