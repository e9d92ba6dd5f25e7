//! The admin form of the statistics page (`stats admin if <cond>`): a POST whose
//! `application/x-www-form-urlencoded` body names a backend (`b`, its name or `#<id>`),
//! an `action` and the servers it applies to (`s`, any number), and the outcome code
//! the page shows after the redirect (`;st=DONE` ...). The action words are HAProxy's
//! (`ready`, `drain`, `maint`, `dhlth` ...). HAProxy counterpart:
//! stats_process_http_post() and the status messages of the HTML dump (stats.c).

use crate::health as check;
use crate::proxy::{ProxyRt, Runtime};
use crate::server::OperState;

/// The outcome of a POST, carried in the `;st=` of the redirect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Not allowed: no `stats admin` condition met, or a backend out of `stats scope`.
    Deny,
    /// Applied to every server named.
    Done,
    /// Nothing applied: unknown action, backend or servers.
    Errp,
    /// The body did not fit the buffer.
    Excd,
    /// No server named.
    None,
    /// Applied to some of the servers named only.
    Part,
    /// A code the page does not know.
    Unkn,
    /// Neither GET, HEAD nor POST, or a body that could not be read.
    Ival,
}

/// Each status with its code in the URI, the class of its banner and the banner's text.
const STATUSES: &[(Status, &str, &str, &str)] = &[
    (Status::Deny, "DENY", "active_down", "<b>Action denied.</b>"),
    (Status::Done, "DONE", "active_up", "Action processed successfully."),
    (
        Status::Errp,
        "ERRP",
        "active_down",
        "Action not processed because of invalid parameters.<ul><li>The action is maybe unknown.</li>\
         <li>Invalid key parameter (empty or too long).</li><li>The backend name is probably unknown or \
         ambiguous (duplicated names).</li><li>Some server names are probably unknown or ambiguous \
         (duplicated names in the backend).</li></ul>",
    ),
    (
        Status::Excd,
        "EXCD",
        "active_down",
        "<b>Action not processed : the buffer couldn't store all the data.<br>You should retry with less \
         servers at a time.</b>",
    ),
    (Status::None, "NONE", "active_going_down", "Nothing has changed."),
    (
        Status::Part,
        "PART",
        "active_going_down",
        "Action partially processed.<br>Some server names are probably unknown or ambiguous (duplicated \
         names in the backend).",
    ),
    (Status::Unkn, "UNKN", "active_no_check", "Unexpected result."),
    (Status::Ival, "IVAL", "active_down", "<b>Invalid requests (unsupported method or chunked encoded request).</b>"),
];

impl Status {
    /// The four letters of `;st=`.
    pub fn code(self) -> &'static str {
        STATUSES.iter().find(|s| s.0 == self).map_or("UNKN", |s| s.1)
    }

    /// The status a `;st=` names (its first four bytes): `Unkn` when none matches.
    pub fn from_code(code: &[u8]) -> Status {
        let code = &code[..code.len().min(4)];
        STATUSES.iter().find(|s| s.1.as_bytes() == code).map_or(Status::Unkn, |s| s.0)
    }

    /// The CSS class of the page's banner and its HTML text.
    pub fn banner(self) -> (&'static str, &'static str) {
        STATUSES.iter().find(|s| s.0 == self).map_or(("", ""), |s| (s.2, s.3))
    }
}

/// An action of the form (`action=<word>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Ready,
    Drain,
    Maint,
    Shutdown,
    DisableHealth,
    EnableHealth,
    HealthUp,
    HealthNolb,
    HealthDown,
    DisableAgent,
    EnableAgent,
    AgentUp,
    AgentDown,
    /// The words of older pages: maintenance on/off, drain on/off.
    Disable,
    Enable,
    Stop,
    Start,
}

