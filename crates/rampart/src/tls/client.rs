//! TLS towards servers: one rustls client configuration per `server ... ssl` (and one
//! for its health checks), built at startup from the server line, its `default-server`
//! and the `ssl-default-server-*` / `ssl-server-verify` globals. Certificate checks,
//! SNI, ALPN, the client certificate (`crt`) and the session cache (`ssl-reuse`) live
//! in the configuration; `tls::stream::connect` runs the handshake.
//! HAProxy counterparts: `ssl_sock_prepare_srv_ctx()`, `ssl_sock_srv_verifycbk()`
//! (src/ssl_sock.c), the `srv_parse_*()` keywords of src/cfgparse-ssl.c.
//!
//! Not here: the PEM files (`tls::pem`), the TLS socket (`tls::stream`), connecting
//! (`backend`), the `ssl_bc*` fetches (`sample::fetch::ssl_bc`).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicI8, AtomicU64, Ordering};
use std::sync::Arc;

use rampart_cfg::diag::Diag;
use rampart_cfg::model::{GlobalSsl, Proxy, Server, ServerTls, SslServerDefaults, TlsVersion, TlsVersions};
use rampart_cfg::Config;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ResolvesClientCert, Resumption, Tls12Resumption};
use rustls::crypto::CryptoProvider;
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

use super::bind::{based, FileLookup};
use super::castore::Contents;
use super::pem;
use super::server_crt::{ServerCrt, Sessions};
use super::suites;
use super::verifier::{BuildError, SwapChain};
use crate::sample::expr::{self, CompileCx, Expr, Place, Site};

/// TLS sessions remembered per server for resumption (HAProxy keeps one per thread).
const SESSION_CACHE: usize = 64;

/// The TLS side of one server at run time.
#[derive(Debug)]
pub struct ServerTlsRt {
    /// For traffic, when the server has TLS settings (`ssl`, or inherited from
    /// `default-server`); used while [`ServerTlsRt::traffic`] says so.
    traffic_cfg: Option<Arc<ClientConfig>>,
    /// HAProxy's `use_ssl`: 1 traffic is TLS, 0 not, -1 `no-ssl`; `set server ...
    /// ssl on|off` changes it.
    use_ssl: AtomicI8,
    /// Counts `set server ... ssl` changes: part of the connection key, so that an
    /// idle connection made before a change is not reused.
    ssl_changes: AtomicU64,
    /// For health checks, when they speak TLS (`ssl` or `check-ssl`).
    pub check: Option<Arc<ClientConfig>>,
    /// `sni <expr>`: evaluated by the stream that connects (`stream` passes the value).
    pub sni: Option<Expr>,
    /// The first server of the backend with the same `sni` expression: its value,
    /// computed once per stream, serves them all ([`SniValues`]).
    pub sni_slot: usize,
    /// `check-sni <name>`.
    pub check_sni: Option<ServerName<'static>>,
    /// The name used when no SNI is sent: the server's address (rustls sends no SNI
    /// for an address, and the certificate's names are then not checked).
    pub addr_name: ServerName<'static>,
    /// `verify required`: the chain verifier, for `commit ssl ca-file` / `crl-file`.
    pub chain: Option<Arc<SwapChain>>,
    /// `crt`: the certificate presented, replaceable by `commit ssl cert`.
    pub crt: Option<Arc<ServerCrt>>,
    /// What every configuration of the server shares, for the checks' `connect ssl`
    /// rules with their own ALPN.
    base: Arc<Base>,
    /// The server's `alpn` list as offered.
    alpn: Vec<Vec<u8>>,
    /// For the connections of WebSocket streams that `ws` sends apart (HAProxy's
    /// `conn_update_alpn()` in `connect_server()`): `http/1.1` only (`ws h1`, or `ws
    /// auto` with `http/1.1` in the list), `h2` only (`ws h2`); `None`: `traffic`.
    pub ws_traffic: Option<Arc<ClientConfig>>,
}

impl ServerTlsRt {
    /// The configuration of traffic connections, when they speak TLS.
    #[inline]
    pub fn traffic(&self) -> Option<&Arc<ClientConfig>> {
        self.traffic_cfg.as_ref().filter(|_| self.use_ssl.load(Ordering::Relaxed) == 1)
    }

