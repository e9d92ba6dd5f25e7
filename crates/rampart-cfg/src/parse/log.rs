//! `log` lines in `global` and proxy sections, and `no log`; `log-format`,
//! `error-log-format`, `log-tag` and `log-send-hostname`. The words of a `log` line are
//! checked as HAProxy checks them (arguments, length, format, facility, levels) and kept
//! verbatim; the daemon resolves the target (`log::target`).
//!
//! HAProxy counterpart: `parse_logsrv()` (src/log.c), the `log-format` branch of
//! `cfg_parse_listen()` (src/cfgparse-listen.c).

use crate::model::LogTarget;
use crate::span::Span;

use super::ctx::Ctx;
use super::{Modifier, Parser};

const FACILITIES: &[&str] = &[
    "kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron", "auth2", "ftp", "ntp", "audit",
    "alert", "cron2", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7",
];
const LEVELS: &[&str] = &["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"];
pub(super) const FORMATS: &[&str] = &["local", "rfc3164", "rfc5424", "priority", "short", "timed", "iso", "raw"];

/// Checks the words after `log`; `Err` is HAProxy's message (without the `log : ` prefix).
pub(super) fn check_log_args(args: &[String], kwm: Modifier, in_global: bool) -> Result<(), String> {
    if kwm == Modifier::No {
        return if args.is_empty() { Ok(()) } else { Err("'no log' does not expect arguments".into()) };
    }
    if args.len() == 1 && args[0] == "global" {
        return if in_global { Err("'global' is not supported for a global syslog server".into()) } else { Ok(()) };
    }
    if args.len() < 2 {
        let or_global = if in_global { "" } else { "or global" };
        return Err(format!("expects <address> and <facility> {or_global} as arguments"));
    }
    let arg = |i: usize| args.get(i).map_or("", String::as_str);
    let mut i = 1;
    if arg(i) == "len" {
        let len = super::value::atol(arg(i + 1));
        if !(80..=65535).contains(&len) {
            return Err(format!("invalid log length '{}', must be between 80 and 65535", arg(i + 1)));
        }
        i += 2;
    }
    if arg(i) == "format" {
        if !FORMATS.contains(&arg(i + 1)) {
            return Err(format!("unknown log format '{}'", arg(i + 1)));
        }
        i += 2;
    }
    if arg(i) == "sample" {
        if !arg(i + 1).contains(':') {
            return Err("Missing sample size".into());
        }
        i += 2;
    }
    if !FACILITIES.contains(&arg(i)) {
        return Err(format!("unknown log facility '{}'", arg(i)));
    }
    if !arg(i + 1).is_empty() && !LEVELS.contains(&arg(i + 1)) {
        return Err(format!("unknown optional log level '{}'", arg(i + 1)));
    }
    if !arg(i + 2).is_empty() && !LEVELS.contains(&arg(i + 2)) {
        return Err(format!("unknown optional minimum log level '{}'", arg(i + 2)));
    }
    if let Some(extra) = args.get(i + 3) {
        return Err(format!("cannot handle unexpected argument '{extra}'"));
    }
    Ok(())
}

/// `log` / `no log` in the `global` section.
pub(super) fn parse_global_log(p: &mut Parser, words: &[String], kwm: Modifier, span: &Span) {
    let args = &words[1..];
    match check_log_args(args, kwm, true) {
        Err(e) => p.alert(span, format!("log : {e}")),
        Ok(()) if kwm == Modifier::No => p.global.logs.clear(),
        Ok(()) => {
            p.global.logs.push(LogTarget { args: args.to_vec(), span: span.clone() });
            p.pending.note("global log", span);
        }
    }
}

/// `log` / `no log` in proxy and `defaults` sections.
pub(super) fn parse_proxy_log(cx: &mut Ctx<'_>, words: &[String], kwm: Modifier) {
    let args = &words[1..];
    match check_log_args(args, kwm, false) {
        Err(e) => cx.alert(format!("log : {e}")),
        Ok(()) if kwm == Modifier::No => cx.pb.px.logs.clear(),
        Ok(()) => {
            let span = cx.span.clone();
            cx.pb.px.logs.push(LogTarget { args: args.to_vec(), span });
            cx.note("log");
        }
    }
}

