//! `balance`, `hash-type`, `hash-balance-factor` and `retry-on`.
//!
//! HAProxy counterparts: `backend_parse_balance()` (src/backend.c) and the
//! `hash-type` / `hash-balance-factor` branches of `cfg_parse_listen()`
//! (src/cfgparse-listen.c), `proxy_parse_retry_on()` (src/proxy.c). The messages
//! are HAProxy 2.6's.

use crate::model::{Balance, HashFunc, HashType};

use super::ctx::Ctx;
use super::value::{atol, parse_time_ms};
use super::{arg, not_yet};

pub(super) fn parse_balance(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.ignored_without(false, "balance", "") {
        return;
    }
    let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    match balance(&args) {
        Ok(b) => cx.pb.px.balance = b,
        Err(Refusal::NotYet(what)) => cx.alert(not_yet(&format!("balance {what}"))),
        Err(Refusal::Bad(msg)) => cx.alert(format!("balance {msg}")),
    }
}

enum Refusal {
    /// HAProxy has it, rampart not yet.
    NotYet(&'static str),
    /// HAProxy refuses it too, with this message (after "balance ").
    Bad(String),
}

fn balance(args: &[&str]) -> Result<Balance, Refusal> {
    let algo = args.first().copied().unwrap_or("");
    let at = |i: usize| args.get(i).copied().unwrap_or("");
    Ok(match algo {
        "" | "roundrobin" => Balance::RoundRobin,
        "static-rr" => Balance::StaticRr,
        "first" => Balance::First,
        "leastconn" => Balance::LeastConn,
        "source" => Balance::Source,
        "uri" => uri(&args[1..])?,
        "url_param" => {
            if at(1).is_empty() {
                return Err(Refusal::Bad("url_param requires an URL parameter name.".into()));
            }
            let check_post = match at(2) {
                "" => false,
                "check_post" => return Err(Refusal::NotYet("url_param check_post")),
                other => {
                    return Err(Refusal::Bad(format!("url_param only accepts 'check_post' modifier (got '{other}').")))
                }
            };
            Balance::UrlParam { name: at(1).to_owned(), check_post }
        }
        "hash" => {
            if at(1).is_empty() {
                return Err(Refusal::Bad("hash requires a sample expression.".into()));
            }
            if !at(2).is_empty() {
                return Err(Refusal::Bad(format!("hash takes no other argument (got '{}').", at(2))));
            }
            Balance::Hash { expr: at(1).to_owned() }
        }
        // rampart extension: response-time aware power of two choices
        "peak-ewma" => peak_ewma(&args[1..])?,
        // rampart extension: prompt-prefix affinity with bounded load
        "prefix-affinity" => prefix_affinity(&args[1..])?,
        _ if algo.starts_with("random") => Balance::Random { draws: draws(&algo[6..])? },
        _ if algo.starts_with("hdr(") => {
            let name = algo[4..].split(')').next().filter(|n| !n.is_empty() && algo[4..].contains(')'));
            let Some(name) = name else {
                return Err(Refusal::Bad("hdr requires an http header field name.".into()));
            };
            let use_domain_only = match at(1) {
                "" => false,
                "use_domain_only" => true,
                other => {
                    return Err(Refusal::Bad(format!(
                        "{algo} only accepts 'use_domain_only' modifier (got '{other}')."
                    )))
                }
            };
            Balance::Hdr { name: name.to_owned(), use_domain_only }
        }
        _ if algo.starts_with("rdp-cookie") => rdp_cookie(&algo["rdp-cookie".len()..])?,
        _ => {
            return Err(Refusal::Bad(
                "only supports 'roundrobin', 'static-rr', 'leastconn', 'source', 'uri', 'url_param', \
                 'hdr(name)' and 'rdp-cookie(name)' options."
                    .into(),
            ))
        }
    })
}

/// `rdp-cookie[(<name>)]`: `mstshash` by default; what follows the `)` is ignored,
/// as HAProxy 2.6 does.
fn rdp_cookie(rest: &str) -> Result<Balance, Refusal> {
    let missing = || Refusal::Bad("rdp-cookie : missing cookie name.".into());
    let name = match rest.strip_prefix('(') {
        Some(inner) => inner.split_once(')').map(|(n, _)| n).filter(|n| !n.is_empty()).ok_or_else(missing)?,
        None if rest.is_empty() => "mstshash",
        None => return Err(missing()),
    };
    Ok(Balance::RdpCookie { name: name.to_owned() })
}

/// `uri [whole] [len N] [depth N] [path-only]`.
fn uri(args: &[&str]) -> Result<Balance, Refusal> {
    let (mut whole, mut path_only, mut len, mut depth) = (false, false, 0, 0);
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            kw @ ("len" | "depth") => {
                let v = args.get(i + 1).copied().unwrap_or("");
                let n = atol(v);
                if v.is_empty() || n <= 0 {
                    return Err(Refusal::Bad(format!("uri : '{kw}' expects a positive integer (got '{v}').")));
                }
                let n = u32::try_from(n).unwrap_or(u32::MAX);
                if kw == "len" {
                    len = n;
                } else {
                    depth = n;
                }
                i += 2;
            }
            "whole" => {
                whole = true;
                i += 1;
            }
            "path-only" => {
                path_only = true;
                i += 1;
            }
            other => {
                return Err(Refusal::Bad(format!(
                    "uri only accepts parameters 'len', 'depth', 'path-only', and 'whole' (got '{other}')."
                )))
            }
        }
    }
    Ok(Balance::Uri { whole, path_only, len, depth })
}

