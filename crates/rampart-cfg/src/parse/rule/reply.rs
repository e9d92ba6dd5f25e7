//! The reply arguments shared by `deny`, `tarpit`, `return` and `http-error`:
//! `[status <code>] [content-type <type>] [default-errorfiles | errorfile <file> |
//! errorfiles <name> | string <str> | lf-string <fmt> | file <path> | lf-file <path>]
//! [hdr <name> <fmt>]...`, with HAProxy's checks once they are read.
//!
//! HAProxy counterparts: `http_parse_http_reply()` (src/http_htx.c) and the `deny` /
//! `tarpit` special cases of `parse_http_deny()` (src/http_act.c).

use crate::model::{FmtSrc, HttpReply, ReplyBody};

use super::super::ctx::Ctx;
use super::super::errorfile::{load_error_file, HTTP_ERR_CODES};
use super::{invalid, ActResult, Args};

/// `deny` / `tarpit` (and `http-response deny`): no argument or a lone
/// `deny_status <code>` keep the proxy's error page for the status; otherwise the reply
/// arguments follow, where `deny_status` is a synonym of `status`.
pub(super) fn parse_deny(cx: &mut Ctx<'_>, a: &mut Args<'_>, default_status: u16) -> ActResult<HttpReply> {
    if a.ends_at(0) {
        return default_errorfile(default_status, "default-errorfiles");
    }
    if a.peek(0) == "deny_status" && a.ends_at(2) {
        let status = parse_status(a.peek(1))?;
        a.at += 2;
        return default_errorfile(status, "default-errorfiles");
    }
    reply_args(cx, a, default_status, true)
}

fn default_errorfile(status: u16, arg: &str) -> ActResult<HttpReply> {
    check_error_status(status, arg)?;
    Ok(HttpReply { status, content_type: None, headers: Vec::new(), body: ReplyBody::DefaultErrorfile })
}

fn check_error_status(status: u16, arg: &str) -> ActResult<()> {
    if HTTP_ERR_CODES.contains(&status) {
        return Ok(());
    }
    invalid(format!("status code '{status}' not handled by default with '{arg}' argument."))
}

fn parse_status(text: &str) -> ActResult<u16> {
    if text.is_empty() {
        return invalid("'status' expects <status_code> as argument");
    }
    let code = super::super::value::atol(text);
    match u16::try_from(code) {
        Ok(c) if (200..=599).contains(&c) => Ok(c),
        // HAProxy stores the code in an int: print what it would.
        _ => invalid(format!("Unexpected status code '{}'", code as i32)),
    }
}

/// Parses the reply arguments at the cursor, stopping at the first word that is not one
/// of them. `default_status` is used without `status` (0 for `http-error`, which then
/// requires one).
pub(crate) fn parse_reply(cx: &mut Ctx<'_>, a: &mut Args<'_>, default_status: u16) -> ActResult<HttpReply> {
    reply_args(cx, a, default_status, false)
}

/// `deny`: the first word may be `deny_status`, read as `status`.
fn reply_args(cx: &mut Ctx<'_>, a: &mut Args<'_>, default_status: u16, deny: bool) -> ActResult<HttpReply> {
    let start = a.at;
    let mut reply =
        HttpReply { status: default_status, content_type: None, headers: Vec::new(), body: ReplyBody::Empty };
    let mut payload_arg: Option<&str> = None;
    loop {
        let word = a.peek(0);
        let value = a.peek(1);
        let is_payload = matches!(
            word,
            "errorfiles" | "default-errorfiles" | "errorfile" | "file" | "string" | "lf-file" | "lf-string"
        );
        if is_payload {
            if let Some(prev) = payload_arg {
                return invalid(format!("unexpected '{word}' argument, '{prev}' already defined"));
            }
            payload_arg = Some(word);
        }
        match word {
            "status" => reply.status = parse_status(value)?,
            "deny_status" if deny && a.at == start => reply.status = parse_status(value)?,
            "content-type" => {
                if value.is_empty() {
                    return invalid("'content-type' expects <ctype> as argument");
                }
                reply.content_type = Some(value.to_owned());
            }
            "default-errorfiles" => reply.body = ReplyBody::DefaultErrorfile,
            "errorfiles" => {
                if value.is_empty() {
                    return invalid("'errorfiles' expects <name> as argument");
                }
                reply.body = ReplyBody::Errorfiles(value.to_owned());
            }
            "errorfile" => reply.body = ReplyBody::Errorfile(read_errorfile(cx, value)?),
            "file" => reply.body = ReplyBody::Raw(read_payload_file(value, cx.base_dir, cx.bufsize, "file")?),
            "lf-file" => {
                let bytes = read_payload_file(value, cx.base_dir, cx.bufsize, "lf-file")?;
                reply.body = ReplyBody::LogFormat(a.fmt(&String::from_utf8_lossy(&bytes)));
            }
            "string" => {
                if value.is_empty() {
                    return invalid("'string' expects <str> as argument");
                }
                reply.body = ReplyBody::Raw(value.as_bytes().to_vec());
            }
            "lf-string" => {
                if value.is_empty() {
                    return invalid("'lf-string' expects <fmt> as argument");
                }
                reply.body = ReplyBody::LogFormat(a.fmt(value));
            }
            "hdr" => {
                add_header(cx, &mut reply, value, a.peek(2), a.fmt(a.peek(2)))?;
                a.at += 1;
            }
            _ => break,
        }
        a.at += if word == "default-errorfiles" { 1 } else { 2 };
    }
    finish_reply(cx, &mut reply, payload_arg.unwrap_or(""))?;
    Ok(reply)
}