/// `log-format <fmt>`, `log-format-sd <fmt>` and `error-log-format <fmt>` in proxy and
/// `defaults` sections.
pub(super) fn parse_log_format(cx: &mut Ctx<'_>, words: &[String]) {
    let kw = words[0].as_str();
    if words.len() < 2 {
        cx.alert(format!("{kw} expects an argument."));
        return;
    }
    if words.len() > 2 {
        cx.alert(format!("{kw} expects only one argument, don't forget to escape spaces!"));
        return;
    }
    let cap = cx.cap();
    if cap.backend && !cap.frontend {
        let (kind, name) = (cx.pb.kind.type_str(), cx.pb.px.name.clone());
        cx.warning(format!("{kind} '{name}' : '{kw}' directive is ignored in backends."));
        return;
    }
    if kw == "error-log-format" {
        cx.pb.px.options.error_log_format = Some(words[1].clone());
        cx.pb.px.options.error_log_format_span = Some(cx.span.clone());
        return;
    }
    if kw == "log-format-sd" {
        cx.pb.px.options.log_format_sd = Some(words[1].clone());
        cx.pb.px.options.log_format_sd_span = Some(cx.span.clone());
        return;
    }
    if cx.is_defaults() {
        if let Some(old) = super::option::current_log_format(cx) {
            cx.warning(format!("'log-format' overrides previous '{old}' in 'defaults' section."));
        }
    }
    let opts = &mut cx.pb.px.options;
    opts.httplog = false;
    opts.tcplog = false;
    opts.log_format = Some(words[1].clone());
    opts.log_format_span = Some(cx.span.clone());
    cx.pb.logformat_span = Some(cx.span.clone());
}

/// `log-tag <tag>` in proxy and `defaults` sections.
pub(super) fn parse_proxy_log_tag(cx: &mut Ctx<'_>, words: &[String]) {
    match words.get(1) {
        Some(tag) if !tag.is_empty() => cx.pb.px.log_tag = Some(tag.clone()),
        _ => cx.alert("'log-tag' expects a tag for use in syslog."),
    }
}