/// `action=` values, as the form sends them.
const ACTIONS: &[(&str, Action)] = &[
    ("ready", Action::Ready),
    ("drain", Action::Drain),
    ("maint", Action::Maint),
    ("shutdown", Action::Shutdown),
    ("dhlth", Action::DisableHealth),
    ("ehlth", Action::EnableHealth),
    ("hrunn", Action::HealthUp),
    ("hnolb", Action::HealthNolb),
    ("hdown", Action::HealthDown),
    ("dagent", Action::DisableAgent),
    ("eagent", Action::EnableAgent),
    ("arunn", Action::AgentUp),
    ("adown", Action::AgentDown),
    ("disable", Action::Disable),
    ("enable", Action::Enable),
    ("stop", Action::Stop),
    ("start", Action::Start),
];

/// The actions the page's form offers, with their labels (the old words are not offered).
pub const FORM_ACTIONS: &[(&str, &str)] = &[
    ("ready", "Set state to READY"),
    ("drain", "Set state to DRAIN"),
    ("maint", "Set state to MAINT"),
    ("dhlth", "Health: disable checks"),
    ("ehlth", "Health: enable checks"),
    ("hrunn", "Health: force UP"),
    ("hnolb", "Health: force NOLB"),
    ("hdown", "Health: force DOWN"),
    ("dagent", "Agent: disable checks"),
    ("eagent", "Agent: enable checks"),
    ("arunn", "Agent: force UP"),
    ("adown", "Agent: force DOWN"),
    ("shutdown", "Kill Sessions"),
];

/// A server's administrative state as `set server ... state` and the form set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminState {
    Ready,
    Drain,
    Maint,
}

/// Sets the forced state of server `i`: drain and maintenance exclude each other, as
/// in HAProxy (`srv_adm_set_ready|drain|maint`).
pub fn set_admin_state(px: &ProxyRt, i: usize, state: AdminState) {
    match state {
        AdminState::Ready => {
            check::set_drain(px, i, false);
            check::set_maint(px, i, false);
        }
        AdminState::Drain => {
            check::set_drain(px, i, true);
            check::set_maint(px, i, false);
        }
        AdminState::Maint => {
            check::set_maint(px, i, true);
            check::set_drain(px, i, false);
        }
    }
}

/// What a form body asks: the last `b` and `action`, every `s`.
#[derive(Debug, Default, PartialEq)]
struct Form {
    backend: Option<String>,
    action: Option<String>,
    servers: Vec<String>,
}

impl Form {
    fn parse(body: &[u8]) -> Form {
        let mut form = Form::default();
        for pair in body.split(|&c| c == b'&').filter(|p| !p.is_empty()) {
            let (key, value) = match memchr::memchr(b'=', pair) {
                Some(i) => (&pair[..i], &pair[i + 1..]),
                None => (pair, &b""[..]),
            };
            let (Some(key), Some(value)) = (url_decode(key), url_decode(value)) else { break };
            match key.as_str() {
                "b" => form.backend = Some(value),
                "action" => form.action = Some(value),
                "s" => form.servers.push(value),
                _ => {}
            }
        }
        form
    }
}

/// Decodes `%XX` and `+` (a form's space); `None` for a bad escape or bytes that are
/// not UTF-8.
fn url_decode(text: &[u8]) -> Option<String> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = text.get(i + 1..i + 3)?;
                let hex = std::str::from_utf8(hex).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// The backend a form names: `#<id>` or a name, among backends only; `None` when
/// unknown or ambiguous.
fn find_backend(rt: &Runtime, name: &str) -> Option<usize> {
    if let Some(id) = name.strip_prefix('#') {
        let id: u32 = id.parse().ok()?;
        return (0..rt.proxies.len()).find(|&i| super::iid(rt, i) == id && rt.proxies[i].cap.backend);
    }
    let mut found = rt.proxies.iter().enumerate().filter(|(_, p)| p.cap.backend && p.name == name);
    let (idx, _) = found.next()?;
    found.next().is_none().then_some(idx)
}

/// Whether `stats scope` (`scope`, all proxies when empty) lets the page of proxy
/// `page_px` show proxy `idx`: named, or `.` for the page's own proxy.
pub fn in_config_scope(rt: &Runtime, scope: &[String], page_px: usize, idx: usize) -> bool {
    scope.is_empty() || scope.iter().any(|s| *s == rt.proxies[idx].name || (s == "." && idx == page_px))
}

