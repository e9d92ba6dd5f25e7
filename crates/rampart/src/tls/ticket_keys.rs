//! `tls-ticket-keys <file>`: TLS session tickets sealed with the keys of a file, so
//! that several processes reading the same file resume each other's sessions. The
//! file holds base64 keys, one a line, each a 16-byte name, an HMAC key and an AES
//! key (48 bytes: AES-128, or 80 bytes: AES-256); the last [`TLS_TICKETS_NO`] keys are
//! in use: the penultimate seals new tickets, all three open tickets, so appending a
//! key and reloading rotates them. Binds naming the same file share its keys, and
//! `set ssl tls-key` rotates them at run time (`show tls-keys` lists them).
//! HAProxy counterpart: `bind_parse_tls_ticket_keys()` (cfgparse-ssl.c),
//! `ssl_tlsext_ticket_key_cb()`, `tlskeys_finalize_config()` and the `tls-keys` CLI
//! commands (ssl_sock.c).
//!
//! A ticket is laid out as OpenSSL lays out its own: the key name in clear (it picks
//! the key that opens the ticket), a random IV, rustls' session state sealed with
//! AES-CBC, and an HMAC-SHA256 over everything before it. The state inside is
//! rustls', so haproxy cannot read these tickets (nor rampart haproxy's).

use std::sync::Arc;

use arc_swap::ArcSwap;
use aws_lc_rs::cipher::{
    DecryptionContext, PaddedBlockDecryptingKey, PaddedBlockEncryptingKey, UnboundCipherKey, AES_128, AES_256,
};
use aws_lc_rs::hmac;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::{DecodePaddingMode, Engine};
use rampart_cfg::model::Config;
use rustls::server::ProducesTickets;

/// The keys of a file in use (HAProxy's `TLS_TICKETS_NO`).
pub const TLS_TICKETS_NO: usize = 3;

/// Length of a key's name, sent in clear at the start of each ticket.
const NAME_LEN: usize = 16;
/// Length of the IV after the name.
const IV_LEN: usize = 16;
/// Length of the HMAC-SHA256 ending a ticket.
const MAC_LEN: usize = 32;

/// Lifetime hint of the tickets, in seconds.
// COMPAT: a ticket opens as long as its key is one of the three in use; the hint
// is rustls' own (6 hours), `tune.ssl.lifetime` does not shorten it.
const LIFETIME: u32 = 6 * 60 * 60;

/// Standard base64 with `=` padding; bits left over in the last character are
/// ignored, as HAProxy's `base64dec`.
const B64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
);

/// One key: its name, HMAC key and AES key, as the file holds them.
#[derive(Clone, PartialEq, Eq)]
pub struct TicketKey {
    raw: Box<[u8]>,
}

impl std::fmt::Debug for TicketKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // the secrets stay out of debug output
        write!(f, "TicketKey({} bits)", self.bits())
    }
}

impl TicketKey {
    /// A key of 48 bytes (AES-128) or 80 bytes (AES-256), else `None`.
    pub fn new(raw: &[u8]) -> Option<TicketKey> {
        matches!(raw.len(), 48 | 80).then(|| TicketKey { raw: raw.into() })
    }

    /// The key in a line of base64, `None` when it is not base64 (its size is not
    /// checked).
    pub(super) fn decode(line: &[u8]) -> Option<Vec<u8>> {
        B64.decode(line).ok()
    }

    /// The AES key size: 128 or 256.
    pub fn bits(&self) -> u32 {
        if self.raw.len() == 48 {
            128
        } else {
            256
        }
    }

    fn name(&self) -> &[u8] {
        &self.raw[..NAME_LEN]
    }

    fn hmac_key(&self) -> &[u8] {
        let half = (self.raw.len() - NAME_LEN) / 2;
        &self.raw[NAME_LEN..NAME_LEN + half]
    }

    fn aes_key(&self) -> &[u8] {
        let half = (self.raw.len() - NAME_LEN) / 2;
        &self.raw[NAME_LEN + half..]
    }

    /// The key in base64, as the file and `show tls-keys` write it.
    pub fn base64(&self) -> String {
        B64.encode(&self.raw)
    }

    fn cipher_key(&self) -> Option<UnboundCipherKey> {
        let alg = if self.bits() == 128 { &AES_128 } else { &AES_256 };
        UnboundCipherKey::new(alg, self.aes_key()).ok()
    }
}