/// `log-tag <tag>` and `log-send-hostname [<name>]` in `global`.
pub(super) fn parse_global_log_kw(p: &mut Parser, words: &[String], span: &Span) {
    match words[0].as_str() {
        "log-tag" => match words.get(1) {
            Some(tag) if !tag.is_empty() => p.global.log_tag = Some(tag.clone()),
            _ => p.alert(span, "'log-tag' expects a tag for use in syslog."),
        },
        _ => p.global.log_send_hostname = Some(words.get(1).cloned().unwrap_or_default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CLF_HTTP_LOG_FORMAT, HTTP_LOG_FORMAT, TCP_LOG_FORMAT};
    use crate::parse::tests::{alerts, parse_ok, warnings};

    const T: &str = "defaults\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n";

    #[test]
    fn the_last_log_format_wins_and_backends_do_not_inherit_it() {
        let cfg = parse_ok(&format!(
            "{T} option httplog\nfrontend f\n bind :80\n log-format \"%ci %ST\"\n default_backend b\n\
             frontend g\n bind :81\n default_backend b\nfrontend h\n bind :82\n option httplog clf\n\
             default_backend b\nfrontend i\n bind :83\n option tcplog\n default_backend b\nbackend b\n"
        ));
        let fmt = |i: usize| cfg.proxies[i].options.log_format.as_deref();
        assert_eq!(fmt(0), Some("%ci %ST"));
        assert_eq!(fmt(1), Some(HTTP_LOG_FORMAT), "inherited from defaults");
        assert_eq!(fmt(2), Some(CLF_HTTP_LOG_FORMAT));
        assert_eq!(fmt(3), Some(TCP_LOG_FORMAT));
        assert_eq!(fmt(4), None, "a backend has no log format");
    }

    #[test]
    fn httpslog_sets_haproxys_format_and_warns_as_haproxy() {
        let cfg = parse_ok(&format!("{T}frontend f\n bind :80\n option httpslog\n default_backend b\nbackend b\n"));
        assert_eq!(cfg.proxies[0].options.log_format.as_deref(), Some(crate::model::HTTPS_LOG_FORMAT));
        assert!(crate::model::HTTPS_LOG_FORMAT.ends_with("%{+Q}r %[fc_err]/%[ssl_fc_err,hex]/%[ssl_c_err]/%[ssl_c_ca_err]/%[ssl_fc_is_resumed] %[ssl_fc_sni]/%sslv/%sslc"));
        // haproxy 2.6.12's messages (`haproxy -c`), its 'option httplog' quirk included
        assert_eq!(
            warnings(
                "defaults\n mode http\n option httpslog\n option httplog\n option httpslog\n\
                 frontend f\n bind :80\n mode tcp\n option httpslog\n default_backend b\nbackend b\n option httpslog\n"
            ),
            [
                "'option httplog' overrides previous 'option httpslog' in 'defaults' section.",
                "'option httplog' overrides previous 'option httplog' in 'defaults' section.",
                "backend 'b' : 'option httpslog' directive is ignored in backends.",
            ]
        );
        let (cfg, diags) = crate::parse::tests::parse(&format!(
            "{T}frontend f\n bind :80\n mode tcp\n option httpslog\n default_backend b\nbackend b\n mode tcp\n"
        ));
        let fallback =
            "'option httpslog' not usable with frontend 'f' (needs 'mode http'). Falling back to 'option tcplog'.";
        assert!(diags.list.iter().any(|d| d.message == fallback), "{:?}", diags.list);
        assert_eq!(cfg.proxies[0].options.log_format.as_deref(), Some(TCP_LOG_FORMAT));
    }

    #[test]
    fn log_format_sd_is_inherited_and_ignored_in_backends() {
        let cfg = parse_ok(&format!(
            "{T} log-format-sd \"[a@1 x=\\\"%ST\\\"]\"\nfrontend f\n bind :80\n default_backend b\n\
             frontend g\n bind :81\n log-format-sd %ci\n default_backend b\nbackend b\n"
        ));
        assert_eq!(cfg.proxies[0].options.log_format_sd.as_deref(), Some("[a@1 x=\"%ST\"]"));
        assert_eq!(cfg.proxies[1].options.log_format_sd.as_deref(), Some("%ci"));
        assert_eq!(
            warnings("backend b\n log-format-sd %ci\n"),
            ["backend 'b' : 'log-format-sd' directive is ignored in backends."]
        );
        assert_eq!(alerts("frontend f\n log-format-sd\n"), ["log-format-sd expects an argument."]);
    }

    #[test]
    fn log_format_errors_and_warnings_as_haproxy() {
        assert_eq!(alerts("frontend f\n log-format\n"), ["log-format expects an argument."]);
        assert_eq!(
            alerts("frontend f\n log-format a b\n"),
            ["log-format expects only one argument, don't forget to escape spaces!"]
        );
        assert_eq!(
            warnings("backend b\n log-format %ci\n"),
            ["backend 'b' : 'log-format' directive is ignored in backends."]
        );
        assert_eq!(
            warnings("defaults\n option httplog\n log-format %ci\n"),
            ["'log-format' overrides previous 'option httplog' in 'defaults' section."]
        );
        assert_eq!(alerts("frontend f\n log-tag\n"), ["'log-tag' expects a tag for use in syslog."]);
    }

    #[test]
    fn tags_hostname_and_error_format() {
        let cfg = parse_ok(&format!(
            "global\n log-tag g\n log-send-hostname\n{T}frontend f\n bind :80\n log-tag fe\n\
             error-log-format \"%ci err\"\n option dontlog-normal\n option log-separate-errors\n"
        ));
        assert_eq!((cfg.global.log_tag.as_deref(), cfg.global.log_send_hostname.as_deref()), (Some("g"), Some("")));
        let f = &cfg.proxies[0];
        assert_eq!(f.log_tag.as_deref(), Some("fe"));
        assert_eq!(f.options.error_log_format.as_deref(), Some("%ci err"));
        assert!(f.options.dontlog_normal && f.options.log_separate_errors);
    }

    fn check(line: &str, kwm: Modifier, global: bool) -> Result<(), String> {
        let args: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        check_log_args(&args, kwm, global)
    }

    #[test]
    fn log_lines() {
        assert_eq!(check("stdout format raw local0", Modifier::Std, true), Ok(()));
        assert_eq!(check("127.0.0.1:514 len 1024 local0 info notice", Modifier::Std, true), Ok(()));
        assert_eq!(check("global", Modifier::Std, false), Ok(()));
        assert_eq!(check("", Modifier::No, false), Ok(()));
        assert_eq!(check("x", Modifier::No, false), Err("'no log' does not expect arguments".into()));
        assert_eq!(
            check("127.0.0.1", Modifier::Std, true),
            Err("expects <address> and <facility>  as arguments".into())
        );
        assert_eq!(
            check("127.0.0.1", Modifier::Std, false),
            Err("expects <address> and <facility> or global as arguments".into())
        );
        assert_eq!(check("127.0.0.1 foo", Modifier::Std, true), Err("unknown log facility 'foo'".into()));
        assert_eq!(check("global x", Modifier::Std, false), Err("unknown log facility 'x'".into()));
        assert_eq!(check("a local0 loud", Modifier::Std, false), Err("unknown optional log level 'loud'".into()));
        assert_eq!(check("a len 10 local0", Modifier::Std, false).map_err(|e| e.contains("80 and 65535")), Err(true));
        assert_eq!(check("a format json local0", Modifier::Std, false), Err("unknown log format 'json'".into()));
    }
}
