//! `option tcp-check` and its `tcp-check` rules, and the protocol checks built on the
//! same engine (`option redis-check`, `smtpchk`, `mysql-check`, `pgsql-check`,
//! `ldap-check`, `spop-check`, `ssl-hello-chk`).
//!
//! HAProxy counterparts: `parse_tcpcheck_connect()`, `parse_tcpcheck_send()`,
//! `parse_tcpcheck_expect()`, `proxy_parse_redis_check_opt()`,
//! `proxy_parse_smtpchk_opt()`, `proxy_parse_mysql_check_opt()`,
//! `proxy_parse_pgsql_check_opt()`, `proxy_parse_ldap_check_opt()`,
//! `proxy_parse_spop_check_opt()`, `proxy_parse_ssl_hello_chk_opt()` (src/tcpcheck.c).
//! The rules shared with `http-check` are parsed in `check_step`.

use crate::model::{CheckAction, CheckRule, FmtSrc, MysqlUser, ProtoCheck, SendData};
use crate::span::Span;

use super::arg;
use super::check_step::{self as step, List};
use super::ctx::Ctx;
use super::rule::{ActErr, ActResult};

/// `option tcp-check`, `option redis-check`, `option smtpchk [EHLO|HELO <domain>]`,
/// `option mysql-check [user <name> [post-41|pre-41]]`, `option pgsql-check user
/// <name>`, `option ldap-check`, `option spop-check`, `option ssl-hello-chk`.
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
        "ssl-hello-chk" => ProtoCheck::SslHello,
        _ => ProtoCheck::TcpCheck,
    };
    let health = &mut cx.pb.px.options.health;
    health.httpchk = false;
    health.external = false;
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

/// `tcp-check <action> ...`. The first rule a section writes starts its own list
/// (rules inherited from `defaults` are dropped).
pub(super) fn parse_tcp_check(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.ignored_without(false, "tcp-check", "") {
        return;
    }
    let action = arg(words, 1);
    let span = cx.span.clone();
    let res = parse_rule(&words[1.min(words.len())..], own_rules(cx), &span);
    match res {
        Ok(rule) => own_rules(cx).push(rule),
        Err(e) => {
            let name = action.split('(').next().unwrap_or(action);
            cx.alert(step::message(List::Tcp, name, e));
        }
    }
}

/// The rule list this section adds to: the one it started, or a fresh one.
fn own_rules<'a>(cx: &'a mut Ctx<'_>) -> &'a mut Vec<CheckRule> {
    let owner = (cx.pb.px.span.file.clone(), cx.pb.px.span.line);
    let health = &mut cx.pb.px.options.health;
    if health.tcp_owner.as_ref() != Some(&owner) {
        health.tcp_rules.clear();
        health.tcp_owner = Some(owner);
    }
    &mut health.tcp_rules
}

fn parse_rule(args: &[String], rules: &[CheckRule], span: &Span) -> ActResult<CheckRule> {
    let action = arg(args, 0);
    let rest = &args[1.min(args.len())..];
    let index = rules.last().map_or(0, |r| r.index + 1);
    let rule = |action, comment| CheckRule { action, comment, index, span: span.clone() };
    match action {
        "comment" => Ok(rule(CheckAction::Comment, Some(step::parse_comment(rest)?))),
        "connect" => {
            first_connect(rules)?;
            let (c, comment) = step::parse_connect(rest, List::Tcp, span)?;
            Ok(rule(CheckAction::Connect(c), comment))
        }
        "send" | "send-binary" | "send-lf" | "send-binary-lf" => {
            let (data, comment) = parse_send(action, rest, span)?;
            Ok(rule(CheckAction::Send(data), comment))
        }
        "expect" => {
            let (e, comment) = step::parse_expect(rest, List::Tcp, span)?;
            Ok(rule(CheckAction::Expect(e), comment))
        }
        _ if is_var_action(action) => Ok(rule(CheckAction::Var(step::parse_var(args, span)?), None)),
        _ => Err(ActErr::Invalid(format!(
            "'tcp-check' only supports 'comment', 'connect', 'send', 'send-binary', 'expect', 'set-var-fmt', \
             'set-var', 'unset-var'. but got '{action}'"
        ))),
    }
}

/// `set-var(...)`, `set-var-fmt(...)`, `unset-var(...)`.
pub(super) fn is_var_action(word: &str) -> bool {
    ["set-var", "set-var-fmt", "unset-var"].iter().any(|p| word.starts_with(p))
}

/// HAProxy's rule: a `connect` rule may only follow comments and variable actions
/// unless one came first.
pub(super) fn first_connect(rules: &[CheckRule]) -> ActResult<()> {
    for r in rules {
        match &r.action {
            CheckAction::Connect(_) => return Ok(()),
            CheckAction::Comment | CheckAction::Var(_) => {}
            CheckAction::SendHttp(s) if s.from_opt => {}
            _ => {
                return Err(ActErr::Invalid(
                    "first step MUST also be a 'connect', optionally preceded by a 'set-var', an 'unset-var' or a \
                     'comment', when there is a 'connect' step in the tcp-check ruleset"
                        .into(),
                ))
            }
        }
    }
    Ok(())
}

