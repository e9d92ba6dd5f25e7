//! `mailers` and `program` sections; the proxy keywords `email-alert` and
//! `external-check`, and the end-of-configuration checks of both.
//!
//! HAProxy counterparts: `cfg_parse_mailers()` and the `email-alert` branch of
//! `cfg_parse_listen()` (src/cfgparse.c, src/cfgparse-listen.c), `proxy_parse_extcheck()`
//! (src/extcheck.c), `cfg_parse_program()` (src/mworker-prog.c), and their checks in
//! `check_config_validity()`. Messages are HAProxy's.

use crate::diag::Diag;
use crate::model::{Mailer, Mailers, Program, Proxy, DEFAULT_MAIL_TIMEOUT};
use crate::span::Span;

use super::ctx::Ctx;
use super::value::{invalid_char, parse_time_ms, TimeError};
use super::{arg, Modifier, Parser};

const LEVELS: &[&str] = &["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"];

// === mailers ===

/// `mailers <name>`: the index of the new section, `None` when refused.
pub(super) fn open_mailers(p: &mut Parser, words: &[String], span: &Span) -> Option<usize> {
    let name = arg(words, 1);
    if name.is_empty() {
        p.alert(span, "missing name for mailers section.");
        return None;
    }
    if let Some(c) = invalid_char(name) {
        p.alert(span, format!("character '{c}' is not permitted in 'mailers' name '{name}'."));
        return None;
    }
    if let Some(other) = p.mailers.iter().find(|m| m.name == name) {
        let at = other.span.clone();
        p.alert(
            span,
            format!("mailers section '{name}' has the same name as another mailers section declared at {at}."),
        );
        return None;
    }
    p.mailers.push(Mailers {
        name: name.to_owned(),
        mailers: Vec::new(),
        timeout: DEFAULT_MAIL_TIMEOUT,
        span: span.clone(),
    });
    Some(p.mailers.len() - 1)
}

/// A line inside `mailers` section `idx`.
pub(super) fn parse_mailers_line(p: &mut Parser, idx: usize, words: &[String], span: &Span) {
    let result = match words[0].as_str() {
        "mailer" => parse_mailer(words, span).map(|m| p.mailers[idx].mailers.push(m)),
        "timeout" => parse_mail_timeout(words).map(|t| p.mailers[idx].timeout = t),
        other => Err(format!("unknown keyword '{other}' in 'mailers' section")),
    };
    if let Err(msg) = result {
        p.alert(span, msg);
    }
}

fn parse_mailer(words: &[String], span: &Span) -> Result<Mailer, String> {
    let (name, addr) = (arg(words, 1), arg(words, 2));
    if name.is_empty() || addr.is_empty() {
        return Err("'mailer' expects <name> and <addr>[:<port>] as arguments.".to_owned());
    }
    if let Some(c) = invalid_char(name) {
        return Err(format!("character '{c}' is not permitted in server name '{name}'."));
    }
    let (sa, tcp) = super::addr::parse_dns_addr(addr).map_err(|e| format!("'mailer {name}' : {e}"))?;
    if addr.contains('@') && !tcp && !addr.starts_with("ipv") {
        return Err(format!("'mailer {name}' : TCP not supported for this address family."));
    }
    Ok(Mailer { name: name.to_owned(), addr: sa, span: span.clone() })
}

fn parse_mail_timeout(words: &[String]) -> Result<std::time::Duration, String> {
    match arg(words, 1) {
        "" => Err("'timeout' expects 'mail' and <time> as arguments.".to_owned()),
        "mail" => {
            let value = arg(words, 2);
            if value.is_empty() {
                return Err("'timeout mail' expects <time> as argument.".to_owned());
            }
            let ms = parse_time_ms(value).map_err(|e| match e {
                TimeError::Overflow => format!(
                    "timer overflow in argument <{value}> to <timeout mail>, maximum value is 2147483647 ms (~24.8 days)."
                ),
                TimeError::Underflow => {
                    format!("timer underflow in argument <{value}> to <timeout mail>, minimum non-null value is 1 ms.")
                }
                TimeError::BadChar(c) => format!("unexpected character '{c}' in argument to <timeout mail>."),
            })?;
            if let Some(c) = ms.trailing {
                return Err(format!("unexpected character '{c}' in argument to <timeout mail>."));
            }
            // COMPAT: HAProxy keeps a zero timeout as "no timeout"; a mail exchange
            // always has one here (the default).
            Ok(ms.duration().unwrap_or(DEFAULT_MAIL_TIMEOUT))
        }
        other => Err(format!("'timeout' expects 'mail' and <time> as arguments got '{other}'.")),
    }
}

