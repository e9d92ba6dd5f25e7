//! The statistics page a proxy serves on its `stats uri`: an HTML report of every
//! proxy and server (rampart's own layout, with HAProxy's columns and state words), the
//! same rows as `show stat` with `;csv` and `;json`, a `Refresh` header for `stats
//! refresh` (unless `;norefresh`), Basic authentication for `stats auth`. Admin
//! actions (`stats admin`) are refused at startup, so a POST is answered as HAProxy
//! answers one that is not allowed: a 303 back to the page with `;st=DENY`.
//! HAProxy counterpart: stats.c (stats_dump_html_*, http_stats_io_handler), uri_auth.c.

use std::fmt::Write as _;

use base64::Engine as _;
use rampart_cfg::model::StatsPage;

use super::cmd::Level;
use super::stat::{self, Kind, Request, Row};
use super::Val;
use crate::proxy::Runtime;

/// A proxy's statistics page, ready to answer.
#[derive(Debug)]
pub struct Page {
    uri: Box<[u8]>,
    /// The `WWW-Authenticate` value; `None` when no account is configured (open page).
    challenge: Option<Box<[u8]>>,
    /// `user:password` of each `stats auth` account.
    accounts: Vec<Box<[u8]>>,
    refresh: Option<u64>,
    hide_version: bool,
    show_legends: bool,
    /// `stats show-node`: the name to show (the host name when it was given none).
    show_node: Option<String>,
    show_desc: Option<String>,
    scope: Vec<String>,
}

/// What the page answers to one request.
#[derive(Debug, PartialEq)]
pub enum Answer {
    /// 200 with this content type and body; `refresh`: the `Refresh` header's seconds.
    Ok { content_type: &'static str, body: Vec<u8>, refresh: Option<u64> },
    /// 401 with this `WWW-Authenticate` value.
    Unauthorized(Box<[u8]>),
    /// 303 to this location (a POST: admin actions are not allowed).
    SeeOther(Vec<u8>),
}

impl Page {
    pub fn new(cfg: &StatsPage) -> Page {
        let realm = cfg.realm.as_deref().unwrap_or(StatsPage::DEFAULT_REALM);
        Page {
            uri: cfg.uri.as_bytes().into(),
            challenge: (!cfg.auth.is_empty()).then(|| format!("Basic realm=\"{realm}\"").into_bytes().into()),
            accounts: cfg.auth.iter().map(|a| format!("{}:{}", a.user, a.password).into_bytes().into()).collect(),
            refresh: cfg.refresh.map(|d| d.as_secs()),
            hide_version: cfg.hide_version,
            show_legends: cfg.show_legends,
            show_node: cfg.show_node.as_ref().map(|n| {
                if n.is_empty() {
                    nix::unistd::gethostname().map(|h| h.to_string_lossy().into_owned()).unwrap_or_default()
                } else {
                    n.clone()
                }
            }),
            show_desc: cfg.show_desc.clone(),
            scope: cfg.scope.clone(),
        }
    }