/// `peak-ewma [decay <time>]`.
fn peak_ewma(args: &[&str]) -> Result<Balance, Refusal> {
    let decay = match args {
        [] => std::time::Duration::from_secs(10),
        ["decay", t] => match parse_time_ms(t).ok().and_then(|ms| ms.duration()) {
            Some(d) => d,
            None => return Err(Refusal::Bad(format!("peak-ewma : 'decay' expects a positive time (got '{t}')."))),
        },
        _ => return Err(Refusal::Bad("peak-ewma only accepts 'decay <time>'.".into())),
    };
    Ok(Balance::PeakEwma { decay })
}

/// `prefix-affinity [<expr>] [len <n>]`.
fn prefix_affinity(args: &[&str]) -> Result<Balance, Refusal> {
    let (mut expr, mut len) = ("req.body", 256u32);
    let mut rest = args;
    if let Some(&first) = rest.first().filter(|&&a| a != "len") {
        expr = first;
        rest = &rest[1..];
    }
    match rest {
        [] => {}
        ["len", n] if atol(n) > 0 => len = u32::try_from(atol(n)).unwrap_or(u32::MAX),
        ["len", n] => {
            return Err(Refusal::Bad(format!("prefix-affinity : 'len' expects a positive integer (got '{n}').")))
        }
        _ => return Err(Refusal::Bad("prefix-affinity only accepts '[<expr>] [len <n>]'.".into())),
    }
    Ok(Balance::PrefixAffinity { expr: expr.to_owned(), len })
}

/// `random` or `random(<draws>)` (the text after `random`).
fn draws(rest: &str) -> Result<u32, Refusal> {
    let Some(inner) = rest.strip_prefix('(').filter(|r| !r.starts_with(')')) else { return Ok(2) };
    // HAProxy reads the number with strtol (base 0) and wants ')' right after it
    let digits = inner.find(|c: char| !(c.is_ascii_digit() || c == '-' || c == '+')).unwrap_or(inner.len());
    let n = if digits == 0 { 0 } else { inner[..digits].parse::<i64>().unwrap_or(0) };
    match inner[digits..].chars().next() {
        Some(')') => {}
        None => return Err(Refusal::Bad("random : missing closing parenthesis.".into())),
        Some(c) => return Err(Refusal::Bad(format!("random : unexpected character '{c}' after argument."))),
    }
    if n < 1 {
        return Err(Refusal::Bad("random : number of draws must be at least 1.".into()));
    }
    Ok(u32::try_from(n).unwrap_or(u32::MAX))
}

