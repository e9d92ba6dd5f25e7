//! Compiling what acts on the stream rather than on a message: the `capture`,
//! `set-src`/`set-dst`..., `early-hint`, `set-timeout` and `wait-for-body` actions, and
//! the proxy keywords the stream runs (`capture ... header`, `declare capture`,
//! `unique-id-format`, `unique-id-header`, `monitor-uri`, `monitor fail`, `http-error`).
//! HAProxy counterpart: the parsers of these actions (src/http_act.c, src/tcp_act.c),
//! `cfg_parse_listen()` for the keywords, `check_config_validity()` for the formats.

use rampart_cfg::model::{self as m, AddrAction, CaptureAction, CaptureSlot, Proxy, TimeoutName};
use rampart_cfg::Diag;

use super::{Cx, List};
use crate::acl::{self, AclSet};
use crate::action::addr::AddrPart;
use crate::action::capture::{CapDir, CaptureDecls};
use crate::action::http::{HttpAct, TimeoutValue};
use crate::action::{ProxyRules, Rule, WaitBody};
use crate::log::format::{LfMode, LogFormat};
use crate::sample::expr::{Place, Site};

impl Cx<'_> {
    /// `http-request capture <expr> len <n>|id <n>`.
    pub(super) fn capture_req(&mut self, c: &CaptureAction) -> Option<HttpAct> {
        let expr = self.expr(&c.expr, List::HttpReq, "capture")?;
        let (slot, len) = match c.slot {
            CaptureSlot::Declared(i) => (i, Some(self.px().captures.request.get(i).map_or(0, |d| d.len))),
            CaptureSlot::Id(i) => (i, None),
        };
        Some(HttpAct::Capture { expr, dir: CapDir::Req, slot, len })
    }

    /// `http-response capture <expr> id <n>` (and `http-after-response`).
    pub(super) fn capture_res(&mut self, expr: &m::ExprSrc, id: usize, list: List) -> Option<HttpAct> {
        let expr = self.expr(expr, list, "capture")?;
        Some(HttpAct::Capture { expr, dir: CapDir::Res, slot: id, len: None })
    }

    /// `set-src`, `set-dst`, `set-src-port`, `set-dst-port`.
    pub(super) fn addr(&mut self, a: &AddrAction) -> Option<HttpAct> {
        let (part, src) = match a {
            AddrAction::SetSrc(e) => (AddrPart::Src, e),
            AddrAction::SetDst(e) => (AddrPart::Dst, e),
            AddrAction::SetSrcPort(e) => (AddrPart::SrcPort, e),
            AddrAction::SetDstPort(e) => (AddrPart::DstPort, e),
        };
        Some(HttpAct::SetAddr(part, self.expr(src, List::HttpReq, a.name())?))
    }

    /// `early-hint <name> <fmt>`; whether it ends its `103` response is decided once
    /// the whole list is known ([`mark_hint_groups`]).
    pub(super) fn early_hint(&mut self, name: &str, value: &m::FmtSrc) -> Option<HttpAct> {
        let value = self.fmt(value, List::HttpReq, "early-hint")?;
        Some(HttpAct::EarlyHint { name: name.to_ascii_lowercase().into_bytes().into(), value, ends: true })
    }

    /// `set-timeout server|tunnel <time>|<expr>`.
    pub(super) fn set_timeout(&mut self, which: TimeoutName, value: &m::TimeoutValue) -> Option<HttpAct> {
        let value = match value {
            m::TimeoutValue::Fixed(d) => TimeoutValue::Fixed(*d),
            m::TimeoutValue::Expr(e) => TimeoutValue::Expr(self.expr(e, List::HttpReq, "set-timeout")?),
        };
        Some(HttpAct::SetTimeout { tunnel: which == TimeoutName::Tunnel, value })
    }

    /// The proxy keywords the stream runs, into `out`.
    pub(super) fn stream_keywords(&mut self, px: &Proxy, acls: &AclSet, out: &mut ProxyRules) {
        out.captures = CaptureDecls::new(&px.captures);
        if let Some(f) = &px.unique_id_format {
            out.unique_id = self.unique_id_format(f);
        }
        out.unique_id_header = px.unique_id_header.as_ref().map(|h| h.to_ascii_lowercase().into_bytes().into());
        out.monitor_uri = px.monitor_uri.as_ref().map(|u| u.as_bytes().into());
        for c in &px.monitor_fail {
            let mut cx = self.cx(Site::Acl);
            let res = acl::compile_condition(c, &px.rules.acls, acls, &mut cx);
            self.keep(cx);
            match res {
                Ok(cond) => out.monitor_fail.push(cond),
                Err(msg) => {
                    self.alert(&c.span, format!("error detected while parsing a 'monitor fail' condition : {msg}."))
                }
            }
        }
        for c in px.stats.iter().flat_map(|p| &p.admin) {
            let mut cx = self.cx(Site::Acl);
            let res = acl::compile_condition(c, &px.rules.acls, acls, &mut cx);
            self.keep(cx);
            match res {
                Ok(cond) => out.stats_admin.push(cond),
                Err(msg) => self.alert(&c.span, format!("error detected while parsing a 'stats admin' rule : {msg}.")),
            }
        }
        for (status, reply) in &px.http_error_replies {
            if let Some(r) = self.reply(reply, List::HttpError, "") {
                out.http_errors.push((*status, r));
            }
        }
    }

    fn unique_id_format(&mut self, f: &m::FmtSrc) -> Option<LogFormat> {
        let place = if self.px().cap.frontend { Place::FeHrqHdr } else { Place::BeHrqHdr };
        let mut cx = self.cx(Site::UniqueId);
        let res = LogFormat::compile(&f.text, &mut cx, LfMode::Http, &[place]);
        self.keep(cx);
        match res {
            Ok(fmt) => Some(fmt),
            Err(e) => {
                let msg = format!("Parsing [{}]: failed to parse unique-id : {e}.", f.span);
                self.alerts.push(Diag::alert(None, msg));
                None
            }
        }
    }
}

