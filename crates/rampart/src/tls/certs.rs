//! The certificates of the `bind ... ssl` lines as the runtime API sees them, and the
//! one pending certificate transaction: `show ssl cert`, `set ssl cert`, `commit ssl
//! cert`, `abort ssl cert`, with HAProxy 2.6's replies. A commit builds a new
//! [`SniStore`] for each bind serving the file and swaps it in: new handshakes read it
//! without a lock, handshakes and connections already under way keep the certificate
//! they had. A server's `crt` is replaced the same way ([`ServerCrt`]). HAProxy counterpart: ssl_ckch.c (ckch_store, the `ssl cert` CLI commands).

// the transaction lock is taken by CLI commands only, never on the handshake path
#[allow(clippy::disallowed_types)]
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rustls::sign::CertifiedKey;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use x509_parser::certificate::X509Certificate;

use super::bind::BindTls;
use super::pem::{self, CertKey};
use super::server_crt::ServerCrt;
use super::sni::cert_names;

/// A certificate being replaced: what `set ssl cert` uploaded so far.
#[derive(Debug)]
struct Txn {
    path: String,
    chain: Vec<CertificateDer<'static>>,
    key: Option<PrivateKeyDer<'static>>,
    /// The OCSP response to staple: the served one's until `set ssl cert <file>.ocsp`.
    ocsp: Option<Vec<u8>>,
    /// The served certificate a transaction started by `set ssl cert <file>.ocsp`
    /// keeps (its key cannot be read back as PEM).
    base: Option<Arc<CertifiedKey>>,
}

/// A certificate store no bind uses (`new ssl cert`): empty, or what a commit put in.
#[derive(Debug)]
struct Unused {
    path: String,
    chain: Vec<CertificateDer<'static>>,
    key: Option<PrivateKeyDer<'static>>,
}

/// What the CLI commands change: the pending transaction and the unused stores.
#[derive(Debug, Default)]
struct State {
    txn: Option<Txn>,
    unused: Vec<Unused>,
}

/// Every TLS bind's certificates, the stores no bind uses and the pending transaction
/// (one at a time, as HAProxy has).
#[derive(Debug, Default)]
#[allow(clippy::disallowed_types)] // CLI commands only: not on the handshake path
pub struct Certs {
    binds: Vec<Arc<BindTls>>,
    /// The servers' `crt` (each once).
    servers: Vec<Arc<ServerCrt>>,
    state: Mutex<State>,
}

impl Certs {
    /// The store over `binds` (each TLS bind once) and the servers' certificates.
    #[allow(clippy::disallowed_types)]
    pub fn new(binds: Vec<Arc<BindTls>>, servers: Vec<Arc<ServerCrt>>) -> Certs {
        Certs { binds, servers, state: Mutex::new(State::default()) }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The certificate files, each once, in configuration order, then the unused ones.
    fn paths(&self, st: &State) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for b in &self.binds {
            for p in b.store.load().paths() {
                if !out.iter().any(|o| o == p) {
                    out.push(p.to_string());
                }
            }
        }
        for s in &self.servers {
            if !out.contains(&s.path) {
                out.push(s.path.clone());
            }
        }
        out.extend(st.unused.iter().map(|u| u.path.clone()));
        out
    }

    /// The binds whose certificates the commands see.
    pub(super) fn binds(&self) -> &[Arc<BindTls>] {
        &self.binds
    }

    /// The certificate now served for `path`.
    fn current(&self, path: &str) -> Option<Arc<CertifiedKey>> {
        self.binds
            .iter()
            .find_map(|b| b.store.load().get(path).cloned())
            .or_else(|| self.servers.iter().find(|s| s.path == path).map(|s| s.current()))
    }

