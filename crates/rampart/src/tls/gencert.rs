//! `generate-certificates` with `ca-sign-file`: when a client names a server (SNI) no
//! certificate of the bind serves, a certificate for that name is minted, signed by
//! the CA, kept in a bounded cache (`tune.ssl.ssl-ctx-cache-size`) and served.
//! As HAProxy, the new certificate carries the public key of the bind's default
//! certificate (whose private key then signs the handshake), the CA's subject plus
//! `CN=<sni>`, the CA as issuer, a validity from one day before to a year after, the
//! name as DNS subject alternative name; the CA certificate follows it in the chain.
//! HAProxy counterpart: ssl_gencert.c (`ssl_sock_do_create_cert()`,
//! `ssl_sock_generate_certificate()`).

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;

use rcgen::{
    CertificateParams, DistinguishedName, DnType, DnValue, ExtendedKeyUsagePurpose, IsCa, KeyIdMethod, KeyPair,
    KeyUsagePurpose, PublicKeyData, RemoteKeyPair, SignatureAlgorithm,
};
use rustls::crypto::CryptoProvider;
use rustls::sign::{CertifiedKey, SigningKey};
use rustls::SignatureScheme;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use x509_parser::certificate::X509Certificate;

/// HAProxy's default `tune.ssl.ssl-ctx-cache-size`.
pub const CACHE_SIZE: usize = 1000;

/// Longest SNI written as a common name (an X.509 `CN` holds 64 characters); a longer
/// name is only in the subject alternative name, as HAProxy leaves it out of the CN.
const MAX_CN: usize = 64;

/// The CA of one bind and the certificates it generated.
pub struct CertGen {
    /// The CA as rcgen's issuer (its subject, key identifier), signed by `key`.
    issuer: rcgen::Certificate,
    key: KeyPair,
    /// The CA certificate and the rest of its file's chain, served after the new leaf.
    chain: Vec<CertificateDer<'static>>,
    cache: Cache,
    /// The serial of the last certificate generated (HAProxy counts from 1 too).
    serial: AtomicU64,
}

impl std::fmt::Debug for CertGen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertGen").field("chain", &self.chain.len()).finish_non_exhaustive()
    }
}

/// Generated certificates by lower-case name, with the tick of their last use; the
/// least recently used goes when full. Lookups take no lock (the map is swapped whole
/// when a certificate is added, which only a generation does).
struct Cache {
    size: usize,
    tick: AtomicU64,
    map: ArcSwap<HashMap<Box<str>, Arc<Cached>>>,
}

struct Cached {
    key: Arc<CertifiedKey>,
    used: AtomicU64,
}

impl Cache {
    fn new(size: usize) -> Cache {
        Cache { size, tick: AtomicU64::new(0), map: ArcSwap::from_pointee(HashMap::new()) }
    }

    fn get(&self, name: &str) -> Option<Arc<CertifiedKey>> {
        let tick = self.tick.fetch_add(1, Ordering::Relaxed) + 1;
        self.map.load().get(name).map(|c| {
            c.used.store(tick, Ordering::Relaxed);
            c.key.clone()
        })
    }

    fn put(&self, name: &str, key: Arc<CertifiedKey>) {
        if self.size == 0 {
            return;
        }
        let tick = self.tick.fetch_add(1, Ordering::Relaxed) + 1;
        let entry = Arc::new(Cached { key, used: AtomicU64::new(tick) });
        self.map.rcu(|old| {
            let mut map = HashMap::clone(old);
            if map.len() >= self.size && !map.contains_key(name) {
                let oldest = map.iter().min_by_key(|(_, c)| c.used.load(Ordering::Relaxed)).map(|(n, _)| n.clone());
                if let Some(n) = oldest {
                    map.remove(&n);
                }
            }
            map.insert(name.into(), entry.clone());
            map
        });
    }
}

impl CertGen {
    /// Loads the CA of `ca-sign-file` (certificate, chain and key in one PEM file);
    /// `Err` is HAProxy's alert text.
    pub fn load(path: &Path, provider: &CryptoProvider, cache_size: usize) -> Result<CertGen, String> {
        let shown = path.display();
        let read_err = |why: String| format!("Failed to read CA certificate file '{shown}'. {why}");
        let ck = super::pem::load_cert_key(path).map_err(|e| read_err(e.to_string()))?;
        let signer = provider
            .key_provider
            .load_private_key(ck.key.clone_key())
            .map_err(|_| read_err("unusable private key.".into()))?;
        let (_, ca) = x509_parser::parse_x509_certificate(&ck.chain[0])
            .map_err(|_| read_err("unreadable certificate.".into()))?;
        let key = KeyPair::from_remote(Box::new(CaKey::new(&ca, signer, &ck.key).ok_or_else(|| {
            read_err("the CA key type cannot sign certificates here (RSA, ECDSA P-256/P-384, Ed25519).".into())
        })?))
        .map_err(|e| read_err(e.to_string()))?;
        let mut params = CertificateParams::default();
        params.distinguished_name = subject_of(&ca).ok_or_else(|| read_err("unreadable CA subject.".into()))?;
        params.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        if let Ok(Some(ski)) = ca.get_extension_unique(&x509_parser::oid_registry::OID_X509_EXT_SUBJECT_KEY_IDENTIFIER)
        {
            if let x509_parser::extensions::ParsedExtension::SubjectKeyIdentifier(id) = ski.parsed_extension() {
                params.key_identifier_method = KeyIdMethod::PreSpecified(id.0.to_vec());
            }
        }
        let issuer = params.self_signed(&key).map_err(|e| read_err(e.to_string()))?;
        Ok(CertGen { issuer, key, chain: ck.chain, cache: Cache::new(cache_size), serial: AtomicU64::new(0) })
    }