pub(super) fn parse_hash_type(cx: &mut Ctx<'_>, words: &[String]) {
    cx.ignored_without(false, "hash-type", "");
    let consistent = match arg(words, 1) {
        "consistent" => true,
        "map-based" => false,
        "avalanche" => {
            cx.alert(
                "experimental feature 'hash-type avalanche' is not supported anymore, please use \
                 'hash-type map-based sdbm avalanche' instead.",
            );
            return;
        }
        _ => {
            cx.alert("'hash-type' only supports 'consistent' and 'map-based'.");
            return;
        }
    };
    let func = match arg(words, 2) {
        "" => {
            cx.pb.px.hash_type = HashType { consistent, func: HashFunc::Sdbm, avalanche: consistent };
            return;
        }
        "sdbm" => HashFunc::Sdbm,
        "djb2" => HashFunc::Djb2,
        "wt6" => HashFunc::Wt6,
        "crc32" => HashFunc::Crc32,
        _ => {
            cx.alert("'hash-type' only supports 'sdbm', 'djb2', 'crc32', or 'wt6' hash functions.");
            return;
        }
    };
    let avalanche = match arg(words, 3) {
        "" => false,
        "avalanche" => true,
        _ => {
            cx.alert("'hash-type' only supports 'avalanche' as a modifier for hash functions.");
            return;
        }
    };
    cx.pb.px.hash_type = HashType { consistent, func, avalanche };
}

pub(super) fn parse_hash_balance_factor(cx: &mut Ctx<'_>, words: &[String]) {
    if arg(words, 1).is_empty() {
        cx.alert("'hash-balance-factor' expects an integer argument.");
        return;
    }
    // HAProxy stores atol() in an unsigned int
    let v = atol(arg(words, 1)) as u32;
    if v != 0 && v <= 100 {
        cx.alert("'hash-balance-factor' must be 0 or greater than 100.");
        return;
    }
    cx.pb.px.hash_balance_factor = v;
}

/// `retry-on <condition>...`: `none` (alone) or `conn-failure`; a condition on the
/// response (`empty-response`, `503`, `all-retryable-errors`...) needs the request kept
/// for a replay, which the stream does not do yet.
pub(super) fn parse_retry_on(cx: &mut Ctx<'_>, words: &[String]) {
    if arg(words, 1).is_empty() {
        cx.alert("'retry-on' needs at least one keyword to specify when to retry");
        return;
    }
    if !cx.cap().backend {
        cx.alert("'retry-on' only available in backend or listen section");
        return;
    }
    let mut conn_failure = false;
    let mut on = crate::model::RetryOnResponse { explicit: true, ..Default::default() };
    for (i, w) in words.iter().enumerate().skip(1) {
        match w.as_str() {
            "conn-failure" => conn_failure = true,
            "none" if i != 1 || words.len() > 2 => {
                cx.alert("'retry-on' 'none' keyworld only usable alone");
                return;
            }
            "none" => {}
            "empty-response" => on.empty_response = true,
            "junk-response" => on.junk_response = true,
            "response-timeout" => on.response_timeout = true,
            "401" | "403" | "404" | "408" | "425" | "500" | "501" | "502" | "503" | "504" => {
                on.statuses.extend(w.parse::<u16>().ok());
            }
            // early data needs TLS, which rampart does not have yet
            "0rtt-rejected" => {
                cx.alert(not_yet(&format!("retry-on {w}")));
                return;
            }
            // COMPAT: also 0rtt-rejected for HAProxy, which cannot happen without TLS
            "all-retryable-errors" => {
                conn_failure = true;
                on.empty_response = true;
                on.junk_response = true;
                on.response_timeout = true;
                on.statuses.extend([500, 502, 503, 504]);
            }
            _ => {
                cx.alert(format!("'retry-on': unknown keyword '{w}'"));
                return;
            }
        }
    }
    on.statuses.sort_unstable();
    on.statuses.dedup();
    cx.pb.px.retry_on_response = on;
    cx.pb.px.retry_on_conn_failure = conn_failure;
}

#[cfg(test)]
mod tests {
    use crate::model::{Balance, HashFunc, HashType, RetryOnResponse};
    use crate::parse::tests::{alerts, parse_ok, warnings};

    fn be(lines: &str) -> crate::model::Proxy {
        let cfg = parse_ok(&format!("backend b\n mode http\n{lines}"));
        cfg.proxies.into_iter().next().unwrap()
    }