    /// HAProxy's `use_ssl` (`srv_use_ssl` of `show servers state`).
    pub fn use_ssl(&self) -> i8 {
        self.use_ssl.load(Ordering::Relaxed)
    }

    /// `set server ... ssl on|off`: `false` when the server has no TLS settings.
    pub fn set_use_ssl(&self, on: bool) -> bool {
        if self.traffic_cfg.is_none() {
            return false;
        }
        if self.use_ssl.swap(i8::from(on), Ordering::Relaxed) != i8::from(on) {
            self.ssl_changes.fetch_add(1, Ordering::Relaxed);
        }
        true
    }

    /// The server's `alpn` list, when its traffic speaks TLS and the list is not empty.
    pub fn traffic_alpn(&self) -> Option<&[Vec<u8>]> {
        self.traffic().filter(|_| !self.alpn.is_empty()).map(|_| &self.alpn[..])
    }

    /// Whether the server's `alpn` offers `h2`.
    pub fn offers_h2(&self) -> bool {
        self.traffic().is_some() && self.alpn.iter().any(|p| p.as_slice() == b"h2")
    }

    /// Changes when `commit ssl ca-file` / `crl-file` replaces the server's chain
    /// check: an idle connection parked under another value is not reused.
    pub fn trust_epoch(&self) -> u64 {
        let changes = self.ssl_changes.load(Ordering::Relaxed) << 32;
        self.chain.as_ref().map_or(0, |c| c.epoch()).wrapping_add(changes)
    }

    /// The name a new connection announces: the SNI the stream computed, else the
    /// server's address (no SNI extension).
    pub fn name_for(&self, sni: Option<&str>) -> ServerName<'static> {
        sni.filter(|s| !s.is_empty())
            .and_then(|s| ServerName::try_from(s.to_owned()).ok())
            .unwrap_or_else(|| self.addr_name.clone())
    }
}

/// Builds the TLS side of server `srv` of proxy `px` (index `px_idx`), `None` when it
/// speaks no TLS at all: neither `ssl`, `check-ssl`, nor a `connect ssl` check rule
/// (`check_rules`). Alerts and warnings are HAProxy's (or say what rustls cannot do).
pub fn build(
    cfg: &Config,
    px_idx: usize,
    srv: &Server,
    addr: SocketAddr,
    check_rules: bool,
    alerts: &mut Vec<Diag>,
    warnings: &mut Vec<Diag>,
) -> Option<ServerTlsRt> {
    build_with(cfg, px_idx, srv, addr, check_rules, &super::bind::on_disk, alerts, warnings)
}

