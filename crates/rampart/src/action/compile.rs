//! From the configuration model to a proxy's runnable rules: ACLs compiled, then each
//! rule's condition and action (expressions, log-formats, regexes, replies). Errors
//! read as HAProxy's (`error detected in frontend 'fe' while parsing 'http-request
//! set-header' rule : ...`) and keep the rule's line.
//! HAProxy counterpart: the action parsers of src/http_act.c and src/http_rules.c,
//! `check_config_validity()` for the parts resolved after parsing.

use std::rc::Rc;

use rampart_cfg::model::{
    self as m, AclDef, Condition, HdrMatch, HeaderAction, HttpAfterResAction, HttpReply, HttpReqAction, HttpResAction,
    Proxy, RedirectKind, RedirectTarget, ReplyBody, RuleSet, UriAction, VarAction, VarCond,
};
use rampart_cfg::{Config, Diag, Span};

use super::http::{HttpAct, NameMatch};
use super::reply::{DynReply, Redirect, RedirectTo, Reply};
use super::rewrite::UriPart;
use super::{BackendTarget, ProxyRules, Rule, RuleAt, ServerTarget};

mod patref;
mod resolve;
mod spoe;
mod stick;
mod stream;
use crate::acl::{self, AclSet, Cond, PatRefs};
use crate::log::format::{LfMode, LogFormat};
use crate::sample::expr::{self, CompileCx, Place, Site};
use crate::sample::vars::{self, SetCond, VarRef};

/// What compiling one proxy needs beyond the configuration.
pub struct Shared {
    /// Pattern and map files, loaded once for every proxy.
    pub pats: Rc<PatRefs>,
    /// Userlists (`http_auth(<userlist>)`), built once for every proxy.
    pub userlists: Rc<crate::auth::Userlists>,
    /// `proc.` variables named anywhere, declared at startup by the caller.
    pub proc_vars: Vec<VarRef>,
    /// Warnings met while compiling (with their line), for the caller to print.
    pub warnings: Vec<Diag>,
    /// The files rules came from, once each ([`RuleAt::file`] indexes it).
    pub files: Vec<std::sync::Arc<str>>,
    /// Some rule reads the request line as received ([`CompileCx::req_line`]).
    pub req_line: bool,
    /// Servers named by arguments ([`CompileCx::named_servers`]).
    pub named_servers: Vec<(usize, usize)>,
    /// The pattern files `add-acl(<file>)`... rules name, found by [`Shared::bind_pat_refs`].
    pub pat_acts: Vec<(String, super::patref::RefSlot)>,
}

impl Shared {
    /// Where the rule at `span` was written, its file noted once.
    pub fn rule_at(&mut self, span: &Span) -> RuleAt {
        let file = match self.files.iter().position(|f| *f == span.file) {
            Some(i) => i,
            None => {
                self.files.push(span.file.clone());
                self.files.len() - 1
            }
        };
        RuleAt { file: file as u32, line: span.line }
    }
}

/// Which rule list a rule belongs to, for places, sites and messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    HttpReq,
    HttpRes,
    HttpAfter,
    Redirect,
    /// `http-error status <code>` replies.
    HttpError,
}

impl List {
    fn keyword(self) -> &'static str {
        match self {
            List::HttpReq => "http-request",
            List::HttpRes => "http-response",
            List::HttpAfter => "http-after-response",
            List::Redirect => "redirect",
            List::HttpError => "http-error",
        }
    }
}

/// The compiler of one proxy's rules: where errors go and what names resolve to.
pub(super) struct Cx<'c> {
    pub(super) cfg: &'c Config,
    pub(super) px: usize,
    pub(super) shared: &'c mut Shared,
    pub(super) alerts: Vec<Diag>,
    /// The rules being compiled are a named `defaults` section's: a rule naming no
    /// table means the section's own, which has none (HAProxy refuses it).
    pub(super) in_defaults: bool,
}

