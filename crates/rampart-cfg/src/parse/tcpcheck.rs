//! `option tcp-check` and its `tcp-check` rules, and the protocol checks built on the
//! same engine (`option redis-check`, `smtpchk`, `mysql-check`, `pgsql-check`,
//! `ldap-check`, `spop-check`).
//!
//! HAProxy counterparts: `parse_tcpcheck_connect()`, `parse_tcpcheck_send()`,
//! `parse_tcpcheck_expect()`, `proxy_parse_redis_check_opt()`,
//! `proxy_parse_smtpchk_opt()`, `proxy_parse_mysql_check_opt()`,
//! `proxy_parse_pgsql_check_opt()`, `proxy_parse_ldap_check_opt()`,
//! `proxy_parse_spop_check_opt()` (src/tcpcheck.c). Only what the daemon runs is
//! accepted; the rest is refused by name.

use crate::model::{MysqlUser, ProtoCheck, TcpCheckAction, TcpCheckRule, TcpExpectMatch};

use super::ctx::Ctx;
use super::{arg, not_yet};

/// `option tcp-check`, `option redis-check`, `option smtpchk [EHLO|HELO <domain>]`,
/// `option mysql-check [user <name> [post-41|pre-41]]`, `option pgsql-check user
/// <name>`, `option ldap-check`, `option spop-check`.
pub(super) fn parse_proto_option(cx: &mut Ctx<'_>, words: &[String], name: &str) {
    if cx.ignored_without(false, &format!("option {name}"), "") {
        return;
    }
    let proto = match name {
        "mysql-check" if cx.too_many(words, 3, 1) => return,
        "mysql-check" => match mysql_user(words) {
            Ok(user) => ProtoCheck::Mysql { user },
            Err(msg) => return cx.alert(msg),
        },
        "pgsql-check" if cx.too_many(words, 2, 1) => return,
        "pgsql-check" => match (arg(words, 2), arg(words, 3)) {
            ("", _) | (_, "") => return cx.alert("'option pgsql-check' expects 'user <username>' as argument."),
            ("user", name) => ProtoCheck::Pgsql { user: name.to_owned() },
            _ => return cx.alert("'option pgsql-check' only supports optional values: 'user'."),
        },
        "smtpchk" => {
            let (verb, domain) = (arg(words, 2), arg(words, 3));
            let hello = if (verb == "EHLO" || verb == "HELO") && !domain.is_empty() {
                format!("{verb} {domain}")
            } else {
                "HELO localhost".to_owned()
            };
            ProtoCheck::Smtp { hello }
        }
        _ if cx.too_many(words, 0, 1) => return,
        "redis-check" => ProtoCheck::Redis,
        "ldap-check" => ProtoCheck::Ldap,
        "spop-check" => ProtoCheck::Spop,
        _ => ProtoCheck::TcpCheck,
    };
    let health = &mut cx.pb.px.options.health;
    health.httpchk = false;
    health.proto = Some(proto);
}

/// The `user <name> [post-41|pre-41]` of `option mysql-check`.
fn mysql_user(words: &[String]) -> Result<Option<MysqlUser>, String> {
    match (arg(words, 2), arg(words, 3), arg(words, 4)) {
        ("", ..) => Ok(None),
        ("user", "", _) => Err("'option mysql-check user' expects <username> as argument.".into()),
        ("user", name, "" | "post-41") => Ok(Some(MysqlUser { name: name.to_owned(), post41: true })),
        ("user", name, "pre-41") => Ok(Some(MysqlUser { name: name.to_owned(), post41: false })),
        ("user", _, other) => Err(format!("keyword 'user' only supports 'post-41' and 'pre-41' (got '{other}').")),
        (other, ..) => Err(format!("'option mysql-check' only supports optional values: 'user' (got '{other}').")),
    }
}

/// `tcp-check <action> ...`. A `comment` rule names the rule after it (the daemon
/// attaches it).
pub(super) fn parse_tcp_check(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.ignored_without(false, "tcp-check", "") {
        return;
    }
    match parse_rule(&words[1.min(words.len())..]) {
        Ok(Parsed::Comment(c)) => {
            cx.pb.px.options.health.tcp_rules.push(TcpCheckRule { action: TcpCheckAction::Comment, comment: Some(c) });
        }
        Ok(Parsed::Rule(action, comment)) => cx.pb.px.options.health.tcp_rules.push(TcpCheckRule { action, comment }),
        Err(msg) => cx.alert(msg),
    }
}