    /// `show ssl cert [<file>]`: the list of files (the pending one first, starred), or
    /// one certificate's details (`*<file>`: the pending one).
    pub fn show(&self, arg: Option<&str>) -> String {
        let st = self.state();
        let Some(arg) = arg else {
            let mut out = String::new();
            if let Some(t) = st.txn.as_ref() {
                out.push_str(&format!("# transaction\n*{}\n", t.path));
            }
            out.push_str("# filename\n");
            for p in self.paths(&st) {
                out.push_str(&p);
                out.push('\n');
            }
            return out;
        };
        const NOT_FOUND: &str = "Can't display the certificate: Not found or the certificate is a bundle!\n";
        if let Some(base) = arg.strip_suffix(".ocsp") {
            // the OCSP response of a certificate (`*`: of the pending transaction)
            let ocsp = match base.strip_prefix('*') {
                Some(path) => st.txn.as_ref().filter(|t| t.path == path).and_then(|t| t.ocsp.clone()),
                None => self.current(base).and_then(|ck| ck.ocsp.clone()),
            };
            return match ocsp.as_deref().map(super::ocsp::parse) {
                Some(Ok(info)) => info.render(),
                _ => NOT_FOUND.to_owned(),
            };
        }
        if let Some(path) = arg.strip_prefix('*') {
            return match st.txn.as_ref().filter(|t| t.path == path) {
                Some(t) => details(arg, "Unused", &t.chain, t.ocsp.as_deref()),
                None => NOT_FOUND.to_owned(),
            };
        }
        if let Some(ck) = self.current(arg) {
            return details(arg, "Used", &ck.cert, ck.ocsp.as_deref());
        }
        match st.unused.iter().find(|u| u.path == arg) {
            Some(u) if u.chain.is_empty() => format!("Filename: {arg}\nStatus: Empty\nOCSP Response Key: \n"),
            Some(u) => details(arg, "Unused", &u.chain, None),
            None => NOT_FOUND.to_owned(),
        }
    }

    /// `set ssl cert <file>` with the PEM `payload`: starts or updates the transaction.
    pub fn set(&self, path: Option<&str>, payload: Option<&str>) -> String {
        let (Some(path), Some(payload)) = (path, payload.filter(|p| !p.trim().is_empty())) else {
            return "'set ssl cert expects a filename and a certificate as a payload\n".to_owned();
        };
        // `<file>.ocsp`: the OCSP response (base64 DER) of certificate `<file>`
        let (path, ocsp) = match path.strip_suffix(".ocsp") {
            Some(base) => match super::ocsp::decode_base64(payload) {
                Ok(der) => (base, Some(der)),
                Err(e) => return format!("{e}\nCan't load the payload\nCan't update {path}!\n"),
            },
            None => (path, None),
        };
        let mut st = self.state();
        if let Some(t) = st.txn.as_ref().filter(|t| t.path != path) {
            return format!(
                "The ongoing transaction is about '{}' but you are trying to set '{path}'\nCan't update {path}!\n",
                t.path
            );
        }
        let known = self.current(path).is_some() || st.unused.iter().any(|u| u.path == path);
        if st.txn.is_none() && !known {
            return format!(
                "Can't replace a certificate which is not referenced by the configuration!\nCan't update {path}!\n"
            );
        }
        let verb = if st.txn.is_some() { "updated" } else { "created" };
        if let Some(ocsp) = ocsp {
            let t = st.txn.get_or_insert_with(|| self.txn_from_current(path));
            t.ocsp = Some(ocsp);
            return format!("Transaction {verb} for certificate {path}!\n");
        }
        let (chain, key) = match pem::load_payload(path, payload.as_bytes()) {
            Ok(x) => x,
            Err(e) => return format!("{e}\nCan't load the payload\nCan't update {path}!\n"),
        };
        let ocsp = match st.txn.take() {
            Some(t) => t.ocsp,
            None => self.current(path).and_then(|ck| ck.ocsp.clone()),
        };
        st.txn = Some(Txn { path: path.to_owned(), chain, key, ocsp, base: None });
        format!("Transaction {verb} for certificate {path}!\n")
    }

