//! The statistics page a proxy serves on its `stats uri`: an HTML report of every
//! proxy and server (rampart's own layout, with HAProxy's columns and state words), the
//! same rows as `show stat` with `;csv` and `;json`, a `Refresh` header for `stats
//! refresh` (unless `;norefresh`), Basic authentication for `stats auth`, the proxies
//! filtered by `stats scope` and by a `scope=` in the URI. When a `stats admin`
//! condition holds, each backend's table is a form whose POST (`admin`) changes the
//! checked servers, answered by a 303 back to the page with the outcome in `;st=`,
//! which the page then shows in a banner. A POST without admin rights gets `;st=DENY`.
//! HAProxy counterpart: stats.c (stats_dump_html_*, http_stats_io_handler), uri_auth.c,
//! http_handle_stats() in http_ana.c.

use std::fmt::Write as _;

use base64::Engine as _;
use rampart_cfg::model::StatsPage;

use super::admin::{self, Status};
use super::cmd::Level;
use super::stat::{self, Kind, Request, Row};
pub use super::types::Page;
use super::Val;
use crate::proxy::Runtime;

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

/// What kind of request asks for the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask<'b> {
    /// GET or HEAD.
    Read,
    /// POST with the form's body (read only when the request has admin rights).
    Post(&'b [u8]),
}

/// The longest `scope=` text the page keeps (HAProxy's `STAT_SCOPE_TXT_MAXLEN`).
const SCOPE_MAX: usize = 20;

impl Page {
    /// `global`: its `node` and `description` stand for `stats show-node` and
    /// `stats show-desc` without an argument.
    pub fn new(cfg: &StatsPage, global: &rampart_cfg::model::Global) -> Page {
        let realm = cfg.realm.as_deref().unwrap_or(StatsPage::DEFAULT_REALM);
        Page {
            uri: cfg.uri.as_bytes().into(),
            challenge: (!cfg.auth.is_empty()).then(|| format!("Basic realm=\"{realm}\"").into_bytes().into()),
            accounts: cfg.auth.iter().map(|a| format!("{}:{}", a.user, a.password).into_bytes().into()).collect(),
            refresh: cfg.refresh.map(|d| d.as_secs()),
            hide_version: cfg.hide_version,
            show_legends: cfg.show_legends,
            show_modules: cfg.show_modules,
            show_node: cfg.show_node.as_ref().map(|n| {
                if n.is_empty() {
                    global.node.clone().unwrap_or_else(host_name)
                } else {
                    n.clone()
                }
            }),
            show_desc: cfg.show_desc.as_ref().map(|d| match (d.is_empty(), &global.description) {
                (true, Some(g)) => g.clone(),
                _ => d.clone(),
            }),
            scope: cfg.scope.clone(),
        }
    }

