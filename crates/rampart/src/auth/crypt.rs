//! crypt(3) password hashes: which scheme a `password <hash>` uses, whether rampart can
//! verify it, and the verification itself.
//!
//! HAProxy calls the system's `crypt()` and accepts a password when the result equals
//! the stored hash (`check_user()`, src/auth.c). On Debian that is libxcrypt, which
//! knows every scheme below; rampart verifies the common ones through RustCrypto and
//! Keats' crates and refuses the others at startup rather than guess:
//!
//! | prefix | scheme (`mkpasswd -m` name) | rampart |
//! |---|---|---|
//! | `$y$` | yescrypt (Debian's default) | `yescrypt` crate |
//! | `$6$`, `$5$` | sha512crypt, sha256crypt | `sha-crypt` crate |
//! | `$2b$`, `$2y$`, `$2a$` | bcrypt | `bcrypt` crate |
//! | `$1$` | md5crypt | [`md5_crypt`] below, on the `md-5` crate |
//! | `$2x$`, `$gy$`, `$7$`, `$sha1`, `$md5`, `$3$`, `_`, 2 salt chars | bcrypt-x, gost-yescrypt, scrypt, sha1crypt, sunmd5, nt, bsdicrypt, descrypt | not supported yet |
//!
//! A string libxcrypt does not take as a hash at all (`*`, `!`, empty, an unknown `$id$`)
//! makes `crypt()` fail, so HAProxy never accepts any password for that user: rampart
//! does the same, and says so at startup.

use md5::{Digest, Md5};
use subtle::ConstantTimeEq;

/// A scheme rampart verifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Md5,
    Sha256,
    Sha512,
    Bcrypt,
    Yescrypt,
}

/// A stored hash, checked for its shape at startup.
#[derive(Clone, PartialEq, Eq)]
pub struct CryptHash {
    pub scheme: Scheme,
    text: Box<str>,
}

impl std::fmt::Debug for CryptHash {
    /// Names the scheme only: the hash is a secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CryptHash({:?})", self.scheme)
    }
}

/// What the configuration's hash string is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// A hash rampart verifies.
    Hash(CryptHash),
    /// A scheme libxcrypt knows and rampart does not verify yet (its `mkpasswd -m` name).
    Unsupported(&'static str),
    /// Not a hash any password can match, with why (HAProxy's `crypt()` fails or
    /// returns something else).
    Never(String),
}

/// The characters of crypt's base64 and of DES salts.
fn is_crypt64(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'.' || c == b'/'
}

/// Classifies `text` by its prefix, as libxcrypt picks the hashing method.
pub fn parse(text: &str) -> Parsed {
    const UNSUPPORTED: &[(&str, &str)] = &[
        ("$2x$", "bcrypt-x"),
        ("$gy$", "gost-yescrypt"),
        ("$7$", "scrypt"),
        ("$sha1", "sha1crypt"),
        ("$md5", "sunmd5"),
        ("$3$", "nt"),
        ("_", "bsdicrypt"),
    ];
    if let Some((_, name)) = UNSUPPORTED.iter().find(|(p, _)| text.starts_with(p)) {
        return Parsed::Unsupported(name);
    }
    let checked = if let Some(rest) = text.strip_prefix("$1$") {
        check_md5(rest).map(|()| Scheme::Md5)
    } else if let Some(rest) = text.strip_prefix("$5$") {
        check_sha(rest, 43).map(|()| Scheme::Sha256)
    } else if let Some(rest) = text.strip_prefix("$6$") {
        check_sha(rest, 86).map(|()| Scheme::Sha512)
    } else if ["$2a$", "$2b$", "$2y$"].iter().any(|p| text.starts_with(p)) {
        check_bcrypt(text).map(|()| Scheme::Bcrypt)
    } else if text.starts_with("$y$") {
        check_yescrypt(text).map(|()| Scheme::Yescrypt)
    } else if text.len() >= 2 && text.bytes().take(2).all(is_crypt64) {
        return Parsed::Unsupported("descrypt");
    } else {
        Err("not a crypt(3) hash".to_owned())
    };
    match checked {
        Ok(scheme) => Parsed::Hash(CryptHash { scheme, text: text.into() }),
        Err(why) => Parsed::Never(why),
    }
}

/// `<salt up to 8>$<22 chars>`: what `crypt()` would produce again.
fn check_md5(rest: &str) -> Result<(), String> {
    let (salt, hash) = rest.split_once('$').ok_or("md5crypt hash without '$' after the salt")?;
    if salt.len() > 8 {
        return Err("md5crypt salt longer than 8 characters".into());
    }
    if hash.len() != 22 || !hash.bytes().all(is_crypt64) {
        return Err("md5crypt hash is not 22 base64 characters".into());
    }
    Ok(())
}