    #[test]
    fn algorithms() {
        assert_eq!(be("").balance, Balance::RoundRobin);
        assert_eq!(be(" balance leastconn\n").balance, Balance::LeastConn);
        assert_eq!(be(" balance first\n").balance, Balance::First);
        assert_eq!(be(" balance source\n").balance, Balance::Source);
        assert_eq!(be(" balance random\n").balance, Balance::Random { draws: 2 });
        assert_eq!(be(" balance random(5)\n").balance, Balance::Random { draws: 5 });
        assert_eq!(be(" balance random()\n").balance, Balance::Random { draws: 2 });
        assert_eq!(
            be(" balance uri whole len 10 depth 3 path-only\n").balance,
            Balance::Uri { whole: true, path_only: true, len: 10, depth: 3 }
        );
        assert_eq!(be(" balance url_param id\n").balance, Balance::UrlParam { name: "id".into(), check_post: false });
        assert_eq!(
            be(" balance hdr(Host) use_domain_only\n").balance,
            Balance::Hdr { name: "Host".into(), use_domain_only: true }
        );
        assert_eq!(be(" balance hash req.cook(x)\n").balance, Balance::Hash { expr: "req.cook(x)".into() });
        let secs = std::time::Duration::from_secs;
        assert_eq!(be(" balance peak-ewma\n").balance, Balance::PeakEwma { decay: secs(10) });
        assert_eq!(be(" balance peak-ewma decay 30s\n").balance, Balance::PeakEwma { decay: secs(30) });
        let pa = |expr: &str, len| Balance::PrefixAffinity { expr: expr.into(), len };
        assert_eq!(be(" balance prefix-affinity\n").balance, pa("req.body", 256));
        assert_eq!(be(" balance prefix-affinity len 64\n").balance, pa("req.body", 64));
        assert_eq!(be(" balance prefix-affinity req.hdr(x-prompt) len 9\n").balance, pa("req.hdr(x-prompt)", 9));
    }

    #[test]
    fn hash_types() {
        let d = HashType::default();
        assert_eq!(be("").hash_type, d);
        assert_eq!(be(" hash-type consistent\n").hash_type, HashType { consistent: true, avalanche: true, ..d });
        assert_eq!(
            be(" hash-type consistent djb2\n").hash_type,
            HashType { consistent: true, func: HashFunc::Djb2, avalanche: false }
        );
        assert_eq!(
            be(" hash-type map-based wt6 avalanche\n").hash_type,
            HashType { consistent: false, func: HashFunc::Wt6, avalanche: true }
        );
        assert_eq!(be(" hash-balance-factor 150\n").hash_balance_factor, 150);
        assert!(be("").retry_on_conn_failure);
        assert!(!be(" retry-on none\n").retry_on_conn_failure);
        assert!(be(" retry-on none\n retry-on conn-failure\n").retry_on_conn_failure);
        let r = be(" retry-on 503 empty-response 404 503\n");
        assert!(!r.retry_on_conn_failure);
        let expect =
            RetryOnResponse { empty_response: true, statuses: vec![404, 503], explicit: true, ..Default::default() };
        assert_eq!(r.retry_on_response, expect);
        let all = be(" retry-on all-retryable-errors\n");
        assert!(
            all.retry_on_conn_failure && all.retry_on_response.response_timeout && all.retry_on_response.junk_response
        );
        assert_eq!(all.retry_on_response.statuses, [500, 502, 503, 504]);
        // not cumulative: the last line replaces the previous one
        assert!(!be(" retry-on 503\n retry-on conn-failure\n").retry_on_response.any());
        assert!(!be("").retry_on_response.explicit);
        assert!(be(" retry-on conn-failure\n").retry_on_response.explicit);
        assert!(parse_ok("defaults\n retry-on conn-failure\nbackend b\n").proxies[0].retry_on_response.explicit);
        let cfg = parse_ok("defaults\n retry-on none\nbackend b\n");
        assert!(!cfg.proxies[0].retry_on_conn_failure);
        let cfg = parse_ok("defaults\n hash-type consistent crc32\n balance source\nbackend b\n");
        assert_eq!(cfg.proxies[0].hash_type.func, HashFunc::Crc32);
        assert_eq!(cfg.proxies[0].balance, Balance::Source);
    }

    #[test]
    fn server_ids() {
        let cfg = parse_ok("backend b\n server s1 127.0.0.1:1 id 7\n server s2 127.0.0.1:2\n");
        assert_eq!(cfg.proxies[0].servers.iter().map(|s| s.id).collect::<Vec<_>>(), [Some(7), None]);
        let a = alerts("backend b\n server s1 127.0.0.1:1 id 3\n server s2 127.0.0.1:2 id 3\n");
        assert_eq!(a.len(), 1);
        assert!(a[0].starts_with("'server b/s2' : 'id' : custom id 3 already used at "), "{a:?}");
        assert!(a[0].ends_with(":2 ('server s1')."), "{a:?}");
        assert_eq!(
            alerts("backend b\n default-server id 4\n"),
            ["'id' option is not accepted in default-server sections"]
        );
    }