    /// The certificate for `sni` (from the cache, else generated), carrying the key of
    /// `default` (the bind's default certificate); `None` for a name that cannot be a
    /// DNS name or when signing fails (the default certificate is then served).
    pub fn certificate(&self, sni: &str, default: &CertifiedKey) -> Option<Arc<CertifiedKey>> {
        let name = sni.trim_end_matches('.').to_ascii_lowercase();
        if !valid_name(&name) {
            return None;
        }
        if let Some(k) = self.cache.get(&name) {
            return Some(k);
        }
        let key = Arc::new(self.generate(&name, default)?);
        self.cache.put(&name, key.clone());
        Some(key)
    }

    fn generate(&self, name: &str, default: &CertifiedKey) -> Option<CertifiedKey> {
        let leaf = default.cert.first()?;
        let (_, cert) = x509_parser::parse_x509_certificate(leaf).ok()?;
        let public = LeafKey::of(&cert)?;
        let mut params = CertificateParams::new(vec![name.to_string()]).ok()?;
        let mut dn = self.issuer.params().distinguished_name.clone();
        if name.len() <= MAX_CN {
            // the CA's subject keeps its CN and the name is a second one (the CA's
            // attributes are custom types, as rcgen holds one value per type)
            dn.push(DnType::CommonName, DnValue::Utf8String(name.to_string()));
        }
        params.distinguished_name = dn;
        params.serial_number = Some(rcgen::SerialNumber::from(self.serial.fetch_add(1, Ordering::Relaxed) + 1));
        set_validity(&mut params)?;
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::ContentCommitment,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        let cert = params.signed_by(&public, &self.issuer, &self.key).ok()?;
        let mut chain = Vec::with_capacity(1 + self.chain.len());
        chain.push(cert.der().clone());
        chain.extend(self.chain.iter().cloned());
        Some(CertifiedKey::new(chain, default.key.clone()))
    }
}

/// Whether `name` can be written as a DNS name: letters, digits, `-`, `_`, `.` (no
/// separator HAProxy refuses either: `,`, `:`, spaces), at most 253 characters.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Sets the validity from one day before today (midnight, UTC) to 366 days after:
/// HAProxy's "now minus a day" to "now plus 365 days", at day granularity.
fn set_validity(params: &mut CertificateParams) -> Option<()> {
    let today = jiff::tz::TimeZone::UTC.to_datetime(jiff::Timestamp::now()).date();
    let ymd = |d: jiff::civil::Date| {
        Some(rcgen::date_time_ymd(i32::from(d.year()), u8::try_from(d.month()).ok()?, u8::try_from(d.day()).ok()?))
    };
    params.not_before = ymd(today.yesterday().ok()?)?;
    params.not_after = ymd(today.checked_add(jiff::Span::new().days(366)).ok()?)?;
    Some(())
}

/// The subject of `cert` as rcgen writes it back: each attribute with its own string
/// type; `None` for a multi-valued RDN or a type rcgen cannot write.
fn subject_of(cert: &X509Certificate<'_>) -> Option<DistinguishedName> {
    use x509_parser::der_parser::asn1_rs::Tag;
    let mut dn = DistinguishedName::new();
    for rdn in cert.subject().iter() {
        let mut attrs = rdn.iter();
        let attr = attrs.next()?;
        if attrs.next().is_some() {
            return None;
        }
        let oid: Vec<u64> = attr.attr_type().iter()?.collect();
        let data = attr.attr_value().data;
        let text = std::str::from_utf8(data).ok()?;
        let value = match attr.attr_value().header.tag() {
            Tag::PrintableString => DnValue::PrintableString(text.try_into().ok()?),
            Tag::Ia5String => DnValue::Ia5String(text.try_into().ok()?),
            Tag::Utf8String => DnValue::Utf8String(text.to_string()),
            Tag::T61String => DnValue::TeletexString(text.try_into().ok()?),
            _ => return None,
        };
        // a custom type keeps each attribute (rcgen merges repeated known types)
        dn.push(DnType::CustomDnType(oid), value);
    }
    Some(dn)
}

/// The public key of the default certificate, as rcgen writes it into the new one.
struct LeafKey {
    bits: Vec<u8>,
    alg: &'static SignatureAlgorithm,
}