// === email-alert ===

/// `email-alert from|to|mailers|myhostname|level <value>`.
pub(super) fn parse_email_alert(cx: &mut Ctx<'_>, words: &[String]) {
    let (what, value) = (arg(words, 1), arg(words, 2));
    if what.is_empty() {
        return cx.alert("missing argument after 'email-alert'.");
    }
    let ea = &mut cx.pb.px.options.email_alert;
    match what {
        "from" => ea.from = Some(value.to_owned()),
        "to" => ea.to = Some(value.to_owned()),
        "mailers" => ea.mailers = Some(value.to_owned()),
        "myhostname" => ea.myhostname = Some(value.to_owned()),
        "level" => match LEVELS.iter().position(|l| *l == value) {
            Some(l) => ea.level = Some(l as u8),
            None => return cx.alert(format!("unknown log level '{value}' after '{what}'")),
        },
        other => return cx.alert(format!("email-alert: unknown argument '{other}'.")),
    }
    ea.set = true;
}

// === external-check ===

/// `external-check command <cmd>` / `external-check path <path>`.
pub(super) fn parse_external_check(cx: &mut Ctx<'_>, words: &[String]) {
    let what = arg(words, 1);
    if what.is_empty() {
        return cx.alert("missing argument after 'external-check'.");
    }
    if what != "command" && what != "path" {
        return cx.alert(format!("'external-check' only supports 'command' and 'path'. but got '{what}'."));
    }
    if cx.too_many(words, 2, 0) {
        return;
    }
    let value = arg(words, 2);
    if value.is_empty() {
        return cx.alert(format!("missing argument after '{what}'."));
    }
    let ext = &mut cx.pb.px.options.external_check;
    if what == "command" {
        ext.command = Some(value.to_owned());
    } else {
        ext.path = Some(value.to_owned());
    }
}

/// `option external-check`.
pub(super) fn parse_option_external_check(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.too_many(words, 0, 1) {
        return;
    }
    let health = &mut cx.pb.px.options.health;
    health.httpchk = false;
    health.proto = None;
    health.external = true;
}

/// The end-of-configuration checks of a proxy's external check and email alerts
/// (`check_config_validity()`), given the `global` flags and the mailers sections.
pub(super) fn check_proxy(
    px: &mut Proxy,
    kind: &str,
    global: &crate::model::Global,
    mailers: &[Mailers],
    out: &mut Vec<Diag>,
) {
    let span = Some(px.span.clone());
    let name = px.name.clone();
    if px.options.health.external {
        if !global.external_check {
            out.push(Diag::alert(
                span.clone(),
                format!("Proxy '{name}' : 'option external-check' unable to find required 'global.external-check'."),
            ));
        }
        if px.options.external_check.command.is_none() {
            out.push(Diag::alert(
                span.clone(),
                format!("Proxy '{name}' : 'option external-check' unable to find required 'external-check command'."),
            ));
        }
        if !global.insecure_fork {
            out.push(Diag::warning(
                span.clone(),
                format!(
                    "Proxy '{name}' : 'insecure-fork-wanted' not enabled in the global section, 'option external-check' will likely fail."
                ),
            ));
        }
    }
    let ea = &mut px.options.email_alert;
    if ea.set && !(ea.mailers.is_some() && ea.from.is_some() && ea.to.is_some()) {
        out.push(Diag::warning(
            span.clone(),
            format!(
                "'email-alert' will be ignored for {kind} '{name}' (the presence any of 'email-alert from', \
                 'email-alert level' 'email-alert mailers', 'email-alert myhostname', or 'email-alert to' requires \
                 each of 'email-alert from', 'email-alert mailers' and 'email-alert to' to be present)."
            ),
        ));
        *ea = Default::default();
    }
    let ext = &mut px.options.external_check;
    if let Some(cmd) = ext.command.clone() {
        if !px.options.health.external {
            out.push(Diag::warning(
                span.clone(),
                format!(
                    "'external-check command' will be ignored for {kind} '{name}' (requires 'option external-check')."
                ),
            ));
            ext.command = None;
        }
        if !cmd.starts_with('/') && ext.path.is_none() {
            out.push(Diag::alert(
                span.clone(),
                format!("Proxy '{name}': 'external-check command' does not have a leading '/' and 'external-check path' is not set."),
            ));
        }
    }
    if ext.path.is_some() && !px.options.health.external {
        out.push(Diag::warning(
            span.clone(),
            format!("'external-check path' will be ignored for {kind} '{name}' (requires 'option external-check')."),
        ));
        ext.path = None;
    }
    let ea = &mut px.options.email_alert;
    if let Some(wanted) = ea.mailers.clone() {
        match mailers.iter().position(|m| m.name == wanted) {
            Some(i) => ea.mailers_idx = Some(i),
            None => {
                out.push(Diag::alert(span, format!("Proxy '{name}': unable to find mailers '{wanted}'.")));
                *ea = Default::default();
            }
        }
    }
}

