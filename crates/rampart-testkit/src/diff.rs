//! Differential tests: the same scenario against haproxy and rampart, each with fresh
//! backends, then a comparison of what the client and the servers saw.
//!
//! Values that legitimately differ between two runs (the proxy's source ports, headers
//! like `Date`) are removed by a [`Normalizer`] before comparing.

use std::ffi::OsString;
use std::fmt::Debug;
use std::io::ErrorKind;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::backend::{RawConn, Seen, TestBackend};
use crate::http::{strip_header_lines, Headers, Interim, Request, Response};
use crate::proxy::{haproxy_or_skip, haproxy_path, CheckOutput, Proxy, Running, StartError};

/// How long a run waits for backend connections to close after the proxy is killed.
const SETTLE: Duration = Duration::from_secs(2);

/// Makes a fresh backend for each run.
type BackendFactory = Box<dyn Fn() -> Box<dyn TestBackend>>;

/// A scenario to run against haproxy and rampart in turn.
///
/// ```no_run
/// use rampart_testkit::{Differential, HttpBackend, RawClient};
/// let cfg = "defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
///            listen fe1\n  bind fd@${fe1}\n  server s1 ${s1_addr}:${s1_port}\n";
/// # let rampart = "target/debug/rampart";
/// // in crates/rampart/tests: Differential::new(env!("CARGO_BIN_EXE_rampart"))
/// let diff = Differential::new(rampart)
///     .listener("fe1")
///     .backend("s1", || HttpBackend::start("s1"))
///     .config(cfg)
///     .ignore_header("date");
/// let Some(cmp) = diff.run(|proxy| {
///     let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
///     c.send("GET /x HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
///     c.read_response().map_err(|e| e.kind())
/// }) else { return };
/// cmp.assert_same();
/// ```
pub struct Differential {
    rampart: PathBuf,
    haproxy: Option<PathBuf>,
    listeners: Vec<String>,
    backends: Vec<(String, BackendFactory)>,
    config: String,
    args: Vec<OsString>,
    normalizer: Normalizer,
}

impl Differential {
    /// A differential test of the `rampart` binary against [`haproxy_path`].
    pub fn new(rampart: impl Into<PathBuf>) -> Differential {
        Differential {
            rampart: rampart.into(),
            haproxy: haproxy_path(),
            listeners: Vec::new(),
            backends: Vec::new(),
            config: String::new(),
            args: Vec::new(),
            normalizer: Normalizer::default(),
        }
    }

    /// Uses this reference binary instead of the installed haproxy.
    pub fn haproxy(mut self, path: impl Into<PathBuf>) -> Differential {
        self.haproxy = Some(path.into());
        self
    }

    /// A listener `name`, as [`Proxy::listener`], fresh for each run.
    pub fn listener(mut self, name: &str) -> Differential {
        self.listeners.push(name.to_string());
        self
    }

    /// A backend `name` made by `make` for each run; `${name_addr}`/`${name_port}` point at it.
    pub fn backend<B, F>(mut self, name: &str, make: F) -> Differential
    where
        B: TestBackend + 'static,
        F: Fn() -> B + 'static,
    {
        self.backends.push((name.to_string(), Box::new(move || Box::new(make()))));
        self
    }

    /// The configuration template (placeholders as in [`Proxy`]).
    pub fn config(mut self, text: &str) -> Differential {
        self.config = text.to_string();
        self
    }