/// Compiles the rules of proxy `idx`; errors are alerts with their line.
pub fn compile_proxy(cfg: &Config, idx: usize, shared: &mut Shared) -> Result<ProxyRules, Vec<Diag>> {
    let px = &cfg.proxies[idx];
    let mut c = Cx { cfg, px: idx, shared, alerts: Vec::new(), in_defaults: false };
    let mut rules = ProxyRules {
        tarpit: px.timeouts.tarpit.or(px.timeouts.connect),
        inspect_delay: px.tcp_request_inspect_delay,
        res_inspect_delay: px.tcp_response_inspect_delay,
        ..ProxyRules::default()
    };
    if px.filters.iter().any(|f| matches!(f.kind, rampart_cfg::model::FilterKind::Spoe(_))) {
        let mut cx = c.cx(Site::HttpReq);
        match crate::spoe::compile::engines(cfg, idx, &mut cx) {
            Ok(engines) => rules.spoe = engines,
            Err(d) => c.alerts.extend(d),
        }
        c.keep(cx);
    }
    if let Some(d) = px.defaults_rules.and_then(|d| cfg.defaults.get(d)) {
        c.in_defaults = true;
        c.rule_set(&d.rules, &mut rules);
        c.in_defaults = false;
    }
    let acls = c.rule_set(&px.rules, &mut rules);
    c.redirects(px, &acls, &mut rules);
    c.switching(px, &acls, &mut rules);
    c.stick_rules(px, &acls, &mut rules);
    c.stream_keywords(px, &acls, &mut rules);
    if c.alerts.is_empty() {
        Ok(rules)
    } else {
        Err(c.alerts)
    }
}

