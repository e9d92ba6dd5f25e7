//! The TCP rule lists of a proxy, compiled: `tcp-request connection|session|content`
//! and `tcp-response content`, with HAProxy's parse-time checks that the samples an
//! action or a condition reads exist where the rule runs (an error for an action's
//! expression, a warning for a condition that will never match).
//! HAProxy counterpart: `tcp_parse_request_rule()`, `tcp_parse_response_rule()`
//! (src/tcp_rules.c), `parse_store()` (src/vars.c), `check_capture()` (src/action.c).

use rampart_cfg::model::{self as m, AddrAction, Condition, RuleSet, TcpReqAction, TcpResAction, VarAction};
use rampart_cfg::{Diag, Span};

use super::addr::AddrPart;
use super::compile::{set_cond, var_text, Cx};
use super::http::DoResolveAct;
use super::tcp::TcpAct;
use super::{ProxyRules, Rule};
use crate::acl::{self, AclSet, Cond};
use crate::log::format::{LfMode, LogFormat};
use crate::sample::expr::{self, Place, Site};
use crate::sample::vars;

/// Which TCP rule list a rule belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TcpList {
    Connection,
    Session,
    Content,
    Response,
}

impl TcpList {
    fn keyword(self) -> &'static str {
        match self {
            TcpList::Connection => "tcp-request connection",
            TcpList::Session => "tcp-request session",
            TcpList::Content => "tcp-request content",
            TcpList::Response => "tcp-response content",
        }
    }

    fn site(self) -> Site {
        match self {
            TcpList::Connection => Site::TcpReqConn,
            TcpList::Session => Site::TcpReqSess,
            TcpList::Content => Site::TcpReqCont,
            TcpList::Response => Site::TcpResCont,
        }
    }
}

/// The name of an action in messages: `set-var(txn.a)` for the variable actions.
fn act_name(name: &str, var: Option<&VarAction>) -> String {
    match var {
        Some(VarAction::Set { var, .. } | VarAction::SetFmt { var, .. } | VarAction::Unset(var)) => {
            format!("{name}({})", var_text(var))
        }
        None => name.to_owned(),
    }
}

