//! Judging a case (agreement, refusal, difference, corpus error), the known-differences
//! list, and the printed summary and detailed report.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use rampart_testkit::{Attempt, Observed, Response, Seen, StartError};

use crate::corpus::Case;
use crate::expect::{self, Client};

/// The reason that marks an expected startup refusal in `known-differences`.
pub const NOT_LANDED: &str = "runtime not landed yet";

/// What a case came to.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Same client view and same server views.
    Agree,
    /// rampart refused the configuration at startup (its first alert).
    Refused(String),
    /// Both ran and something differs (a one-line summary).
    Differs(String),
    /// The case itself is wrong: haproxy refused it, or an `[expect]` failed on haproxy.
    CorpusError(String),
}

/// An outcome and the detailed text for the report.
pub type Judged = (Outcome, String);

/// Judges one attempt.
pub fn judge(case: &Case, attempt: Attempt<Client>) -> Judged {
    let haproxy = match attempt.haproxy {
        Ok(obs) => obs,
        Err(e) => return (Outcome::CorpusError(format!("haproxy did not start: {}", first_alert(&e))), e.to_string()),
    };
    if std::env::var_os("RULES_DIFF_SHOW").is_some() {
        eprintln!("##### {}\n{}\n=== haproxy ===\n{}", case.id, case.config, show(&haproxy));
        if let Ok(r) = &attempt.rampart {
            eprintln!("=== rampart ===\n{}", show(r));
        }
    }
    let failed: Vec<String> = case
        .expects
        .iter()
        .filter_map(|line| expect::check(line, &haproxy).err().map(|e| format!("[expect] {line}: {e}")))
        .collect();
    if !failed.is_empty() {
        let detail = format!("{}\n=== haproxy ===\n{}", failed.join("\n"), show(&haproxy));
        return (Outcome::CorpusError(failed.join("; ")), detail);
    }
    let rampart = match attempt.rampart {
        Ok(obs) => obs,
        Err(e) => return (Outcome::Refused(first_alert(&e)), e.to_string()),
    };
    let same_client = haproxy.client == rampart.client;
    let same_servers = haproxy.servers == rampart.servers;
    if same_client && same_servers {
        return (Outcome::Agree, String::new());
    }
    let mut what = Vec::new();
    if !same_client {
        what.push(client_diff(&haproxy.client, &rampart.client));
    }
    if !same_servers {
        what.push(servers_diff(&haproxy.servers, &rampart.servers));
    }
    let detail = format!(
        "config:\n{}\n=== haproxy ===\n{}\n=== rampart ===\n{}\n=== rampart output ===\n{}",
        case.config,
        show(&haproxy),
        show(&rampart),
        rampart.output
    );
    (Outcome::Differs(what.join("; ")), detail)
}

/// The first `[ALERT]` line of a startup failure (without its prefix), or the error.
fn first_alert(e: &StartError) -> String {
    match e {
        StartError::Exited { output, .. } => output
            .lines()
            .find(|l| l.starts_with("[ALERT]"))
            .map(|l| l.splitn(3, " : ").last().unwrap_or(l).to_string())
            .unwrap_or_else(|| output.lines().next().unwrap_or_default().to_string()),
        StartError::Io(e) => e.to_string(),
    }
}

fn show(obs: &Observed<Client>) -> String {
    let mut out = String::new();
    for (i, r) in obs.client.iter().enumerate() {
        match r {
            Ok(resp) => {
                let _ = writeln!(out, "--- response {} ---\n{}", i + 1, String::from_utf8_lossy(&resp.raw));
            }
            Err(e) => {
                let _ = writeln!(out, "--- response {} --- none ({e:?})", i + 1);
            }
        }
    }
    for (name, seen) in &obs.servers {
        if let Seen::Http(reqs) = seen {
            for (i, req) in reqs.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "--- {name} request {} (conn {}) ---\n{}",
                    i + 1,
                    req.conn,
                    String::from_utf8_lossy(&req.raw)
                );
            }
        }
    }
    out
}

/// Where the client views first differ, in a line.
fn client_diff(h: &Client, r: &Client) -> String {
    let Some(i) = (0..h.len().max(r.len())).find(|&i| h.get(i) != r.get(i)) else {
        return "client views differ".into();
    };
    let text = |x: Option<&Result<Response, std::io::ErrorKind>>| match x {
        Some(Ok(resp)) => String::from_utf8_lossy(&resp.raw).into_owned(),
        Some(Err(e)) => format!("<no response: {e:?}>"),
        None => "<absent>".into(),
    };
    format!("response {}: {}", i + 1, line_diff(&text(h.get(i)), &text(r.get(i))))
}

/// Where the server views first differ, in a line.
fn servers_diff(h: &[(String, Seen)], r: &[(String, Seen)]) -> String {
    for ((name, hs), (_, rs)) in h.iter().zip(r) {
        let (Seen::Http(hr), Seen::Http(rr)) = (hs, rs) else { continue };
        if hr.len() != rr.len() {
            return format!("{name} received {} requests via haproxy, {} via rampart", hr.len(), rr.len());
        }
        if let Some(i) = (0..hr.len()).find(|&i| hr[i] != rr[i]) {
            let (a, b) = (String::from_utf8_lossy(&hr[i].raw), String::from_utf8_lossy(&rr[i].raw));
            let d = line_diff(&a, &b);
            let d = if d.is_empty() { format!("conn {} vs {}", hr[i].conn, rr[i].conn) } else { d };
            return format!("{name} request {}: {d}", i + 1);
        }
    }
    "server views differ".into()
}