impl<'c> Cx<'c> {
    pub(super) fn px(&self) -> &'c Proxy {
        &self.cfg.proxies[self.px]
    }

    pub(super) fn cx(&self, site: Site) -> CompileCx<'c> {
        let mut cx = CompileCx::new(self.cfg, self.px, site);
        cx.pats = self.shared.pats.clone();
        cx.userlists = self.shared.userlists.clone();
        cx.in_defaults = self.in_defaults;
        cx.defaults_name = self.px().defaults_rules.and_then(|d| self.cfg.defaults.get(d)).map(|d| d.name.as_str());
        cx
    }

    /// Keeps what a compile context learnt (`proc.` variables, the request line).
    pub(super) fn keep(&mut self, cx: CompileCx<'c>) {
        self.shared.req_line |= cx.req_line;
        self.shared.named_servers.extend(cx.named_servers);
        for v in cx.proc_vars {
            if !self.shared.proc_vars.contains(&v) {
                self.shared.proc_vars.push(v);
            }
        }
    }

    pub(super) fn alert(&mut self, span: &Span, msg: String) {
        self.alerts.push(Diag::alert(Some(span.clone()), msg));
    }

    /// `error detected in <kind> '<name>' while parsing '<kw> <action>' rule : <msg>.`
    fn rule_error(&mut self, span: &Span, list: List, action: &str, msg: &str) {
        if list == List::HttpError {
            self.alert(span, format!("http-error : {msg}"));
            return;
        }
        let px = self.px();
        let kind = match (px.cap.frontend, px.cap.backend) {
            (true, true) => "proxy",
            (true, false) => "frontend",
            _ => "backend",
        };
        let what = if list == List::Redirect { "redirect".to_owned() } else { format!("{} {action}", list.keyword()) };
        let msg = format!("error detected in {kind} '{}' while parsing '{what}' rule : {msg}.", px.name);
        self.alert(span, msg);
    }

    /// The ACLs of a rule set, then its rule lists appended to `out`.
    fn rule_set(&mut self, set: &RuleSet, out: &mut ProxyRules) -> AclSet {
        let acls = self.acls(&set.acls);
        let first = out.http_req.len();
        for r in &set.http_request {
            let cond = self.cond(&r.cond, List::HttpReq, r.action.name(), &acls, &set.acls, &r.span);
            if let Some(act) = self.http_req(&r.action, &r.span, r.cond.is_some()) {
                out.http_req.push(Rule { cond: cond.flatten(), act, at: self.shared.rule_at(&r.span) });
            }
        }
        stream::mark_hint_groups(&mut out.http_req[first..]);
        for r in &set.http_response {
            let cond = self.cond(&r.cond, List::HttpRes, r.action.name(), &acls, &set.acls, &r.span);
            if let Some(act) = self.http_res(&r.action, &r.span, List::HttpRes) {
                out.http_res.push(Rule { cond: cond.flatten(), act, at: self.shared.rule_at(&r.span) });
            }
        }
        for r in &set.http_after_response {
            let cond = self.cond(&r.cond, List::HttpAfter, r.action.name(), &acls, &set.acls, &r.span);
            if let Some(act) = self.http_after(&r.action) {
                out.http_after.push(Rule { cond: cond.flatten(), act, at: self.shared.rule_at(&r.span) });
            }
        }
        self.tcp_rule_set(set, &acls, out);
        acls
    }

    fn acls(&mut self, defs: &[AclDef]) -> AclSet {
        let mut cx = self.cx(Site::Acl);
        let (set, errs) = acl::compile_acl_defs(defs, &mut cx);
        self.keep(cx);
        for (i, msg) in errs {
            self.alert(&defs[i].span, msg);
        }
        for w in set.take_warnings() {
            self.shared.warnings.push(Diag::warning(None, w));
        }
        set
    }

    /// Compiles a rule's condition; `Some(None)` without one, `None` on error.
    fn cond(
        &mut self,
        cond: &Option<Condition>,
        list: List,
        action: &str,
        acls: &AclSet,
        defs: &[AclDef],
        span: &Span,
    ) -> Option<Option<Cond>> {
        let Some(c) = cond else { return Some(None) };
        let _ = span;
        self.shared.pats.set_at(&c.span.file, c.span.line);
        let mut cx = self.cx(Site::Acl);
        let res = acl::compile_condition(c, defs, acls, &mut cx);
        self.keep(cx);
        match res {
            Ok(cond) => Some(Some(cond)),
            Err(msg) => {
                let what =
                    if list == List::Redirect { "redirect".to_owned() } else { format!("{} {action}", list.keyword()) };
                self.alert(&c.span, format!("error detected while parsing an '{what}' condition : {msg}."));
                None
            }
        }
    }

    /// Where a rule of `list` runs, for the fetch validity checks.
    /// A `listen` section's rules run at both sides' places (HAProxy checks a fetch
    /// against any of them).
    fn places(&self, list: List) -> &'static [Place] {
        let px = self.px();
        let request = matches!(list, List::HttpReq | List::Redirect);
        match (list, request, px.cap.frontend, px.cap.backend) {
            // HAProxy checks `http-error` formats against every request and response place
            (List::HttpError, ..) => &[Place::FeHrqHdr, Place::FeHrsHdr, Place::BeHrqHdr, Place::BeHrsHdr],
            (_, true, true, true) => &[Place::FeHrqHdr, Place::BeHrqHdr],
            (_, true, true, false) => &[Place::FeHrqHdr],
            (_, true, false, _) => &[Place::BeHrqHdr],
            (_, false, true, true) => &[Place::BeHrsHdr, Place::FeHrsHdr],
            (_, false, false, _) => &[Place::BeHrsHdr],
            (_, false, true, false) => &[Place::FeHrsHdr],
        }
    }

    fn site(list: List) -> Site {
        match list {
            List::HttpReq => Site::HttpReq,
            List::HttpRes | List::HttpAfter => Site::HttpRes,
            List::Redirect => Site::Redirect,
            List::HttpError => Site::HttpErr,
        }
    }

    fn fmt(&mut self, src: &m::FmtSrc, list: List, action: &str) -> Option<LogFormat> {
        let places = self.places(list);
        self.shared.pats.set_at(&src.span.file, src.span.line);
        let mut cx = self.cx(Self::site(list));
        let res = LogFormat::compile(&src.text, &mut cx, LfMode::Http, places);
        self.keep(cx);
        match res {
            Ok(f) => {
                for w in &f.warnings {
                    self.alerts_warning(&src.span, w);
                }
                Some(f)
            }
            Err(e) if e.resolve => {
                self.alert(&src.span, format!("{e}."));
                None
            }
            Err(e) => {
                self.rule_error(&src.span, list, action, &e.msg);
                None
            }
        }
    }

    pub(super) fn alerts_warning(&mut self, span: &Span, msg: &str) {
        self.shared.warnings.push(Diag::warning(Some(span.clone()), msg.to_owned()));
    }

    fn expr(&mut self, src: &m::ExprSrc, list: List, action: &str) -> Option<expr::Expr> {
        self.shared.pats.set_at(&src.span.file, src.span.line);
        let mut cx = self.cx(Self::site(list));
        let res = expr::compile(&src.text, &mut cx);
        self.keep(cx);
        match res {
            Ok(e) => Some(e),
            Err(e) if e.is_resolve() => {
                self.alert(&src.span, format!("{e}."));
                None
            }
            Err(e) => {
                self.rule_error(&src.span, list, action, &e.to_string());
                None
            }
        }
    }

    fn regex(&mut self, src: &m::RegexSrc, list: List, action: &str, icase: bool) -> Option<regex::bytes::Regex> {
        match crate::pattern::reg::compile(&src.text, icase) {
            Ok(re) => Some(re),
            Err(msg) => {
                self.rule_error(&src.span, list, action, &msg);
                None
            }
        }
    }
}