/// [`build`] for `add server`: a `ca-file`/`crl-file` the CA store holds (`files`,
/// after `ca-base`) is taken from it, a file created with `new ssl ca-file` included;
/// the others are read from disk, as HAProxy looks its CA file tree up first.
#[allow(clippy::too_many_arguments)] // build's arguments and the store lookup
pub fn build_with(
    cfg: &Config,
    px_idx: usize,
    srv: &Server,
    addr: SocketAddr,
    check_rules: bool,
    files: FileLookup<'_>,
    alerts: &mut Vec<Diag>,
    warnings: &mut Vec<Diag>,
) -> Option<ServerTlsRt> {
    let t = &srv.tls;
    if !t.ssl && !t.ssl_ctx && !t.check_ssl && !check_rules {
        return None;
    }
    let px = &cfg.proxies[px_idx];
    let ctx = format!("'server {}/{}' : ", px.name, srv.name);
    let alert = |alerts: &mut Vec<Diag>, msg: String| alerts.push(Diag::alert(Some(srv.span.clone()), msg));
    let versions_msg = |why: String| format!("{ctx}proxy '{}': {why} for server '{}'.", px.name, srv.name);
    let (base, chain, warn) = match base(cfg, t, files, &ctx, &versions_msg) {
        Ok(b) => b,
        Err(msgs) => {
            // HAProxy locates only the first line (the second is `'ca-file' : unable to load ...`)
            let mut msgs = msgs.into_iter();
            if let Some(first) = msgs.next() {
                alert(alerts, first);
            }
            alerts.extend(msgs.map(|m| Diag::alert(None, m)));
            return None;
        }
    };
    warnings.extend(warn.map(|w| Diag::warning(Some(srv.span.clone()), w)));
    let alpn = alpn_list(t.alpn.as_deref());
    let traffic = match (t.ssl || t.ssl_ctx).then(|| base.config(alpn.clone())).transpose() {
        Ok(c) => c,
        Err(e) => {
            alert(alerts, format!("{ctx}{e}"));
            return None;
        }
    };
    let check_alpn = match &t.check_alpn {
        Some(a) => alpn_list(Some(a)),
        None => check_alpn_of(&alpn, srv),
    };
    let check = if !t.checks_use_tls() {
        None
    } else {
        match (traffic.as_ref().filter(|_| t.ssl), &t.check_alpn) {
            (Some(c), None) if check_alpn.len() == alpn.len() => Some(c.clone()),
            _ => base.config(check_alpn).map_err(|e| alert(alerts, format!("{ctx}{e}"))).ok(),
        }
    };
    let sni = t.sni.as_ref().and_then(|src| compile_sni(cfg, px_idx, &src.text, &ctx, srv, alerts));
    let sni_slot = t.sni.as_ref().map_or(0, |e| sni_slot(px, &e.text));
    let check_sni = t.check_sni.as_deref().and_then(|n| ServerName::try_from(n.to_owned()).ok());
    let addr_name = ServerName::IpAddress(addr.ip().into());
    let crt = base.client_cert.clone();
    let ws_traffic = match ws_alpn(srv.ws, &alpn).filter(|_| traffic.is_some()).map(|a| base.config(a)) {
        Some(Ok(c)) => Some(c),
        Some(Err(e)) => {
            alert(alerts, format!("{ctx}{e}"));
            return None;
        }
        None => None,
    };
    let base = Arc::new(base);
    let use_ssl = AtomicI8::new(if t.ssl {
        1
    } else if t.no_ssl {
        -1
    } else {
        0
    });
    Some(ServerTlsRt {
        traffic_cfg: traffic,
        use_ssl,
        ssl_changes: AtomicU64::new(0),
        check,
        sni,
        sni_slot,
        check_sni,
        addr_name,
        chain,
        crt,
        base,
        alpn,
        ws_traffic,
    })
}

/// What a connection for a WebSocket stream offers by ALPN instead of the server's
/// `alpn` list, as HAProxy 2.6's `connect_server()`: `ws h1` offers `http/1.1`, `ws h2`
/// offers `h2`, `ws auto` offers `http/1.1` when the list names it; `None`: the list.
fn ws_alpn(ws: rampart_cfg::model::ServerWs, alpn: &[Vec<u8>]) -> Option<Vec<Vec<u8>>> {
    use rampart_cfg::model::ServerWs;
    let h1 = || vec![b"http/1.1".to_vec()];
    match ws {
        _ if alpn.is_empty() => None,
        ServerWs::Auto => alpn.iter().any(|p| p == b"http/1.1").then(h1),
        ServerWs::H1 => Some(h1()),
        ServerWs::H2 => Some(vec![b"h2".to_vec()]),
    }
}

/// The TLS configuration of a `ring` section's `server ... ssl` line (and of a remote
/// node's line in a `peers` section), `None` without `ssl`: the same checks, versions,
/// ciphers, client certificate and session cache as a proxy's server, with no SNI (the
/// server's address is the name) and no ALPN unless `alpn` says. `Err`: HAProxy's
/// alerts, the first one for the line.
pub fn ring_server(cfg: &Config, t: &ServerTls, ctx: &str) -> Result<Option<Arc<ClientConfig>>, Vec<String>> {
    if !t.ssl {
        return Ok(None);
    }
    let (base, _, _) = base(cfg, t, &super::bind::on_disk, ctx, &|why| format!("{ctx}{why}."))?;
    let alpn = t.alpn.iter().flatten().map(|p| p.as_bytes().to_vec()).collect();
    base.config(alpn).map(Some).map_err(|e| vec![format!("{ctx}{e}")])
}

/// A server's [`Base`], its chain verifier when it verifies, a warning to print.
type Based = (Base, Option<Arc<SwapChain>>, Option<String>);

