//! Certificate selection by SNI for one `bind`, with HAProxy's rules: an exact name
//! first, then a wildcard (`*.example.com` matches one label), else the default
//! certificate (the first one loaded); among certificates for the same name, the one
//! whose key the client can verify (ECDSA preferred over RSA when it can do both).
//! HAProxy counterpart: `ssl_sock_switchctx_cbk()`, `ssl_sock_chose_sni_ctx()`.

use std::collections::HashMap;
use std::sync::Arc;

use arc_swap::ArcSwap;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::{SignatureAlgorithm, SignatureScheme};

use super::gencert::CertGen;
/// The crt-list line a certificate of a bind comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The crt-list file, as `show ssl crt-list` names it.
    pub list: Arc<str>,
    /// 0 for the files of a `crt <directory>`.
    pub line: usize,
    /// The certificate file (what tells the files of a directory apart).
    pub crt: Arc<str>,
}

/// One loaded certificate and the names it serves.
#[derive(Debug, Clone)]
pub struct Entry {
    pub key: Arc<CertifiedKey>,
    /// The file it came from (for `show ssl cert` and messages).
    pub path: String,
    /// Names it must not serve (a crt-list's `!name` filters), lower case.
    pub excluded: Vec<String>,
    /// Served under a crt-list's SNI filters rather than its certificate's names (a
    /// replaced certificate keeps the filters).
    pub filtered: bool,
    /// The crt-list line it comes from (`None`: a `crt`).
    pub origin: Option<Origin>,
    /// The configuration of its crt-list line's options (`None`: the bind's).
    pub tls: Option<Arc<super::bind::Configs>>,
}

impl Entry {
    /// An entry for `key` loaded from `path`, served under its own names.
    pub fn new(key: Arc<CertifiedKey>, path: String) -> Entry {
        Entry { key, path, excluded: Vec::new(), filtered: false, origin: None, tls: None }
    }
}

/// The certificates of one `bind`, indexed by the names they serve.
#[derive(Debug, Default)]
pub struct SniStore {
    /// The names each entry was indexed under, by entry.
    names: Vec<Vec<String>>,
    /// Lower-case exact names.
    exact: HashMap<String, Vec<usize>>,
    /// Wildcards by the suffix after `*.` (lower case).
    wildcard: HashMap<String, Vec<usize>>,
    entries: Vec<Entry>,
}

impl SniStore {
    /// Adds a certificate serving `names` (SAN DNS names, else the CN). The first one
    /// added is the default certificate.
    pub fn add(&mut self, entry: Entry, names: &[String]) {
        let idx = self.entries.len();
        self.entries.push(entry);
        self.names.push(names.to_vec());
        for n in names {
            let n = n.to_ascii_lowercase();
            let (map, key) = match n.strip_prefix("*.") {
                Some(suffix) => (&mut self.wildcard, suffix.to_string()),
                None => (&mut self.exact, n),
            };
            let list = map.entry(key).or_default();
            if !list.contains(&idx) {
                list.push(idx);
            }
        }
    }

    /// The certificate loaded from `path`, if this store serves one.
    pub fn get(&self, path: &str) -> Option<&Arc<CertifiedKey>> {
        self.entries.iter().find(|e| e.path == path).map(|e| &e.key)
    }