    /// The options after the page's URI when `target` (a request target) asks for the
    /// page, `None` otherwise.
    pub fn options<'t>(&self, target: &'t [u8]) -> Option<&'t [u8]> {
        let path = origin_form(target);
        path.strip_prefix(&*self.uri)
    }

    /// Whether a request with this `Authorization` header may see the page.
    pub fn allows(&self, authorization: Option<&[u8]>) -> bool {
        self.challenge.is_none() || authorization.is_some_and(|a| self.authorized(a))
    }

    /// The answer to a request for the page of proxy `px`. `options`: what follows the
    /// page's URI; `authorization`: the request's `Authorization` header; `admin`: a
    /// `stats admin` condition held.
    pub fn answer(
        &self,
        rt: &Runtime,
        px: usize,
        options: &[u8],
        authorization: Option<&[u8]>,
        admin: bool,
        ask: Ask<'_>,
    ) -> Answer {
        if let Some(challenge) = &self.challenge {
            if !self.allows(authorization) {
                return Answer::Unauthorized(challenge.clone());
            }
        }
        let has = |o: &[u8]| memchr::memmem::find(options, o).is_some();
        let scope = url_scope(options);
        if let Ask::Post(body) = ask {
            let status = if admin { admin::apply(rt, px, &self.scope, body) } else { Status::Deny };
            return Answer::SeeOther(self.location(has(b";norefresh"), status, scope));
        }
        let refresh = self.refresh.filter(|_| !has(b";norefresh"));
        let req = Request { no_maint: has(b";no-maint"), up_only: has(b";up"), ..Request::default() };
        let view = View { req, scope, admin, px };
        if has(b";csv") {
            let body = self.csv(rt, &view);
            return Answer::Ok { content_type: "text/plain", body, refresh };
        }
        if has(b";json") {
            let req = Request { json: true, ..view.req };
            let body = stat::render(rt, &req, Level::User).into_bytes();
            return Answer::Ok { content_type: "application/json", body, refresh };
        }
        let status = memchr::memmem::find(options, b";st=").map(|i| Status::from_code(&options[i + 4..]));
        Answer::Ok { content_type: "text/html", body: self.html(rt, &view, status).into_bytes(), refresh }
    }

    /// Where a POST sends the browser back: the page with the outcome.
    fn location(&self, norefresh: bool, status: Status, scope: &[u8]) -> Vec<u8> {
        let mut to = self.uri.to_vec();
        if norefresh && self.refresh.is_some() {
            to.extend_from_slice(b";norefresh");
        }
        to.extend_from_slice(b";st=");
        to.extend_from_slice(status.code().as_bytes());
        if !scope.is_empty() {
            to.extend_from_slice(b"?scope=");
            to.extend_from_slice(scope);
        }
        to
    }

    /// Whether `Basic <base64(user:password)>` names a configured account.
    fn authorized(&self, header: &[u8]) -> bool {
        let Some(b64) = header.strip_prefix(b"Basic ").or_else(|| header.strip_prefix(b"basic ")) else {
            return false;
        };
        let Ok(creds) = base64::engine::general_purpose::STANDARD.decode(b64.trim_ascii()) else { return false };
        self.accounts.iter().any(|a| **a == *creds)
    }

    /// Whether proxy `idx` is shown: allowed by `stats scope`, and its name contains
    /// the URI's `scope=` text (ignoring case).
    fn in_scope(&self, rt: &Runtime, view: &View<'_>, idx: usize) -> bool {
        let name = rt.proxies[idx].name.as_bytes();
        admin::in_config_scope(rt, &self.scope, view.px, idx)
            && (view.scope.is_empty() || contains_ignore_case(name, view.scope))
    }

    /// The CSV export: `show stat`'s text, without the empty line that ends a CLI answer.
    fn csv(&self, rt: &Runtime, view: &View<'_>) -> Vec<u8> {
        let mut out = String::with_capacity(8192);
        stat::header(&mut out);
        let rows = stat::rows(rt, &view.req).into_iter().filter(|r| self.in_scope(rt, view, r.0));
        let text = stat::render_rows(rt, rows, Level::User);
        out.push_str(&text);
        out.into_bytes()
    }

    fn html(&self, rt: &Runtime, view: &View<'_>, status: Option<Status>) -> String {
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
        if let Some(status) = status {
            let (class, text) = status.banner();
            let uri = html_escape(&String::from_utf8_lossy(&self.uri));
            let _ = writeln!(
                out,
                "<p><div class=\"banner {class}\"><a href=\"{uri}\" title=\"Remove this message\">[X]</a> {text}</div>"
            );
        }
        self.tables(rt, view, &mut out);
        out.push_str("</body></html>\n");
        out
    }

    /// A table per proxy shown; a backend's is a form when the request has admin rights.
    fn tables(&self, rt: &Runtime, view: &View<'_>, out: &mut String) {
        let mut current: Option<usize> = None;
        let close = |out: &mut String, idx: usize| {
            out.push_str("</table>\n");
            if view.form(rt, idx) {
                admin_controls(out, rt, idx);
            }
        };
        for row in stat::rows(rt, &view.req).into_iter().filter(|r| self.in_scope(rt, view, r.0)) {
            if current != Some(row.0) {
                if let Some(idx) = current {
                    close(out, idx);
                }
                current = Some(row.0);
                let px = &rt.proxies[row.0];
                table_head(out, (&px.name, px.description.as_deref()), view.form(rt, row.0), self.show_modules);
            }
            table_row(out, rt, row, view.form(rt, row.0), self.show_modules);
        }
        if let Some(idx) = current {
            close(out, idx);
        }
    }
}