/// What the traffic and check configurations of server `t` share, its chain verifier
/// (for `commit ssl ca-file`) and the warning about ciphers rustls lacks. `Err`: the
/// alerts, the first prefixed with `ctx` (the line's); `versions_msg` words the
/// refusal of the TLS versions.
fn base(
    cfg: &Config,
    t: &ServerTls,
    files: FileLookup<'_>,
    ctx: &str,
    versions_msg: &dyn Fn(String) -> String,
) -> Result<Based, Vec<String>> {
    let g = &cfg.global.ssl_server;
    let verify = t.verify.unwrap_or(!g.verify_none);
    if verify && t.ca_file.is_none() {
        return Err(vec![format!("{ctx}{VERIFY_WITHOUT_CA}")]);
    }
    let versions = versions(t.versions.or(g.versions)).map_err(|why| vec![versions_msg(why)])?;
    let (provider, warning) = provider(t, g, ctx).map_err(|e| vec![e])?;
    let provider = Arc::new(provider);
    // one session cache, that a new `crt` or new CA/CRL files empty
    let sessions = Arc::new(Sessions::new(SESSION_CACHE));
    let (verifier, chain) = verifier(t, &cfg.global.ssl, files, verify, &provider, &sessions).map_err(|msgs| {
        msgs.into_iter().enumerate().map(|(i, m)| if i == 0 { format!("{ctx}{m}") } else { m }).collect::<Vec<_>>()
    })?;
    let crt_base = cfg.global.ssl.crt_base.as_ref();
    let load = |p: &str| {
        let ck = pem::load_cert_key(&based(crt_base, Path::new(p)))?;
        let path = ck.path.clone();
        Ok::<_, pem::PemError>(Arc::new(ServerCrt::with_sessions(path, ck.certified(&provider)?, sessions.clone())))
    };
    let client_cert = t.crt.as_deref().map(load).transpose().map_err(|e| vec![format!("{ctx}{e}")])?;
    let base = Base {
        provider,
        versions,
        verifier,
        client_cert,
        reuse: t.reuse,
        tickets: t.tickets && !g.no_tls_tickets,
        sessions,
    };
    Ok((base, chain, warning))
}

/// HAProxy's alert for a server verified (the default) without a CA to verify with.
const VERIFY_WITHOUT_CA: &str = "verify is enabled by default but no CA file specified. If you're running on a \
     LAN where you're certain to trust the server's certificate, please set an explicit 'verify none' statement \
     on the 'server' line, or use 'ssl-server-verify none' in the global section to disable server-side \
     verifications by default.";

/// What the traffic and check configurations of one server share.
struct Base {
    provider: Arc<CryptoProvider>,
    versions: Vec<&'static rustls::SupportedProtocolVersion>,
    verifier: Arc<dyn ServerCertVerifier>,
    /// The server's TLS sessions, forgotten when its `crt` or its CA/CRL files change.
    sessions: Arc<Sessions>,
    client_cert: Option<Arc<ServerCrt>>,
    reuse: bool,
    tickets: bool,
}

impl std::fmt::Debug for Base {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Base").field("reuse", &self.reuse).field("tickets", &self.tickets).finish_non_exhaustive()
    }
}