// === actions ===

impl<'c> Cx<'c> {
    /// The index of the cache a rule names (the configuration checks reported an
    /// unknown one already).
    fn cache(&mut self, name: &str) -> Option<u32> {
        self.cfg.caches.iter().position(|c| c.name == name).map(|i| i as u32)
    }

    fn http_req(&mut self, a: &HttpReqAction, span: &Span, has_cond: bool) -> Option<HttpAct> {
        let list = List::HttpReq;
        Some(match a {
            HttpReqAction::Allow => HttpAct::Allow,
            HttpReqAction::Deny(r) => HttpAct::Deny(self.reply(r, list, "deny")?),
            HttpReqAction::UseService(name) if name.starts_with("lua.") => {
                match crate::action::lua::compile_service(name) {
                    Ok(id) => HttpAct::LuaService(id),
                    Err(msg) => {
                        self.rule_error(span, list, "use-service", &msg);
                        return None;
                    }
                }
            }
            HttpReqAction::UseService(_) => HttpAct::PrometheusExporter,
            HttpReqAction::Lua(call) => self.lua_action(call, span, list, "http-req")?,
            HttpReqAction::Tarpit(r) => HttpAct::Tarpit(self.reply(r, list, "tarpit")?),
            HttpReqAction::Return(r) => HttpAct::Return(self.reply(r, list, "return")?),
            HttpReqAction::Auth { realm } => {
                let realm = realm.clone().unwrap_or_else(|| self.px().name.clone());
                HttpAct::Auth(Reply::Auth(format!("Basic realm=\"{realm}\"").into_bytes().into()))
            }
            HttpReqAction::Redirect(r) => HttpAct::Redirect(self.redirect(r, list, span)?),
            HttpReqAction::Header(h) => self.header(h, list)?,
            HttpReqAction::Uri(u) => self.uri(u, list)?,
            HttpReqAction::Var(v) => self.var(v, list)?,
            HttpReqAction::StrictMode(on) => HttpAct::StrictMode(*on),
            HttpReqAction::Reject => HttpAct::Close,
            HttpReqAction::SilentDrop => HttpAct::SilentDrop,
            HttpReqAction::SetLogLevel(l) => HttpAct::SetLogLevel(super::log_level(*l)),
            HttpReqAction::DisableL7Retry => HttpAct::DisableL7Retry,
            HttpReqAction::CacheUse(name) => HttpAct::CacheUse(self.cache(name)?),
            HttpReqAction::Capture(c) => self.capture_req(c)?,
            HttpReqAction::Addr(a) => self.addr(a)?,
            HttpReqAction::NormalizeUri(n) => {
                HttpAct::NormalizeUri(crate::action::normalize::as_haproxy_runs(*n, has_cond))
            }
            HttpReqAction::EarlyHint { name, value } => self.early_hint(name, value)?,
            HttpReqAction::SetTimeout { timeout, value } => self.set_timeout(*timeout, value)?,
            HttpReqAction::WaitForBody(w) => stream::wait_for_body(w),
            HttpReqAction::DoResolve(d) => self.do_resolve(d, span)?,
            HttpReqAction::SendSpoeGroup { engine, group } => self.send_spoe_group(engine, group, span)?,
            HttpReqAction::SetPriorityClass(e) => {
                HttpAct::SetPriority { offset: false, value: self.expr(e, list, "set-priority-class")? }
            }
            HttpReqAction::SetPriorityOffset(e) => {
                HttpAct::SetPriority { offset: true, value: self.expr(e, list, "set-priority-offset")? }
            }
            HttpReqAction::TrackSc(t) => HttpAct::TrackSc(self.track_sc(t, list)?),
            HttpReqAction::Sc(a) => HttpAct::Sc(self.sc_action(a, list)?),
            HttpReqAction::SetFc(o) => HttpAct::SetFc(self.fc_set(o, list)?),
            HttpReqAction::SetBc(o) => HttpAct::SetFc(super::sockopt::FcSet { bc: true, ..self.fc_set(o, list)? }),
            HttpReqAction::DoLog => HttpAct::DoLog,
            HttpReqAction::PatRef(p) => self.pat_ref_act(p, list)?,
        })
    }