/// The machine's host name (HAProxy's default `node`).
pub fn host_name() -> String {
    nix::unistd::gethostname().map(|h| h.to_string_lossy().into_owned()).unwrap_or_default()
}

/// How one request views the page.
struct View<'o> {
    req: Request,
    /// The URI's `scope=` text.
    scope: &'o [u8],
    /// A `stats admin` condition held.
    admin: bool,
    /// The proxy whose page it is.
    px: usize,
}

impl View<'_> {
    /// Whether proxy `idx`'s table is an admin form (a backend, with admin rights).
    fn form(&self, rt: &Runtime, idx: usize) -> bool {
        self.admin && rt.proxies[idx].cap.backend
    }
}

/// The `scope=` text of the options (up to `;`, `&` or a space, at most `SCOPE_MAX`
/// bytes); empty when absent or when it holds a character HAProxy refuses there.
fn url_scope(options: &[u8]) -> &[u8] {
    let Some(at) = memchr::memmem::find(options, b"scope=") else { return b"" };
    let rest = &options[at + 6..];
    let end = rest.iter().position(|&c| matches!(c, b';' | b'&' | b' ')).unwrap_or(rest.len());
    let text = &rest[..end.min(SCOPE_MAX)];
    let valid = text.iter().all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b':'));
    if valid {
        text
    } else {
        b""
    }
}

fn contains_ignore_case(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle))
}