enum Parsed {
    Comment(String),
    Rule(TcpCheckAction, Option<String>),
}

fn parse_rule(args: &[String]) -> Result<Parsed, String> {
    let action = args.first().map_or("", String::as_str);
    let rest = &args[1.min(args.len())..];
    match action {
        "comment" => match rest.first().filter(|c| !c.is_empty()) {
            Some(c) => Ok(Parsed::Comment(c.clone())),
            None => Err("'tcp-check comment' expects a string as argument.".into()),
        },
        "connect" => parse_connect(rest),
        "send" | "send-binary" => {
            let Some(data) = rest.first().filter(|d| !d.is_empty()) else {
                return Err(format!(
                    "'tcp-check {action}' expects a {} as argument.",
                    if action == "send" { "string" } else { "binary string" }
                ));
            };
            let bytes = crate::lexer::raw_bytes(data.as_bytes()).into_owned();
            let bytes = if action == "send" { bytes } else { parse_hex(&String::from_utf8_lossy(&bytes))? };
            let comment = trailing_comment(&rest[1..], action)?;
            Ok(Parsed::Rule(TcpCheckAction::Send(bytes), comment))
        }
        "expect" => parse_expect(rest),
        "send-lf" | "send-binary-lf" => Err(not_yet(&format!("tcp-check {action}"))),
        _ if action.starts_with("set-var") || action.starts_with("unset-var") => {
            Err(not_yet(&format!("tcp-check {}", action.split('(').next().unwrap_or(action))))
        }
        _ => Err(format!(
            "'tcp-check' only supports 'comment', 'connect', 'send', 'send-binary', 'expect', 'send-lf', \
             'send-binary-lf', 'set-var' or 'unset-var' (got '{action}')."
        )),
    }
}

fn trailing_comment(rest: &[String], action: &str) -> Result<Option<String>, String> {
    match rest {
        [] => Ok(None),
        [c, text, ..] if c == "comment" && !text.is_empty() => Ok(Some(text.clone())),
        [other, ..] => Err(format!("'tcp-check {action}' : unexpected argument '{other}'.")),
    }
}

fn parse_connect(rest: &[String]) -> Result<Parsed, String> {
    let (mut port, mut addr, mut comment) = (None, None, None);
    let mut i = 0;
    while let Some(word) = rest.get(i).map(String::as_str) {
        let value = rest.get(i + 1).filter(|v| !v.is_empty());
        match word {
            "default" | "linger" => {}
            "port" => {
                let v = value.ok_or("'tcp-check connect' : 'port' expects a port number as argument.")?;
                port =
                    Some(v.parse::<u16>().ok().filter(|&p| p > 0).ok_or_else(|| {
                        format!("'tcp-check connect' : invalid port '{v}' (a number in 1..65535 only).")
                    })?);
                i += 1;
            }
            "addr" => {
                addr = Some(value.ok_or("'tcp-check connect' : 'addr' expects an address as argument.")?.clone());
                i += 1;
            }
            "comment" => {
                comment = Some(value.ok_or("'tcp-check connect' : 'comment' expects a string as argument.")?.clone());
                i += 1;
            }
            "send-proxy" | "via-socks4" | "ssl" | "sni" | "alpn" | "proto" => {
                return Err(not_yet(&format!("tcp-check connect {word}")))
            }
            _ => return Err(format!("'tcp-check connect' : unexpected argument '{word}'.")),
        }
        i += 1;
    }
    Ok(Parsed::Rule(TcpCheckAction::Connect { port, addr }, comment))
}