    /// An extra command-line argument for both binaries.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Differential {
        self.args.push(arg.into());
        self
    }

    /// Ignores header `name` on both sides when comparing (e.g. `date`).
    pub fn ignore_header(mut self, name: &str) -> Differential {
        self.normalizer = self.normalizer.ignore_header(name);
        self
    }

    /// Runs `scenario` against haproxy, then rampart, each with fresh listeners and
    /// backends, and returns both observations, normalized. Returns `None` when haproxy
    /// is not installed, after [`haproxy_or_skip`]'s visible line (or its panic when
    /// the run requires haproxy).
    ///
    /// # Panics
    /// If either binary fails to start (the message carries its output).
    pub fn run<T, F>(&self, scenario: F) -> Option<Comparison<T>>
    where
        T: Normalize,
        F: Fn(&Running) -> T,
    {
        let haproxy = match &self.haproxy {
            Some(path) => path.clone(),
            None => haproxy_or_skip(&current_test())?,
        };
        let haproxy =
            self.run_one(&haproxy, &scenario).unwrap_or_else(|e| panic!("{} did not start: {e}", haproxy.display()));
        let rampart = self
            .run_one(&self.rampart, &scenario)
            .unwrap_or_else(|e| panic!("{} did not start: {e}", self.rampart.display()));
        Some(Comparison { haproxy, rampart })
    }

    /// Like [`Differential::run`], but a binary that refuses to start (a configuration it
    /// rejects) is a result, not a panic: for corpora where a refusal is an outcome to count.
    /// Returns `None` (after printing a note) when haproxy is not installed.
    pub fn try_run<T, F>(&self, scenario: F) -> Option<Attempt<T>>
    where
        T: Normalize,
        F: Fn(&Running) -> T,
    {
        let haproxy = match &self.haproxy {
            Some(path) => path.clone(),
            None => haproxy_or_skip(&current_test())?,
        };
        let haproxy = self.run_one(&haproxy, &scenario);
        let rampart = self.run_one(&self.rampart, &scenario);
        Some(Attempt { haproxy, rampart })
    }

    /// Runs `-c` on the configuration with both binaries: `(haproxy, rampart)`, or `None`
    /// when haproxy is not installed (as [`Differential::run`]).
    pub fn check(&self) -> Option<(CheckOutput, CheckOutput)> {
        let haproxy = match &self.haproxy {
            Some(path) => path.clone(),
            None => haproxy_or_skip(&current_test())?,
        };
        Some((self.check_one(&haproxy), self.check_one(&self.rampart)))
    }

    fn proxy(&self, binary: &Path, backends: &[(String, Box<dyn TestBackend>)]) -> Proxy {
        let mut proxy = Proxy::new(binary).config(&self.config);
        for name in &self.listeners {
            proxy = proxy.listener(name);
        }
        for (name, backend) in backends {
            proxy = proxy.backend(name, backend.addr());
        }
        for arg in &self.args {
            proxy = proxy.arg(arg.clone());
        }
        proxy
    }

    fn check_one(&self, binary: &Path) -> CheckOutput {
        match self.proxy(binary, &[]).check() {
            Ok(out) => out,
            Err(e) => panic!("cannot run {} -c: {e}", binary.display()),
        }
    }

    fn run_one<T: Normalize>(
        &self,
        binary: &Path,
        scenario: &dyn Fn(&Running) -> T,
    ) -> Result<Observed<T>, StartError> {
        let backends: Vec<(String, Box<dyn TestBackend>)> =
            self.backends.iter().map(|(name, make)| (name.clone(), make())).collect();
        let running = self.proxy(binary, &backends).start()?;
        let mut client = scenario(&running);
        let output = running.output();
        // Killing the proxy closes its server connections, so backend records are final.
        drop(running);
        for (_, backend) in &backends {
            backend.wait_idle(SETTLE);
        }
        let mut servers: Vec<(String, Seen)> = backends.iter().map(|(n, b)| (n.clone(), b.seen())).collect();
        client.normalize(&self.normalizer);
        servers.normalize(&self.normalizer);
        Ok(Observed { client, servers, output })
    }
}

/// What [`Differential::try_run`] got from each binary: its observation, or why it did
/// not start.
#[derive(Debug)]
pub struct Attempt<T> {
    /// The reference run.
    pub haproxy: Result<Observed<T>, StartError>,
    /// The run under test.
    pub rampart: Result<Observed<T>, StartError>,
}

/// What one binary's run produced.
#[derive(Clone, Debug)]
pub struct Observed<T> {
    /// What the scenario closure returned (the client's view).
    pub client: T,
    /// What each backend saw, by name.
    pub servers: Vec<(String, Seen)>,
    /// The proxy's output (not compared).
    pub output: String,
}

/// The two observations of a [`Differential`] run.
#[derive(Clone, Debug)]
pub struct Comparison<T> {
    /// The reference run.
    pub haproxy: Observed<T>,
    /// The run under test.
    pub rampart: Observed<T>,
}

impl<T: PartialEq + Debug> Comparison<T> {
    /// Whether the clients saw the same thing.
    pub fn same_client(&self) -> bool {
        self.haproxy.client == self.rampart.client
    }

    /// Whether the backends saw the same thing.
    pub fn same_servers(&self) -> bool {
        self.haproxy.servers == self.rampart.servers
    }