/// The controls under a backend's table: the action list, the backend's id, the button.
fn admin_controls(out: &mut String, rt: &Runtime, idx: usize) {
    out.push_str("<p class=\"admin\">Choose the action to perform on the checked servers : <select name=\"action\">");
    out.push_str("<option value=\"\"></option>");
    for (value, label) in admin::FORM_ACTIONS {
        let _ = write!(out, "<option value=\"{value}\">{label}</option>");
    }
    let _ = writeln!(
        out,
        "</select><input type=\"hidden\" name=\"b\" value=\"#{}\"> <input type=\"submit\" value=\"Apply\"></p></form>",
        super::iid(rt, idx)
    );
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

/// `title`: the proxy's name and `description`.
fn table_head(out: &mut String, title: (&str, Option<&str>), form: bool, modules: bool) {
    let (name, desc) = title;
    let extra = if modules { MODULES.len() } else { 0 };
    let span: usize = COLUMNS.iter().map(|(_, c)| c.len()).sum::<usize>() + 1 + usize::from(form) + extra;
    if form {
        out.push_str("<form method=\"post\">\n");
    }
    let _ = writeln!(
        out,
        "<table class=\"px\">\n<tr class=\"title\"><th colspan=\"{span}\"><a name=\"{0}\"></a>{0}{1}</th></tr>",
        html_escape(name),
        desc.map(|d| format!(" <span class=\"desc\">{}</span>", html_escape(d))).unwrap_or_default()
    );
    out.push_str("<tr class=\"groups\">");
    if form {
        out.push_str("<th rowspan=\"2\"></th>");
    }
    out.push_str("<th rowspan=\"2\"></th>");
    for (group, cols) in COLUMNS {
        let _ = write!(out, "<th colspan=\"{}\">{group}</th>", cols.len());
    }
    if modules {
        let _ = write!(out, "<th colspan=\"{}\">Extra modules</th>", MODULES.len());
    }
    out.push_str("</tr>\n<tr class=\"titles\">");
    for (_, cols) in COLUMNS {
        for (title, _) in *cols {
            let _ = write!(out, "<th>{title}</th>");
        }
    }
    if modules {
        MODULES.iter().for_each(|m| {
            let _ = write!(out, "<th>{m}</th>");
        });
    }
    out.push_str("</tr>\n");
}

/// `stats show-modules`: HAProxy's statistics modules of the proxies, in its order;
/// each module's counters are the `show stat` fields named `<module>_...`.
const MODULES: [&str; 3] = ["ssl", "h2", "h1"];

/// The cell of module `m` on `row`: the module's name, and its counters in a tooltip
/// table, for the kinds of rows the module counts (empty for the others), as HAProxy's
/// `stats_dump_fields_html()`.
fn module_cell(out: &mut String, rt: &Runtime, row: Row, m: &str) {
    let prefix = format!("{m}_");
    let fields = super::fields::STAT_FIELDS.iter().enumerate().skip(super::fields::MODULE_FIELDS_AT);
    let counted: Vec<&str> =
        fields.filter(|(i, f)| f.0.starts_with(&prefix) && !row.1.desc(*i).is_empty()).map(|(_, f)| f.0).collect();
    if counted.is_empty() {
        out.push_str("<td></td>");
        return;
    }
    let _ = write!(out, "<td><u>{m}<div class=\"tips\"><table class=\"det\">");
    for field in counted {
        let v = stat::cell(rt, row, Level::User, field).map(|v| v.to_string()).unwrap_or_default();
        let _ = write!(out, "<tr><th>{field}</th><td>{}</td></tr>", html_escape(&v));
    }
    out.push_str("</table></div></u></td>");
}

fn table_row(out: &mut String, rt: &Runtime, row: Row, form: bool, modules: bool) {
    let name = match row.1 {
        Kind::Frontend => "Frontend".to_owned(),
        Kind::Backend => "Backend".to_owned(),
        Kind::Server | Kind::Listener => {
            stat::cell(rt, row, Level::User, "svname").map(|v| v.to_string()).unwrap_or_default()
        }
    };
    let status = stat::cell(rt, row, Level::User, "status").map(|v| v.to_string()).unwrap_or_default();
    let class = match status.as_str() {
        "OPEN" | "UP" | "no check" => "up",
        "MAINT" | "MAINT (resolution)" => "maint",
        "DRAIN" => "drain",
        "DOWN" | "STOP" => "down",
        _ => "other",
    };
    let kind = match row.1 {
        Kind::Frontend => "frontend",
        Kind::Backend => "backend",
        Kind::Server => "server",
        Kind::Listener => "socket",
    };
    let _ = write!(out, "<tr class=\"{kind} {class}\">");
    match (form, row.1) {
        (true, Kind::Server) => {
            let _ = write!(
                out,
                "<td><input class=\"st-checkbox\" type=\"checkbox\" name=\"s\" value=\"{}\"></td>",
                html_escape(&name)
            );
        }
        (true, _) => out.push_str("<td></td>"),
        (false, _) => {}
    }
    let _ = write!(out, "<td class=\"name\">{}</td>", html_escape(&name));
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
    if modules {
        MODULES.iter().for_each(|m| module_cell(out, rt, row, m));
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
tr.server.drain { background: #ffe080; }\n\
div.banner { padding: 4px 8px; border: 1px solid #999; }\n\
div.tips { display: none; position: absolute; background: #fff; border: 1px solid #999; }\n\
u:hover div.tips { display: block; }\n\
div.active_up { background: #c0ffc0; }\n\
div.active_down { background: #ff9090; }\n\
div.active_going_down { background: #ffd020; }\n\
div.active_no_check { background: #e0e0e0; }\n\
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
        Page::new(&cfg, &Default::default())
    }

    fn rt() -> Runtime {
        let ctx = rampart_cfg::LexCtx { env: &|_| None, version: "2.6", features: &[] };
        let text = "defaults\n mode http\nlisten st\n bind :80\n stats uri /st\n server s1 127.0.0.1:1\n";
        let cfg = rampart_cfg::parse_str("t.cfg", text, &ctx).config.expect("valid");
        crate::build::build(&cfg, 100, 1).expect("built")
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
            p.answer(&rt, 0, b"", None, false, Ask::Read),
            Answer::Unauthorized((*b"Basic realm=\"HAProxy Statistics\"").into())
        );
        let wrong = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("admin:no"));
        assert!(matches!(p.answer(&rt, 0, b"", Some(wrong.as_bytes()), false, Ask::Read), Answer::Unauthorized(_)));
        let right = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("admin:pw"));
        assert!(matches!(p.answer(&rt, 0, b"", Some(right.as_bytes()), false, Ask::Read), Answer::Ok { .. }));
    }

    #[test]
    fn csv_and_html_list_every_row() {
        let (p, rt) = (page(false), rt());
        let Answer::Ok { content_type, body, refresh } = p.answer(&rt, 0, b";csv;norefresh", None, false, Ask::Read)
        else {
            panic!("no page")
        };
        assert_eq!((content_type, refresh), ("text/plain", None));
        let text = String::from_utf8(body).unwrap();
        let names: Vec<&str> = text.lines().skip(1).map(|l| l.split(',').nth(1).unwrap_or("")).collect();
        assert_eq!(names, ["FRONTEND", "s1", "BACKEND"]);
        assert!(text.starts_with("# pxname,svname,") && text.ends_with(",\n"));
        let Answer::Ok { content_type, body, refresh } = p.answer(&rt, 0, b"", None, false, Ask::Read) else {
            panic!("no page")
        };
        assert_eq!((content_type, refresh), ("text/html", Some(5)));
        let html = String::from_utf8(body).unwrap();
        assert!(html.contains("<td class=\"name\">s1</td>") && html.contains("no check"), "{html}");
        assert_eq!(
            p.answer(&rt, 0, b"", None, false, Ask::Post(b"s=s1&action=maint&b=st")),
            Answer::SeeOther(b"/st;st=DENY".to_vec())
        );
    }

    #[test]
    fn admin_rights_turn_backend_tables_into_forms_and_posts_into_actions() {
        let (p, rt) = (page(false), rt());
        let html = |admin: bool, opts: &[u8]| {
            let Answer::Ok { body, .. } = p.answer(&rt, 0, opts, None, admin, Ask::Read) else { panic!("no page") };
            String::from_utf8(body).unwrap()
        };
        let plain = html(false, b"");
        assert!(!plain.contains("<form") && !plain.contains("name=\"s\""), "{plain}");
        let form = html(true, b"");
        assert!(form.contains("<form method=\"post\">"), "{form}");
        assert!(form.contains("name=\"s\" value=\"s1\""), "{form}");
        assert!(form.contains("<option value=\"drain\">") && form.contains("name=\"b\" value=\"#1\""), "{form}");
        let post = p.answer(&rt, 0, b"?scope=st", None, true, Ask::Post(b"s=s1&action=drain&b=%231"));
        assert_eq!(post, Answer::SeeOther(b"/st;st=DONE?scope=st".to_vec()));
        assert!(rt.proxies[0].be.servers[0].state.is_drain());
        let post = p.answer(&rt, 0, b";norefresh", None, true, Ask::Post(b"s=s9&action=drain&b=st"));
        assert_eq!(post, Answer::SeeOther(b"/st;norefresh;st=ERRP".to_vec()));
        let done = html(false, b";st=DONE");
        assert!(done.contains("active_up") && done.contains("Action processed successfully."), "{done}");
    }

    #[test]
    fn a_scope_in_the_uri_keeps_the_proxies_whose_name_contains_it() {
        assert_eq!(url_scope(b"?;csv;scope=b1"), b"b1");
        assert_eq!(url_scope(b"?scope=b1&x=2"), b"b1");
        assert_eq!(url_scope(b"?scope=a<b"), b"");
        assert_eq!(url_scope(b";csv"), b"");
        let (p, rt) = (page(false), rt());
        let csv = |opts: &[u8]| {
            let Answer::Ok { body, .. } = p.answer(&rt, 0, opts, None, false, Ask::Read) else { panic!("no page") };
            String::from_utf8(body).unwrap().lines().count()
        };
        assert_eq!(csv(b";csv;scope=ST"), 4);
        assert_eq!(csv(b";csv;scope=zz"), 1);
    }
}
