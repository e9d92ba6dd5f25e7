//! `fcgi-app <name>` sections (`docroot`, `index`, `path-info`, `pass-header`,
//! `option keep-conn|get-values|mpxs-conns|max-reqs`), `use-fcgi-app` in backends, and
//! the checks once every section is read (a FastCGI server needs an application, an
//! application a FastCGI server, an application a `docroot`).
//!
//! HAProxy counterpart: `cfg_parse_fcgi_app()`, `proxy_parse_use_fcgi_app()` and
//! `cfg_fcgi_apps_postparser()` (src/fcgi-app.c). Messages are HAProxy's.
//!
//! `set-param` rules become the backend's last `http-request set-header :fcgi-<name>`
//! rules (HAProxy's own pseudo-headers), which the FastCGI side turns into parameters.
//!
//! COMPAT (partial): `acl` and conditions on `pass-header` are refused
//! ("not supported yet"); a `set-param` condition cannot name an ACL (no `acl` here).

use crate::model::{
    BindProto, Condition, FcgiApp, FmtSrc, HeaderAction, HttpReqAction, HttpReqRule, LogTarget, Mode, RegexSrc,
    RestrictHdrNames, SetParam,
};
use crate::span::Span;

use super::ctx::Ctx;
use super::{arg, not_yet, too_many_args, Parser};

/// `fcgi-app <name>`: the index of the new section, `None` when refused.
pub(super) fn open_fcgi_app(p: &mut Parser, words: &[String], span: &Span) -> Option<usize> {
    let name = arg(words, 1);
    if name.is_empty() {
        p.alert(span, "'fcgi-app' expects <name> as argument.");
        return None;
    }
    if let Some(extra) = words.get(2) {
        p.alert(span, too_many_args("fcgi-app", extra));
        return None;
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))) {
        p.alert(span, format!("character '{c}' is not permitted in 'fcgi-app' name '{name}'."));
        return None;
    }
    if let Some(other) = p.fcgi_apps.iter().find(|a| a.name == name) {
        let msg = format!(
            "fcgi-app section '{name}' has the same name as another one declared at {}:{}.",
            other.span.file, other.span.line
        );
        p.alert(span, msg);
    }
    p.fcgi_apps.push(FcgiApp::new(name, span.clone()));
    Some(p.fcgi_apps.len() - 1)
}

/// A line inside fcgi-app `idx`; `no`: the line started with `no`.
pub(super) fn parse_fcgi_app_line(p: &mut Parser, idx: usize, words: &[String], no: bool, span: &Span) {
    let word = words[0].as_str();
    let one_arg = |what: &str| -> Result<String, String> {
        match (arg(words, 1), words.get(2)) {
            ("", _) => Err(format!("'{word}' expects <{what}> as argument.")),
            (_, Some(extra)) => Err(too_many_args(word, extra)),
            (v, None) => Ok(v.to_owned()),
        }
    };
    let app = &mut p.fcgi_apps[idx];
    let res = match word {
        "docroot" => one_arg("path").map(|v| app.docroot = v),
        "index" => one_arg("filename").map(|v| app.index = v),
        "path-info" => one_arg("regex").map(|v| app.path_info = Some(RegexSrc { text: v, span: span.clone() })),
        "pass-header" => match (arg(words, 1), arg(words, 2)) {
            ("", _) => Err(format!("'{word}' expects <name> as arguments.")),
            (_, "if" | "unless") => Err(not_yet("pass-header ... if|unless")),
            (_, extra) if !extra.is_empty() => Err(too_many_args(word, extra)),
            (name, _) => {
                app.pass_headers.push(name.to_ascii_lowercase());
                Ok(())
            }
        },
        "option" => parse_option(app, words, no),
        "set-param" => parse_set_param(app, words, span),
        "log-stderr" => parse_log_stderr(app, words, no, span),
        "acl" => Err(not_yet(word)),
        other => Err(format!("unknown keyword '{other}' in 'fcgi-app' section")),
    };
    if let Err(msg) = res {
        p.alert(span, msg);
    }
}

/// `[no] log-stderr global | <target> ...`: where the application's STDERR records go,
/// checked as a proxy's `log` line.
fn parse_log_stderr(app: &mut FcgiApp, words: &[String], no: bool, span: &Span) -> Result<(), String> {
    let kwm = if no { super::Modifier::No } else { super::Modifier::Std };
    let args = &words[1..];
    super::log::check_log_args(args, kwm, false).map_err(|e| format!("log-stderr : {e}"))?;
    if no {
        app.log_stderr.clear();
    } else {
        app.log_stderr.push(LogTarget { args: args.to_vec(), span: span.clone() });
    }
    Ok(())
}

/// `set-param <name> <fmt> [if|unless <cond>]`.
fn parse_set_param(app: &mut FcgiApp, words: &[String], span: &Span) -> Result<(), String> {
    let (name, value) = (arg(words, 1), arg(words, 2));
    if name.is_empty() || value.is_empty() {
        return Err("'set-param' expects <name> and <value> as arguments.".into());
    }
    let cond = match words.get(3).map(String::as_str) {
        None => None,
        Some(w @ ("if" | "unless")) => {
            Some(Condition { negate: w == "unless", words: words[4..].to_vec(), span: span.clone() })
        }
        Some(_) => return Err(format!("'{name}' : expects 'if' or 'unless' followed by a condition.")),
    };
    app.set_params.push(SetParam::new(name, FmtSrc { text: value.to_owned(), span: span.clone() }, cond));
    Ok(())
}