/// The keys in use, in the file's order: the oldest (opens tickets only), the one
/// that seals new tickets, the newest (opens tickets, and seals them after the next
/// rotation). All have the same size.
#[derive(Debug, Clone)]
pub struct KeyRing {
    keys: [TicketKey; TLS_TICKETS_NO],
    macs: [hmac::Key; TLS_TICKETS_NO],
}

impl KeyRing {
    fn new(keys: [TicketKey; TLS_TICKETS_NO]) -> KeyRing {
        let macs = keys.clone().map(|k| hmac::Key::new(hmac::HMAC_SHA256, k.hmac_key()));
        KeyRing { keys, macs }
    }

    /// The keys, oldest first.
    pub fn keys(&self) -> &[TicketKey; TLS_TICKETS_NO] {
        &self.keys
    }

    /// The ring after `set ssl tls-key`: `key` appended, the oldest dropped; `None`
    /// when `key` has not the size of the others.
    pub fn rotated(&self, key: TicketKey) -> Option<KeyRing> {
        if key.raw.len() != self.keys[0].raw.len() {
            return None;
        }
        let [_, a, b] = self.keys.clone();
        Some(KeyRing::new([a, b, key]))
    }

    /// Seals `plain` with the penultimate key.
    pub fn seal(&self, plain: &[u8]) -> Option<Vec<u8>> {
        let key = &self.keys[TLS_TICKETS_NO - 2];
        let mut body = plain.to_vec();
        let context = PaddedBlockEncryptingKey::cbc_pkcs7(key.cipher_key()?).ok()?.encrypt(&mut body).ok()?;
        let iv: &[u8] = (&context).try_into().ok()?;
        let mut out = Vec::with_capacity(NAME_LEN + IV_LEN + body.len() + MAC_LEN);
        out.extend_from_slice(key.name());
        out.extend_from_slice(iv);
        out.extend_from_slice(&body);
        let tag = hmac::sign(&self.macs[TLS_TICKETS_NO - 2], &out);
        out.extend_from_slice(tag.as_ref());
        Some(out)
    }

    /// Opens a ticket sealed by [`KeyRing::seal`] with one of the keys in use;
    /// `None` for any other input.
    pub fn open(&self, ticket: &[u8]) -> Option<Vec<u8>> {
        if ticket.len() < NAME_LEN + IV_LEN + MAC_LEN {
            return None;
        }
        let (signed, tag) = ticket.split_at(ticket.len() - MAC_LEN);
        let idx = self.keys.iter().position(|k| k.name() == &ticket[..NAME_LEN])?;
        hmac::verify(&self.macs[idx], signed, tag).ok()?;
        let iv: [u8; IV_LEN] = ticket[NAME_LEN..NAME_LEN + IV_LEN].try_into().ok()?;
        let mut body = signed[NAME_LEN + IV_LEN..].to_vec();
        let key = PaddedBlockDecryptingKey::cbc_pkcs7(self.keys[idx].cipher_key()?).ok()?;
        let plain = key.decrypt(&mut body, DecryptionContext::Iv128(iv.into())).ok()?;
        let n = plain.len();
        body.truncate(n);
        Some(body)
    }
}

/// Why a key file is refused, in HAProxy's words (after the bind's context).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyFileError {
    Open,
    /// The 1-based line that is not base64.
    Base64(usize),
    /// The 1-based line whose key has not the size of a key or of the first key.
    Size(usize),
    TooFew,
}

/// Reads the key file `file`: its last [`TLS_TICKETS_NO`] keys, or the alert.
pub fn load(file: &str) -> Result<KeyRing, String> {
    let text = std::fs::read(file).map_err(|_| KeyFileError::Open);
    text.and_then(|t| parse(&t)).map_err(|e| alert(file, &e))
}

/// HAProxy's alert for key file `file` refused with `e`.
pub fn alert(file: &str, e: &KeyFileError) -> String {
    match e {
        KeyFileError::Open => format!("'{file}' : unable to load ssl tickets keys file"),
        KeyFileError::Base64(n) => format!("'{file}' : unable to decode base64 key on line {n}"),
        KeyFileError::Size(n) => format!("'{file}' : wrong sized key on line {n}"),
        KeyFileError::TooFew => {
            format!("'{file}' : please supply at least {TLS_TICKETS_NO} keys in the tls-tickets-file")
        }
    }
}