/// Lines only haproxy had (`-`) and only rampart had (`+`).
fn line_diff(h: &str, r: &str) -> String {
    let (hl, rl): (Vec<&str>, Vec<&str>) = (h.split("\r\n").collect(), r.split("\r\n").collect());
    let mut parts: Vec<String> = hl.iter().filter(|l| !rl.contains(l)).map(|l| format!("-{l:?}")).collect();
    parts.extend(rl.iter().filter(|l| !hl.contains(l)).map(|l| format!("+{l:?}")));
    if parts.is_empty() && h != r {
        parts.push("same lines, different order".into());
    }
    parts.join(" ")
}

/// `tests/rules_corpus/known-differences`: `<case id> <reason>` per line.
#[derive(Default)]
pub struct Known(BTreeMap<String, String>);

impl Known {
    pub fn load(path: &Path) -> Result<Known, String> {
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        let mut map = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (id, reason) = line.split_once(char::is_whitespace).ok_or(format!("line {}: no reason", i + 1))?;
            if map.insert(id.to_string(), reason.trim().to_string()).is_some() {
                return Err(format!("line {}: {id} listed twice", i + 1));
            }
        }
        Ok(Known(map))
    }

    fn get(&self, id: &str) -> Option<&str> {
        self.0.get(id).map(String::as_str)
    }

    /// Entries naming no case of the corpus.
    pub fn unused(&self, cases: &[Case]) -> Vec<String> {
        self.0
            .keys()
            .filter(|id| !cases.iter().any(|c| &c.id == *id))
            .map(|id| format!("{id}: listed in known-differences but no such case"))
            .collect()
    }
}

/// Whether a known-differences reason announces a startup refusal.
fn expects_refusal(reason: &str) -> bool {
    reason == NOT_LANDED || reason.starts_with("refused:")
}

/// A case, its outcome, and whether that outcome is what the known list says.
pub struct Verdict {
    pub id: String,
    pub theme: String,
    pub requests: usize,
    pub outcome: Outcome,
    pub known: Option<String>,
    pub problem: Option<String>,
    pub detail: String,
}

impl Verdict {
    pub fn new(case: &Case, outcome: Outcome, detail: String, known: &Known) -> Verdict {
        let listed = known.get(&case.id);
        let id = &case.id;
        let problem = match (&outcome, listed) {
            (Outcome::CorpusError(e), _) => Some(format!("{id} (line {}): corpus error: {e}", case.line)),
            (Outcome::Agree, Some(_)) => Some(format!("{id}: agrees now: remove it from known-differences")),
            (Outcome::Agree, None) => None,
            (Outcome::Refused(_), Some(r)) if expects_refusal(r) => None,
            (Outcome::Refused(a), Some(_)) => Some(format!("{id}: refused at startup ({a}), listed as a difference")),
            (Outcome::Refused(a), None) => Some(format!("{id}: rampart refused the configuration: {a}")),
            (Outcome::Differs(d), Some(r)) if expects_refusal(r) => {
                Some(format!("{id}: starts now but differs ({d}): give it a reason in known-differences"))
            }
            (Outcome::Differs(_), Some(_)) => None,
            (Outcome::Differs(d), None) => Some(format!("{id}: differs: {d}")),
        };
        Verdict {
            id: case.id.clone(),
            theme: case.theme.clone(),
            requests: case.requests.len(),
            outcome,
            known: listed.map(str::to_string),
            problem,
            detail,
        }
    }
}

/// Per-theme counts, `[agree, refused, differ, corpus error, requests]`.
fn counts(verdicts: &[Verdict]) -> BTreeMap<&str, [usize; 5]> {
    let mut by_theme: BTreeMap<&str, [usize; 5]> = BTreeMap::new();
    for v in verdicts {
        let c = by_theme.entry(v.theme.as_str()).or_default();
        let slot = match v.outcome {
            Outcome::Agree => 0,
            Outcome::Refused(_) => 1,
            Outcome::Differs(_) => 2,
            Outcome::CorpusError(_) => 3,
        };
        c[slot] += 1;
        c[4] += v.requests;
    }
    by_theme
}

/// The agreement table: per theme and overall.
pub fn summary(verdicts: &[Verdict]) -> String {
    let mut out = String::from(
        "rules differential corpus: haproxy vs rampart\n\
         | theme | cases | requests | agree | refused at startup | differ | corpus errors | agreement |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    let mut total = [0usize; 5];
    for (theme, c) in counts(verdicts) {
        let _ = writeln!(out, "{}", row(theme, &c));
        for (t, x) in total.iter_mut().zip(c) {
            *t += x;
        }
    }
    let _ = writeln!(out, "{}", row("**all**", &total));
    out
}

fn row(name: &str, c: &[usize; 5]) -> String {
    let cases = c[0] + c[1] + c[2] + c[3];
    let rate = if cases == 0 { 0.0 } else { 100.0 * c[0] as f64 / cases as f64 };
    format!("| {name} | {cases} | {} | {} | {} | {} | {} | {rate:.1}% |", c[4], c[0], c[1], c[2], c[3])
}

/// Every case that did not agree, with its reason and both observations.
pub fn details(verdicts: &[Verdict]) -> String {
    let mut out = String::new();
    for v in verdicts.iter().filter(|v| !matches!(v.outcome, Outcome::Agree)) {
        let _ = writeln!(
            out,
            "\n##### {} : {:?}\nknown: {}\n{}",
            v.id,
            v.outcome,
            v.known.as_deref().unwrap_or("(not listed)"),
            v.detail
        );
    }
    out
}

/// What makes the test fail, one line each.
pub fn problems(verdicts: &[Verdict]) -> Vec<String> {
    verdicts.iter().filter_map(|v| v.problem.clone()).collect()
}
