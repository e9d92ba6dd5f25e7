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
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use x509_parser::certificate::X509Certificate;

use super::bind::{BindTls, FileLookup};
use super::castore::LineUsers;
use super::crtlists::{self, ListLines, RtList, Stores};
use super::pem::{self, CertKey};
use super::server_crt::ServerCrt;
use super::sni::cert_names;

/// Which part of a certificate store `set ssl cert` replaces, by the file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Certificates and key (any other name).
    Pem,
    /// `.crt`: the certificates (and the key if the payload has one).
    Crt,
    /// `.key`: the private key.
    Key,
}

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

/// A certificate store no bind uses (`new ssl cert`): empty, or what a commit put in,
/// or a certificate whose last crt-list line was deleted.
#[derive(Debug)]
struct Unused {
    path: String,
    chain: Vec<CertificateDer<'static>>,
    key: Option<PrivateKeyDer<'static>>,
    /// The certificate as binds served it (a deleted crt-list line's).
    certified: Option<Arc<CertifiedKey>>,
}

/// What the CLI commands change: the pending transaction, the unused stores, the
/// crt-lists.
#[derive(Debug, Default)]
struct State {
    txn: Option<Txn>,
    unused: Vec<Unused>,
    lists: Vec<RtList>,
}

/// Every TLS bind's certificates, the stores no bind uses and the pending transaction
/// (one at a time, as HAProxy has).
#[derive(Debug, Default)]
#[allow(clippy::disallowed_types)] // CLI commands only: not on the handshake path
pub struct Certs {
    binds: Vec<Arc<BindTls>>,
    /// The `crt` of the live servers (each once): `add server` adds one, `del server`
    /// removes it (taken alone, never while waiting for another lock).
    servers: Mutex<Vec<Arc<ServerCrt>>>,
    state: Mutex<State>,
}

impl Certs {
    /// The store over `binds` (each TLS bind once) and the servers' certificates.
    #[allow(clippy::disallowed_types)]
    pub fn new(binds: Vec<Arc<BindTls>>, servers: Vec<Arc<ServerCrt>>) -> Certs {
        let state = State { lists: crtlists::from_binds(&binds), ..State::default() };
        Certs { binds, servers: Mutex::new(servers), state: Mutex::new(state) }
    }