    fn http_res(&mut self, a: &HttpResAction, span: &Span, list: List) -> Option<HttpAct> {
        Some(match a {
            HttpResAction::Allow => HttpAct::Allow,
            HttpResAction::Deny(r) => HttpAct::Deny(self.reply(r, list, "deny")?),
            HttpResAction::Return(r) => HttpAct::Return(self.reply(r, list, "return")?),
            HttpResAction::Redirect(r) => HttpAct::Redirect(self.redirect(r, list, span)?),
            HttpResAction::Header(h) => self.header(h, list)?,
            HttpResAction::SetStatus(s) => set_status(s),
            HttpResAction::Var(v) => self.var(v, list)?,
            HttpResAction::StrictMode(on) => HttpAct::StrictMode(*on),
            HttpResAction::CacheStore(name) => HttpAct::CacheStore(self.cache(name)?, self.px as u32),
            HttpResAction::SilentDrop => HttpAct::SilentDrop,
            HttpResAction::SetLogLevel(l) => HttpAct::SetLogLevel(super::log_level(*l)),
            HttpResAction::Capture { expr, id } => self.capture_res(expr, *id, list)?,
            HttpResAction::TrackSc(t) => HttpAct::TrackSc(self.track_sc(t, list)?),
            HttpResAction::Sc(a) => HttpAct::Sc(self.sc_action(a, list)?),
            HttpResAction::Lua(call) => self.lua_action(call, span, list, "http-res")?,
            HttpResAction::WaitForBody(w) => stream::wait_for_body(w),
            HttpResAction::SetFc(o) => HttpAct::SetFc(self.fc_set(o, list)?),
            HttpResAction::DoLog => HttpAct::DoLog,
            HttpResAction::PatRef(p) => self.pat_ref_act(p, list)?,
        })
    }

    /// `set-mark`, `set-tos` and 3.x's `set-fc-mark`, `set-fc-tos`.
    fn fc_set(&mut self, o: &m::FcSockOpt, list: List) -> Option<crate::action::sockopt::FcSet> {
        use crate::action::sockopt::{FcSet, FcVal};
        let value = match &o.value {
            m::FcValue::Int(v) => FcVal::Int(*v),
            m::FcValue::Expr(e) => FcVal::Expr(self.expr(e, list, o.name())?),
        };
        Some(FcSet { what: o.what, value, bc: false })
    }

    fn lua_action(&mut self, call: &m::LuaCall, span: &Span, list: List, which: &str) -> Option<HttpAct> {
        match crate::action::lua::compile_action(call, which) {
            Ok(a) => Some(HttpAct::Lua(a)),
            Err(msg) => {
                self.rule_error(span, list, &format!("lua.{}", call.name), &msg);
                None
            }
        }
    }

    fn http_after(&mut self, a: &HttpAfterResAction) -> Option<HttpAct> {
        let list = List::HttpAfter;
        Some(match a {
            HttpAfterResAction::Allow => HttpAct::Allow,
            HttpAfterResAction::Header(h) => self.header(h, list)?,
            HttpAfterResAction::SetStatus(s) => set_status(s),
            HttpAfterResAction::Var(v) => self.var(v, list)?,
            HttpAfterResAction::StrictMode(on) => HttpAct::StrictMode(*on),
            HttpAfterResAction::Capture { expr, id } => self.capture_res(expr, *id, list)?,
            HttpAfterResAction::DoLog => HttpAct::DoLog,
        })
    }

    fn header(&mut self, h: &HeaderAction, list: List) -> Option<HttpAct> {
        let action = h.name();
        let name = |n: &String| n.as_bytes().to_vec().into_boxed_slice();
        Some(match h {
            HeaderAction::Set { name: n, value } => {
                HttpAct::SetHeader { name: name(n), value: self.fmt(value, list, action)? }
            }
            HeaderAction::Add { name: n, value } => {
                HttpAct::AddHeader { name: name(n), value: self.fmt(value, list, action)? }
            }
            HeaderAction::Del { name: n, matcher } => {
                let how = match matcher {
                    HdrMatch::Str => NameMatch::Str,
                    HdrMatch::Beg => NameMatch::Beg,
                    HdrMatch::End => NameMatch::End,
                    HdrMatch::Sub => NameMatch::Sub,
                    // the name is the regex; HAProxy compiles it case-insensitive
                    HdrMatch::Reg(re) => NameMatch::Reg(self.regex(re, list, action, true)?),
                };
                HttpAct::DelHeader { name: name(n), how }
            }
            HeaderAction::Replace { name: n, regex, replace } => HttpAct::ReplaceHeader {
                name: name(n),
                re: self.regex(regex, list, action, false)?,
                with: self.fmt(replace, list, action)?,
            },
            HeaderAction::ReplaceValue { name: n, regex, replace } => HttpAct::ReplaceValue {
                name: name(n),
                re: self.regex(regex, list, action, false)?,
                with: self.fmt(replace, list, action)?,
            },
        })
    }

