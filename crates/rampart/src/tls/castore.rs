//! The CA and CRL files as the runtime API sees them: every `ca-file`,
//! `ca-verify-file` and `crl-file` of the binds and servers, loaded once by name, the
//! ones `new ssl ca-file` / `new ssl crl-file` created, and one pending transaction of
//! each kind. `commit` rebuilds the verifier of every bind and server reading the file
//! ([`super::verifier`]), and the configuration of every crt-list line naming it
//! ([`LineUsers`]), and swaps them in: new handshakes use them, handshakes already
//! under way keep theirs. A crt-list line added at run time names files of this store
//! only (HAProxy reads no file from the CLI). The commands answer with HAProxy 2.6's
//! texts.
//! HAProxy counterpart: ssl_ckch.c (cafile_entry tree, the `ssl ca-file` and
//! `ssl crl-file` CLI commands).

// the store lock is taken by CLI commands only, never on the handshake path
#[allow(clippy::disallowed_types)]
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use std::collections::BTreeMap;
use std::path::Path;

use super::bind::{BindTls, Configs};
use super::castore_show as show;
use super::pem;
use super::sni::Origin;
use super::verifier::{self, BuildError, CaDer, CrlDer, ServerChain, SwapChain};
use super::verify::ClientVerify;

/// What a store file holds: CA certificates or CRLs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ca,
    Crl,
}

impl Kind {
    /// The word of the commands (`ca-file`, `crl-file`).
    fn word(self) -> &'static str {
        match self {
            Kind::Ca => "ca-file",
            Kind::Crl => "crl-file",
        }
    }

    /// How the messages name such a file (`CA`, `CRL`).
    fn short(self) -> &'static str {
        match self {
            Kind::Ca => "CA",
            Kind::Crl => "CRL",
        }
    }
}

/// The contents of one file, DER.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Contents {
    Ca(Vec<CaDer>),
    Crl(Vec<CrlDer>),
}

impl Contents {
    pub fn kind(&self) -> Kind {
        match self {
            Contents::Ca(_) => Kind::Ca,
            Contents::Crl(_) => Kind::Crl,
        }
    }

    /// Whether the file holds nothing (created by `new`, never committed).
    pub fn is_empty(&self) -> bool {
        match self {
            Contents::Ca(c) => c.is_empty(),
            Contents::Crl(c) => c.is_empty(),
        }
    }

    fn empty(kind: Kind) -> Contents {
        match kind {
            Kind::Ca => Contents::Ca(Vec::new()),
            Kind::Crl => Contents::Crl(Vec::new()),
        }
    }

    fn cas(&self) -> &[CaDer] {
        match self {
            Contents::Ca(c) => c,
            Contents::Crl(_) => &[],
        }
    }

    fn crls(&self) -> &[CrlDer] {
        match self {
            Contents::Crl(c) => c,
            Contents::Ca(_) => &[],
        }
    }
}

/// A pending `set ssl ca-file` / `set ssl crl-file`: the file and its new contents.
#[derive(Debug)]
struct Txn {
    path: String,
    contents: Contents,
}

/// The files by name (sorted, as HAProxy lists them) and the transactions.
#[derive(Debug, Default)]
struct State {
    files: BTreeMap<String, Contents>,
    ca_txn: Option<Txn>,
    crl_txn: Option<Txn>,
}

impl State {
    fn txn(&mut self, kind: Kind) -> &mut Option<Txn> {
        match kind {
            Kind::Ca => &mut self.ca_txn,
            Kind::Crl => &mut self.crl_txn,
        }
    }

    /// The file `path` when it holds `kind`.
    fn file(&self, kind: Kind, path: &str) -> Option<&Contents> {
        self.files.get(path).filter(|c| c.kind() == kind)
    }

    fn cas(&self, path: Option<&str>) -> &[CaDer] {
        path.and_then(|p| self.files.get(p)).map_or(&[], Contents::cas)
    }