/// `send <string>`, `send-binary <hex>`, `send-lf <fmt>`, `send-binary-lf <fmt>`, each
/// with an optional `comment <text>`.
fn parse_send(action: &str, rest: &[String], span: &Span) -> ActResult<(SendData, Option<String>)> {
    let data = arg(rest, 0);
    if data.is_empty() {
        let what = if action == "send-binary" { "binary string" } else { "string" };
        return Err(ActErr::Invalid(format!("'{action}' expects a {what} as argument")));
    }
    let comment = match &rest[1..] {
        [] => None,
        [c, text, ..] if c == "comment" && !text.is_empty() => Some(text.clone()),
        [c] if c == "comment" => return Err(ActErr::Invalid("'comment' expects a string as argument.".into())),
        [other, ..] => return Err(ActErr::Invalid(format!("expects 'comment' but got '{other}' as argument"))),
    };
    let fmt = || FmtSrc { text: data.to_owned(), span: span.clone() };
    let bytes = || crate::lexer::raw_bytes(data.as_bytes()).into_owned();
    let send = match action {
        "send" => SendData::Bytes(bytes()),
        "send-binary" => SendData::Bytes(
            step::parse_hex(&String::from_utf8_lossy(&bytes()))
                .map_err(|m| ActErr::Invalid(format!("'{data}' invalid binary string ({m})")))?,
        ),
        "send-lf" => SendData::Lf(fmt()),
        _ => SendData::BinaryLf(fmt()),
    };
    Ok((send, comment))
}

#[cfg(test)]
mod tests {
    use crate::model::{CheckAction, CheckExpect, ConnectPort, ExpectMatch, MysqlUser, ProtoCheck, SendData};
    use crate::parse::tests::{alerts, parse_ok};

    #[test]
    fn rules_and_comments() {
        let cfg = parse_ok(
            "backend b\n option tcp-check\n tcp-check comment first\n tcp-check connect port 6379 linger\n\
             tcp-check send \"PING\\r\\n\"\n tcp-check send-binary 0a0B\n\
             tcp-check expect min-recv 3 ! rstring ^-ERR comment bad\n tcp-check expect binary 2b504f4e47\n\
             tcp-check send-lf %[var(check.x)]\n tcp-check set-var(check.x) str(y)\n",
        );
        let h = &cfg.proxies[0].options.health;
        assert_eq!(h.proto, Some(ProtoCheck::TcpCheck));
        let r = &h.tcp_rules;
        assert_eq!(r.len(), 8);
        assert_eq!((&r[0].action, r[0].comment.as_deref()), (&CheckAction::Comment, Some("first")));
        assert_eq!(r.iter().map(|r| r.index).collect::<Vec<_>>(), [0, 1, 2, 3, 4, 5, 6, 7]);
        let CheckAction::Connect(c) = &r[1].action else { panic!("connect") };
        assert_eq!((c.port.clone(), c.linger), (Some(ConnectPort::Num(6379)), true));
        assert_eq!(r[2].action, CheckAction::Send(SendData::Bytes(b"PING\r\n".to_vec())));
        assert_eq!(r[3].action, CheckAction::Send(SendData::Bytes(vec![0x0a, 0x0b])));
        let mut e = CheckExpect::new(true, ExpectMatch::Rstring("^-ERR".into()));
        e.min_recv = Some(3);
        assert_eq!(r[4].action, CheckAction::Expect(e));
        assert_eq!(r[4].comment.as_deref(), Some("bad"));
        let e = CheckExpect::new(false, ExpectMatch::Binary(b"+PONG".to_vec()));
        assert_eq!(r[5].action, CheckAction::Expect(e));
        assert!(matches!(&r[6].action, CheckAction::Send(SendData::Lf(f)) if f.text == "%[var(check.x)]"));
        assert!(matches!(r[7].action, CheckAction::Var(_)));
    }

    #[test]
    fn a_proxy_writing_rules_starts_over() {
        let cfg =
            parse_ok("defaults\n option tcp-check\n tcp-check send a\nbackend b1\nbackend b2\n tcp-check send b\n");
        let sends = |i: usize| cfg.proxies[i].options.health.tcp_rules.len();
        assert_eq!((sends(0), sends(1)), (1, 1));
        assert_eq!(
            cfg.proxies[1].options.health.tcp_rules[0].action,
            CheckAction::Send(SendData::Bytes(b"b".to_vec()))
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
        assert_eq!(h(" option ssl-hello-chk\n").proto, Some(ProtoCheck::SslHello));
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
        assert_eq!(a("ssl-hello-chk x"), ["'option ssl-hello-chk' cannot handle unexpected argument 'x'."]);
    }

    #[test]
    fn refusals() {
        let a = |l: &str| alerts(&format!("backend b\n option tcp-check\n tcp-check {l}\n"));
        assert_eq!(a("expect custom"), ["'tcp-check expect custom' is not supported yet"]);
        assert_eq!(
            a("send-binary 0g"),
            ["'tcp-check send-binary' : '0g' invalid binary string (an hex digit is expected (found 'g'))."]
        );
        assert_eq!(a("expect string"), ["'tcp-check expect' : 'string' expects a <pattern> as argument."]);
        assert_eq!(a("send"), ["'tcp-check send' : 'send' expects a string as argument."]);
        assert_eq!(a("send x y"), ["'tcp-check send' : expects 'comment' but got 'y' as argument."]);
        assert_eq!(
            a("bogus"),
            ["'tcp-check bogus' : 'tcp-check' only supports 'comment', 'connect', 'send', 'send-binary', 'expect', \
              'set-var-fmt', 'set-var', 'unset-var'. but got 'bogus'."]
        );
        assert_eq!(
            alerts("backend b\n tcp-check send x\n tcp-check connect\n"),
            ["'tcp-check connect' : first step MUST also be a 'connect', optionally preceded by a 'set-var', an \
              'unset-var' or a 'comment', when there is a 'connect' step in the tcp-check ruleset."]
        );
        let cfg = parse_ok("backend b\n option tcp-check\n tcp-check expect !rstring ^x\n");
        assert_eq!(
            cfg.proxies[0].options.health.tcp_rules[0].action,
            CheckAction::Expect(CheckExpect::new(true, ExpectMatch::Rstring("^x".into())))
        );
    }
}