    fn uri(&mut self, u: &UriAction, list: List) -> Option<HttpAct> {
        let action = u.name();
        Some(match u {
            UriAction::SetMethod(f) => HttpAct::SetMethod(self.fmt(f, list, action)?),
            UriAction::SetPath(f) => HttpAct::SetUriPart(UriPart::Path, self.fmt(f, list, action)?),
            UriAction::SetPathq(f) => HttpAct::SetUriPart(UriPart::Pathq, self.fmt(f, list, action)?),
            UriAction::SetQuery(f) => HttpAct::SetUriPart(UriPart::Query, self.fmt(f, list, action)?),
            UriAction::SetUri(f) => HttpAct::SetUriPart(UriPart::Uri, self.fmt(f, list, action)?),
            UriAction::ReplacePath { regex, replace } => HttpAct::ReplaceUriPart(
                UriPart::Path,
                self.regex(regex, list, action, false)?,
                self.fmt(replace, list, action)?,
            ),
            UriAction::ReplacePathq { regex, replace } => HttpAct::ReplaceUriPart(
                UriPart::Pathq,
                self.regex(regex, list, action, false)?,
                self.fmt(replace, list, action)?,
            ),
            UriAction::ReplaceUri { regex, replace } => HttpAct::ReplaceUriPart(
                UriPart::Uri,
                self.regex(regex, list, action, false)?,
                self.fmt(replace, list, action)?,
            ),
        })
    }

    fn var(&mut self, v: &VarAction, list: List) -> Option<HttpAct> {
        let (var, action) = match v {
            VarAction::Set { var, .. } | VarAction::SetFmt { var, .. } | VarAction::Unset(var) => {
                (var, format!("{}({})", v.name(), var_text(var)))
            }
        };
        let r = match vars::parse_name(var_text(var).as_bytes()) {
            Ok(r) => r,
            Err(msg) => {
                self.rule_error(&var_span(v), list, &action, &msg);
                return None;
            }
        };
        if r.scope == vars::Scope::Proc && !self.shared.proc_vars.contains(&r) {
            self.shared.proc_vars.push(r.clone());
        }
        Some(match v {
            VarAction::Set { conds, expr, .. } => {
                HttpAct::SetVar { var: r, cond: set_cond(conds), expr: self.expr(expr, list, &action)? }
            }
            VarAction::SetFmt { conds, fmt, .. } => {
                HttpAct::SetVarFmt { var: r, cond: set_cond(conds), fmt: self.fmt(fmt, list, &action)? }
            }
            VarAction::Unset(_) => HttpAct::UnsetVar(r),
        })
    }

    /// A reply of `deny`, `tarpit`, `return` (and `http-error`).
    fn reply(&mut self, r: &HttpReply, list: List, action: &str) -> Option<Reply> {
        let literal_headers = r.headers.iter().all(|(_, v)| !v.text.contains('%'));
        match &r.body {
            ReplyBody::DefaultErrorfile => return Some(Reply::Default(r.status)),
            ReplyBody::Errorfile(bytes) => {
                return match crate::h1::msg::parse_reply(bytes) {
                    Some(tpl) => Some(Reply::Static(tpl)),
                    // an empty file closes without a response, as in HAProxy; a page
                    // rampart's parser cannot read is sent as it is
                    None => Some(Reply::Raw(bytes.clone().into_boxed_slice())),
                };
            }
            ReplyBody::Empty | ReplyBody::Raw(_) if literal_headers => {
                return Some(Reply::Static(render_static(r)));
            }
            ReplyBody::LogFormat(f) if literal_headers && !f.text.contains('%') => {
                return Some(Reply::Static(render_static(r)));
            }
            _ => {}
        }
        let mut headers = Vec::with_capacity(r.headers.len());
        for (name, value) in &r.headers {
            headers.push((name.to_ascii_lowercase().into_bytes().into(), self.fmt(value, list, action)?));
        }
        let body = match &r.body {
            ReplyBody::LogFormat(f) => Some(self.fmt(f, list, action)?),
            ReplyBody::Raw(b) => Some(LogFormat::literal(b)),
            _ => None,
        };
        let content_type = r.content_type.as_ref().map(|c| c.as_bytes().to_vec().into_boxed_slice());
        Some(Reply::Dynamic(DynReply { status: r.status, headers, content_type, body }))
    }