    /// Panics with both observations and outputs unless clients and backends saw the same.
    pub fn assert_same(&self) {
        if self.same_client() && self.same_servers() {
            return;
        }
        let what = match (self.same_client(), self.same_servers()) {
            (false, false) => "client and server views differ",
            (false, true) => "client views differ",
            _ => "server views differ",
        };
        panic!(
            "differential: {what}\n=== haproxy client ===\n{:#?}\n=== rampart client ===\n{:#?}\n\
             === haproxy servers ===\n{:#?}\n=== rampart servers ===\n{:#?}\n\
             === haproxy output ===\n{}\n=== rampart output ===\n{}",
            self.haproxy.client,
            self.rampart.client,
            self.haproxy.servers,
            self.rampart.servers,
            self.haproxy.output,
            self.rampart.output
        );
    }
}

/// Rules that remove run-specific values before comparing. The peer address of server
/// connections (the proxy's ephemeral source port) is always cleared.
#[derive(Clone, Debug, Default)]
pub struct Normalizer {
    ignored_headers: Vec<String>,
}

impl Normalizer {
    /// Removes header `name` from parsed headers and from raw heads.
    pub fn ignore_header(mut self, name: &str) -> Normalizer {
        self.ignored_headers.push(name.to_ascii_lowercase());
        self
    }

    fn headers(&self, headers: &mut Headers) {
        for name in &self.ignored_headers {
            headers.remove_all(name);
        }
    }

    fn raw(&self, raw: &mut Vec<u8>) {
        if !self.ignored_headers.is_empty() {
            *raw = strip_header_lines(raw, &self.ignored_headers);
        }
    }
}

/// The placeholder peer written over run-specific source addresses.
const NO_PEER: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0);

/// Values a [`Normalizer`] can clean; implemented for the testkit's records and the
/// usual containers, so a scenario can return e.g. `Vec<Result<Response, ErrorKind>>`.
pub trait Normalize {
    /// Removes what `n` says differs between runs.
    fn normalize(&mut self, n: &Normalizer);
}

impl Normalize for Response {
    fn normalize(&mut self, n: &Normalizer) {
        n.headers(&mut self.headers);
        n.raw(&mut self.raw);
        self.interim.normalize(n);
    }
}

impl Normalize for Headers {
    fn normalize(&mut self, n: &Normalizer) {
        n.headers(self);
    }
}

impl Normalize for Interim {
    fn normalize(&mut self, n: &Normalizer) {
        n.headers(&mut self.headers);
        n.raw(&mut self.raw);
    }
}

impl Normalize for Request {
    fn normalize(&mut self, n: &Normalizer) {
        self.peer = NO_PEER;
        n.headers(&mut self.headers);
        n.raw(&mut self.raw);
    }
}

impl Normalize for RawConn {
    fn normalize(&mut self, _: &Normalizer) {
        self.peer = NO_PEER;
    }
}

impl Normalize for Seen {
    fn normalize(&mut self, n: &Normalizer) {
        match self {
            Seen::Http(requests) => requests.normalize(n),
            Seen::Raw(conns) => conns.normalize(n),
        }
    }
}

impl<T: Normalize> Normalize for Vec<T> {
    fn normalize(&mut self, n: &Normalizer) {
        self.iter_mut().for_each(|item| item.normalize(n));
    }
}

impl<T: Normalize> Normalize for Option<T> {
    fn normalize(&mut self, n: &Normalizer) {
        if let Some(item) = self {
            item.normalize(n);
        }
    }
}

impl<T: Normalize, E> Normalize for Result<T, E> {
    fn normalize(&mut self, n: &Normalizer) {
        if let Ok(item) = self {
            item.normalize(n);
        }
    }
}

impl<A: Normalize, B: Normalize> Normalize for (A, B) {
    fn normalize(&mut self, n: &Normalizer) {
        self.0.normalize(n);
        self.1.normalize(n);
    }
}

/// Values with nothing run-specific in them.
macro_rules! normalize_as_is {
    ($($t:ty),*) => {$(
        impl Normalize for $t {
            fn normalize(&mut self, _: &Normalizer) {}
        }
    )*};
}
normalize_as_is!((), bool, u8, u16, u32, u64, usize, i32, String, ErrorKind);

/// The running test's name (libtest names its threads after the tests).
fn current_test() -> String {
    std::thread::current().name().unwrap_or("differential test").to_string()
}