    /// The CRLs of a `crl-file` (`None`: no `crl-file`).
    fn crls(&self, path: Option<&str>) -> Option<&[CrlDer]> {
        path.map(|p| self.files.get(p).map_or(&[][..], Contents::crls))
    }
}

/// The CA and CRL files, and the binds and servers that verify with them.
#[derive(Debug, Default)]
#[allow(clippy::disallowed_types)] // CLI commands only: not on the handshake path
pub struct CaStore {
    binds: Vec<Arc<BindTls>>,
    /// The chain checks of the live servers: `add server` adds one, `del server`
    /// removes it (taken alone, never while waiting for another lock).
    servers: Mutex<Vec<Arc<SwapChain>>>,
    state: Mutex<State>,
}

impl CaStore {
    /// The store of the files `binds` and `servers` verify with, read from disk (the
    /// configuration loaded them already: a file that no longer loads is left out).
    #[allow(clippy::disallowed_types)]
    pub fn new(binds: Vec<Arc<BindTls>>, servers: Vec<Arc<SwapChain>>) -> CaStore {
        let mut files = BTreeMap::new();
        let mut load = |kind: Kind, path: Option<&String>| {
            let Some(path) = path.filter(|p| !files.contains_key(*p)) else { return };
            let loaded = match kind {
                Kind::Ca => pem::load_ca_file(Path::new(path)).map(Contents::Ca),
                Kind::Crl => pem::load_crl_file(Path::new(path)).map(Contents::Crl),
            };
            if let Ok(c) = loaded {
                files.insert(path.clone(), c);
            }
        };
        for f in binds.iter().filter_map(|b| b.ca_files.as_ref()) {
            load(Kind::Ca, f.ca_file.as_ref());
            load(Kind::Ca, f.ca_verify_file.as_ref());
            load(Kind::Crl, f.crl_file.as_ref());
        }
        for s in &servers {
            load(Kind::Ca, Some(&s.ca_file));
            load(Kind::Crl, s.crl_file.as_ref());
        }
        // the files the crt-list lines name (`ca-base` already applied)
        for o in binds.iter().flat_map(|b| &b.lists).flat_map(|l| &l.lines).filter_map(|l| l.options.as_ref()) {
            for (path, crl) in o.files() {
                let path = path.display().to_string();
                load(if crl { Kind::Crl } else { Kind::Ca }, Some(&path));
            }
        }
        let state = State { files, ..State::default() };
        CaStore { binds, servers: Mutex::new(servers), state: Mutex::new(state) }
    }

