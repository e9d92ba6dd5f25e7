//! The rules differential corpus (issue #5, "Done when"): request × rule cases from
//! `tests/rules_corpus/*.cases`, each run through haproxy 2.6 (the Debian package) and
//! rampart with the same configuration and fresh backends. What the client received
//! (status line, headers in order and case, body: the raw bytes) and what each server
//! received (raw bytes) must be the same. Prints the agreement per theme and overall.
//!
//! Every case must agree, except those listed in `tests/rules_corpus/known-differences`
//! with a reason; a configuration rampart refuses at startup counts as a disagreement,
//! listed with reason `runtime not landed yet` while the rules runtime is missing. The
//! list is kept honest both ways: a listed case that agrees, or that is refused when a
//! behaviour difference was listed (or the reverse), fails the test too.
//!
//! Normalization, the only one: the `Date` header (run-specific). Requests carry no
//! hop-by-hop headers, so rampart's deliberate removal of them (COMPATIBILITY.md "HTTP
//! behaviour", hop-by-hop headers) does not show.
//!
//! `cargo build --release -p rampart && cargo test --release -p rampart --test rules_diff`.
//! Environment: `RULES_DIFF_CASE=<substring>` runs the matching cases only (the list is
//! then checked for them only), `RULES_DIFF_BINARY=/usr/sbin/haproxy` runs haproxy
//! against itself (a determinism check of the corpus), `RULES_DIFF_SHOW=1` prints both observations of every
//! case, `RULES_DIFF_JOBS=<n>` sets how many cases run at once (default 6). The detailed
//! report (every disagreement with both observations) goes to
//! `target/tmp/rules-diff-report.txt`.

#[path = "rules_diff/corpus.rs"]
mod corpus;
#[path = "rules_diff/expect.rs"]
mod expect;
#[path = "rules_diff/report.rs"]
mod report;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use corpus::{Case, CORPUS_DIR};
use expect::Client;
use rampart_testkit::{Attempt, Differential, HttpBackend, RawClient, Reply, Request, Running};
use report::{Judged, Known, Verdict};

/// The binary under test.
const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

/// Names another binary to run in rampart's place: `RULES_DIFF_BINARY=/usr/sbin/haproxy`
/// runs haproxy against itself, which shows whether the corpus is deterministic (every
/// case must agree then; the known-differences list is not checked).
const BINARY_ENV: &str = "RULES_DIFF_BINARY";

/// How long a client waits for a response: well above the slowest case (a 200 ms
/// tarpit), short enough that a proxy that never answers costs little.
const READ_TIMEOUT: Duration = Duration::from_secs(3);

/// Cases run at once by default: each is mostly waiting (process start-up, sockets).
const DEFAULT_JOBS: usize = 6;

/// The answer of test server `name`: something for response rules to work on (a
/// `Server` header, a cookie, a few headers, a body). `/status/<code>` answers that
/// status, `/redir` a 302 with a `Location` to rewrite.
fn reply(name: &str, req: &Request) -> Reply {
    let path = req.path.split('?').next().unwrap_or_default();
    let status = path.strip_prefix("/status/").and_then(|s| s.parse().ok()).unwrap_or(200);
    let mut r = Reply::new(if path == "/redir" { 302 } else { status })
        .header("Server", "corpus-be/1.0")
        .header("Content-Type", "text/plain")
        .header("Set-Cookie", &format!("SID={name}-1; Path=/"))
        .header("X-Served-By", name)
        .header("Cache-Control", "max-age=60");
    if path == "/redir" {
        r = r.header("Location", "http://backend.internal/landing");
    }
    r.body(format!("hello from {name}\n"))
}

fn backend(name: &'static str) -> HttpBackend {
    HttpBackend::builder(name).respond(move |req| reply(name, req)).start()
}

/// Sends each request on its own connection and reads its response.
fn scenario(case: &Case, proxy: &Running) -> Client {
    case.requests
        .iter()
        .map(|r| {
            let mut c = RawClient::connect(proxy.addr("fe1")).map_err(|e| e.kind())?;
            c.set_read_timeout(READ_TIMEOUT).map_err(|e| e.kind())?;
            c.send(&r.bytes).map_err(|e| e.kind())?;
            c.read_response_for(&r.method).map_err(|e| e.kind())
        })
        .collect()
}

/// Runs one case through both binaries; `None` when haproxy is not installed.
fn run_case(case: &Case) -> Option<Judged> {
    let binary = std::env::var_os(BINARY_ENV).unwrap_or_else(|| RAMPART.into());
    let d = Differential::new(binary)
        .listener("fe1")
        .backend("s1", || backend("s1"))
        .backend("s2", || backend("s2"))
        .config(&case.config)
        .ignore_header("date");
    let attempt: Attempt<Client> = d.try_run(|p| scenario(case, p))?;
    Some(report::judge(case, attempt))
}

/// Runs `cases` on `jobs` threads; results in case order, `None` when haproxy is not
/// installed.
fn run_all(cases: &[Case], jobs: usize) -> Option<Vec<Judged>> {
    let next = AtomicUsize::new(0);
    let done: Vec<Vec<(usize, Option<Judged>)>> = thread::scope(|s| {
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(case) = cases.get(i) else { return mine };
                        mine.push((i, run_case(case)));
                    }
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    let mut results: Vec<Option<Judged>> = vec![None; cases.len()];
    for (i, got) in done.into_iter().flatten() {
        results[i] = Some(got?);
    }
    results.into_iter().collect()
}

#[test]
fn rules_corpus_agrees_with_haproxy() {
    let dir = Path::new(CORPUS_DIR);
    let mut cases = corpus::load_dir(dir).unwrap_or_else(|e| panic!("corpus: {e}"));
    let filter = std::env::var("RULES_DIFF_CASE").ok();
    if let Some(f) = &filter {
        cases.retain(|c| c.id.contains(f.as_str()));
    }
    let known = match std::env::var_os(BINARY_ENV) {
        Some(_) => Known::default(),
        None => Known::load(&dir.join("known-differences")).unwrap_or_else(|e| panic!("known-differences: {e}")),
    };
    let jobs = std::env::var("RULES_DIFF_JOBS").ok().and_then(|j| j.parse().ok()).unwrap_or(DEFAULT_JOBS);
    let Some(results) = run_all(&cases, jobs.max(1)) else { return };
    let verdicts: Vec<Verdict> = cases
        .iter()
        .zip(results)
        .map(|(case, (outcome, detail))| Verdict::new(case, outcome, detail, &known))
        .collect();
    let summary = report::summary(&verdicts);
    println!("{summary}");
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rules-diff-report.txt");
    let details = report::details(&verdicts);
    let _ = std::fs::write(&path, format!("{summary}\n{details}"));
    let mut problems = report::problems(&verdicts);
    if filter.is_none() && std::env::var_os(BINARY_ENV).is_none() {
        problems.extend(known.unused(&cases));
    }
    assert!(
        problems.is_empty(),
        "{} problem(s) (details in {}):\n{}",
        problems.len(),
        path.display(),
        problems.join("\n")
    );
}
