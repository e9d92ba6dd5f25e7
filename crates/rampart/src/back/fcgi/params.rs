//! The CGI variables of a request (RFC 3875 §4.1), as HAProxy 2.6's FastCGI mux
//! writes them: first one `HTTP_*` variable per request header (but `Content-Length`
//! and `Content-Type`, which become `CONTENT_LENGTH` and `CONTENT_TYPE`, and the
//! headers the application hides), then `GATEWAY_INTERFACE`, `DOCUMENT_ROOT`,
//! `SCRIPT_NAME`, `PATH_INFO`, `REQUEST_URI`, `REQUEST_METHOD`, `QUERY_STRING`,
//! `SERVER_NAME`, `SERVER_PORT`, `SERVER_PROTOCOL`, `REMOTE_ADDR`, `REMOTE_PORT`,
//! `SCRIPT_FILENAME`, `PATH_TRANSLATED`, `CONTENT_LENGTH` (without the header: the
//! body bytes in hand), `SERVER_SOFTWARE` and `HTTPS`; a variable with an empty value
//! is left out. HAProxy counterpart: `fcgi_strm_send_params()`,
//! `fcgi_set_default_param()` (src/mux_fcgi.c).

use std::net::SocketAddr;

use rampart_proto::fcgi::params::push_cgi_var;

use crate::http::MsgView;
use crate::proxy::fcgi::FcgiAppRt;

/// What the variables say of the client connection.
#[derive(Debug, Clone, Copy, Default)]
pub struct Client {
    /// `REMOTE_ADDR`, `REMOTE_PORT`.
    pub src: Option<SocketAddr>,
    /// `SERVER_PORT`, and `SERVER_NAME` without a `Host` header.
    pub dst: Option<SocketAddr>,
    /// `HTTPS=on`.
    pub https: bool,
}

/// Why a request cannot become CGI variables (HAProxy then fails the request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamsError {
    /// No path to take a script name from (`*`, authority form).
    NoPath,
    /// A bad `%` escape in the path, or a decoded path with NUL or LF for `path-info`.
    BadPath,
}

/// Appends the pairs of `req`'s variables to `out`; `body_in_hand`: the body bytes
/// known now, for `CONTENT_LENGTH` without the header.
pub fn push_params(
    out: &mut Vec<u8>,
    req: MsgView<'_>,
    app: &FcgiAppRt,
    client: &Client,
    body_in_hand: u64,
) -> Result<(), ParamsError> {
    let mut set = SetByRules::default();
    let mut host = None;
    for (_, name, value) in req.headers() {
        if let Some(param) = name.strip_prefix(b":fcgi-") {
            // `set-param`, written as the backend's last rules (`fcgi_app`)
            if !value.is_empty() {
                set.note(param, value);
                push_cgi_var(out, b"", param, value);
            }
            continue;
        }
        if app.hides(name) {
            continue;
        }
        if name.eq_ignore_ascii_case(b"content-length") {
            set.content_length = true;
            var(out, b"CONTENT_LENGTH", value);
        } else if name.eq_ignore_ascii_case(b"content-type") {
            var(out, b"CONTENT_TYPE", value);
        } else {
            if name.eq_ignore_ascii_case(b"host") {
                host = Some(value);
            }
            push_cgi_var(out, b"HTTP_", name, value);
        }
    }
    let uri = set.request_uri.unwrap_or(req.target().pathq);
    let target = crate::http::uri::split(uri);
    let docroot = set.document_root.unwrap_or(app.docroot.as_bytes());
    let (script, path_info) = match set.script_name {
        // a script name set by a rule: no path info is deduced
        Some(s) => (s.to_vec(), set.path_info.unwrap_or_default().to_vec()),
        None => {
            if target.path.is_empty() {
                return Err(ParamsError::NoPath);
            }
            let decoded = url_decode(target.path).ok_or(ParamsError::BadPath)?;
            let (mut script, info) = split_script(&decoded, app)?;
            if !app.index.is_empty() && script.last() == Some(&b'/') {
                script.extend_from_slice(app.index.as_bytes());
            }
            (script, set.path_info.unwrap_or(info).to_vec())
        }
    };
    let path_info = &path_info[..];
    let dst_ip = client.dst.map(|a| a.ip().to_string()).unwrap_or_default();
    let src_ip = client.src.map(|a| a.ip().to_string()).unwrap_or_default();
    let script_file = [docroot, &script].concat();
    let translated = if path_info.is_empty() { Vec::new() } else { [docroot, path_info].concat() };
    let version = format!("HTTP/{}", req.head.version.as_str());
    let srv_port = client.dst.map_or(0, |a| a.port()).to_string();
    let rem_port = client.src.map_or(0, |a| a.port()).to_string();
    let length = if set.content_length { String::new() } else { body_in_hand.to_string() };
    let defaults: [(&[u8], &[u8]); 17] = [
        (b"GATEWAY_INTERFACE", b"CGI/1.1"),
        (b"DOCUMENT_ROOT", docroot),
        (b"SCRIPT_NAME", &script),
        (b"PATH_INFO", path_info),
        (b"REQUEST_URI", uri),
        (b"REQUEST_METHOD", req.method()),
        (b"QUERY_STRING", target.query.unwrap_or_default()),
        (b"SERVER_NAME", host.unwrap_or(dst_ip.as_bytes())),
        (b"SERVER_PORT", srv_port.as_bytes()),
        (b"SERVER_PROTOCOL", version.as_bytes()),
        (b"REMOTE_ADDR", src_ip.as_bytes()),
        (b"REMOTE_PORT", rem_port.as_bytes()),
        (b"SCRIPT_FILENAME", &script_file),
        (b"PATH_TRANSLATED", &translated),
        (b"CONTENT_LENGTH", length.as_bytes()),
        (b"SERVER_SOFTWARE", app.software.as_bytes()),
        (b"HTTPS", if client.https { b"on" } else { b"" }),
    ];
    for (name, value) in defaults {
        if !set.names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            var(out, name, value);
        }
    }
    Ok(())
}