    /// The live servers' chain checks, a copy taken under their lock.
    fn servers(&self) -> Vec<Arc<SwapChain>> {
        self.servers.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// `add server ... verify required ca-file <f> [crl-file <c>]`: the server checks
    /// with the store's contents of its files when the store has them (a commit may
    /// have changed them since they were read from disk), and counts as a user of them.
    pub fn server_added(&self, chain: &Arc<SwapChain>) {
        let st = self.state();
        let stored =
            st.files.contains_key(&chain.ca_file) && chain.crl_file.as_ref().is_none_or(|c| st.files.contains_key(c));
        if stored {
            if let Ok(v) = verifier::server_chain(
                st.cas(Some(&chain.ca_file)),
                st.crls(chain.crl_file.as_deref()),
                &chain.provider,
            ) {
                chain.set(v);
            }
        }
        self.servers.lock().unwrap_or_else(PoisonError::into_inner).push(chain.clone());
    }

    /// `del server`: the server no longer uses its files (they stay in the store).
    pub fn server_removed(&self, chain: &Arc<SwapChain>) {
        self.servers.lock().unwrap_or_else(PoisonError::into_inner).retain(|s| !Arc::ptr_eq(s, chain));
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a bind or a server verifies with `path`.
    fn used(&self, path: &str) -> bool {
        self.binds.iter().any(|b| b.ca_files.as_ref().is_some_and(|f| f.uses(path)))
            || self.servers().iter().any(|s| s.uses(path))
    }

    /// The contents of file `path` (`add server` looks its `ca-file` and `crl-file` up
    /// here first; also a test and diagnostics helper).
    pub fn contents(&self, path: &str) -> Option<Contents> {
        self.state().files.get(path).cloned()
    }

    /// `show ssl ca-file|crl-file [[*]<file>[:<index>]]`: the list (the pending
    /// file first, starred), or a file's details (`*<file>`: the pending contents;
    /// `:<n>`: its n-th certificate or CRL only, from 1); a file is `Used` by a bind,
    /// a server or a crt-list line (of `lines`).
    pub fn show(&self, kind: Kind, arg: Option<&str>, lines: &dyn LineUsers) -> String {
        let st = self.state();
        let Some(arg) = arg else { return self.list(&st, kind) };
        let (name, index) = match arg.rsplit_once(':') {
            Some((name, i)) => match i.parse::<usize>() {
                Ok(i) if i > 0 => (name, Some(i)),
                _ => return format!("wrong {} index after colons in '{arg}'!\n", kind.short()),
            },
            None => (arg, None),
        };
        let found = match name.strip_prefix('*') {
            Some(path) => st.clone_txn(kind).filter(|t| t.path == path).map(|t| (t.contents, "Unused")),
            None => st
                .file(kind, name)
                .map(|c| (c.clone(), if self.used(name) || lines.uses(name) { "Used" } else { "Unused" })),
        };
        match found {
            Some((c, status)) => show::details(name, status, &c, index),
            None => format!("Can't display the {} file : Not found!\n", kind.short()),
        }
    }

    /// The list of `show ssl ca-file` (with the certificate counts) or `show ssl crl-file`.
    fn list(&self, st: &State, kind: Kind) -> String {
        let line = |path: &str, c: &Contents| match c {
            Contents::Ca(cas) => format!("{path} - {} certificate(s)\n", cas.len()),
            Contents::Crl(_) => format!("{path}\n"),
        };
        let mut out = String::new();
        if let Some(t) = st.clone_txn(kind) {
            out.push_str("# transaction\n*");
            out.push_str(&line(&t.path, &t.contents));
        }
        out.push_str("# filename\n");
        for (path, c) in st.files.iter().filter(|(_, c)| c.kind() == kind) {
            out.push_str(&line(path, c));
        }
        out
    }

    /// `set ssl ca-file|crl-file <file>` with the PEM `payload`: starts or updates
    /// the transaction of that kind.
    pub fn set(&self, kind: Kind, path: Option<&str>, payload: Option<&str>) -> String {
        let (Some(path), Some(payload)) = (path, payload.filter(|p| !p.trim().is_empty())) else {
            let what = if kind == Kind::Ca { "CAs" } else { "CRLs" };
            return format!("'set ssl {} expects a filename and {what} as a payload\n", kind.word());
        };
        let mut st = self.state();
        if let Some(t) = st.txn(kind).as_ref().filter(|t| t.path != path) {
            return format!(
                "The ongoing transaction is about '{}' but you are trying to set '{path}'\nCan't update {path}!\n",
                t.path
            );
        }
        if st.file(kind, path).is_none() {
            return format!(
                "Can't replace a {} file which is not referenced by the configuration!\nCan't update {path}!\n",
                kind.short()
            );
        }
        let contents = match (kind, pem::store_payload(payload.as_bytes())) {
            (Kind::Ca, Some((cas, _))) if valid_cas(&cas) => Contents::Ca(cas),
            (Kind::Crl, Some((_, crls))) if valid_crls(&crls) => Contents::Crl(crls),
            _ => return format!("Invalid payload\nCan't update {path}!\n"),
        };
        let txn = st.txn(kind);
        let verb = if txn.is_some() { "updated" } else { "created" };
        *txn = Some(Txn { path: path.to_owned(), contents });
        format!("transaction {verb} for {} {path}!\n", kind.short())
    }

    /// `commit ssl ca-file|crl-file <file>`: the file gets the pending contents and
    /// every bind, server and crt-list line (of `lines`) verifying with it verifies new
    /// handshakes with them.
    pub fn commit(&self, kind: Kind, path: Option<&str>, lines: &dyn LineUsers) -> String {
        // COMPAT: HAProxy 2.6 says `ca-file` here for both kinds
        let Some(path) = path else { return "'commit ssl ca-file expects a filename\n".to_owned() };
        let mut st = self.state();
        let Some(t) = st.clone_txn(kind) else {
            return format!("No ongoing transaction! !\nCan't commit {path}!\n");
        };
        if t.path != path {
            return format!(
                "The ongoing transaction is about '{}' but you are trying to set '{path}'\nCan't commit {path}!\n",
                t.path
            );
        }
        let mut next = st.files.clone();
        next.insert(path.to_owned(), t.contents);
        let next = State { files: next, ..State::default() };
        let swaps = match self.rebuild(&next, path) {
            Ok(s) => s,
            Err(e) => return format!("{e}\nCan't commit {path}!\n"),
        };
        let stored = |p: &str| next.files.get(p).cloned();
        let line_swaps = match lines.rebuild(path, &stored) {
            Ok(s) => s,
            Err(e) => return format!("{e}\nCan't commit {path}!\n"),
        };
        let mut out = format!("Committing {path}");
        for swap in swaps {
            if let Err(e) = swap.apply() {
                return format!("{out}\n{e}\nCan't commit {path}!\n");
            }
            out.push('.');
        }
        for swap in line_swaps {
            swap.apply();
            out.push('.');
        }
        st.files = next.files;
        *st.txn(kind) = None;
        out.push_str("\nSuccess!\n");
        out
    }

    /// The new verifier of every bind and server reading `path`, built from `st`'s
    /// files; nothing is swapped yet (one that fails to build leaves all as they are).
    fn rebuild(&self, st: &State, path: &str) -> Result<Vec<Swap<'_>>, BuildError> {
        let mut out = Vec::new();
        for b in &self.binds {
            let Some(f) = b.ca_files.as_ref().filter(|f| f.uses(path)) else { continue };
            let provider = b.config().crypto_provider().clone();
            let v = verifier::client_verifier(
                st.cas(f.ca_file.as_deref()),
                st.cas(f.ca_verify_file.as_deref()),
                st.crls(f.crl_file.as_deref()),
                f,
                &provider,
            )?;
            out.push(Swap::Bind(b, v));
        }
        for s in self.servers().into_iter().filter(|s| s.uses(path)) {
            let v = verifier::server_chain(st.cas(Some(&s.ca_file)), st.crls(s.crl_file.as_deref()), &s.provider)?;
            out.push(Swap::Server(s, v));
        }
        Ok(out)
    }

    /// `abort ssl ca-file|crl-file <file>`: drops the pending transaction.
    pub fn abort(&self, kind: Kind, path: Option<&str>) -> String {
        let Some(path) = path else { return format!("'abort ssl {}' expects a filename\n", kind.word()) };
        let mut st = self.state();
        let txn = st.txn(kind);
        match txn.as_ref() {
            None => "No ongoing transaction!\n".to_owned(),
            Some(t) if t.path != path => format!(
                "The ongoing transaction is about '{}' but you are trying to abort a transaction for '{path}'\n",
                t.path
            ),
            Some(_) => {
                *txn = None;
                format!("Transaction aborted for certificate '{path}'!\n")
            }
        }
    }

    /// `new ssl ca-file|crl-file <file>`: an empty file no bind uses, for `set` to fill.
    pub fn new_file(&self, kind: Kind, path: Option<&str>) -> String {
        let Some(path) = path else { return format!("'new ssl {}' expects a filename\n", kind.word()) };
        let mut st = self.state();
        if st.files.contains_key(path) {
            return format!("{} file '{path}' already exists!\n", kind.short());
        }
        st.files.insert(path.to_owned(), Contents::empty(kind));
        format!("New {} file created '{path}'!\n", kind.short())
    }

    /// `del ssl ca-file|crl-file <file>`: removes a file no bind, server or crt-list
    /// line (of `lines`) uses.
    pub fn del_file(&self, kind: Kind, path: Option<&str>, lines: &dyn LineUsers) -> String {
        let k = kind.short();
        let Some(path) = path else { return format!("'del ssl {}' expects a {k} file name\n", kind.word()) };
        let mut st = self.state();
        if st.txn(kind).as_ref().is_some_and(|t| t.path == path) {
            return format!("Can't remove the {k} file: ongoing transaction for the {k} file '{path}'\n");
        }
        if st.file(kind, path).is_none() {
            return format!("Can't remove the {k} file: {k} file '{path}' doesn't exist!\n\n");
        }
        if self.used(path) || lines.uses(path) {
            return format!("Can't remove the {k} file: {k} file '{path}' in use, can't be deleted!\n\n");
        }
        st.files.remove(path);
        format!("{k} file '{path}' deleted!\n")
    }
}

impl State {
    /// A copy of the transaction of `kind` (the show commands format it unlocked).
    fn clone_txn(&self, kind: Kind) -> Option<Txn> {
        let t = match kind {
            Kind::Ca => self.ca_txn.as_ref(),
            Kind::Crl => self.crl_txn.as_ref(),
        }?;
        Some(Txn { path: t.path.clone(), contents: t.contents.clone() })
    }
}

/// The crt-list lines, as the store's commands need them (the lines are kept by
/// [`super::certs::Certs`]; `()`: no line). HAProxy counterpart: the `ckch_inst_link`
/// list of a cafile entry.
pub trait LineUsers {
    /// Whether a line names file `path` (`ca-file`, `ca-verify-file`, `crl-file`).
    fn uses(&self, path: &str) -> bool;

