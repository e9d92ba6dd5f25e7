//! Compiling `http-request do-resolve(<var>,<resolvers>[,ipv4|ipv6]) <expr>`.
//! HAProxy counterpart: `check_action_do_resolve()` (src/resolvers.c).

use rampart_cfg::model::DoResolve;
use rampart_cfg::Span;

use super::{var_text, Cx, List};
use crate::action::http::HttpAct;
use crate::sample::vars;

impl Cx<'_> {
    pub(super) fn do_resolve(&mut self, d: &DoResolve, span: &Span) -> Option<HttpAct> {
        let Some(res) = self.cfg.resolvers.iter().position(|r| r.name == d.resolvers) else {
            let msg = format!(
                "Proxy '{}': Can't find resolvers section '{}' for do-resolve action.",
                self.px().name,
                d.resolvers
            );
            self.alerts.push(rampart_cfg::Diag::alert(Some(span.clone()), msg));
            return None;
        };
        let var = match vars::parse_name(var_text(&d.var).as_bytes()) {
            Ok(v) => v,
            Err(msg) => {
                self.rule_error(span, List::HttpReq, "do-resolve", &msg);
                return None;
            }
        };
        let expr = self.expr(&d.expr, List::HttpReq, "do-resolve")?;
        Some(HttpAct::DoResolve(Box::new(crate::action::http::DoResolveAct { var, res, prefer_v6: d.prefer_v6, expr })))
    }
}