    /// The files of the certificates, in load order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.path.as_str())
    }

    /// A copy of this store where the certificates of `path` are `key`, indexed under
    /// `names` (its certificate's names) unless a crt-list filter names them; `None`
    /// when no entry comes from `path`. HAProxy counterpart: the new `ckch_inst`s
    /// `commit ssl cert` builds.
    pub fn replaced(&self, path: &str, key: &Arc<CertifiedKey>, names: &[String]) -> Option<SniStore> {
        self.get(path)?;
        let mut out = SniStore::default();
        for (e, old) in self.entries.iter().zip(&self.names) {
            let mine = e.path == path;
            let mut entry = e.clone();
            if mine {
                entry.key = key.clone();
            }
            out.add(entry, if mine && !e.filtered { names } else { old });
        }
        Some(out)
    }

    /// A copy of this store without the entry of crt-list line `origin`; `None` when
    /// no entry comes from it (`del ssl crt-list`).
    pub fn without(&self, origin: &Origin) -> Option<SniStore> {
        self.entries.iter().position(|e| e.origin.as_ref() == Some(origin))?;
        let mut out = SniStore::default();
        for (e, names) in self.entries.iter().zip(&self.names) {
            if e.origin.as_ref() != Some(origin) {
                out.add(e.clone(), names);
            }
        }
        Some(out)
    }

    /// A copy of this store where the entry of crt-list line `origin` has the
    /// configurations `tls`; `None` when no entry comes from it (`commit ssl ca-file`).
    pub fn with_tls(&self, origin: &Origin, tls: Option<Arc<super::bind::Configs>>) -> Option<SniStore> {
        self.entries.iter().position(|e| e.origin.as_ref() == Some(origin))?;
        let mut out = SniStore::default();
        for (e, names) in self.entries.iter().zip(&self.names) {
            let mut entry = e.clone();
            if e.origin.as_ref() == Some(origin) {
                entry.tls = tls.clone();
            }
            out.add(entry, names);
        }
        Some(out)
    }

    /// A copy of this store with `entry` added, serving `names` (`add ssl crt-list`).
    pub fn with(&self, entry: Entry, names: &[String]) -> SniStore {
        let mut out = SniStore::default();
        for (e, n) in self.entries.iter().zip(&self.names) {
            out.add(e.clone(), n);
        }
        out.add(entry, names);
        out
    }

    /// The default certificate's crt-list line (the first entry), if it has one.
    pub fn default_origin(&self) -> Option<&Origin> {
        self.entries.first().and_then(|e| e.origin.as_ref())
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The candidates for `sni`: exact names, else wildcards; `None` when no name
    /// matches (the default certificate then applies, unless `strict-sni`).
    pub fn candidates(&self, sni: &str) -> Option<&[usize]> {
        let sni = sni.trim_end_matches('.');
        let lower;
        let sni = if sni.bytes().any(|b| b.is_ascii_uppercase()) {
            lower = sni.to_ascii_lowercase();
            lower.as_str()
        } else {
            sni
        };
        if let Some(l) = self.exact.get(sni) {
            return Some(l);
        }
        let (_, parent) = sni.split_once('.')?;
        self.wildcard.get(parent).map(Vec::as_slice)
    }

    /// Whether entry `i` may serve `sni` (not excluded by a `!name` filter).
    fn allowed(&self, i: usize, sni: &str) -> bool {
        let e = &self.entries[i].excluded;
        e.is_empty() || !e.iter().any(|x| x.eq_ignore_ascii_case(sni.trim_end_matches('.')))
    }

    /// Whether a certificate serves `sni` by name (what `strict-sni` requires).
    pub fn serves(&self, sni: Option<&str>) -> bool {
        sni.is_some_and(|s| self.candidates(s).is_some_and(|l| l.iter().any(|&i| self.allowed(i, s))))
    }

    /// The certificate for a client hello (see the module doc).
    pub fn choose(&self, sni: Option<&str>, schemes: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        self.choose_entry(sni, schemes).map(|e| e.key.clone())
    }

    /// The entry whose certificate a client hello gets.
    pub fn choose_entry(&self, sni: Option<&str>, schemes: &[SignatureScheme]) -> Option<&Entry> {
        let name = sni.unwrap_or("");
        let list = sni.and_then(|s| self.candidates(s)).filter(|l| l.iter().any(|&i| self.allowed(i, name)));
        let pick = |list: &[usize]| -> Option<&Entry> {
            let usable =
                |i: &&usize| self.allowed(**i, name) && self.entries[**i].key.key.choose_scheme(schemes).is_some();
            let ecdsa =
                list.iter().filter(usable).find(|i| self.entries[**i].key.key.algorithm() == SignatureAlgorithm::ECDSA);
            let any = || list.iter().find(|i| self.allowed(**i, name));
            ecdsa.or_else(|| list.iter().find(usable)).or_else(any).map(|i| &self.entries[*i])
        };
        match list {
            Some(l) => pick(l),
            None => self.entries.first(),
        }
    }
}