    fn redirect(&mut self, r: &m::Redirect, list: List, span: &Span) -> Option<Redirect> {
        let fmt = match &r.target {
            RedirectTarget::Literal(text) => LogFormat::literal(text.as_bytes()),
            RedirectTarget::Format(f) => self.fmt(f, list, "redirect")?,
        };
        let _ = span;
        let to = match r.kind {
            RedirectKind::Location => RedirectTo::Location(fmt),
            RedirectKind::Prefix => RedirectTo::Prefix(fmt),
            RedirectKind::Scheme => RedirectTo::Scheme(fmt),
        };
        Some(Redirect {
            to,
            code: r.code,
            drop_query: r.drop_query,
            append_slash: r.append_slash,
            ignore_empty: r.ignore_empty,
            cookie: r.cookie.as_ref().map(|c| c.as_bytes().to_vec().into_boxed_slice()),
        })
    }

    /// Proxy-level `redirect` rules.
    fn redirects(&mut self, px: &Proxy, acls: &AclSet, out: &mut ProxyRules) {
        for r in &px.redirects {
            let cond = self.cond(&r.cond, List::Redirect, "redirect", acls, &px.rules.acls, &r.span);
            if let (Some(cond), Some(rd)) = (cond, self.redirect(&r.redirect, List::Redirect, &r.span)) {
                // COMPAT: as in HAProxy, a proxy-level `redirect` is not reported by
                // `last_rule_file` (only `http-request redirect` is).
                out.redirects.push(Rule { cond, act: HttpAct::Redirect(rd), at: RuleAt::default() });
            }
        }
    }

    /// `use_backend` and `use-server` rules.
    fn switching(&mut self, px: &Proxy, acls: &AclSet, out: &mut ProxyRules) {
        for ub in &px.use_backends {
            let cond = match &ub.cond {
                None => None,
                Some(c) => {
                    self.shared.pats.set_at(&c.span.file, c.span.line);
                    let mut cx = self.cx(Site::Acl);
                    let res = acl::compile_condition(c, &px.rules.acls, acls, &mut cx);
                    self.keep(cx);
                    match res {
                        Ok(c) => Some(c),
                        Err(msg) => {
                            self.alert(&c.span, format!("error detected while parsing switching rule : {msg}."));
                            continue;
                        }
                    }
                }
            };
            let target = match &ub.target {
                m::BackendTarget::Static(b) => BackendTarget::Static(b.index),
                m::BackendTarget::Dynamic(f) => {
                    self.shared.pats.set_at(&f.span.file, f.span.line);
                    let mut cx = self.cx(Site::UseBackend);
                    let res = LogFormat::compile(&f.text, &mut cx, LfMode::Http, &[Place::FeSetBck]);
                    self.keep(cx);
                    match res {
                        Ok(fmt) => BackendTarget::Dynamic(fmt),
                        Err(e) => {
                            self.alert(&f.span, format!("error detected while parsing switching rule : {e}."));
                            continue;
                        }
                    }
                }
            };
            out.switching.push(Rule { cond, act: target, at: RuleAt::default() });
        }
        for us in &px.use_servers {
            self.shared.pats.set_at(&us.cond.span.file, us.cond.span.line);
            let mut cx = self.cx(Site::Acl);
            let res = acl::compile_condition(&us.cond, &px.rules.acls, acls, &mut cx);
            self.keep(cx);
            let cond = match res {
                Ok(c) => c,
                Err(msg) => {
                    self.alert(&us.span, format!("error detected while parsing switching rule : {msg}."));
                    continue;
                }
            };
            let act = match &us.target {
                m::ServerTarget::Static { index, .. } => ServerTarget::Static(*index),
                m::ServerTarget::Dynamic(f) => {
                    let mut cx = self.cx(Site::UseServer);
                    let res = LogFormat::compile(&f.text, &mut cx, LfMode::Http, &[Place::BeSetSrv]);
                    self.keep(cx);
                    match res {
                        Ok(fmt) => ServerTarget::Dynamic(fmt),
                        Err(e) => {
                            self.alert(&f.span, format!("error detected while parsing switching rule : {e}."));
                            continue;
                        }
                    }
                }
            };
            out.use_server.push(Rule { cond: Some(cond), act, at: RuleAt::default() });
        }
        for pr in &px.persist_rules {
            let mut cx = self.cx(Site::Acl);
            let res = acl::compile_condition(&pr.cond, &px.rules.acls, acls, &mut cx);
            self.keep(cx);
            match res {
                Ok(cond) => out.persist.push(Rule { cond: Some(cond), act: pr.force, at: RuleAt::default() }),
                Err(msg) => {
                    let kw = if pr.force { "force-persist" } else { "ignore-persist" };
                    self.alert(&pr.span, format!("'{kw}': error detected while parsing condition : {msg}."));
                }
            }
        }
    }
}