    /// The options after the page's URI when `target` (a request target) asks for the
    /// page, `None` otherwise.
    pub fn options<'t>(&self, target: &'t [u8]) -> Option<&'t [u8]> {
        let path = origin_form(target);
        path.strip_prefix(&*self.uri)
    }

    /// The answer to a request for the page. `authorization`: the request's
    /// `Authorization` header; `post`: a POST (an admin action).
    pub fn answer(&self, rt: &Runtime, options: &[u8], authorization: Option<&[u8]>, post: bool) -> Answer {
        if let Some(challenge) = &self.challenge {
            if !authorization.is_some_and(|a| self.authorized(a)) {
                return Answer::Unauthorized(challenge.clone());
            }
        }
        let opts: Vec<&[u8]> = options.split(|&c| c == b';').skip(1).collect();
        let has = |o: &[u8]| opts.contains(&o);
        if post {
            let mut to = self.uri.to_vec();
            to.extend_from_slice(b";st=DENY");
            return Answer::SeeOther(to);
        }
        let refresh = self.refresh.filter(|_| !has(b"norefresh"));
        let req = Request { no_maint: has(b"no-maint"), up_only: has(b"up"), ..Request::default() };
        if has(b"csv") {
            let body = self.csv(rt, &req);
            return Answer::Ok { content_type: "text/plain", body, refresh };
        }
        if has(b"json") {
            let req = Request { json: true, ..req };
            let body = stat::render(rt, &req, Level::User).into_bytes();
            return Answer::Ok { content_type: "application/json", body, refresh };
        }
        Answer::Ok { content_type: "text/html", body: self.html(rt, &req).into_bytes(), refresh }
    }

    /// Whether `Basic <base64(user:password)>` names a configured account.
    fn authorized(&self, header: &[u8]) -> bool {
        let Some(b64) = header.strip_prefix(b"Basic ").or_else(|| header.strip_prefix(b"basic ")) else {
            return false;
        };
        let Ok(creds) = base64::engine::general_purpose::STANDARD.decode(b64.trim_ascii()) else { return false };
        self.accounts.iter().any(|a| **a == *creds)
    }

    fn in_scope(&self, rt: &Runtime, idx: usize) -> bool {
        self.scope.is_empty() || self.scope.iter().any(|s| *s == rt.proxies[idx].name)
    }

    /// The CSV export: `show stat`'s text, without the empty line that ends a CLI answer.
    fn csv(&self, rt: &Runtime, req: &Request) -> Vec<u8> {
        let mut out = String::with_capacity(8192);
        stat::header(&mut out);
        let rows = stat::rows(rt, req).into_iter().filter(|r| self.in_scope(rt, r.0));
        let text = stat::render_rows(rt, rows, Level::User);
        out.push_str(&text);
        out.into_bytes()
    }

    fn html(&self, rt: &Runtime, req: &Request) -> String {
        let mut out = String::with_capacity(32768);
        out.push_str(HEAD);
        let _ = write!(out, "<h1>rampart statistics</h1>\n<p class=\"info\">");
        if !self.hide_version {
            let _ = write!(out, "version {}, ", html_escape(&crate::version::version_string()));
        }
        let up = super::uptime(rt);
        let _ = write!(
            out,
            "pid {}, uptime {}d {}h{:02}m{:02}s, current connections {} of {} allowed",
            std::process::id(),
            up / 86400,
            up / 3600 % 24,
            up / 60 % 60,
            up % 60,
            rt.global.cur_conns.load(std::sync::atomic::Ordering::Relaxed),
            rt.global.maxconn()
        );
        if let Some(node) = &self.show_node {
            let _ = write!(out, ", node {}", html_escape(node));
        }
        out.push_str("</p>\n");
        if let Some(desc) = &self.show_desc {
            let _ = writeln!(out, "<p class=\"desc\">{}</p>", html_escape(desc));
        }
        if self.show_legends {
            out.push_str(LEGEND);
        }
        let rows = stat::rows(rt, req);
        let mut current = None;
        for row in rows.into_iter().filter(|r| self.in_scope(rt, r.0)) {
            if current != Some(row.0) {
                if current.is_some() {
                    out.push_str("</table>\n");
                }
                current = Some(row.0);
                table_head(&mut out, &rt.proxies[row.0].name);
            }
            table_row(&mut out, rt, row);
        }
        if current.is_some() {
            out.push_str("</table>\n");
        }
        out.push_str("</body></html>\n");
        out
    }
}

/// The path and query of a request target (an absolute-form target loses its scheme
/// and authority).
fn origin_form(target: &[u8]) -> &[u8] {
    if target.first() == Some(&b'/') {
        return target;
    }
    let Some(after) = memchr::memmem::find(target, b"://").map(|i| &target[i + 3..]) else { return target };
    match memchr::memchr(b'/', after) {
        Some(i) => &after[i..],
        None => b"/",
    }
}

fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// The column groups of a proxy table: (group, [(title, field)]).
const COLUMNS: &[(&str, &[(&str, &str)])] = &[
    ("Queue", &[("Cur", "qcur"), ("Max", "qmax"), ("Limit", "qlimit")]),
    ("Sessions", &[("Cur", "scur"), ("Max", "smax"), ("Limit", "slim"), ("Total", "stot")]),
    ("Requests", &[("Total", "req_tot")]),
    ("Bytes", &[("In", "bin"), ("Out", "bout")]),
    ("Denied", &[("Req", "dreq"), ("Resp", "dresp")]),
    ("Errors", &[("Req", "ereq"), ("Conn", "econ"), ("Resp", "eresp")]),
    ("Warnings", &[("Retr", "wretr"), ("Redis", "wredis")]),
    (
        "Responses",
        &[("1xx", "hrsp_1xx"), ("2xx", "hrsp_2xx"), ("3xx", "hrsp_3xx"), ("4xx", "hrsp_4xx"), ("5xx", "hrsp_5xx")],
    ),
    (
        "Server",
        &[("Status", "status"), ("LastChk", "check_status"), ("Wght", "weight"), ("Act", "act"), ("Bck", "bck")],
    ),
];

fn table_head(out: &mut String, name: &str) {
    let span: usize = COLUMNS.iter().map(|(_, c)| c.len()).sum::<usize>() + 1;
    let _ = writeln!(
        out,
        "<table class=\"px\">\n<tr class=\"title\"><th colspan=\"{span}\"><a name=\"{0}\"></a>{0}</th></tr>",
        html_escape(name)
    );
    out.push_str("<tr class=\"groups\"><th rowspan=\"2\"></th>");
    for (group, cols) in COLUMNS {
        let _ = write!(out, "<th colspan=\"{}\">{group}</th>", cols.len());
    }
    out.push_str("</tr>\n<tr class=\"titles\">");
    for (_, cols) in COLUMNS {
        for (title, _) in *cols {
            let _ = write!(out, "<th>{title}</th>");
        }
    }
    out.push_str("</tr>\n");
}

fn table_row(out: &mut String, rt: &Runtime, row: Row) {
    let name = match row.1 {
        Kind::Frontend => "Frontend".to_owned(),
        Kind::Backend => "Backend".to_owned(),
        Kind::Server => stat::cell(rt, row, Level::User, "svname").map(|v| v.to_string()).unwrap_or_default(),
    };
    let status = stat::cell(rt, row, Level::User, "status").map(|v| v.to_string()).unwrap_or_default();
    let class = match status.as_str() {
        "OPEN" | "UP" | "no check" => "up",
        "MAINT" => "maint",
        "DOWN" | "STOP" => "down",
        _ => "other",
    };
    let kind = match row.1 {
        Kind::Frontend => "frontend",
        Kind::Backend => "backend",
        Kind::Server => "server",
    };
    let _ = write!(out, "<tr class=\"{kind} {class}\"><td class=\"name\">{}</td>", html_escape(&name));
    for (_, cols) in COLUMNS {
        for (_, field) in *cols {
            let v = stat::cell(rt, row, Level::User, field);
            let text = match v {
                Some(Val::Str(s)) => html_escape(&s),
                Some(v) => v.to_string(),
                None => String::new(),
            };
            let _ = write!(out, "<td>{text}</td>");
        }
    }
    out.push_str("</tr>\n");
}