fn add_header(cx: &mut Ctx<'_>, reply: &mut HttpReply, name: &str, value: &str, fmt: FmtSrc) -> ActResult<()> {
    if name.is_empty() || value.is_empty() {
        return invalid("'hdr' expects <name> and <value> as arguments");
    }
    if ["content-length", "transfer-encoding", "content-type"].iter().any(|h| h.eq_ignore_ascii_case(name)) {
        cx.warning(format!("header '{name}' always ignored by the http reply."));
        return Ok(());
    }
    reply.headers.push((name.to_owned(), fmt));
    Ok(())
}

fn read_errorfile(cx: &mut Ctx<'_>, path: &str) -> ActResult<Vec<u8>> {
    if path.is_empty() {
        return invalid("'errorfile' expects <fmt> as argument");
    }
    let mut warnings = Vec::new();
    let loaded = load_error_file(path, cx.base_dir, cx.bufsize, &mut warnings);
    for w in warnings {
        cx.warning(w);
    }
    loaded.map_err(super::ActErr::Invalid)
}

fn read_payload_file(path: &str, base: Option<&std::path::Path>, bufsize: usize, arg: &str) -> ActResult<Vec<u8>> {
    if path.is_empty() {
        return invalid(format!("'{arg}' expects <file> as argument"));
    }
    let file = super::super::default_path::resolve(base, path);
    let Ok(meta) = std::fs::metadata(&file) else { return invalid(format!("error opening file '{path}'")) };
    if meta.len() > bufsize as u64 {
        return invalid(format!("file '{path}' exceeds the buffer size ({} > {bufsize})", meta.len()));
    }
    std::fs::read(&file).or_else(|_| invalid(format!("error reading file '{path}'")))
}

/// The checks HAProxy makes once all arguments are read; drops what it ignores, with its
/// warnings.
fn finish_reply(cx: &mut Ctx<'_>, reply: &mut HttpReply, payload_arg: &str) -> ActResult<()> {
    let no_body = reply.status == 204 || reply.status == 304;
    match &reply.body {
        ReplyBody::Empty => {
            if let Some(ct) = reply.content_type.take() {
                cx.warning(format!(
                    "content-type '{ct}' ignored by the http reply because neither errorfile nor payload defined."
                ));
            }
        }
        ReplyBody::DefaultErrorfile | ReplyBody::Errorfiles(_) | ReplyBody::Errorfile(_) => {
            if !matches!(reply.body, ReplyBody::Errorfile(_)) {
                check_error_status(reply.status, payload_arg)?;
            }
            if let Some(ct) = reply.content_type.take() {
                // COMPAT: "erorrfile" is HAProxy 2.6's spelling.
                cx.warning(format!("content-type '{ct}' ignored by the http reply when used with an erorrfile."));
            }
            if !reply.headers.is_empty() {
                reply.headers.clear();
                cx.warning("hdr parameters ignored by the http reply when used with an erorrfile.");
            }
        }
        ReplyBody::Raw(bytes) => {
            if no_body && !bytes.is_empty() {
                return invalid(format!("No body expected for {} responses", reply.status));
            }
            if reply.content_type.is_none() && !bytes.is_empty() {
                return invalid("a content type must be defined when non-empty payload is configured");
            }
            if bytes.is_empty() {
                if let Some(ct) = reply.content_type.take() {
                    cx.warning(format!(
                        "content-type '{ct}' ignored by the http reply when used with an empty payload."
                    ));
                }
            }
            if cx.bufsize.saturating_sub(bytes.len()) < cx.maxrewrite {
                cx.warning(
                    "http reply payload runs over the buffer space reserved to headers rewriting. \
                     It may lead to internal errors if strict rewriting mode is enabled.",
                );
            }
        }
        ReplyBody::LogFormat(_) => {
            if no_body {
                return invalid(format!("No body expected for {} responses", reply.status));
            }
            if reply.content_type.is_none() {
                return invalid("a content type must be defined with a log-format payload");
            }
        }
    }
    Ok(())
}