/// `wait-for-body time <t> [at-least <n>]`.
pub(super) fn wait_for_body(w: &m::WaitForBody) -> HttpAct {
    HttpAct::WaitBody(WaitBody { time: Some(w.time), at_least: w.at_least })
}

/// Consecutive `early-hint` rules build one `103` response: a hint ends its response
/// when it is the last rule of its list, or when the next rule is not an `early-hint`
/// or has a condition (HAProxy's `http_action_early_hint()`).
pub(super) fn mark_hint_groups(rules: &mut [Rule<HttpAct>]) {
    for i in 0..rules.len() {
        let next_joins =
            rules.get(i + 1).is_some_and(|next| next.cond.is_none() && matches!(next.act, HttpAct::EarlyHint { .. }));
        if let HttpAct::EarlyHint { ends, .. } = &mut rules[i].act {
            *ends = !next_joins;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::action::http::HttpAct;
    use crate::sample::testutil::{config, runtime};

    #[test]
    fn early_hints_end_their_response_before_another_action_or_a_condition() {
        let cfg = config(
            "defaults d\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n\
             http-request early-hint Link </d>\n\
             frontend fe from d\n bind :80\n\
             http-request early-hint Link </a>\n http-request early-hint Link </b>\n\
             http-request early-hint X-C c if TRUE\n http-request early-hint X-D d\n\
             http-request set-header X-E e\n http-request early-hint X-F f\n default_backend be\n\
             defaults\n mode http\n timeout server 1s\n timeout connect 1s\n\
             backend be\n server s 127.0.0.1:1\n",
        );
        let rt = runtime(&cfg);
        let ends: Vec<Option<bool>> = rt.proxies[0]
            .rules
            .http_req
            .iter()
            .map(|r| match r.act {
                HttpAct::EarlyHint { ends, .. } => Some(ends),
                _ => None,
            })
            .collect();
        // the named defaults' list ends on its own; `</b>` ends as the next rule has a
        // condition; `X-C` joins `X-D`
        assert_eq!(ends, [Some(true), Some(false), Some(true), Some(false), Some(true), None, Some(true)]);
    }
}