impl Base {
    fn config(&self, alpn: Vec<Vec<u8>>) -> Result<Arc<ClientConfig>, String> {
        let builder = ClientConfig::builder_with_provider(self.provider.clone())
            .with_protocol_versions(&self.versions)
            .map_err(|e| format!("unable to set up TLS: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(self.verifier.clone());
        let mut c = match &self.client_cert {
            Some(cert) => builder.with_client_cert_resolver(cert.clone() as Arc<dyn ResolvesClientCert>),
            None => builder.with_no_client_auth(),
        };
        c.alpn_protocols = alpn;
        // PERF: the session store takes a lock, once per new server connection only.
        c.resumption = if self.reuse {
            let r = Resumption::store(self.sessions.clone());
            if self.tickets {
                r
            } else {
                r.tls12_resumption(Tls12Resumption::SessionIdOnly)
            }
        } else {
            Resumption::disabled()
        };
        Ok(Arc::new(c))
    }
}

/// The rustls versions a server may use. HAProxy's rule: a version is allowed unless
/// `no-<ver>`, below `ssl-min-ver`, above `ssl-max-ver`, or other than `force-<ver>`.
/// rustls has TLSv1.2 and TLSv1.3 only: asking for an older one is an error.
fn versions(v: TlsVersions) -> Result<Vec<&'static rustls::SupportedProtocolVersion>, String> {
    let old = [("ssl-min-ver", v.min), ("ssl-max-ver", v.max), ("force", v.force)]
        .into_iter()
        .find_map(|(kw, ver)| ver.filter(|&x| x < TlsVersion::TlsV12).map(|x| (kw, x)));
    let allowed = |x: TlsVersion| {
        !v.is_disabled(x)
            && v.min.is_none_or(|m| x >= m)
            && v.max.is_none_or(|m| x <= m)
            && v.force.is_none_or(|f| x == f)
    };
    if !TlsVersion::ALL.into_iter().any(allowed) {
        return Err("all SSL/TLS versions are disabled".into());
    }
    // COMPAT: HAProxy (OpenSSL) still speaks SSLv3 to TLSv1.1; rustls does not.
    if let Some((kw, x)) = old {
        let kw = if kw == "force" { format!("force-{}", x.option_suffix()) } else { format!("{kw} {}", x.name()) };
        return Err(format!("'{kw}' is not supported (rustls speaks TLSv1.2 and TLSv1.3 only): SSL/TLS versions"));
    }
    let out = suites::protocol_versions(allowed);
    if out.is_empty() {
        return Err("all SSL/TLS versions rustls speaks (TLSv1.2, TLSv1.3) are disabled".into());
    }
    Ok(out)
}

/// The crypto provider with the server's (or the global) cipher lists; with a
/// warning naming the ciphers rustls does not have.
fn provider(t: &ServerTls, g: &SslServerDefaults, ctx: &str) -> Result<(CryptoProvider, Option<String>), String> {
    let mut p = rustls::crypto::aws_lc_rs::default_provider();
    let tls12 = t.ciphers.as_deref().or(g.ciphers.as_deref());
    let tls13 = t.ciphersuites.as_deref().or(g.ciphersuites.as_deref());
    let picked = suites::select(&p.cipher_suites, tls12, tls13);
    let warning = picked.warning().map(|w| format!("{ctx}{w}"));
    p.cipher_suites = picked.suites;
    if p.cipher_suites.is_empty() {
        return Err(format!("{ctx}no cipher suite left that rustls can use."));
    }
    Ok((p, warning))
}

/// A server's verifier, and the chain verifier inside it when it verifies.
type Verifiers = (Arc<dyn ServerCertVerifier>, Option<Arc<SwapChain>>);

/// `verify required` checks the chain with the `ca-file` (and `crl-file`); the name
/// is checked against `verifyhost`, else the SNI sent, else not at all (as HAProxy).
/// The chain verifier is also returned: `commit ssl ca-file` replaces what it holds.
fn verifier(
    t: &ServerTls,
    g: &GlobalSsl,
    files: FileLookup<'_>,
    verify: bool,
    provider: &Arc<CryptoProvider>,
    sessions: &Arc<Sessions>,
) -> Result<Verifiers, Vec<String>> {
    if !verify {
        return Ok((Arc::new(NoVerify(provider.clone())), None));
    }
    let Some(ca) = t.ca_file.as_deref() else { return Err(vec![VERIFY_WITHOUT_CA.into()]) };
    let ca = based(g.ca_base.as_ref(), Path::new(ca)).display().to_string();
    let certs = match files(&ca) {
        Some(Contents::Ca(cas)) => cas,
        _ => pem::load_ca_file(Path::new(&ca))
            .map_err(|e| vec![e.to_string(), format!("'ca-file' : unable to load {ca}.")])?,
    };
    let crl_file = t.crl_file.as_deref().map(|crl| based(g.ca_base.as_ref(), Path::new(crl)).display().to_string());
    let crls = crl_file
        .as_deref()
        .map(|crl| match files(crl) {
            Some(Contents::Crl(crls)) => Ok(crls),
            _ => pem::load_crl_file(Path::new(crl))
                .map_err(|e| vec![e.to_string(), format!("'crl-file' : unable to load {crl}.")]),
        })
        .transpose()?;
    let chain = super::verifier::server_chain(&certs, crls.as_deref(), provider).map_err(|e| match e {
        BuildError::Crl(e) => vec![format!("'crl-file' : unable to load {} ({e}).", crl_file.as_deref().unwrap_or(""))],
        BuildError::Ca(e) => vec![format!("'ca-file' : unable to load {ca} ({e}).")],
    })?;
    let chain = Arc::new(SwapChain::new(ca, crl_file, provider.clone(), chain, sessions.clone()));
    let host = t.verifyhost.as_deref().and_then(|h| ServerName::try_from(h.to_owned()).ok());
    Ok((Arc::new(Verify { chain: chain.clone(), host }), Some(chain)))
}

/// `verify required`: the chain against the CA file, the name as HAProxy checks it.
#[derive(Debug)]
struct Verify {
    /// The chain check of `ca-file` and `crl-file` (replaced by `commit ssl ca-file`).
    chain: Arc<SwapChain>,
    /// `verifyhost`: checked instead of the SNI.
    host: Option<ServerName<'static>>,
}

impl ServerCertVerifier for Verify {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let name = self.host.as_ref().unwrap_or(server_name);
        // no SNI and no verifyhost: HAProxy checks the chain only
        let name_optional = self.host.is_none() && matches!(server_name, ServerName::IpAddress(_));
        self.chain.current().verify(end_entity, intermediates, name, ocsp, now, name_optional)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.chain.current().signature(message, cert, dss, false)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.chain.current().signature(message, cert, dss, true)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.chain.current().schemes()
    }
}