    #[test]
    fn messages_are_haproxys() {
        let a = |l: &str| alerts(&format!("backend b\n {l}\n"));
        assert_eq!(
            a("balance uri foo"),
            ["balance uri only accepts parameters 'len', 'depth', 'path-only', and 'whole' (got 'foo')."]
        );
        assert_eq!(a("balance uri len 0"), ["balance uri : 'len' expects a positive integer (got '0')."]);
        assert_eq!(a("balance random(x)"), ["balance random : unexpected character 'x' after argument."]);
        assert_eq!(a("balance random(3"), ["balance random : missing closing parenthesis."]);
        assert_eq!(a("balance random(0)"), ["balance random : number of draws must be at least 1."]);
        assert_eq!(a("balance hdr()"), ["balance hdr requires an http header field name."]);
        assert_eq!(a("balance hdr(x) foo"), ["balance hdr(x) only accepts 'use_domain_only' modifier (got 'foo')."]);
        assert_eq!(a("balance url_param"), ["balance url_param requires an URL parameter name."]);
        assert_eq!(a("balance url_param a b"), ["balance url_param only accepts 'check_post' modifier (got 'b')."]);
        assert_eq!(a("balance url_param a check_post"), ["'balance url_param check_post' is not supported yet"]);
        assert_eq!(a("balance hash"), ["balance hash requires a sample expression."]);
        assert_eq!(a("balance peak-ewma decay 0"), ["balance peak-ewma : 'decay' expects a positive time (got '0')."]);
        assert_eq!(a("balance peak-ewma foo"), ["balance peak-ewma only accepts 'decay <time>'."]);
        assert_eq!(
            a("balance prefix-affinity len 0"),
            ["balance prefix-affinity : 'len' expects a positive integer (got '0')."]
        );
        assert_eq!(
            a("balance prefix-affinity req.body 5"),
            ["balance prefix-affinity only accepts '[<expr>] [len <n>]'."]
        );
        let b = |l: &str| be(&format!(" {l}\n")).balance;
        assert_eq!(b("balance rdp-cookie"), Balance::RdpCookie { name: "mstshash".into() });
        assert_eq!(b("balance rdp-cookie(user) x"), Balance::RdpCookie { name: "user".into() });
        assert_eq!(a("balance rdp-cookie()"), ["balance rdp-cookie : missing cookie name."]);
        assert_eq!(a("balance rdp-cookie(user"), ["balance rdp-cookie : missing cookie name."]);
        assert_eq!(a("balance rdp-cookiex"), ["balance rdp-cookie : missing cookie name."]);
        assert!(a("balance foo")[0].starts_with("balance only supports 'roundrobin', 'static-rr'"));
        assert_eq!(
            a("hash-type consistent none"),
            ["'hash-type' only supports 'sdbm', 'djb2', 'crc32', or 'wt6' hash functions."]
        );
        assert_eq!(a("hash-type foo"), ["'hash-type' only supports 'consistent' and 'map-based'."]);
        assert_eq!(
            a("hash-type map-based sdbm x"),
            ["'hash-type' only supports 'avalanche' as a modifier for hash functions."]
        );
        assert_eq!(a("retry-on"), ["'retry-on' needs at least one keyword to specify when to retry"]);
        assert_eq!(a("retry-on foo"), ["'retry-on': unknown keyword 'foo'"]);
        assert_eq!(a("retry-on none 404"), ["'retry-on' 'none' keyworld only usable alone"]);
        assert_eq!(a("retry-on conn-failure 0rtt-rejected"), ["'retry-on 0rtt-rejected' is not supported yet"]);
        assert_eq!(alerts("frontend f\n retry-on none\n"), ["'retry-on' only available in backend or listen section"]);
        assert_eq!(a("hash-balance-factor 50"), ["'hash-balance-factor' must be 0 or greater than 100."]);
        assert_eq!(a("hash-balance-factor"), ["'hash-balance-factor' expects an integer argument."]);
        assert_eq!(
            warnings("frontend f\n hash-type consistent\n"),
            ["'hash-type' ignored because frontend 'f' has no backend capability."]
        );
    }
}