/// `[no] option keep-conn|get-values|mpxs-conns`, `option max-reqs <n>`.
fn parse_option(app: &mut FcgiApp, words: &[String], no: bool) -> Result<(), String> {
    let name = arg(words, 1);
    let flag = match name {
        "" => return Err("'option' expects an option name.".into()),
        "keep-conn" => &mut app.keep_conn,
        "get-values" => &mut app.get_values,
        "mpxs-conns" => &mut app.mpxs_conns,
        "max-reqs" => {
            if no {
                return Err(format!("negation/default is not supported for option '{name}'."));
            }
            let v = arg(words, 2);
            if v.is_empty() {
                return Err(format!("option '{name}' expects an integer argument."));
            }
            if let Some(extra) = words.get(3) {
                return Err(too_many_args("option", extra));
            }
            app.max_reqs = super::value::atol(v).clamp(0, i64::from(u32::MAX)) as u32;
            if app.max_reqs == 0 {
                return Err(format!("option '{name}' expects a strictly positive integer argument."));
            }
            return Ok(());
        }
        other => return Err(format!("unknown option '{other}'.")),
    };
    if let Some(extra) = words.get(2) {
        return Err(too_many_args("option", extra));
    }
    *flag = !no;
    Ok(())
}

/// `use-fcgi-app <name>` in a backend or listen section.
pub(super) fn parse_use_fcgi_app(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.is_defaults() || !cx.cap().backend {
        cx.alert("'use-fcgi-app' only supported on backends.");
        return;
    }
    if arg(words, 1).is_empty() {
        cx.alert("'use-fcgi-app' expects a FastCGI application name");
        return;
    }
    if cx.too_many(words, 1, 0) {
        return;
    }
    if cx.pb.px.fcgi_app.is_some() {
        cx.alert("only one FastCGI application is supported per backend.");
        return;
    }
    cx.pb.px.fcgi_app = Some((arg(words, 1).to_owned(), cx.span.clone()));
}

/// The checks once every file is read (HAProxy's `cfg_fcgi_apps_postparser()`), and
/// the `delete` default of `option http-restrict-req-hdr-names` for FastCGI backends.
pub(super) fn finish(p: &mut Parser) {
    let apps = &p.fcgi_apps;
    for b in &mut p.proxies {
        let px = &mut b.px;
        if let Some((name, span)) = &px.fcgi_app {
            if !apps.iter().any(|a| &a.name == name) {
                let msg = format!("proxy '{}' : unable to find FastCGI application '{name}'.", px.name);
                p.diags.push(crate::diag::Diag::alert(Some(span.clone()), msg));
                continue;
            }
            if px.mode == Mode::Tcp {
                let msg = format!("proxy '{}': FCGI application cannot be used in non-HTTP mode.", px.name);
                p.diags.push(crate::diag::Diag::alert(Some(span.clone()), msg));
                continue;
            }
            if !px.options.restrict_req_hdr_names_set {
                px.options.restrict_req_hdr_names = RestrictHdrNames::Delete;
            }
            // COMPAT: HAProxy's fcgi-app filter sets the parameters once every rule ran;
            // rampart runs them as the backend's last `http-request set-header` rules
            let app = apps.iter().find(|a| &a.name == name).expect("checked above");
            for sp in &app.set_params {
                let action = HeaderAction::Set { name: sp.header_name(), value: sp.value.clone() };
                let span = sp.value.span.clone();
                px.rules.http_request.push(HttpReqRule {
                    action: HttpReqAction::Header(action),
                    cond: sp.cond.clone(),
                    span,
                });
            }
        }
        let fcgi_srv = px.servers.iter().find(|s| s.proto == Some(BindProto::Fcgi));
        match (fcgi_srv, &px.fcgi_app) {
            (Some(s), None) => {
                let msg = format!("proxy '{}': FCGI server '{}' has no FCGI app configured.", px.name, s.name);
                p.diags.push(crate::diag::Diag::alert(Some(s.span.clone()), msg));
            }
            (None, Some((_, span))) => {
                let msg = format!("proxy '{}': FCGI app configured but no FCGI server found.", px.name);
                p.diags.push(crate::diag::Diag::alert(Some(span.clone()), msg));
            }
            _ => {}
        }
    }
    for app in &mut p.fcgi_apps {
        if app.docroot.is_empty() {
            let msg = format!("fcgi-app '{}': no docroot configured.", app.name);
            p.diags.push(crate::diag::Diag::alert(Some(app.span.clone()), msg));
        }
        if !app.mpxs_conns && !app.get_values {
            if app.max_reqs > 1 {
                let msg = format!("fcgi-app '{}': multiplexing not supported, ignore the option 'max-reqs'.", app.name);
                p.diags.push(crate::diag::Diag::warning(Some(app.span.clone()), msg));
            }
            app.max_reqs = 1;
        }
    }
}
