//! Compiling `add-acl(<file>)`, `del-acl(<file>)`, `set-map(<file>)`, `del-map(<file>)`.
//! HAProxy counterpart: `parse_http_set_map()` (src/http_act.c); its runtime lookup of
//! the reference by name (`pat_ref_lookup()`) is done once, after every rule compiled.

use std::sync::Arc;

use rampart_cfg::model as m;

use super::{Cx, List, Shared};
use crate::action::http::HttpAct;
use crate::action::patref::PatRefAct;

impl Cx<'_> {
    pub(super) fn pat_ref_act(&mut self, p: &m::PatRefAction, list: List) -> Option<HttpAct> {
        // HAProxy's messages name the action as written
        let action = format!("{}({})", p.op.name(), p.file);
        let key = self.fmt(&p.key, list, &action)?;
        let value = match &p.value {
            Some(v) => Some(self.fmt(v, list, &action)?),
            None => None,
        };
        let target = Arc::default();
        self.shared.pat_acts.push((p.file.clone(), Arc::clone(&target)));
        Some(HttpAct::PatRef(Box::new(PatRefAct { op: p.op, target, key, value })))
    }
}

impl Shared {
    /// Points each `add-acl(<file>)`... rule at the pattern file of that name, once every
    /// rule has loaded its files; a name no ACL or map loaded stays unbound.
    pub fn bind_pat_refs(&mut self) {
        let files = self.pats.files();
        for (name, slot) in self.pat_acts.drain(..) {
            if let Some((_, r)) = files.iter().find(|(path, _)| *path == name) {
                let _ = slot.set(Arc::clone(r));
            }
        }
    }
}