/// The keys of a key file's contents: one key a line (a line ending `\n`, `\r\n` or
/// the end of the file), all the size of the first.
pub fn parse(text: &[u8]) -> Result<KeyRing, KeyFileError> {
    let mut keys: Vec<TicketKey> = Vec::new();
    if text.is_empty() {
        return Err(KeyFileError::TooFew);
    }
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    for (i, line) in body.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        // more than the largest key does not decode (HAProxy decodes into a key's room)
        let raw = TicketKey::decode(line).filter(|r| r.len() <= 80).ok_or(KeyFileError::Base64(i + 1))?;
        let key = TicketKey::new(&raw).ok_or(KeyFileError::Size(i + 1))?;
        if keys.first().is_some_and(|k| k.raw.len() != key.raw.len()) {
            return Err(KeyFileError::Size(i + 1));
        }
        keys.push(key);
    }
    let last: [TicketKey; TLS_TICKETS_NO] =
        keys.split_off(keys.len().saturating_sub(TLS_TICKETS_NO)).try_into().map_err(|_| KeyFileError::TooFew)?;
    Ok(KeyRing::new(last))
}

/// A key file as the binds naming it share it: its name as written, HAProxy's id
/// for the CLI, and its keys, replaced whole by `set ssl tls-key`.
#[derive(Debug)]
pub struct TicketKeys {
    pub file: String,
    pub id: usize,
    ring: ArcSwap<KeyRing>,
}

impl TicketKeys {
    pub fn new(file: &str, id: usize, ring: KeyRing) -> TicketKeys {
        TicketKeys { file: file.to_owned(), id, ring: ArcSwap::from_pointee(ring) }
    }

    /// The keys in use now.
    pub fn ring(&self) -> Arc<KeyRing> {
        self.ring.load_full()
    }

    /// `set ssl tls-key`: `key` becomes the newest key, the newest one seals new
    /// tickets, the oldest is dropped. `false` when `key` has not the size of the
    /// others.
    pub fn push(&self, key: &TicketKey) -> bool {
        let mut done = false;
        self.ring.rcu(|r| match r.rotated(key.clone()) {
            Some(new) => {
                done = true;
                Arc::new(new)
            }
            None => {
                done = false;
                r.clone()
            }
        });
        done
    }
}

/// The rustls ticketer of a bind with `tls-ticket-keys`.
#[derive(Debug)]
pub struct KeyFileTicketer {
    pub keys: Arc<TicketKeys>,
}

impl ProducesTickets for KeyFileTicketer {
    fn enabled(&self) -> bool {
        true
    }

    fn lifetime(&self) -> u32 {
        LIFETIME
    }

    fn encrypt(&self, plain: &[u8]) -> Option<Vec<u8>> {
        self.keys.ring.load().seal(plain)
    }

    fn decrypt(&self, cipher: &[u8]) -> Option<Vec<u8>> {
        self.keys.ring.load().open(cipher)
    }
}

/// The key files of a configuration, loaded as binds name them: the first bind
/// naming a file reads it, the others share its keys. A file that fails to load is
/// read again (and refused again) by the next bind naming it, as in HAProxy.
#[derive(Debug, Default)]
pub struct KeyFiles {
    /// Every file the configuration names, in the order binds first name them.
    names: Vec<String>,
    loaded: Vec<Arc<TicketKeys>>,
}

impl KeyFiles {
    /// The key files `cfg` names (none read yet).
    pub fn new(cfg: &Config) -> KeyFiles {
        let mut names: Vec<String> = Vec::new();
        let binds = cfg.proxies.iter().flat_map(|p| p.binds.iter());
        for file in binds.filter_map(|b| b.ssl.as_ref()?.tls_ticket_keys.as_ref()) {
            if !names.contains(file) {
                names.push(file.clone());
            }
        }
        KeyFiles { names, loaded: Vec::new() }
    }

    /// HAProxy's id of `file`: files are numbered from 0 from the last one named.
    fn id(&self, file: &str) -> usize {
        let pos = self.names.iter().position(|n| n == file).unwrap_or(0);
        self.names.len().saturating_sub(pos + 1)
    }

    /// The keys of `file`, read now unless a bind read them before; `Err`: the alert.
    pub fn get(&mut self, file: &str) -> Result<Arc<TicketKeys>, String> {
        if let Some(k) = self.loaded.iter().find(|k| k.file == file) {
            return Ok(k.clone());
        }
        let keys = Arc::new(TicketKeys::new(file, self.id(file), load(file)?));
        self.loaded.push(keys.clone());
        Ok(keys)
    }
}

#[cfg(test)]
#[path = "ticket_keys_tests.rs"]
mod tests;