fn parse_expect(rest: &[String]) -> Result<Parsed, String> {
    let (mut inverse, mut min_recv, mut comment) = (false, None, None);
    let mut i = 0;
    while let Some(mut word) = rest.get(i).map(String::as_str) {
        let value = rest.get(i + 1).filter(|v| !v.is_empty());
        // HAProxy also takes the `!` glued to the pattern type (`!rstring`)
        if let Some(w) = word.strip_prefix('!').filter(|w| !w.is_empty()) {
            inverse = true;
            word = w;
        }
        match word {
            "!" => inverse = true,
            "min-recv" => {
                let v = value.ok_or("'tcp-check expect' : 'min-recv' expects an integer as argument.")?;
                min_recv =
                    Some(v.parse::<usize>().map_err(|_| format!("'tcp-check expect' : invalid min-recv '{v}'."))?);
                i += 1;
            }
            "comment" => {
                comment = Some(value.ok_or("'tcp-check expect' : 'comment' expects a string as argument.")?.clone());
                i += 1;
            }
            "string" | "rstring" | "binary" | "rbinary" => {
                let pattern =
                    value.ok_or_else(|| format!("'tcp-check expect' : '{word}' expects <pattern> as an argument."))?;
                if let Some(extra) = rest.get(i + 2) {
                    if extra != "comment" {
                        return Err(format!("'tcp-check expect' : unexpected argument '{extra}'."));
                    }
                    comment = Some(trailing_comment(&rest[i + 2..], "expect")?.unwrap_or_default());
                }
                let raw = crate::lexer::raw_bytes(pattern.as_bytes()).into_owned();
                let matcher = match word {
                    "string" => TcpExpectMatch::String(raw),
                    "rstring" => TcpExpectMatch::Rstring(pattern.clone()),
                    "binary" => TcpExpectMatch::Binary(parse_hex(pattern)?),
                    _ => TcpExpectMatch::Rbinary(pattern.clone()),
                };
                return Ok(Parsed::Rule(TcpCheckAction::Expect { inverse, matcher, min_recv }, comment));
            }
            "ok-status" | "error-status" | "tout-status" | "on-success" | "on-error" | "status-code" | "string-lf"
            | "binary-lf" | "custom" => return Err(not_yet(&format!("tcp-check expect {word}"))),
            _ => {
                return Err(format!(
                    "'tcp-check expect' : expects 'string', 'rstring', 'binary', 'rbinary', 'string-lf' or \
                     'binary-lf' but got '{word}' as argument."
                ))
            }
        }
        i += 1;
    }
    Err("'tcp-check expect' : expects a pattern type.".into())
}