/// The client configuration of Lua's `Socket:connect_ssl()`: HAProxy's internal
/// socket server is `ssl verify none`, with rustls' default versions and suites.
pub fn verify_none_config() -> Result<Arc<ClientConfig>, rustls::Error> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let cfg = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
        .with_no_client_auth();
    Ok(Arc::new(cfg))
}

/// `verify none`: any certificate is accepted; the handshake signatures are still
/// checked (they prove the peer holds the key of the certificate it sent).
#[derive(Debug)]
struct NoVerify(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.0.signature_verification_algorithms;
        let webpki = rustls::crypto::verify_tls12_signature(message, cert, dss, algs);
        // COMPAT: an X.509 v1 certificate (webpki reads v3 only) as OpenSSL takes it
        super::chain::signature_or_pre_v3(webpki, message, cert, dss, algs, false)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.0.signature_verification_algorithms;
        let webpki = rustls::crypto::verify_tls13_signature(message, cert, dss, algs);
        super::chain::signature_or_pre_v3(webpki, message, cert, dss, algs, true)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The ALPN protocols offered, as listed (`h2` included: an HTTP backend then speaks
/// HTTP/2 on the connections that negotiate it, `back::h2`).
fn alpn_list(alpn: Option<&[String]>) -> Vec<Vec<u8>> {
    alpn.into_iter().flatten().map(|p| p.as_bytes().to_vec()).collect()
}

/// The ALPN list of health checks that reuse the server's: without `h2` unless the
/// checks speak HTTP/2 (`check-proto h2`, or the server's `proto h2`), as the checks
/// then speak HTTP/1 whatever ALPN picks.
/// COMPAT: HAProxy offers the server's list and speaks HTTP/1 even when `h2` is
/// picked (the check then fails); rampart does not offer `h2` then.
fn check_alpn_of(alpn: &[Vec<u8>], srv: &Server) -> Vec<Vec<u8>> {
    use rampart_cfg::model::BindProto;
    if srv.check.proto.or(srv.proto) == Some(BindProto::H2) {
        return alpn.to_vec();
    }
    alpn.iter().filter(|p| p.as_slice() != b"h2").cloned().collect()
}

/// Compiles `sni <expr>` (it sees the request, as a `use-server` expression does).
fn compile_sni(cfg: &Config, px: usize, text: &str, ctx: &str, srv: &Server, alerts: &mut Vec<Diag>) -> Option<Expr> {
    let mut cx = CompileCx::new(cfg, px, Site::Server);
    let err = match expr::compile(text, &mut cx) {
        Ok(e) => match e.check_place(Place::BeSetSrv) {
            Ok(()) => return Some(e),
            Err(needs) => format!("{ctx}error detected while parsing sni expression : requires information from {needs}, which is not available here"),
        },
        Err(e) => format!("{ctx}error detected while parsing sni expression : {e}"),
    };
    alerts.push(Diag::alert(Some(srv.span.clone()), err));
    None
}

/// The position of the first server of `px` with TLS and the `sni` expression `text`.
fn sni_slot(px: &Proxy, text: &str) -> usize {
    px.servers.iter().position(|s| s.tls.ssl && s.tls.sni.as_ref().is_some_and(|e| e.text == text)).unwrap_or(0)
}

/// The TLS a check speaks: the server's check configuration, and the name it
/// announces (`check-sni`, else none: the address).
#[derive(Debug, Clone)]
pub struct CheckTls {
    pub config: Arc<rustls::ClientConfig>,
    pub name: rustls_pki_types::ServerName<'static>,
}

/// The TLS of server `srv`'s health checks by default: with `check-ssl`, or with
/// `ssl` when the checks go to the server's own address and port (no `port`, no
/// `addr`), as HAProxy.
pub fn check_tls(srv: &Server, tls: Option<&ServerTlsRt>) -> Option<CheckTls> {
    let t = &srv.tls;
    let wanted = t.check_ssl || (t.ssl && srv.check.port.is_none() && srv.check.addr.is_none());
    let tls = tls.filter(|_| wanted)?;
    let name = tls.check_sni.clone().unwrap_or_else(|| tls.addr_name.clone());
    Some(CheckTls { config: tls.check.clone()?, name })
}

impl ServerTlsRt {
    /// The TLS of a check's `connect` rule: `ssl`, or `default` over the server's
    /// check TLS (`default_tls`), with the rule's `sni` and `alpn` (else, for
    /// `default`, the server's `check-sni` / check ALPN, and for `ssl` alone no SNI
    /// and the server's `alpn`). `None`: the rule connects in clear.
    pub fn rule_check_tls(
        &self,
        default_tls: Option<&CheckTls>,
        ssl: bool,
        sni: Option<&str>,
        alpn: Option<&[String]>,
    ) -> Result<Option<CheckTls>, String> {
        if !ssl && default_tls.is_none() {
            return Ok(None);
        }
        let name = match (sni, default_tls) {
            (Some(s), _) => {
                ServerName::try_from(s.to_owned()).map_err(|_| format!("invalid SNI '{s}' in a check rule"))?
            }
            (None, Some(d)) => d.name.clone(),
            (None, None) => self.addr_name.clone(),
        };
        let config = match (alpn, default_tls) {
            (Some(list), _) => self.base.config(list.iter().map(|p| p.as_bytes().to_vec()).collect())?,
            (None, Some(d)) => d.config.clone(),
            (None, None) => match self.traffic() {
                Some(c) => c.clone(),
                None => self.base.config(self.alpn.clone())?,
            },
        };
        Ok(Some(CheckTls { config, name }))
    }
}

/// HAProxy's words for a failed handshake with a server (`conn_err_code_str()`): the
/// check's `info`, the reason of a connection error.
pub fn handshake_msg(e: &super::stream::HandshakeError) -> &'static str {
    use super::stream::HandshakeError as E;
    match e {
        E::Timeout => "Timeout during SSL handshake",
        E::Closed => "Connection closed during SSL handshake",
        E::Io(_) => "Connection error during SSL handshake",
        E::Tls(_) | E::CaChain(_) | E::Refused(_) => "SSL handshake failure",
    }
}

/// The `sni` values of one stream, one per distinct expression of its backend, keyed
/// by [`ServerTlsRt::sni_slot`]. Empty (no allocation) when no server has `sni`.
pub type SniValues = Vec<(usize, Box<str>)>;

/// Evaluates with `eval` the distinct `sni` expressions of a backend whose servers have
/// the TLS sides `servers` (in order).
// PERF: only backends whose servers have `sni` allocate, once per stream.
pub fn sni_values<'e>(
    servers: impl Iterator<Item = Option<&'e ServerTlsRt>>,
    mut eval: impl FnMut(&'e Expr) -> Option<Box<str>>,
) -> SniValues {
    let mut out = Vec::new();
    for (i, tls) in servers.enumerate() {
        let Some(t) = tls.filter(|t| t.traffic().is_some() && t.sni_slot == i) else { continue };
        if let Some(v) = t.sni.as_ref().and_then(&mut eval) {
            out.push((i, v));
        }
    }
    out
}

/// A sample as an SNI: its text, when it is a non-empty string.
pub fn sni_value(smp: crate::sample::Sample<'_>) -> Option<Box<str>> {
    match crate::sample::cast::cast(smp, crate::sample::types::SmpType::Str)? {
        crate::sample::Sample::Str(s) if !s.is_empty() => std::str::from_utf8(&s).ok().map(Box::from),
        _ => None,
    }
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