fn set_status(s: &m::SetStatus) -> HttpAct {
    let reason = s.reason.clone().unwrap_or_else(|| crate::http::reason(s.status).to_owned());
    HttpAct::SetStatus { status: s.status, reason: reason.into_bytes().into() }
}

pub(super) fn var_text(v: &m::VarName) -> String {
    let scope = match v.scope {
        m::VarScope::Proc => "proc",
        m::VarScope::Sess => "sess",
        m::VarScope::Txn => "txn",
        m::VarScope::Req => "req",
        m::VarScope::Res => "res",
        m::VarScope::Check => "check",
    };
    format!("{scope}.{}", v.name)
}

fn var_span(v: &VarAction) -> Span {
    match v {
        VarAction::Set { expr, .. } => expr.span.clone(),
        VarAction::SetFmt { fmt, .. } => fmt.span.clone(),
        VarAction::Unset(_) => Span::default(),
    }
}

pub(super) fn set_cond(conds: &[VarCond]) -> SetCond {
    let mut bits = 0;
    for c in conds {
        let word: &[u8] = match c {
            VarCond::IfExists => b"ifexists",
            VarCond::IfNotExists => b"ifnotexists",
            VarCond::IfEmpty => b"ifempty",
            VarCond::IfNotEmpty => b"ifnotempty",
            VarCond::IfSet => b"ifset",
            VarCond::IfNotSet => b"ifnotset",
            VarCond::IfGt => b"ifgt",
            VarCond::IfLt => b"iflt",
        };
        bits |= SetCond::parse(word).unwrap_or(0);
    }
    SetCond(bits)
}

/// Pre-renders a reply whose parts are all literal, as HAProxy writes it: the `hdr`
/// headers, then `content-length` (unless a 204/304 without payload), then
/// `content-type`.
pub fn render_static(r: &HttpReply) -> crate::http::ReplyTpl {
    let body: Vec<u8> = match &r.body {
        ReplyBody::Raw(b) => b.clone(),
        ReplyBody::LogFormat(s) => s.text.as_bytes().to_vec(),
        _ => Vec::new(),
    };
    let mut raw = format!("HTTP/1.1 {} {}\r\n", r.status, crate::http::reason(r.status)).into_bytes();
    for (name, value) in &r.headers {
        raw.extend_from_slice(name.to_ascii_lowercase().as_bytes());
        raw.extend_from_slice(b": ");
        raw.extend_from_slice(value.text.as_bytes());
        raw.extend_from_slice(b"\r\n");
    }
    let has_body = !matches!(r.body, ReplyBody::Empty);
    if has_body || !matches!(r.status, 100..=199 | 204 | 304) {
        raw.extend_from_slice(format!("content-length: {}\r\n", body.len()).as_bytes());
    }
    if let Some(ct) = &r.content_type {
        raw.extend_from_slice(format!("content-type: {ct}\r\n").as_bytes());
    }
    raw.extend_from_slice(b"\r\n");
    raw.extend_from_slice(&body);
    crate::h1::msg::parse_reply(&raw).expect("a rendered reply parses")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rampart_cfg::model::HttpReply;

    #[test]
    fn return_is_rendered_like_haproxy() {
        let fmt = |t: &str| rampart_cfg::model::FmtSrc { text: t.into(), span: Span::default() };
        let spec = HttpReply {
            status: 200,
            content_type: Some("text/plain".into()),
            body: ReplyBody::Raw(b"hello from app1\n".to_vec()),
            headers: vec![("X-Served-By".into(), fmt("app1"))],
        };
        let r = render_static(&spec);
        assert_eq!(
            &r.buf[..],
            b"HTTP/1.1 200 OK\r\nx-served-by: app1\r\ncontent-length: 16\r\ncontent-type: text/plain\r\n\r\nhello from app1\n"
        );
        assert_eq!(&r.buf[r.body.clone()], b"hello from app1\n");
    }
}