// === program ===

/// `program <name>`: the index of the new section, `None` when refused.
pub(super) fn open_program(p: &mut Parser, words: &[String], span: &Span) -> Option<usize> {
    if words.len() > 2 {
        p.alert(span, format!("'program' cannot handle unexpected argument '{}'.", words[2]));
        return None;
    }
    let name = arg(words, 1);
    if name.is_empty() {
        p.alert(span, "'program' expects an <id> argument");
        return None;
    }
    if p.programs.iter().any(|x| x.name == name) {
        p.alert(span, format!("'{name}' program section already exists in the configuration."));
        return None;
    }
    p.programs.push(Program {
        name: name.to_owned(),
        command: Vec::new(),
        user: None,
        group: None,
        start_on_reload: true,
        span: span.clone(),
    });
    Some(p.programs.len() - 1)
}

/// A line inside `program` section `idx`.
pub(super) fn parse_program_line(p: &mut Parser, idx: usize, words: &[String], kwm: Modifier, span: &Span) {
    let result = program_line(&mut p.programs[idx], words, kwm);
    if let Err(msg) = result {
        p.alert(span, msg);
    }
}

fn program_line(prog: &mut Program, words: &[String], kwm: Modifier) -> Result<(), String> {
    let a1 = arg(words, 1);
    match words[0].as_str() {
        "command" if a1.is_empty() => {
            Err("'command' expects a command with optional arguments separated in words.".to_owned())
        }
        "command" => {
            prog.command = words[1..].iter().take_while(|w| !w.is_empty()).cloned().collect();
            Ok(())
        }
        "option" if a1.is_empty() => Err("'option' expects an option name.".to_owned()),
        "option" if a1 == "start-on-reload" => {
            if words.len() > 2 {
                return Err(format!("'option start-on-reload' cannot handle unexpected argument '{}'.", words[2]));
            }
            match kwm {
                Modifier::Std => prog.start_on_reload = true,
                Modifier::No => prog.start_on_reload = false,
                // as HAProxy: `default option start-on-reload` changes nothing
                Modifier::Default => {}
            }
            Ok(())
        }
        "option" => Err(format!("unknown option '{a1}'.")),
        "user" | "group" if a1.is_empty() => Err(format!("'{}' expects a {} name.", words[0], words[0])),
        "user" | "group" if words.len() > 2 => {
            Err(format!("'{}' cannot handle unexpected argument '{}'.", words[0], words[2]))
        }
        "user" if prog.user.is_some() => Err("user/uid already specified. Continuing.".to_owned()),
        "group" if prog.group.is_some() => Err("group/gid already specified. Continuing.".to_owned()),
        "user" => {
            prog.user = Some(a1.to_owned());
            Ok(())
        }
        "group" => {
            prog.group = Some(a1.to_owned());
            Ok(())
        }
        other => Err(format!("unknown keyword '{other}' in 'program' section")),
    }
}

