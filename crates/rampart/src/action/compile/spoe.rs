//! Compiling `http-request send-spoe-group <engine> <group>`: the engine among the
//! proxy's `filter spoe` lines, the group among those its agent sends.
//! HAProxy counterpart: `check_send_spoe_group()` (src/flt_spoe.c).

use rampart_cfg::model::FilterKind;
use rampart_cfg::{Diag, Span};

use super::Cx;
use crate::action::http::HttpAct;

impl Cx<'_> {
    pub(super) fn send_spoe_group(&mut self, engine: &str, group: &str, span: &Span) -> Option<HttpAct> {
        let confs = self.px().filters.iter().filter_map(|f| match &f.kind {
            FilterKind::Spoe(s) => s.conf.as_deref(),
            _ => None,
        });
        let found = confs.enumerate().find(|(_, c)| c.id == engine);
        let Some((idx, conf)) = found else {
            let msg = format!("unable to find SPOE engine '{engine}' used by the send-spoe-group '{group}'");
            self.alerts.push(Diag::alert(Some(span.clone()), msg));
            return None;
        };
        let Some(g) = conf.groups.iter().position(|g| g.name == group) else {
            let msg = format!("unable to find SPOE group '{group}' into SPOE engine '{engine}' configuration");
            self.alerts.push(Diag::alert(Some(span.clone()), msg));
            return None;
        };
        Some(HttpAct::SendSpoeGroup(crate::spoe::Ask { engine: idx, group: g }))
    }
}