/// `[rounds=N$]<salt up to 16>$<hash>`, with `N` written as `crypt()` writes it back.
fn check_sha(rest: &str, hash_len: usize) -> Result<(), String> {
    let mut fields = rest.split('$');
    let mut salt = fields.next().unwrap_or_default();
    if let Some(n) = salt.strip_prefix("rounds=") {
        let canonical = n.parse::<u32>().ok().filter(|r| r.to_string() == n);
        if !canonical.is_some_and(|r| (1_000..=999_999_999).contains(&r)) {
            return Err(format!("rounds={n} is not what crypt(3) writes back (1000 to 999999999)"));
        }
        salt = fields.next().unwrap_or_default();
    }
    if salt.len() > 16 {
        return Err("sha-crypt salt longer than 16 characters".into());
    }
    let hash = fields.next().unwrap_or_default();
    if hash.len() != hash_len || !hash.bytes().all(is_crypt64) || fields.next().is_some() {
        return Err(format!("sha-crypt hash is not {hash_len} base64 characters"));
    }
    Ok(())
}

fn check_bcrypt(text: &str) -> Result<(), String> {
    let parts: bcrypt::HashParts = text.parse().map_err(|e: bcrypt::BcryptError| format!("bcrypt: {e}"))?;
    if !(4..=31).contains(&parts.get_cost()) {
        return Err("bcrypt cost out of 04..31".into());
    }
    Ok(())
}

fn check_yescrypt(text: &str) -> Result<(), String> {
    let bad = |_| "malformed yescrypt hash".to_owned();
    let hash = yescrypt::PasswordHashRef::new(text).map_err(bad)?;
    let mut fields = hash.fields();
    let params = fields.next().ok_or("yescrypt hash without parameters")?;
    params.as_str().parse::<yescrypt::Params>().map_err(|_| "invalid yescrypt parameters".to_owned())?;
    if fields.count() != 2 {
        return Err("malformed yescrypt hash".into());
    }
    Ok(())
}

impl CryptHash {
    /// Whether `password` hashes to this hash. As slow as the scheme means it to be.
    pub fn verify(&self, password: &[u8]) -> bool {
        use sha_crypt::PasswordVerifier;
        let text: &str = &self.text;
        match self.scheme {
            Scheme::Md5 => {
                let salt = text[3..].split('$').next().unwrap_or_default();
                md5_crypt(password, salt.as_bytes()).as_bytes().ct_eq(text.as_bytes()).into()
            }
            Scheme::Sha256 => sha_crypt::ShaCrypt::SHA256.verify_password(password, text).is_ok(),
            Scheme::Sha512 => sha_crypt::ShaCrypt::SHA512.verify_password(password, text).is_ok(),
            Scheme::Bcrypt => bcrypt::verify(password, text).unwrap_or(false),
            Scheme::Yescrypt => yescrypt::Yescrypt::default().verify_password(password, text).is_ok(),
        }
    }
}

// === md5crypt ===

/// crypt's base64 alphabet.
const ITOA64: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

fn push_b64(out: &mut String, mut v: u32, n: usize) {
    for _ in 0..n {
        out.push(ITOA64[(v & 0x3f) as usize] as char);
        v >>= 6;
    }
}

/// Poul-Henning Kamp's MD5-based crypt (`$1$`), as libxcrypt computes it: the whole
/// `$1$<salt>$<hash>` string for `salt` (at most 8 characters are used).
///
/// No crate of the registry implements it on a maintained digest crate (`pwhash` is
/// unmaintained and pins old RustCrypto versions), so the schedule is written here on
/// the `md-5` crate and checked against `openssl passwd -1` and `mkpasswd`.
pub fn md5_crypt(password: &[u8], salt: &[u8]) -> String {
    let salt = &salt[..salt.len().min(8)];
    let mut alt = Md5::new();
    alt.update(password);
    alt.update(salt);
    alt.update(password);
    let alt = alt.finalize();

    let mut ctx = Md5::new();
    ctx.update(password);
    ctx.update(b"$1$");
    ctx.update(salt);
    for chunk in (0..password.len()).step_by(16) {
        ctx.update(&alt[..(password.len() - chunk).min(16)]);
    }
    let mut n = password.len();
    while n > 0 {
        if n & 1 == 1 {
            ctx.update([0u8]);
        } else {
            ctx.update(&password[..1]);
        }
        n >>= 1;
    }
    let mut fin = ctx.finalize();

    for i in 0..1000 {
        let mut c = Md5::new();
        if i & 1 == 1 {
            c.update(password);
        } else {
            c.update(fin);
        }
        if i % 3 != 0 {
            c.update(salt);
        }
        if i % 7 != 0 {
            c.update(password);
        }
        if i & 1 == 1 {
            c.update(fin);
        } else {
            c.update(password);
        }
        fin = c.finalize();
    }

    let f = |i: usize| u32::from(fin[i]);
    let mut out = String::with_capacity(3 + salt.len() + 1 + 22);
    out.push_str("$1$");
    out.push_str(&String::from_utf8_lossy(salt));
    out.push('$');
    for (a, b, c) in [(0, 6, 12), (1, 7, 13), (2, 8, 14), (3, 9, 15), (4, 10, 5)] {
        push_b64(&mut out, (f(a) << 16) | (f(b) << 8) | f(c), 4);
    }
    push_b64(&mut out, f(11), 2);
    out
}