/// Every program needs a command (HAProxy's `cfg_program_postparser()`; whether
/// master-worker mode is on is the daemon's to check, it depends on the command line).
pub(super) fn check_programs(programs: &[Program], out: &mut Vec<Diag>) {
    for prog in programs.iter().filter(|x| x.command.is_empty()) {
        out.push(Diag::alert(
            Some(prog.span.clone()),
            format!("The program section '{}' lacks a command to launch.", prog.name),
        ));
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::parse::tests::{alerts, parse, parse_ok};

    #[test]
    fn mailers_and_email_alert_as_the_reg_test_writes_them() {
        let cfg = parse_ok(
            "defaults\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n\
             backend be1\n email-alert mailers mymailers\n email-alert level info\n\
             email-alert from from@domain.tld\n email-alert to to@domain.tld\n server s 127.0.0.1:1 check\n\
             mailers mymailers\n mailer smtp1 127.0.0.1:2525\n mailer smtp2 127.0.0.2:25\n timeout mail 3s\n",
        );
        let m = &cfg.mailers[0];
        assert_eq!(m.name, "mymailers");
        assert_eq!(m.timeout, Duration::from_secs(3));
        let addrs: Vec<String> = m.mailers.iter().map(|x| format!("{} {}", x.name, x.addr)).collect();
        assert_eq!(addrs, ["smtp1 127.0.0.1:2525", "smtp2 127.0.0.2:25"]);
        let ea = &cfg.proxies[0].options.email_alert;
        assert!(ea.enabled());
        assert_eq!((ea.level(), ea.from.as_deref(), ea.mailers_idx), (6, Some("from@domain.tld"), Some(0)));
    }

    #[test]
    fn email_alert_refusals_and_warnings() {
        assert_eq!(alerts("backend b\n email-alert\n"), ["missing argument after 'email-alert'."]);
        assert_eq!(alerts("backend b\n email-alert level loud\n"), ["unknown log level 'loud' after 'level'"]);
        assert_eq!(alerts("backend b\n email-alert cc x\n"), ["email-alert: unknown argument 'cc'."]);
        assert_eq!(
            alerts("backend b\n email-alert mailers m\n email-alert from a\n email-alert to b\n"),
            ["Proxy 'b': unable to find mailers 'm'."]
        );
        let (cfg, diags) = parse("backend b\n email-alert from a\n");
        assert!(!cfg.proxies[0].options.email_alert.enabled());
        assert!(diags.list.iter().any(|d| d.message.starts_with("'email-alert' will be ignored for backend 'b'")));
        assert_eq!(alerts("mailers m\n mailer a\n"), ["'mailer' expects <name> and <addr>[:<port>] as arguments."]);
        assert_eq!(
            alerts("mailers m\n timeout smtp 1s\n"),
            ["'timeout' expects 'mail' and <time> as arguments got 'smtp'."]
        );
        assert_eq!(alerts("mailers m\n bogus\n"), ["unknown keyword 'bogus' in 'mailers' section"]);
        assert_eq!(
            alerts("mailers m\nmailers m\n"),
            ["mailers section 'm' has the same name as another mailers section declared at t.cfg:1."]
        );
    }

    #[test]
    fn external_check_needs_the_global_keyword_and_a_command() {
        let cfg = parse_ok(
            "global\n external-check\n insecure-fork-wanted\nbackend b\n option external-check\n\
             external-check command /bin/true\n external-check path /usr/bin:/bin\n",
        );
        let px = &cfg.proxies[0];
        assert!(px.options.health.external);
        assert_eq!(px.options.external_check.command.as_deref(), Some("/bin/true"));
        assert_eq!(
            alerts("backend b\n option external-check\n"),
            [
                "Proxy 'b' : 'option external-check' unable to find required 'global.external-check'.",
                "Proxy 'b' : 'option external-check' unable to find required 'external-check command'."
            ]
        );
        assert_eq!(
            alerts("global\n external-check\nbackend b\n option external-check\n external-check command x\n"),
            ["Proxy 'b': 'external-check command' does not have a leading '/' and 'external-check path' is not set."]
        );
        assert_eq!(
            alerts("backend b\n external-check run x\n"),
            ["'external-check' only supports 'command' and 'path'. but got 'run'."]
        );
        let (_, diags) =
            parse("global\n external-check\nbackend b\n option external-check\n external-check command /x\n");
        assert!(diags.list.iter().any(|d| d.message
            == "Proxy 'b' : 'insecure-fork-wanted' not enabled in the global section, 'option external-check' will likely fail."));
        let cfg = parse_ok("backend b\n external-check command /x\n");
        assert_eq!(cfg.proxies[0].options.external_check.command, None, "ignored without the option");
    }

    #[test]
    fn program_sections() {
        let cfg = parse_ok(
            "program p1\n command /bin/sleep 100\n no option start-on-reload\nprogram p2\n command /bin/true\n",
        );
        assert_eq!(cfg.programs[0].command, ["/bin/sleep", "100"]);
        assert!(!cfg.programs[0].start_on_reload);
        assert!(cfg.programs[1].start_on_reload);
        assert_eq!(alerts("program p\n"), ["The program section 'p' lacks a command to launch."]);
        assert_eq!(alerts("program\n"), ["'program' expects an <id> argument"]);
        assert_eq!(
            alerts("program p\n command /x\nprogram p\n"),
            ["'p' program section already exists in the configuration."]
        );
        assert_eq!(alerts("program p\n command /x\n option foo\n"), ["unknown option 'foo'."]);
        assert_eq!(alerts("program p\n command /x\n nice 5\n"), ["unknown keyword 'nice' in 'program' section"]);
    }
}