/// Applies a form `body` posted to the page of proxy `page_px`; `scope`: the page's
/// `stats scope` proxies (all when empty).
pub fn apply(rt: &Runtime, page_px: usize, scope: &[String], body: &[u8]) -> Status {
    let form = Form::parse(body);
    let be = form.backend.as_deref().map(|b| find_backend(rt, b));
    if !scope.is_empty() && form.backend.is_some() {
        let visible = be.flatten().is_some_and(|i| in_config_scope(rt, scope, page_px, i));
        if !visible {
            return Status::Deny;
        }
    }
    let be = match be {
        Some(Some(i)) => Some(i),
        Some(None) => return Status::Errp,
        None => None,
    };
    let action = match form.action.as_deref() {
        Some(word) => match ACTIONS.iter().find(|a| a.0 == word) {
            Some(a) => Some(a.1),
            None => return Status::Errp,
        },
        None => None,
    };
    let (Some(be), Some(action)) = (be, action) else { return Status::None };
    let px = &rt.proxies[be];
    let mut altered = 0;
    for name in &form.servers {
        let found = px.be.servers.iter().position(|s| s.name == *name && !s.state.is_deleted());
        if found.is_some_and(|i| apply_one(px, i, action)) {
            altered += 1;
        }
    }
    match (form.servers.len(), altered) {
        (0, _) => Status::None,
        (_, 0) => Status::Errp,
        (total, n) if n == total => Status::Done,
        _ => Status::Part,
    }
}