    /// The new configurations of the lines naming `path`, built with the files of
    /// `files` (else from disk); nothing is swapped yet. `Err`: why one cannot be
    /// built.
    fn rebuild(&self, path: &str, files: super::bind::FileLookup<'_>) -> Result<Vec<LineSwap>, String>;
}

impl LineUsers for () {
    fn uses(&self, _: &str) -> bool {
        false
    }

    fn rebuild(&self, _: &str, _: super::bind::FileLookup<'_>) -> Result<Vec<LineSwap>, String> {
        Ok(Vec::new())
    }
}

/// The configuration of a crt-list line of one bind, rebuilt for a commit.
pub struct LineSwap {
    pub bind: Arc<BindTls>,
    pub origin: Origin,
    pub tls: Option<Arc<Configs>>,
}

impl LineSwap {
    /// The bind's next handshakes for the line's certificate use the new configuration.
    fn apply(self) {
        if let Some(new) = self.bind.store.load().with_tls(&self.origin, self.tls) {
            self.bind.store.store(Arc::new(new));
        }
    }
}

/// A verifier built for a commit, not swapped in yet.
enum Swap<'a> {
    Bind(&'a BindTls, Arc<ClientVerify>),
    Server(Arc<SwapChain>, ServerChain),
}

impl Swap<'_> {
    fn apply(self) -> Result<(), String> {
        match self {
            Swap::Bind(b, v) => b.set_verifier(v),
            Swap::Server(s, v) => {
                s.set(v);
                Ok(())
            }
        }
    }
}

/// A CA payload: at least one certificate, each one X.509.
fn valid_cas(cas: &[CaDer]) -> bool {
    !cas.is_empty() && cas.iter().all(|c| x509_parser::parse_x509_certificate(c).is_ok())
}

/// A CRL payload: at least one CRL, each one parsed.
fn valid_crls(crls: &[CrlDer]) -> bool {
    !crls.is_empty() && crls.iter().all(|c| x509_parser::parse_x509_crl(c).is_ok())
}

#[cfg(test)]
#[path = "castore_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "castore_lines_tests.rs"]
mod lines_tests;