/// A hex string (`0a1B...`) as bytes.
fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    let bad = || format!("'{text}' is not a valid binary string (an even number of hex digits).");
    if !text.len().is_multiple_of(2) {
        return Err(bad());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| text.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()).ok_or_else(bad))
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::model::{MysqlUser, ProtoCheck, TcpCheckAction, TcpExpectMatch};
    use crate::parse::tests::{alerts, parse_ok};

    #[test]
    fn rules_and_comments() {
        let cfg = parse_ok(
            "backend b\n option tcp-check\n tcp-check comment first\n tcp-check connect port 6379 linger\n\
             tcp-check send \"PING\\r\\n\"\n tcp-check send-binary 0a0B\n\
             tcp-check expect min-recv 3 ! rstring ^-ERR comment bad\n tcp-check expect binary 2b504f4e47\n",
        );
        let h = &cfg.proxies[0].options.health;
        assert_eq!(h.proto, Some(ProtoCheck::TcpCheck));
        let r = &h.tcp_rules;
        assert_eq!(r.len(), 6);
        assert_eq!((&r[0].action, r[0].comment.as_deref()), (&TcpCheckAction::Comment, Some("first")));
        let r = &r[1..];
        assert_eq!(r[0].action, TcpCheckAction::Connect { port: Some(6379), addr: None });
        assert_eq!(r[1].action, TcpCheckAction::Send(b"PING\r\n".to_vec()));
        assert_eq!(r[1].comment, None);
        assert_eq!(r[2].action, TcpCheckAction::Send(vec![0x0a, 0x0b]));
        assert_eq!(
            r[3].action,
            TcpCheckAction::Expect {
                inverse: true,
                matcher: TcpExpectMatch::Rstring("^-ERR".into()),
                min_recv: Some(3)
            }
        );
        assert_eq!(r[3].comment.as_deref(), Some("bad"));
        assert_eq!(
            r[4].action,
            TcpCheckAction::Expect {
                inverse: false,
                matcher: TcpExpectMatch::Binary(b"+PONG".to_vec()),
                min_recv: None
            }
        );
    }

    #[test]
    fn protocol_options_replace_each_other() {
        let h = |t: &str| parse_ok(&format!("backend b\n{t}")).proxies[0].options.health.clone();
        assert_eq!(h(" option redis-check\n").proto, Some(ProtoCheck::Redis));
        assert_eq!(h(" option smtpchk\n").proto, Some(ProtoCheck::Smtp { hello: "HELO localhost".into() }));
        assert_eq!(
            h(" option smtpchk EHLO mx.example\n").proto,
            Some(ProtoCheck::Smtp { hello: "EHLO mx.example".into() })
        );
        let x = h(" option httpchk\n option redis-check\n");
        assert!(!x.httpchk && x.proto.is_some());
        let x = h(" option redis-check\n option httpchk\n");
        assert!(x.httpchk && x.proto.is_none());
        assert_eq!(h(" option mysql-check\n").proto, Some(ProtoCheck::Mysql { user: None }));
        let user = |name: &str, post41| Some(ProtoCheck::Mysql { user: Some(MysqlUser { name: name.into(), post41 }) });
        assert_eq!(h(" option mysql-check user u\n").proto, user("u", true));
        assert_eq!(h(" option mysql-check user v post-41\n").proto, user("v", true));
        assert_eq!(h(" option mysql-check user w pre-41\n").proto, user("w", false));
        assert_eq!(h(" option pgsql-check user pg\n").proto, Some(ProtoCheck::Pgsql { user: "pg".into() }));
        assert_eq!(h(" option ldap-check\n").proto, Some(ProtoCheck::Ldap));
        assert_eq!(h(" option spop-check\n").proto, Some(ProtoCheck::Spop));
    }

    #[test]
    fn protocol_option_errors() {
        let a = |l: &str| alerts(&format!("backend b\n option {l}\n"));
        assert_eq!(a("mysql-check usr x"), ["'option mysql-check' only supports optional values: 'user' (got 'usr')."]);
        assert_eq!(a("mysql-check user"), ["'option mysql-check user' expects <username> as argument."]);
        assert_eq!(
            a("mysql-check user x post-42"),
            ["keyword 'user' only supports 'post-41' and 'pre-41' (got 'post-42')."]
        );
        assert_eq!(a("mysql-check user x pre-41 y"), ["'option mysql-check' cannot handle unexpected argument 'y'."]);
        assert_eq!(a("pgsql-check"), ["'option pgsql-check' expects 'user <username>' as argument."]);
        assert_eq!(a("pgsql-check login x"), ["'option pgsql-check' only supports optional values: 'user'."]);
        assert_eq!(a("ldap-check x"), ["'option ldap-check' cannot handle unexpected argument 'x'."]);
        assert_eq!(a("spop-check x"), ["'option spop-check' cannot handle unexpected argument 'x'."]);
    }

    #[test]
    fn refusals() {
        let a = |l: &str| alerts(&format!("backend b\n option tcp-check\n tcp-check {l}\n"));
        assert_eq!(a("send-lf x"), ["'tcp-check send-lf' is not supported yet"]);
        assert_eq!(a("connect ssl"), ["'tcp-check connect ssl' is not supported yet"]);
        assert_eq!(a("expect custom"), ["'tcp-check expect custom' is not supported yet"]);
        assert_eq!(a("send-binary 0g"), ["'0g' is not a valid binary string (an even number of hex digits)."]);
        assert_eq!(a("expect string"), ["'tcp-check expect' : 'string' expects <pattern> as an argument."]);
        assert_eq!(a("send"), ["'tcp-check send' expects a string as argument."]);
        assert_eq!(a("set-var(check.x) int(1)"), ["'tcp-check set-var' is not supported yet"]);
        let cfg = parse_ok("backend b\n option tcp-check\n tcp-check expect !rstring ^x\n");
        assert_eq!(
            cfg.proxies[0].options.health.tcp_rules[0].action,
            TcpCheckAction::Expect { inverse: true, matcher: TcpExpectMatch::Rstring("^x".into()), min_recv: None }
        );
    }
}