const HEAD: &str = "<!DOCTYPE html>\n<html><head><title>Statistics Report for rampart</title>\n\
<meta charset=\"utf-8\">\n<link rel=\"icon\" href=\"data:,\">\n<style>\n\
body { font-family: arial, helvetica, sans-serif; font-size: 12px; color: #000; background: #fff; }\n\
h1 { font-size: 18px; color: #fff; background: #20377a; padding: 4px 8px; }\n\
table.px { border-collapse: collapse; margin: 12px 0; }\n\
table.px th, table.px td { border: 1px solid #999; padding: 1px 4px; text-align: right; }\n\
tr.title th { background: #b00040; color: #fff; text-align: left; font-size: 14px; }\n\
tr.groups th, tr.titles th { background: #ddd; }\n\
td.name { text-align: left; font-weight: bold; }\n\
tr.frontend, tr.backend { background: #eef; }\n\
tr.server.up { background: #c0ffc0; }\n\
tr.server.maint { background: #c0c0ff; }\n\
tr.down { background: #ff9090; }\n\
</style></head><body>\n";

const LEGEND: &str = "<p class=\"legend\">Server states: <span style=\"background:#c0ffc0\">up \
(no check)</span> <span style=\"background:#c0c0ff\">maintenance (disabled)</span> \
<span style=\"background:#ff9090\">down</span>. Empty cells: not measured by rampart yet.</p>\n";

#[cfg(test)]
mod tests {
    use super::*;
    use rampart_cfg::model::StatsAuth;

    fn page(auth: bool) -> Page {
        let mut cfg = StatsPage::new("/st", Default::default());
        if auth {
            cfg.auth.push(StatsAuth { user: "admin".into(), password: "pw".into() });
        }
        cfg.refresh = Some(std::time::Duration::from_secs(5));
        Page::new(&cfg)
    }

    fn rt() -> Runtime {
        let ctx = rampart_cfg::LexCtx { env: &|_| None, version: "2.6", features: &[] };
        let text = "defaults\n mode http\nlisten st\n bind :80\n stats uri /st\n server s1 127.0.0.1:1\n";
        let cfg = rampart_cfg::parse_str("t.cfg", text, &ctx).config.expect("valid");
        crate::proxy::build(&cfg, 100, 1).expect("built")
    }

    #[test]
    fn the_page_answers_below_its_uri_only() {
        let p = page(false);
        assert_eq!(p.options(b"/st"), Some(&b""[..]));
        assert_eq!(p.options(b"/st;csv"), Some(&b";csv"[..]));
        assert_eq!(p.options(b"http://h/st?x"), Some(&b"?x"[..]));
        assert_eq!(p.options(b"/other"), None);
    }

    #[test]
    fn accounts_are_checked_and_the_realm_is_announced() {
        let (p, rt) = (page(true), rt());
        assert_eq!(
            p.answer(&rt, b"", None, false),
            Answer::Unauthorized((*b"Basic realm=\"HAProxy Statistics\"").into())
        );
        let wrong = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("admin:no"));
        assert!(matches!(p.answer(&rt, b"", Some(wrong.as_bytes()), false), Answer::Unauthorized(_)));
        let right = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("admin:pw"));
        assert!(matches!(p.answer(&rt, b"", Some(right.as_bytes()), false), Answer::Ok { .. }));
    }

    #[test]
    fn csv_and_html_list_every_row() {
        let (p, rt) = (page(false), rt());
        let Answer::Ok { content_type, body, refresh } = p.answer(&rt, b";csv;norefresh", None, false) else {
            panic!("no page")
        };
        assert_eq!((content_type, refresh), ("text/plain", None));
        let text = String::from_utf8(body).unwrap();
        let names: Vec<&str> = text.lines().skip(1).map(|l| l.split(',').nth(1).unwrap_or("")).collect();
        assert_eq!(names, ["FRONTEND", "s1", "BACKEND"]);
        assert!(text.starts_with("# pxname,svname,") && text.ends_with(",\n"));
        let Answer::Ok { content_type, body, refresh } = p.answer(&rt, b"", None, false) else { panic!("no page") };
        assert_eq!((content_type, refresh), ("text/html", Some(5)));
        let html = String::from_utf8(body).unwrap();
        assert!(html.contains("<td class=\"name\">s1</td>") && html.contains("no check"), "{html}");
        assert_eq!(p.answer(&rt, b"", None, true), Answer::SeeOther(b"/st;st=DENY".to_vec()));
    }
}