    /// `commit ssl cert <file>`: every bind serving the file serves the new
    /// certificate from its next handshake on.
    pub fn commit(&self, path: Option<&str>) -> String {
        let Some(path) = path else { return "'commit ssl cert expects a filename\n".to_owned() };
        let mut st = self.state();
        let Some(t) = st.txn.as_ref() else {
            return format!("No ongoing transaction! !\nCan't commit {path}!\n");
        };
        if t.path != path {
            return format!(
                "The ongoing transaction is about '{}' but you are trying to set '{path}'\nCan't commit {path}!\n",
                t.path
            );
        }
        let (certified, chain, key) = match (&t.key, &t.base) {
            (Some(key), _) => {
                let ck = CertKey { path: path.to_owned(), chain: t.chain.clone(), key: key.clone_key() };
                let certified = match ck.certified(&rustls::crypto::aws_lc_rs::default_provider()) {
                    Ok(c) if t.ocsp.is_some() => Arc::new(CertifiedKey { ocsp: t.ocsp.clone(), ..(*c).clone() }),
                    Ok(c) => c,
                    Err(e) => return format!("{e}\nCan't commit {path}!\n"),
                };
                (certified, ck.chain, Some(ck.key))
            }
            // only the OCSP response changed: the served certificate and key stay
            (None, Some(base)) => {
                (Arc::new(CertifiedKey { ocsp: t.ocsp.clone(), ..(**base).clone() }), base.cert.clone(), None)
            }
            (None, None) => {
                return format!(
                    "The transaction must contain at least a certificate and a private key!\nCan't commit {path}!\n"
                )
            }
        };
        let Some(leaf) = chain.first() else { return format!("Can't commit {path}!\n") };
        let names = cert_names(leaf);
        let mut out = format!("Committing {path}");
        for b in &self.binds {
            if let Some(new) = b.store.load().replaced(path, &certified, &names) {
                b.store.store(Arc::new(new));
                out.push('.');
            }
        }
        for s in self.servers.iter().filter(|s| s.path == path) {
            s.replace(certified.clone());
            out.push('.');
        }
        if let Some(u) = st.unused.iter_mut().find(|u| u.path == path) {
            u.chain = chain;
            if key.is_some() {
                u.key = key;
            }
        }
        st.txn = None;
        out.push_str("\nSuccess!\n");
        out
    }

    /// A transaction over the certificate now served for `path` (what `set ssl cert
    /// <file>.ocsp` starts from, as HAProxy copies the store).
    fn txn_from_current(&self, path: &str) -> Txn {
        let base = self.current(path);
        let chain = base.as_ref().map(|ck| ck.cert.clone()).unwrap_or_default();
        let ocsp = base.as_ref().and_then(|ck| ck.ocsp.clone());
        Txn { path: path.to_owned(), chain, key: None, ocsp, base }
    }

    /// `abort ssl cert <file>`: drops the pending transaction.
    pub fn abort(&self, path: Option<&str>) -> String {
        let Some(path) = path else { return "'abort ssl cert' expects a filename\n".to_owned() };
        let mut st = self.state();
        match st.txn.as_ref() {
            None => "No ongoing transaction!\n".to_owned(),
            Some(t) if t.path != path => format!(
                "The ongoing transaction is about '{}' but you are trying to abort a transaction for '{path}'\n",
                t.path
            ),
            Some(_) => {
                st.txn = None;
                format!("Transaction aborted for certificate '{path}'!\n")
            }
        }
    }

    /// `new ssl cert <file>`: an empty store, for `set ssl cert` to fill (no bind
    /// uses it until `add ssl crt-list`, which rampart does not have yet).
    pub fn new_cert(&self, path: Option<&str>) -> String {
        let Some(path) = path else { return "'new ssl cert' expects a filename\n".to_owned() };
        let mut st = self.state();
        if self.current(path).is_some() || st.unused.iter().any(|u| u.path == path) {
            return format!("Certificate '{path}' already exists!\n");
        }
        st.unused.push(Unused { path: path.to_owned(), chain: Vec::new(), key: None });
        format!("New empty certificate store '{path}'!\n")
    }

    /// `del ssl cert <file>`: removes a store no bind uses.
    pub fn del_cert(&self, path: Option<&str>) -> String {
        let Some(path) = path else { return "'del ssl cert' expects a certificate name\n".to_owned() };
        let mut st = self.state();
        if st.txn.as_ref().is_some_and(|t| t.path == path) {
            return format!("Can't remove the certificate: ongoing transaction for the certificate '{path}'\n");
        }
        if self.current(path).is_some() {
            return format!("Can't remove the certificate: certificate '{path}' in use, can't be deleted!\n\n");
        }
        match st.unused.iter().position(|u| u.path == path) {
            Some(i) => {
                st.unused.remove(i);
                format!("Certificate '{path}' deleted!\n")
            }
            None => format!("Can't remove the certificate: certificate '{path}' doesn't exist!\n\n"),
        }
    }
}