impl LeafKey {
    fn of(cert: &X509Certificate<'_>) -> Option<LeafKey> {
        let spki = cert.public_key();
        let alg = key_algorithm(spki)?;
        Some(LeafKey { bits: spki.subject_public_key.data.to_vec(), alg })
    }
}

impl PublicKeyData for LeafKey {
    fn der_bytes(&self) -> &[u8] {
        &self.bits
    }

    fn algorithm(&self) -> &SignatureAlgorithm {
        self.alg
    }
}

/// The rcgen algorithm whose key identifiers match a public key's (RSA, ECDSA P-256 or
/// P-384, Ed25519).
fn key_algorithm(spki: &x509_parser::x509::SubjectPublicKeyInfo<'_>) -> Option<&'static SignatureAlgorithm> {
    use x509_parser::oid_registry as oids;
    let alg = &spki.algorithm;
    if alg.algorithm == oids::OID_PKCS1_RSAENCRYPTION {
        return Some(&rcgen::PKCS_RSA_SHA256);
    }
    if alg.algorithm == oids::OID_SIG_ED25519 {
        return Some(&rcgen::PKCS_ED25519);
    }
    if alg.algorithm != oids::OID_KEY_TYPE_EC_PUBLIC_KEY {
        return None;
    }
    let curve = alg.parameters.as_ref()?.as_oid().ok()?;
    if curve == oids::OID_EC_P256 {
        Some(&rcgen::PKCS_ECDSA_P256_SHA256)
    } else if curve == oids::OID_NIST_EC_P384 {
        Some(&rcgen::PKCS_ECDSA_P384_SHA384)
    } else {
        None
    }
}

/// The CA's private key. As HAProxy, certificates are signed with SHA-256 whatever the
/// CA's curve: through rustls' provider (which reads every key format a `crt` may hold)
/// for RSA, P-256 and Ed25519, and through aws-lc for P-384 (which rustls pairs with
/// SHA-384 only).
struct CaKey {
    public: Vec<u8>,
    alg: &'static SignatureAlgorithm,
    signer: CaSigner,
}

enum CaSigner {
    Rustls(Box<dyn rustls::sign::Signer>),
    /// ECDSA P-384 over a SHA-256 digest: the digest, left-padded with zeros to the
    /// curve's 48 bytes, is the same integer ECDSA signs (ANSI X9.62 takes a shorter
    /// hash whole), handed to aws-lc as a prehashed value.
    P384Sha256(aws_lc_rs::signature::EcdsaKeyPair),
}

impl CaKey {
    fn new(ca: &X509Certificate<'_>, key: Arc<dyn SigningKey>, der: &PrivateKeyDer<'_>) -> Option<CaKey> {
        let spki = ca.public_key();
        let public = spki.subject_public_key.data.to_vec();
        let alg = key_algorithm(spki)?;
        if std::ptr::eq(alg, &rcgen::PKCS_ECDSA_P384_SHA384) {
            let signing = &aws_lc_rs::signature::ECDSA_P384_SHA384_ASN1_SIGNING;
            let pair = aws_lc_rs::signature::EcdsaKeyPair::from_private_key_der(signing, der.secret_der()).ok()?;
            // the signature algorithm written is ecdsa-with-SHA256 (P-256's in rcgen)
            return Some(CaKey { public, alg: &rcgen::PKCS_ECDSA_P256_SHA256, signer: CaSigner::P384Sha256(pair) });
        }
        let scheme = if std::ptr::eq(alg, &rcgen::PKCS_RSA_SHA256) {
            SignatureScheme::RSA_PKCS1_SHA256
        } else if std::ptr::eq(alg, &rcgen::PKCS_ED25519) {
            SignatureScheme::ED25519
        } else {
            SignatureScheme::ECDSA_NISTP256_SHA256
        };
        let signer = key.choose_scheme(&[scheme])?;
        Some(CaKey { public, alg, signer: CaSigner::Rustls(signer) })
    }
}

impl RemoteKeyPair for CaKey {
    fn public_key(&self) -> &[u8] {
        &self.public
    }

    fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, rcgen::Error> {
        match &self.signer {
            CaSigner::Rustls(s) => s.sign(msg).map_err(|_| rcgen::Error::RemoteKeyError),
            CaSigner::P384Sha256(pair) => {
                use aws_lc_rs::digest;
                let hash = digest::digest(&digest::SHA256, msg);
                let mut padded = [0u8; 48];
                padded[48 - hash.as_ref().len()..].copy_from_slice(hash.as_ref());
                let prehashed = digest::Digest::import_less_safe(&padded, &digest::SHA384)
                    .map_err(|_| rcgen::Error::RemoteKeyError)?;
                let sig = pair.sign_digest(&prehashed).map_err(|_| rcgen::Error::RemoteKeyError)?;
                Ok(sig.as_ref().to_vec())
            }
        }
    }

    fn algorithm(&self) -> &'static SignatureAlgorithm {
        self.alg
    }
}

#[cfg(test)]
#[path = "gencert_tests.rs"]
mod tests;