/// The rustls resolver over the current [`SniStore`] of a bind (swapped whole when
/// `commit ssl cert` replaces a certificate; reading it takes no lock), with the
/// certificate generator of `generate-certificates` if any.
#[derive(Debug)]
pub struct SniResolver {
    pub store: Arc<ArcSwap<SniStore>>,
    pub gen: Option<Arc<CertGen>>,
}

impl SniResolver {
    /// The certificate for a client hello: one of the store's, or, for a name none
    /// serves, one generated for it (HAProxy generates only for a client sending SNI).
    pub fn resolve_for(&self, sni: Option<&str>, schemes: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        let store = self.store.load();
        if let (Some(gen), Some(name)) = (&self.gen, sni) {
            if !store.serves(Some(name)) {
                let default = store.choose(None, schemes)?;
                return gen.certificate(name, &default).or(Some(default));
            }
        }
        store.choose(sni, schemes)
    }
}

impl ResolvesServerCert for SniResolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.resolve_for(hello.server_name(), hello.signature_schemes())
    }
}

/// The names a certificate serves: its DNS subject alternative names, then its
/// subject's common names (as HAProxy indexes a `crt` without a filter: both).
pub fn cert_names(der: &[u8]) -> Vec<String> {
    use x509_parser::extensions::GeneralName;
    let Ok((_, cert)) = x509_parser::parse_x509_certificate(der) else { return Vec::new() };
    let mut names: Vec<String> = match cert.subject_alternative_name() {
        Ok(Some(san)) => san
            .value
            .general_names
            .iter()
            .filter_map(|g| match g {
                GeneralName::DNSName(n) => Some(n.to_string()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    for cn in cert.subject().iter_common_name().filter_map(|cn| cn.as_str().ok()) {
        if !names.iter().any(|n| n == cn) {
            names.push(cn.to_string());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(alg: &'static rcgen::SignatureAlgorithm, names: &[&str]) -> (Arc<CertifiedKey>, Vec<String>) {
        let kp = rcgen::KeyPair::generate_for(alg).unwrap();
        let cert = rcgen::CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .unwrap()
            .self_signed(&kp)
            .unwrap();
        let der = cert.der().to_vec();
        let provider = rustls::crypto::aws_lc_rs::default_provider();
        let pk = rustls_pki_types::PrivateKeyDer::Pkcs8(kp.serialize_der().into());
        let signer = provider.key_provider.load_private_key(pk).unwrap();
        (Arc::new(CertifiedKey::new(vec![der.clone().into()], signer)), cert_names(&der))
    }

    fn store(certs: Vec<(Arc<CertifiedKey>, Vec<String>)>) -> (SniStore, Vec<Arc<CertifiedKey>>) {
        let mut s = SniStore::default();
        let mut keys = Vec::new();
        for (i, (k, names)) in certs.into_iter().enumerate() {
            keys.push(k.clone());
            s.add(Entry::new(k, format!("{i}.pem")), &names);
        }
        (s, keys)
    }

    const ALL: &[SignatureScheme] =
        &[SignatureScheme::ECDSA_NISTP256_SHA256, SignatureScheme::ED25519, SignatureScheme::RSA_PSS_SHA256];

    #[test]
    fn exact_then_wildcard_then_default() {
        let (s, k) = store(vec![
            key(&rcgen::PKCS_ECDSA_P256_SHA256, &["default.test"]),
            key(&rcgen::PKCS_ECDSA_P256_SHA256, &["*.example.com"]),
            key(&rcgen::PKCS_ECDSA_P256_SHA256, &["www.example.com", "Other.Test"]),
        ]);
        let is = |got: Option<Arc<CertifiedKey>>, want: &Arc<CertifiedKey>| Arc::ptr_eq(&got.unwrap(), want);
        assert!(is(s.choose(Some("www.example.com"), ALL), &k[2]));
        assert!(is(s.choose(Some("WWW.Example.com."), ALL), &k[2]));
        assert!(is(s.choose(Some("other.test"), ALL), &k[2]));
        assert!(is(s.choose(Some("api.example.com"), ALL), &k[1]));
        // a wildcard matches one label only
        assert!(is(s.choose(Some("a.b.example.com"), ALL), &k[0]));
        assert!(is(s.choose(Some("example.com"), ALL), &k[0]));
        assert!(is(s.choose(None, ALL), &k[0]));
        assert!(s.serves(Some("api.example.com")));
        assert!(!s.serves(Some("example.com")));
        assert!(!s.serves(None));
    }

    #[test]
    fn ecdsa_or_other_key_by_what_the_client_verifies() {
        let (s, k) =
            store(vec![key(&rcgen::PKCS_ED25519, &["dual.test"]), key(&rcgen::PKCS_ECDSA_P256_SHA256, &["dual.test"])]);
        let only_ed = [SignatureScheme::ED25519];
        let only_ec = [SignatureScheme::ECDSA_NISTP256_SHA256];
        assert!(Arc::ptr_eq(&s.choose(Some("dual.test"), ALL).unwrap(), &k[1]));
        assert!(Arc::ptr_eq(&s.choose(Some("dual.test"), &only_ec).unwrap(), &k[1]));
        assert!(Arc::ptr_eq(&s.choose(Some("dual.test"), &only_ed).unwrap(), &k[0]));
    }

    #[test]
    fn excluded_names_fall_to_the_default() {
        let (k0, n0) = key(&rcgen::PKCS_ECDSA_P256_SHA256, &["default.test"]);
        let (k1, n1) = key(&rcgen::PKCS_ECDSA_P256_SHA256, &["*.x.test"]);
        let mut s = SniStore::default();
        s.add(Entry::new(k0.clone(), "0".into()), &n0);
        s.add(
            Entry { excluded: vec!["secret.x.test".into()], filtered: true, ..Entry::new(k1.clone(), "1".into()) },
            &n1,
        );
        assert!(Arc::ptr_eq(&s.choose(Some("www.x.test"), ALL).unwrap(), &k1));
        assert!(Arc::ptr_eq(&s.choose(Some("Secret.x.test"), ALL).unwrap(), &k0));
        assert!(s.serves(Some("www.x.test")));
        assert!(!s.serves(Some("secret.x.test")));
    }

    #[test]
    fn a_replaced_certificate_is_indexed_under_its_own_names() {
        let (s, k) = store(vec![
            key(&rcgen::PKCS_ECDSA_P256_SHA256, &["default.test"]),
            key(&rcgen::PKCS_ECDSA_P256_SHA256, &["old.test"]),
        ]);
        let (new, names) = key(&rcgen::PKCS_ECDSA_P256_SHA256, &["new.test"]);
        assert!(s.replaced("nosuch.pem", &new, &names).is_none());
        let r = s.replaced("1.pem", &new, &names).unwrap();
        assert!(Arc::ptr_eq(r.get("1.pem").unwrap(), &new));
        assert!(Arc::ptr_eq(r.get("0.pem").unwrap(), &k[0]));
        assert!(r.serves(Some("new.test")) && !r.serves(Some("old.test")));
        assert!(Arc::ptr_eq(&r.choose(Some("new.test"), ALL).unwrap(), &new));
        // the old store is untouched: handshakes that loaded it keep their certificate
        assert!(Arc::ptr_eq(&s.choose(Some("old.test"), ALL).unwrap(), &k[1]));
        // replacing the default certificate changes the default
        let d = s.replaced("0.pem", &new, &names).unwrap();
        assert!(Arc::ptr_eq(&d.choose(None, ALL).unwrap(), &new));
    }

    #[test]
    fn names_from_san_then_cn() {
        let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut p = rcgen::CertificateParams::new(vec!["a.test".to_string(), "*.b.test".to_string()]).unwrap();
        p.distinguished_name = rcgen::DistinguishedName::new();
        p.distinguished_name.push(rcgen::DnType::CommonName, "www.test1.com");
        let c = p.self_signed(&kp).unwrap();
        assert_eq!(cert_names(c.der()), ["a.test", "*.b.test", "www.test1.com"]);
        let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        p.distinguished_name.push(rcgen::DnType::CommonName, "cn.test");
        let c = p.self_signed(&kp).unwrap();
        assert_eq!(cert_names(c.der()), ["cn.test"]);
    }
}
