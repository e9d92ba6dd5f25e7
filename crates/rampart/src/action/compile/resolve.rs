//! Compiling `http-request do-resolve(<var>,<resolvers>[,ipv4|ipv6]) <expr>` and its
//! `tcp-request content` twin (`compile_tcp`).
//! HAProxy counterpart: `check_action_do_resolve()` (src/resolvers.c).

use rampart_cfg::model::DoResolve;
use rampart_cfg::Span;

use super::{var_text, Cx, List};
use crate::action::http::{DoResolveAct, HttpAct};
use crate::sample::vars;

impl Cx<'_> {
    pub(super) fn do_resolve(&mut self, d: &DoResolve, span: &Span) -> Option<HttpAct> {
        let res = self.resolvers_of(d, span)?;
        let var = match vars::parse_name(var_text(&d.var).as_bytes()) {
            Ok(v) => v,
            Err(msg) => {
                self.rule_error(span, List::HttpReq, "do-resolve", &msg);
                return None;
            }
        };
        let expr = self.expr(&d.expr, List::HttpReq, "do-resolve")?;
        Some(HttpAct::DoResolve(Box::new(DoResolveAct { var, res, prefer_v6: d.prefer_v6, expr })))
    }

    /// The index of the section a `do-resolve` names; an alert when there is none.
    pub(in crate::action) fn resolvers_of(&mut self, d: &DoResolve, span: &Span) -> Option<usize> {
        let found = self.cfg.resolvers.iter().position(|r| r.name == d.resolvers);
        if found.is_none() {
            let msg = format!(
                "Proxy '{}': Can't find resolvers section '{}' for do-resolve action.",
                self.px().name,
                d.resolvers
            );
            self.alerts.push(rampart_cfg::Diag::alert(Some(span.clone()), msg));
        }
        found
    }
}
