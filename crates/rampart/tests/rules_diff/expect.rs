//! `[expect]` lines: checks run on haproxy's observation of a case, so that each case
//! is known to exercise its rule (a rule that fired for neither binary would otherwise
//! pass as agreement). Grammar, one check per line:
//!
//! ```text
//! <n> status <code>              response to request n (from 1)
//! <n> header <name>: <value>     its first <name> header has this value
//! <n> no-header <name>
//! <n> body <text>                its body is exactly <text> (\n escapes)
//! <n> body-has <text>            its body contains <text>
//! <n> closed                     no response: the connection closed or timed out
//! s<k>.<m> line <text>           request m received by server s<k>: its request line
//! s<k>.<m> header <name>: <value>
//! s<k>.<m> no-header <name>
//! s<k>.<m> body <text>
//! s<k> count <c>                 server s<k> received c requests
//! ```

use std::io::ErrorKind;

use rampart_testkit::{Headers, Observed, Request, Response, Seen};

/// What the client saw: one entry per request.
pub type Client = Vec<Result<Response, ErrorKind>>;

/// Checks `line` on `obs`; an error says what was seen instead.
pub fn check(line: &str, obs: &Observed<Client>) -> Result<(), String> {
    let (subject, rest) = line.split_once(' ').ok_or_else(|| format!("bad expectation {line:?}"))?;
    let (check, arg) = rest.split_once(' ').unwrap_or((rest, ""));
    let arg = crate::corpus::unescape(arg.trim());
    match subject.strip_prefix('s') {
        Some(server) => check_server(server, check, &arg, &obs.servers),
        None => {
            let n: usize = subject.parse().map_err(|_| format!("bad subject in {line:?}"))?;
            let got = obs.client.get(n.wrapping_sub(1)).ok_or_else(|| format!("no request {n}"))?;
            check_response(check, &arg, got)
        }
    }
}

fn check_response(check: &str, arg: &str, got: &Result<Response, ErrorKind>) -> Result<(), String> {
    let resp = match (check, got) {
        ("closed", Err(_)) => return Ok(()),
        ("closed", Ok(r)) => return Err(format!("got a response: {}", r.raw_head_str())),
        (_, Err(e)) => return Err(format!("no response ({e:?})")),
        (_, Ok(r)) => r,
    };
    let ok = match check {
        "status" => resp.status.to_string() == arg,
        "header" | "no-header" => return check_header(check, arg, &resp.headers),
        "body" => resp.body == arg.as_bytes(),
        "body-has" => resp.body_str().contains(arg),
        _ => return Err(format!("unknown check {check:?}")),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("response was:\n{}{}", resp.raw_head_str(), resp.body_str()))
    }
}

fn check_server(subject: &str, check: &str, arg: &str, servers: &[(String, Seen)]) -> Result<(), String> {
    let (name, index) = match subject.split_once('.') {
        Some((k, m)) => (format!("s{k}"), Some(m.parse::<usize>().map_err(|_| format!("bad index {m:?}"))?)),
        None => (format!("s{subject}"), None),
    };
    let requests: &[Request] = match servers.iter().find(|(n, _)| *n == name) {
        Some((_, Seen::Http(reqs))) => reqs,
        _ => return Err(format!("no HTTP server {name}")),
    };
    let Some(m) = index else {
        return match check {
            "count" if requests.len().to_string() == arg => Ok(()),
            "count" => Err(format!("{name} received {} requests", requests.len())),
            _ => Err(format!("unknown check {check:?} on a server")),
        };
    };
    let req = requests
        .get(m.wrapping_sub(1))
        .ok_or_else(|| format!("{name} received {} requests, not {m}", requests.len()))?;
    let ok = match check {
        "line" => req.raw_head_str().lines().next() == Some(arg),
        "header" | "no-header" => return check_header(check, arg, &req.headers),
        "body" => req.body == arg.as_bytes(),
        _ => return Err(format!("unknown check {check:?}")),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{name} request {m} was:\n{}{}", req.raw_head_str(), req.body_str()))
    }
}

fn check_header(check: &str, arg: &str, headers: &Headers) -> Result<(), String> {
    let shown = || headers.iter().map(|(n, v)| format!("{n}: {v}\n")).collect::<String>();
    if check == "no-header" {
        return match headers.get(arg) {
            None => Ok(()),
            Some(v) => Err(format!("{arg} is {v:?}; headers:\n{}", shown())),
        };
    }
    let (name, value) = arg.split_once(':').ok_or_else(|| format!("expected <name>: <value>, got {arg:?}"))?;
    match headers.get(name.trim()) {
        Some(v) if v == value.trim() => Ok(()),
        got => Err(format!("{} is {got:?}, expected {:?}; headers:\n{}", name.trim(), value.trim(), shown())),
    }
}