/// The parameters `set-param` rules gave, which replace the computed ones.
#[derive(Debug, Default)]
struct SetByRules<'a> {
    /// Every name set (as the rule wrote it: lower case, `_`).
    names: Vec<&'a [u8]>,
    document_root: Option<&'a [u8]>,
    script_name: Option<&'a [u8]>,
    path_info: Option<&'a [u8]>,
    request_uri: Option<&'a [u8]>,
    /// A `Content-Length` header or a `CONTENT_LENGTH` rule.
    content_length: bool,
}

impl<'a> SetByRules<'a> {
    fn note(&mut self, name: &'a [u8], value: &'a [u8]) {
        self.names.push(name);
        match name {
            b"document_root" => self.document_root = Some(value),
            b"script_name" => self.script_name = Some(value),
            b"path_info" => self.path_info = Some(value),
            b"request_uri" => self.request_uri = Some(value),
            b"content_length" => self.content_length = true,
            _ => {}
        }
    }
}

/// One variable, left out when empty.
fn var(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    if !value.is_empty() {
        push_cgi_var(out, b"", name, value);
    }
}

/// The script name and the path info of the decoded path: `path-info`'s captures when
/// it matches (the whole path as the script name otherwise).
fn split_script<'p>(path: &'p [u8], app: &FcgiAppRt) -> Result<(Vec<u8>, &'p [u8]), ParamsError> {
    let Some(re) = &app.path_info else { return Ok((path.to_vec(), b"")) };
    if path.iter().any(|&c| c == b'\n' || c == 0) {
        return Err(ParamsError::BadPath);
    }
    let Some(caps) = re.captures(path) else { return Ok((path.to_vec(), b"")) };
    match caps.get(1) {
        Some(script) => Ok((script.as_bytes().to_vec(), caps.get(2).map_or(&b""[..], |m| &path[m.range()]))),
        None => Ok((path.to_vec(), b"")),
    }
}