/// `show ssl cert <file>`'s details of `chain` (leaf first) stapling `ocsp`.
fn details(name: &str, status: &str, chain: &[CertificateDer<'_>], ocsp: Option<&[u8]>) -> String {
    use sha1::Digest;
    let mut out = format!("Filename: {name}\nStatus: {status}\n");
    let ocsp_key = ocsp.and_then(|d| super::ocsp::parse(d).ok()).map(|o| super::ocsp::hex_lower(&o.cert_id));
    let ocsp_line = format!("OCSP Response Key: {}\n", ocsp_key.unwrap_or_default());
    let Some(Ok((_, leaf))) = chain.first().map(|c| x509_parser::parse_x509_certificate(c)) else {
        out.push_str(&ocsp_line);
        return out;
    };
    out.push_str(&format!("Serial: {}\n", hex_upper(leaf.raw_serial())));
    out.push_str(&format!("notBefore: {}\n", openssl_time(&leaf.validity().not_before)));
    out.push_str(&format!("notAfter: {}\n", openssl_time(&leaf.validity().not_after)));
    let sans: Vec<String> = cert_sans(&leaf);
    if !sans.is_empty() {
        out.push_str(&format!("Subject Alternative Name: {}\n", sans.join(", ")));
    }
    out.push_str(&format!("Algorithm: {}\n", algorithm(&leaf)));
    out.push_str(&format!("SHA1 FingerPrint: {}\n", hex_upper(&sha1::Sha1::digest(chain[0].as_ref()))));
    out.push_str(&format!("Subject: {}\n", dn(leaf.subject())));
    out.push_str(&format!("Issuer: {}\n", dn(leaf.issuer())));
    for c in &chain[1..] {
        if let Ok((_, c)) = x509_parser::parse_x509_certificate(c) {
            out.push_str(&format!("Chain Subject: {}\n", dn(c.subject())));
            out.push_str(&format!("Chain Issuer: {}\n", dn(c.issuer())));
        }
    }
    out.push_str(&ocsp_line);
    out
}

/// A DN in OpenSSL's one-line form (`/C=FR/CN=name`).
pub(super) fn dn(n: &x509_parser::x509::X509Name<'_>) -> String {
    crate::sample::fetch::ssl::dn(n, &[]).unwrap_or_default()
}

pub(super) fn hex_upper(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

/// OpenSSL's `ASN1_TIME_print` form: `Jan 17 23:02:38 2016 GMT`.
pub(super) fn openssl_time(t: &x509_parser::time::ASN1Time) -> String {
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let d = t.to_datetime();
    let month = MONTHS[usize::from(u8::from(d.month())).saturating_sub(1) % 12];
    format!("{month} {:>2} {:02}:{:02}:{:02} {} GMT", d.day(), d.hour(), d.minute(), d.second(), d.year())
}

/// The subject alternative names as OpenSSL prints them (`DNS:a.test`).
pub(super) fn cert_sans(c: &X509Certificate<'_>) -> Vec<String> {
    use x509_parser::extensions::GeneralName;
    match c.subject_alternative_name() {
        Ok(Some(san)) => san
            .value
            .general_names
            .iter()
            .filter_map(|g| match g {
                GeneralName::DNSName(n) => Some(format!("DNS:{n}")),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The key's algorithm and size as HAProxy names it (`RSA2048`, `EC256`).
pub(super) fn algorithm(c: &X509Certificate<'_>) -> String {
    use x509_parser::public_key::PublicKey;
    match c.public_key().parsed() {
        Ok(PublicKey::RSA(k)) => format!("RSA{}", k.key_size()),
        Ok(PublicKey::EC(p)) => format!("EC{}", p.key_size()),
        _ => "Unknown".to_owned(),
    }
}

#[cfg(test)]
#[path = "certs_tests.rs"]
mod tests;