/// Applies `action` to server `i`; `false` when it does not apply to this server.
fn apply_one(px: &ProxyRt, i: usize, action: Action) -> bool {
    let srv = &px.be.servers[i];
    let st = &srv.state;
    let changes = match action {
        Action::Ready | Action::Drain | Action::Maint => true,
        Action::Disable => !st.is_maint(),
        Action::Enable => st.is_maint(),
        Action::Stop => !st.is_drain(),
        Action::Start => st.is_drain(),
        Action::DisableHealth | Action::EnableHealth => srv.check.is_some(),
        Action::HealthUp | Action::HealthNolb | Action::HealthDown => srv.track.is_none(),
        Action::DisableAgent | Action::EnableAgent => srv.agent.is_some(),
        Action::AgentUp | Action::AgentDown => srv.agent.is_some() && st.check_enabled(true),
        // COMPAT: rampart cannot kill a server's streams yet (`shutdown sessions
        // server`): the action changes nothing and counts as not applied.
        Action::Shutdown => false,
    };
    if !changes {
        return false;
    }
    match action {
        Action::Ready => set_admin_state(px, i, AdminState::Ready),
        Action::Drain => set_admin_state(px, i, AdminState::Drain),
        Action::Maint => set_admin_state(px, i, AdminState::Maint),
        Action::Disable | Action::Enable => check::set_maint(px, i, action == Action::Disable),
        Action::Stop | Action::Start => check::set_drain(px, i, action == Action::Stop),
        Action::DisableHealth | Action::EnableHealth => st.set_check_enabled(false, action == Action::EnableHealth),
        Action::DisableAgent | Action::EnableAgent => st.set_check_enabled(true, action == Action::EnableAgent),
        Action::HealthUp => check::force_state(px, i, false, OperState::Running),
        Action::HealthNolb => check::force_state(px, i, false, OperState::Stopping),
        Action::HealthDown => check::force_state(px, i, false, OperState::Stopped),
        Action::AgentUp => check::force_state(px, i, true, OperState::Running),
        Action::AgentDown => check::force_state(px, i, true, OperState::Stopped),
        Action::Shutdown => {}
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt() -> Runtime {
        let ctx = rampart_cfg::LexCtx { env: &|_| None, version: "2.6", features: &[] };
        let text = "defaults\n mode http\nfrontend fe\n bind :80\n stats uri /\n stats admin if TRUE\n\
                    backend b1\n server srv1 127.0.0.1:1\n server srv2 127.0.0.1:1\n server srv3 127.0.0.1:1\n\
                    backend b2\n server srv1 127.0.0.1:1\n server srv2 127.0.0.1:1 check\n";
        let cfg = rampart_cfg::parse_str("t.cfg", text, &ctx).config.expect("valid");
        crate::build::build(&cfg, 100, 1).expect("built")
    }

    fn status_of(rt: &Runtime, be: usize, srv: usize) -> (bool, bool) {
        let st = &rt.proxies[be].be.servers[srv].state;
        (st.is_maint(), st.is_drain())
    }

    #[test]
    fn forms_are_decoded_keeping_the_last_backend_and_action() {
        let f = Form::parse(b"s=a+b&s=c%2Fd&action=x&action=drain&b=%233&junk&b=be");
        assert_eq!(f.servers, ["a b", "c/d"]);
        assert_eq!((f.action.as_deref(), f.backend.as_deref()), (Some("drain"), Some("be")));
        assert_eq!(url_decode(b"%2"), None);
        assert_eq!(url_decode(b"%zz"), None);
    }

    #[test]
    fn actions_change_the_named_servers_of_the_named_backend() {
        let rt = rt();
        // fe is #1 (no stats socket), b1 #2, b2 #3
        assert_eq!(apply(&rt, 0, &[], b"s=srv1&s=srv2&s=srv3&action=maint&b=%232"), Status::Done);
        assert_eq!([status_of(&rt, 1, 0), status_of(&rt, 1, 2)], [(true, false), (true, false)]);
        assert_eq!(apply(&rt, 0, &[], b"s=srv2&action=drain&b=b1"), Status::Done);
        assert_eq!(status_of(&rt, 1, 1), (false, true), "drain leaves maintenance");
        assert_eq!(apply(&rt, 0, &[], b"s=srv2&action=ready&b=b1"), Status::Done);
        assert_eq!(status_of(&rt, 1, 1), (false, false));
        assert_eq!(status_of(&rt, 2, 0), (false, false), "b2 untouched");
        assert_eq!(apply(&rt, 0, &[], b"s=srv1&s=nope&action=maint&b=%233"), Status::Part);
        assert_eq!(status_of(&rt, 2, 0), (true, false));
    }

    #[test]
    fn bad_forms_change_nothing_and_say_why() {
        let rt = rt();
        for (body, want) in [
            (&b"s=srv1&action=bogus&b=b1"[..], Status::Errp),
            (b"s=srv1&action=&b=b1", Status::Errp),
            (b"s=srv1&action=maint&b=%239", Status::Errp),
            (b"s=srv1&action=maint&b=fe", Status::Errp),
            (b"s=zz&action=maint&b=b1", Status::Errp),
            (b"action=maint&b=b1", Status::None),
            (b"s=srv1&b=b1", Status::None),
            (b"s=srv1&action=maint", Status::None),
            // checks are only on b2/srv2, agents nowhere
            (b"s=srv1&action=dhlth&b=b1", Status::Errp),
            (b"s=srv1&action=adown&b=b1", Status::Errp),
            (b"s=srv1&action=shutdown&b=b1", Status::Errp),
        ] {
            assert_eq!(apply(&rt, 0, &[], body), want, "{}", String::from_utf8_lossy(body));
        }
        assert!((0..3).all(|i| status_of(&rt, 1, i) == (false, false)));
        assert_eq!(apply(&rt, 0, &["b2".to_owned()], b"s=srv1&action=maint&b=b1"), Status::Deny);
        assert_eq!(apply(&rt, 0, &["b2".to_owned()], b"s=srv1&action=maint&b=nope"), Status::Deny);
        assert_eq!(status_of(&rt, 1, 0), (false, false));
        assert_eq!(apply(&rt, 0, &[], b"s=srv2&action=dhlth&b=b2"), Status::Done);
        assert!(!rt.proxies[2].be.servers[1].state.check_enabled(false));
    }

    #[test]
    fn status_codes_round_trip() {
        for s in [Status::Deny, Status::Done, Status::Errp, Status::Excd, Status::None, Status::Part, Status::Ival] {
            assert_eq!(Status::from_code(s.code().as_bytes()), s);
        }
        assert_eq!(Status::from_code(b"DONEX"), Status::Done);
        assert_eq!(Status::from_code(b"XXXX"), Status::Unkn);
    }
}