    /// The live servers' certificates, a copy taken under their lock.
    fn servers(&self) -> Vec<Arc<ServerCrt>> {
        self.servers.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The certificate files (binds', servers', unused ones), each once, in byte order
    /// as HAProxy lists its certificate tree.
    fn paths(&self, st: &State) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for b in &self.binds {
            out.extend(b.store.load().paths().map(str::to_owned));
        }
        out.extend(self.servers().iter().map(|s| s.path.clone()));
        out.extend(st.unused.iter().map(|u| u.path.clone()));
        out.sort_unstable();
        out.dedup();
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
            .or_else(|| self.servers().iter().find(|s| s.path == path).map(|s| s.current()))
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
    /// `<name>.key` replaces the key of certificate `<name>` (of `<name>.crt` with
    /// `ssl-load-extra-del-ext`), `<name>.crt` its certificates, `<name>.ocsp` its OCSP
    /// response (base64 DER), as in HAProxy.
    pub fn set(&self, path: Option<&str>, payload: Option<&str>) -> String {
        let (Some(arg), Some(payload)) = (path, payload.filter(|p| !p.trim().is_empty())) else {
            return "'set ssl cert expects a filename and a certificate as a payload\n".to_owned();
        };
        let mut st = self.state();
        if let Some(base) = arg.strip_suffix(".ocsp") {
            return self.set_ocsp_part(&mut st, arg, base, payload);
        }
        let (path, kind) = match self.target(&st, arg) {
            Ok(t) => t,
            Err(e) => return format!("{e}Can't update {arg}!\n"),
        };
        let (chain, key) = match kind {
            Part::Key => {
                let Ok(key) = PrivateKeyDer::from_pem_slice(payload.as_bytes()) else {
                    return format!("No Private Key found in '{arg}'.\nCan't load the payload\nCan't update {arg}!\n");
                };
                let chain = match st.txn.as_ref() {
                    Some(t) => t.chain.clone(),
                    None => self.chain_of(&st, &path),
                };
                (chain, Some(key))
            }
            Part::Pem | Part::Crt => match pem::load_payload(&path, payload.as_bytes()) {
                // COMPAT: HAProxy's transaction starts from the served store and keeps its
                // key; rampart keeps only the pending transaction's (a served key is not
                // kept as PEM), so `<name>.crt` alone needs its `<name>.key` before a commit
                Ok((chain, key)) if kind == Part::Crt && key.is_none() => {
                    (chain, st.txn.as_ref().and_then(|t| t.key.as_ref().map(|k| k.clone_key())))
                }
                Ok(x) => x,
                Err(e) => return format!("{e}\nCan't load the payload\nCan't update {arg}!\n"),
            },
        };
        let verb = if st.txn.is_some() { "updated" } else { "created" };
        let ocsp = match st.txn.take() {
            Some(t) => t.ocsp,
            None => self.current(&path).and_then(|ck| ck.ocsp.clone()),
        };
        st.txn = Some(Txn { path: path.clone(), chain, key, ocsp, base: None });
        format!("Transaction {verb} for certificate {path}!\n")
    }

    /// `set ssl cert <base>.ocsp`: the OCSP response the transaction on `base` staples.
    fn set_ocsp_part(&self, st: &mut State, arg: &str, base: &str, payload: &str) -> String {
        let der = match super::ocsp::decode_base64(payload) {
            Ok(der) => der,
            Err(e) => return format!("{e}\nCan't load the payload\nCan't update {arg}!\n"),
        };
        if let Some(t) = st.txn.as_ref().filter(|t| t.path != base) {
            return format!(
                "The ongoing transaction is about '{}' but you are trying to set '{base}'\nCan't update {base}!\n",
                t.path
            );
        }
        let known = self.current(base).is_some() || st.unused.iter().any(|u| u.path == base);
        if st.txn.is_none() && !known {
            return format!(
                "Can't replace a certificate which is not referenced by the configuration!\nCan't update {base}!\n"
            );
        }
        let verb = if st.txn.is_some() { "updated" } else { "created" };
        let t = st.txn.get_or_insert_with(|| self.txn_from_current(base));
        t.ocsp = Some(der);
        format!("Transaction {verb} for certificate {base}!\n")
    }

    /// The certificate store `set ssl cert <arg>` changes and which part of it, or
    /// the error lines. HAProxy counterpart: the extension lookup of
    /// `cli_parse_set_cert()`.
    fn target(&self, st: &State, arg: &str) -> Result<(String, Part), String> {
        let noext = self.binds.first().is_some_and(|b| b.global.extra_files_noext);
        let (base, kind) = match arg.rsplit_once('.') {
            Some((b, "crt")) => (b, Part::Crt),
            Some((b, "key")) => (b, Part::Key),
            _ => (arg, Part::Pem),
        };
        let crt = format!("{base}.crt");
        let known = |p: &str| self.current(p).is_some() || st.unused.iter().any(|u| u.path == p);
        let is = |p: &str| match st.txn.as_ref() {
            Some(t) => t.path == p,
            None => known(p),
        };
        if is(base) {
            return Ok((base.to_owned(), kind));
        }
        if noext && kind != Part::Pem && is(&crt) {
            return Ok((crt, kind));
        }
        // COMPAT: HAProxy 2.6 refuses `set ssl cert <name>.crt` for a certificate loaded
        // as `<name>.crt` without `ssl-load-extra-del-ext`; rampart takes the whole file.
        if kind != Part::Key && is(arg) {
            return Ok((arg.to_owned(), Part::Pem));
        }
        Err(match st.txn.as_ref() {
            Some(t) => format!("The ongoing transaction is about '{}' but you are trying to set '{base}'\n", t.path),
            None => "Can't replace a certificate which is not referenced by the configuration!\n".to_owned(),
        })
    }

    /// The certificates a store serves now (leaf first).
    fn chain_of(&self, st: &State, path: &str) -> Vec<CertificateDer<'static>> {
        match self.current(path) {
            Some(k) => k.cert.clone(),
            None => st.unused.iter().find(|u| u.path == path).map(|u| u.chain.clone()).unwrap_or_default(),
        }
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
        for s in self.servers().iter().filter(|s| s.path == path) {
            s.replace(certified.clone());
            out.push('.');
        }
        if let Some(u) = st.unused.iter_mut().find(|u| u.path == path) {
            u.chain = chain;
            if key.is_some() {
                u.key = key;
            }
            u.certified = Some(certified);
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
        st.unused.push(Unused { path: path.to_owned(), chain: Vec::new(), key: None, certified: None });
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

impl Certs {
    /// `add server ... crt <file>`: the new server presents the store's certificate
    /// when the store has one (a commit may have replaced what the file on disk holds,
    /// as HAProxy takes the certificate from its store), and counts as a user of it.
    pub fn server_added(&self, crt: &Arc<ServerCrt>) {
        let mut st = self.state();
        if let Ok(Some(key)) = self.lookup(&st, &crt.path) {
            crt.replace(key);
        }
        st.unused.retain(|u| u.path != crt.path);
        self.servers.lock().unwrap_or_else(PoisonError::into_inner).push(crt.clone());
    }

    /// `del server`: the server no longer uses its certificate. The last user gone,
    /// the store stays, unused (`show ssl cert`: `Unused`; a commit names no user),
    /// as in HAProxy.
    pub fn server_removed(&self, crt: &Arc<ServerCrt>) {
        let mut st = self.state();
        self.servers.lock().unwrap_or_else(PoisonError::into_inner).retain(|s| !Arc::ptr_eq(s, crt));
        if self.current(&crt.path).is_none() && !st.unused.iter().any(|u| u.path == crt.path) {
            let key = crt.current();
            st.unused.push(Unused { path: crt.path.clone(), chain: key.cert.clone(), key: None, certified: Some(key) });
        }
    }

    /// The certificate of store `path`: served by a bind, or unused (`Ok(None)`: an
    /// empty store); `Err` when there is none.
    fn lookup(&self, st: &State, path: &str) -> Result<Option<Arc<CertifiedKey>>, ()> {
        if let Some(k) = self.current(path) {
            return Ok(Some(k));
        }
        let u = st.unused.iter().find(|u| u.path == path).ok_or(())?;
        if let Some(c) = &u.certified {
            return Ok(Some(c.clone()));
        }
        let Some(key) = u.key.as_ref().filter(|_| !u.chain.is_empty()) else { return Ok(None) };
        let ck = CertKey { path: path.to_owned(), chain: u.chain.clone(), key: key.clone_key() };
        Ok(ck.certified(&rustls::crypto::aws_lc_rs::default_provider()).ok())
    }

    /// `show ssl crt-list [-n] [<list>]` (`args`: the words after `crt-list`).
    pub fn show_crtlist(&self, args: &[&str]) -> String {
        crtlists::show(&self.state().lists, args)
    }

    /// `add ssl crt-list <list> <crt>`, or the line in `payload`; its CA and CRL
    /// files are those of `files` (the CA store, [`super::castore::CaStore::contents`]).
    pub fn add_crtlist(&self, args: &[&str], payload: Option<&str>, files: FileLookup<'_>) -> String {
        let mut st = self.state();
        let mut lists = std::mem::take(&mut st.lists);
        let out = {
            let cert = |p: &str| self.lookup(&st, p);
            let stores = Stores { binds: &self.binds, cert: &cert, files };
            crtlists::add(&mut lists, &stores, args, payload)
        };
        st.lists = lists;
        out
    }

    /// `del ssl crt-list <list> <crt[:line]>`. A certificate no bind serves any more
    /// stays as an unused store, as in HAProxy.
    pub fn del_crtlist(&self, args: &[&str]) -> String {
        let mut st = self.state();
        let mut lists = std::mem::take(&mut st.lists);
        let (out, freed) = {
            let cert = |p: &str| self.lookup(&st, p);
            let stores = Stores { binds: &self.binds, cert: &cert, files: &super::bind::on_disk };
            crtlists::del(&mut lists, &stores, args)
        };
        st.lists = lists;
        if let Some((path, key)) = freed.filter(|(p, _)| !st.unused.iter().any(|u| &u.path == p)) {
            st.unused.push(Unused { path, chain: key.cert.clone(), key: None, certified: Some(key) });
        }
        out
    }

    /// Runs `f` with the crt-list lines (for the CA store's `commit` and `del`), the
    /// lines locked meanwhile: the lock order is always this one, then the CA store's.
    pub fn with_lines<R>(&self, f: impl FnOnce(&dyn LineUsers) -> R) -> R {
        let st = self.state();
        f(&ListLines { lists: &st.lists, binds: &self.binds })
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
    out.push_str(&format!("Subject Alternative Name: {}\n", cert_sans(&leaf).join(", ")));
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

/// The subject alternative names as HAProxy prints them: `DNS:a.test` for a DNS name,
/// an empty item for any other kind (HAProxy still writes its `, ` separator).
pub(super) fn cert_sans(c: &X509Certificate<'_>) -> Vec<String> {
    use x509_parser::extensions::GeneralName;
    match c.subject_alternative_name() {
        Ok(Some(san)) => san
            .value
            .general_names
            .iter()
            .map(|g| match g {
                GeneralName::DNSName(n) => format!("DNS:{n}"),
                _ => String::new(),
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