/// `%xx` escapes decoded (`+` stays: not a form); `None` on a bad escape.
fn url_decode(s: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            let v = std::str::from_utf8(hex).ok().and_then(|h| u8::from_str_radix(h, 16).ok())?;
            out.push(v);
            i += 3;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rampart_proto::fcgi::params::pairs;

    fn app(path_info: Option<&str>, index: &str) -> FcgiAppRt {
        let mut m = rampart_cfg::model::FcgiApp::new("php", Default::default());
        m.docroot = "/srv/www".into();
        m.index = index.into();
        m.path_info = path_info.map(|t| rampart_cfg::model::RegexSrc { text: t.into(), span: Default::default() });
        FcgiAppRt::build(&m).unwrap()
    }

    #[test]
    fn path_info_splits_the_script_from_the_rest() {
        let a = app(Some(r"^(/.+\.php)(/.*)?$"), "index.php");
        assert_eq!(split_script(b"/a/b.php/x/y", &a).unwrap(), (b"/a/b.php".to_vec(), &b"/x/y"[..]));
        assert_eq!(split_script(b"/a/b.php", &a).unwrap(), (b"/a/b.php".to_vec(), &b""[..]));
        assert_eq!(split_script(b"/dir/", &a).unwrap(), (b"/dir/".to_vec(), &b""[..]));
        assert_eq!(split_script(b"/a\n.php", &a), Err(ParamsError::BadPath));
        assert_eq!(url_decode(b"/a%20b+c").unwrap(), b"/a b+c");
        assert_eq!(url_decode(b"/a%2"), None);
    }

    #[test]
    fn variables_follow_haproxy() {
        use crate::http::MsgHead;
        use rampart_proto::http::{HdrKind, Header, Slice, Version};
        let buf = b"GET /dir/?q=1 HTTP/1.1\r\nHost: example\r\nX-My-Hdr: on\r\nAuthorization: x\r\n";
        let at = |s: &str| {
            let i = memchr::memmem::find(buf, s.as_bytes()).unwrap();
            Slice { start: i as u32, end: (i + s.len()) as u32 }
        };
        let hdr =
            |n: &str, v: &str| Header { name: at(n), value: at(v), kind: HdrKind::classify(n.as_bytes()), drop: false };
        let head = MsgHead {
            version: Version::Http11,
            method_raw: at("GET"),
            uri: at("/dir/?q=1"),
            headers: vec![hdr("Host", "example"), hdr("X-My-Hdr", "on"), hdr("Authorization", "x")],
            ..MsgHead::default()
        };
        let client = Client {
            src: Some("10.0.0.1:5555".parse().unwrap()),
            dst: Some("10.0.0.2:80".parse().unwrap()),
            https: false,
        };
        let mut out = Vec::new();
        push_params(&mut out, head.view(buf), &app(None, "index.php"), &client, 0).unwrap();
        let got: Vec<(String, String)> = pairs(&out)
            .map(|p| p.unwrap())
            .map(|(n, v)| (String::from_utf8_lossy(n).into_owned(), String::from_utf8_lossy(v).into_owned()))
            .collect();
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "HTTP_HOST",
                "HTTP_X_MY_HDR",
                "GATEWAY_INTERFACE",
                "DOCUMENT_ROOT",
                "SCRIPT_NAME",
                "REQUEST_URI",
                "REQUEST_METHOD",
                "QUERY_STRING",
                "SERVER_NAME",
                "SERVER_PORT",
                "SERVER_PROTOCOL",
                "REMOTE_ADDR",
                "REMOTE_PORT",
                "SCRIPT_FILENAME",
                "CONTENT_LENGTH",
                "SERVER_SOFTWARE"
            ]
        );
        let get = |n: &str| got.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
        assert_eq!(get("SCRIPT_NAME"), Some("/dir/index.php"));
        assert_eq!(get("SCRIPT_FILENAME"), Some("/srv/www/dir/index.php"));
        assert_eq!(get("QUERY_STRING"), Some("q=1"));
        assert_eq!(get("SERVER_NAME"), Some("example"));
        assert_eq!(get("SERVER_PROTOCOL"), Some("HTTP/1.1"));
        assert_eq!(get("REMOTE_ADDR"), Some("10.0.0.1"));
        assert_eq!(get("CONTENT_LENGTH"), Some("0"));
    }
}