impl Cx<'_> {
    /// Compiles the four TCP lists of `set` into `out`.
    pub(super) fn tcp_rule_set(&mut self, set: &RuleSet, acls: &AclSet, out: &mut ProxyRules) {
        let req = [
            (TcpList::Connection, &set.tcp_request_connection),
            (TcpList::Session, &set.tcp_request_session),
            (TcpList::Content, &set.tcp_request_content),
        ];
        for (list, rules) in req {
            for r in rules {
                let var = match &r.action {
                    TcpReqAction::Var(v) => Some(v),
                    _ => None,
                };
                let name = act_name(r.action.name(), var);
                let cond = self.tcp_cond(&r.cond, list, &name, acls, &set.acls, &r.span);
                let act = self.tcp_req_act(&r.action, list, &name, &r.span);
                if let (Some(cond), Some(act)) = (cond, act) {
                    let dest = match list {
                        TcpList::Connection => &mut out.tcp_conn,
                        TcpList::Session => &mut out.tcp_sess,
                        _ => &mut out.tcp_req,
                    };
                    dest.push(Rule { cond, act, at: self.shared.rule_at(&r.span) });
                }
            }
        }
        for r in &set.tcp_response_content {
            let var = match &r.action {
                TcpResAction::Var(v) => Some(v),
                _ => None,
            };
            let name = act_name(r.action.name(), var);
            let list = TcpList::Response;
            let cond = self.tcp_cond(&r.cond, list, &name, acls, &set.acls, &r.span);
            let act = self.tcp_res_act(&r.action, &name, &r.span);
            if let (Some(cond), Some(act)) = (cond, act) {
                out.tcp_res.push(Rule { cond, act, at: self.shared.rule_at(&r.span) });
            }
        }
    }

    /// Where a rule of `list` runs (HAProxy's `where`); messages name the first.
    fn tcp_places(&self, list: TcpList) -> Vec<Place> {
        let cap = self.px().cap;
        let (fe, be) = match list {
            TcpList::Connection => return vec![Place::FeConAcc],
            TcpList::Session => return vec![Place::FeSesAcc],
            TcpList::Content => (Place::FeReqCnt, Place::BeReqCnt),
            TcpList::Response => (Place::FeResCnt, Place::BeResCnt),
        };
        let mut places: Vec<Place> =
            [(cap.frontend, fe), (cap.backend, be)].into_iter().filter_map(|(has, p)| has.then_some(p)).collect();
        if places.is_empty() {
            places.push(fe);
        }
        places.sort_by_key(|p| *p as usize);
        places
    }

    fn kind(&self) -> &'static str {
        let cap = self.px().cap;
        match (cap.frontend, cap.backend) {
            (true, true) => "proxy",
            (true, false) => "frontend",
            _ => "backend",
        }
    }

    /// Compiles a rule's condition (`Some(None)` without one, `None` on error) and
    /// warns, as HAProxy, when one of its ACLs reads data the rule never has.
    fn tcp_cond(
        &mut self,
        cond: &Option<Condition>,
        list: TcpList,
        action: &str,
        acls: &AclSet,
        defs: &[m::AclDef],
        span: &Span,
    ) -> Option<Option<Cond>> {
        let Some(c) = cond else { return Some(None) };
        let mut cx = self.cx(Site::Acl);
        let res = acl::compile_condition(c, defs, acls, &mut cx);
        self.keep(cx);
        let cond = match res {
            Ok(cond) => cond,
            Err(msg) => {
                let word = if c.negate { "unless" } else { "if" };
                let (kind, name) = (self.kind(), self.px().name.clone());
                let msg = format!(
                    "'{} {action}' : error detected in {kind} '{name}' while parsing '{word}' condition : {msg}",
                    list.keyword()
                );
                self.alert(span, msg);
                return None;
            }
        };
        let places = self.tcp_places(list);
        if let Some(w) = cond.conflicts(&places) {
            let (kw, at) = (list.keyword(), places[0].name());
            let msg = match (w.acl.is_empty(), w.never) {
                (false, true) => format!(
                    "acl '{}' will never match in '{kw}' because it only involves keywords that are incompatible \
                     with '{at}'",
                    w.acl
                ),
                (false, false) => {
                    format!("acl '{}' involves keyword '{}' which is incompatible with '{at}'", w.acl, w.kw)
                }
                (true, true) => format!(
                    "anonymous acl will never match in '{kw}' because it uses keyword '{}' which is incompatible \
                     with '{at}'",
                    w.kw
                ),
                (true, false) => format!("anonymous acl involves keyword '{}' which is incompatible with '{at}'", w.kw),
            };
            self.alerts_warning(span, &msg);
        }
        Some(Some(cond))
    }

    /// An action's expression. `what`: how a misplaced fetch is named (HAProxy names
    /// the action for the variable actions, the fetch for `capture`); `prefix`: put
    /// before every message (`'tcp-request content capture' : `).
    fn tcp_expr(&mut self, src: &m::ExprSrc, list: TcpList, what: Option<&str>, prefix: &str) -> Option<expr::Expr> {
        let mut cx = self.cx(list.site());
        let res = expr::compile(&src.text, &mut cx);
        self.keep(cx);
        let e = match res {
            Ok(e) => e,
            Err(e) => {
                let end = if e.is_resolve() { "." } else { "" };
                let mut d = Diag::alert(Some(src.span.clone()), format!("{prefix}{e}{end}"));
                if let Some(h) = e.hint() {
                    d = d.with_hint(h);
                }
                self.alerts.push(d);
                return None;
            }
        };
        if let Some(what) = what {
            let places = self.tcp_places(list);
            if !places.iter().any(|p| e.valid_at(*p)) {
                let names = e.check_place(places[0]).err().unwrap_or_default();
                let what = if what.is_empty() { e.fetch.name } else { what };
                self.alert(
                    &src.span,
                    format!(
                        "{prefix}fetch method '{what}' extracts information from '{names}', none of which is \
                         available here"
                    ),
                );
                return None;
            }
        }
        Some(e)
    }

    fn tcp_fmt(&mut self, src: &m::FmtSrc, list: TcpList) -> Option<LogFormat> {
        let places = self.tcp_places(list);
        let mut cx = self.cx(list.site());
        let res = LogFormat::compile(&src.text, &mut cx, LfMode::Http, &places);
        self.keep(cx);
        match res {
            Ok(f) => {
                // COMPAT: HAProxy does not warn about payload fetches in the formats
                // of TCP rules, which is what they are for.
                for w in f.warnings.iter().filter(|w| !w.starts_with("L6 sample fetch")) {
                    self.alerts_warning(&src.span, w);
                }
                Some(f)
            }
            Err(e) => {
                let end = if e.resolve { "." } else { "" };
                self.alert(&src.span, format!("{}{end}", e.msg));
                None
            }
        }
    }

    fn tcp_var(&mut self, v: &VarAction, list: TcpList, name: &str, span: &Span) -> Option<TcpAct> {
        let var = match v {
            VarAction::Set { var, .. } | VarAction::SetFmt { var, .. } | VarAction::Unset(var) => var,
        };
        let r = match vars::parse_name(var_text(var).as_bytes()) {
            Ok(r) => r,
            Err(msg) => {
                self.alert(span, msg);
                return None;
            }
        };
        if r.scope == vars::Scope::Proc && !self.shared.proc_vars.contains(&r) {
            self.shared.proc_vars.push(r.clone());
        }
        Some(match v {
            VarAction::Set { conds, expr, .. } => {
                TcpAct::SetVar { var: r, cond: set_cond(conds), expr: self.tcp_expr(expr, list, Some(name), "")? }
            }
            VarAction::SetFmt { conds, fmt, .. } => {
                TcpAct::SetVarFmt { var: r, cond: set_cond(conds), fmt: self.tcp_fmt(fmt, list)? }
            }
            VarAction::Unset(_) => TcpAct::UnsetVar(r),
        })
    }

    fn tcp_req_act(&mut self, a: &TcpReqAction, list: TcpList, name: &str, span: &Span) -> Option<TcpAct> {
        let not_yet = |c: &mut Self, what: &str, why: &str| {
            c.alert(span, format!("'{} {what}' is not supported yet{why}", list.keyword()));
            None
        };
        Some(match a {
            TcpReqAction::Accept => TcpAct::Accept,
            TcpReqAction::Reject => TcpAct::Reject,
            TcpReqAction::SilentDrop => TcpAct::SilentDrop,
            TcpReqAction::SetLogLevel(l) => TcpAct::SetLogLevel(super::log_level(*l)),
            TcpReqAction::ExpectProxy => TcpAct::ExpectProxy,
            TcpReqAction::Var(v) => self.tcp_var(v, list, name, span)?,
            TcpReqAction::Capture { expr, slot } => {
                let Some(len) = self.px().captures.request.get(*slot).map(|c| c.len) else {
                    // a capture declared by a `defaults` section's rule: its slot is not
                    // among the proxy's
                    return not_yet(self, "capture", " (in a 'defaults' section)");
                };
                let prefix = format!("'{} capture' : ", list.keyword());
                let expr = self.tcp_expr(expr, list, Some(""), &prefix)?;
                self.warn_random_capture(&expr);
                TcpAct::Capture { expr, slot: *slot, len }
            }
            TcpReqAction::Addr(addr) => {
                let (part, src) = match addr {
                    AddrAction::SetSrc(e) => (AddrPart::Src, e),
                    AddrAction::SetDst(e) => (AddrPart::Dst, e),
                    AddrAction::SetSrcPort(e) => (AddrPart::SrcPort, e),
                    AddrAction::SetDstPort(e) => (AddrPart::DstPort, e),
                };
                TcpAct::SetAddr(part, self.tcp_expr(src, list, None, "")?)
            }
            TcpReqAction::SwitchModeHttp { proto } => TcpAct::SwitchHttp(match proto.as_deref() {
                Some("h1") => super::tcp::SwitchProto::H1,
                Some("h2") => super::tcp::SwitchProto::H2,
                _ => super::tcp::SwitchProto::Auto,
            }),
            TcpReqAction::SetPriorityClass(_) => {
                return not_yet(self, "set-priority-class", " (TCP streams carry no queue priority yet)");
            }
            TcpReqAction::SetPriorityOffset(_) => {
                return not_yet(self, "set-priority-offset", " (TCP streams carry no queue priority yet)");
            }
            TcpReqAction::TrackSc(t) => {
                let action = format!("track-sc{}", t.slot);
                let key = self.tcp_expr(&t.key, list, None, "")?;
                let Some(table) = self.table_index(t.table.as_deref()) else {
                    let msg = self.no_table(t.table.as_deref(), &action);
                    self.alert(span, format!("'{} {action}' : {msg}.", list.keyword()));
                    return None;
                };
                TcpAct::TrackSc(crate::action::stick::TrackSc { slot: usize::from(t.slot), key, table })
            }
            TcpReqAction::Lua(call) => match crate::action::lua::compile_action(call, "tcp-req") {
                Ok(act) => TcpAct::Lua(act),
                Err(msg) => {
                    self.alert(span, format!("'{} lua.{}' : {msg}.", list.keyword(), call.name));
                    return None;
                }
            },
            TcpReqAction::Sc(a) => {
                let value = match a.gpt_value() {
                    None => None,
                    Some(rampart_cfg::model::GptValue::Int(i)) => Some(crate::action::stick::GptValue::Int(*i)),
                    Some(rampart_cfg::model::GptValue::Expr(e)) => {
                        Some(crate::action::stick::GptValue::Expr(self.tcp_expr(e, list, None, "")?))
                    }
                };
                TcpAct::Sc(crate::action::stick::ScAct::new(a, value))
            }
            TcpReqAction::SetFc(o) => TcpAct::SetFc(self.tcp_fc_set(o, list)?),
            TcpReqAction::SetBc(o) => {
                let set = self.tcp_fc_set(o, list)?;
                TcpAct::SetFc(crate::action::sockopt::FcSet { bc: true, ..set })
            }
            TcpReqAction::DoLog => TcpAct::DoLog,
            TcpReqAction::DoResolve(d) => {
                let res = self.resolvers_of(d, span)?;
                let var = match vars::parse_name(var_text(&d.var).as_bytes()) {
                    Ok(v) => v,
                    Err(msg) => {
                        self.alert(span, msg);
                        return None;
                    }
                };
                let expr = self.tcp_expr(&d.expr, list, None, "")?;
                TcpAct::DoResolve(Box::new(DoResolveAct { var, res, prefer_v6: d.prefer_v6, expr }))
            }
            TcpReqAction::UseService(full) => {
                match crate::action::lua::compile_tcp_service(full, self.px().mode == m::Mode::Http) {
                    Ok(id) => TcpAct::LuaService(id),
                    Err(msg) => {
                        self.alert(span, msg);
                        return None;
                    }
                }
            }
        })
    }

    /// `set-mark`, `set-tos` and 3.x's `set-fc-mark`, `set-fc-tos`.
    fn tcp_fc_set(&mut self, o: &m::FcSockOpt, list: TcpList) -> Option<crate::action::sockopt::FcSet> {
        use crate::action::sockopt::{FcSet, FcVal};
        let value = match &o.value {
            m::FcValue::Int(v) => FcVal::Int(*v),
            m::FcValue::Expr(e) => FcVal::Expr(self.tcp_expr(e, list, None, "")?),
        };
        Some(FcSet { what: o.what, value, bc: false })
    }

    fn tcp_res_act(&mut self, a: &TcpResAction, name: &str, span: &Span) -> Option<TcpAct> {
        Some(match a {
            TcpResAction::Accept => TcpAct::Accept,
            TcpResAction::Reject => TcpAct::Reject,
            TcpResAction::Close if self.px().mode == m::Mode::Http => {
                // TODO(#5): in HTTP mode, end the server connection after this response
                self.alert(span, "'tcp-response content close' in an HTTP backend is not supported yet".into());
                return None;
            }
            TcpResAction::Close => TcpAct::CloseServer,
            TcpResAction::SilentDrop => TcpAct::SilentDrop,
            TcpResAction::SetLogLevel(l) => TcpAct::SetLogLevel(super::log_level(*l)),
            TcpResAction::Var(v) => self.tcp_var(v, TcpList::Response, name, span)?,
            // TODO(#28): in TCP mode, the response rules run where the client socket is
            // out of reach
            TcpResAction::SetFc(_) if self.px().mode != m::Mode::Http => {
                let what = a.name();
                self.alert(span, format!("'tcp-response content {what}' is not supported yet (in TCP mode)"));
                return None;
            }
            TcpResAction::SetFc(o) => TcpAct::SetFc(self.tcp_fc_set(o, TcpList::Response)?),
            TcpResAction::DoLog => TcpAct::DoLog,
            TcpResAction::Lua(call) => match crate::action::lua::compile_action(call, "tcp-res") {
                Ok(act) => TcpAct::Lua(act),
                Err(msg) => {
                    self.alert(span, format!("'tcp-response content lua.{}' : {msg}.", call.name));
                    return None;
                }
            },
        })
    }

    /// HAProxy's warning for a frontend `capture` that reads the request's content
    /// while nothing makes the rules wait for it (`check_capture()`).
    fn warn_random_capture(&mut self, e: &expr::Expr) {
        let px = self.px();
        if !px.cap.frontend || px.tcp_request_inspect_delay.is_some() || e.valid_at(Place::FeSesAcc) {
            return;
        }
        let kind = match (px.cap.frontend, px.cap.backend) {
            (true, true) => "listen",
            _ => "frontend",
        };
        let msg = format!(
            "{kind} '{}' : a 'tcp-request capture' rule explicitly depending on request contents without any \
             'tcp-request inspect-delay' setting. This means that this rule will randomly find its contents. This \
             can be fixed by setting the tcp-request inspect-delay.",
            px.name
        );
        self.shared.warnings.push(Diag::warning(None, msg));
    }
}
