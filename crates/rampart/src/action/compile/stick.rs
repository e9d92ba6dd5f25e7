//! Compiling the stick-table actions (`track-sc<n>`, `sc-inc-gpc0/1`, `sc-set-gpt0`):
//! the table named (or the proxy's own), the key expression; and the `stick on|match|
//! store-request` rules of backends.
//! HAProxy counterpart: `parse_trk_action()`/`check_trk_action()` (src/stick_table.c,
//! src/tcp_rules.c).

use rampart_cfg::model::{self as m, Proxy};

use super::{Cx, List};
use crate::acl::{self, AclSet};
use crate::action::stick::{GptValue, ScAct, StickAct, TrackSc};
use crate::action::{ProxyRules, Rule, RuleAt};
use crate::sample::expr::{self, Site};

impl Cx<'_> {
    /// The proxy whose table `name` designates (`None`: the rule's own proxy).
    pub(crate) fn table_index(&self, name: Option<&str>) -> Option<usize> {
        let cfg = self.cfg;
        match name {
            None if self.in_defaults => None,
            None => cfg.proxies.get(self.px).filter(|p| p.stick_table.is_some()).map(|_| self.px),
            Some(n) => cfg.find_table(n),
        }
    }

    /// [`Cx::table_index`], reporting a table that does not exist as the rule's error.
    pub(super) fn table_of(
        &mut self,
        name: Option<&str>,
        span: &rampart_cfg::Span,
        list: List,
        action: &str,
    ) -> Option<usize> {
        let found = self.table_index(name);
        if found.is_none() {
            let msg = self.no_table(name, action);
            self.rule_error(span, list, action, &msg);
        }
        found
    }

    pub(crate) fn no_table(&self, name: Option<&str>, action: &str) -> String {
        match name {
            Some(n) => format!("unable to find table '{n}' referenced by '{action}'"),
            None if self.in_defaults => format!("no table in the 'defaults' section for '{action}'"),
            None => format!("no table in proxy '{}' for '{action}'", self.px().name),
        }
    }

    /// `track-sc<n> <key> [table <t>]`.
    pub(super) fn track_sc(&mut self, t: &m::TrackSc, list: List) -> Option<TrackSc> {
        let action = format!("track-sc{}", t.slot);
        let table = self.table_of(t.table.as_deref(), &t.key.span, list, &action);
        let key = self.expr(&t.key, list, &action)?;
        Some(TrackSc { slot: usize::from(t.slot), key, table: table? })
    }

    /// `sc-inc-gpc0/1(<n>)`, `sc-inc-gpc(<i>,<n>)`, `sc-set-gpt0(<n>) <v>`,
    /// `sc-set-gpt(<i>,<n>) <v>`.
    pub(super) fn sc_action(&mut self, a: &m::ScAction, list: List) -> Option<ScAct> {
        let value = match a.gpt_value() {
            None => None,
            Some(m::GptValue::Int(i)) => Some(GptValue::Int(*i)),
            Some(m::GptValue::Expr(e)) => Some(GptValue::Expr(self.expr(e, list, a.name())?)),
        };
        Some(ScAct::new(a, value))
    }
}

impl Cx<'_> {
    /// `stick on|match|store-request|store-response <expr> [table <t>] [if|unless <cond>]`
    /// lines.
    pub(super) fn stick_rules(&mut self, px: &Proxy, acls: &AclSet, out: &mut ProxyRules) {
        for r in &px.stick_rules {
            let cond = match &r.cond {
                None => None,
                Some(c) => {
                    let mut cx = self.cx(Site::Acl);
                    let res = acl::compile_condition(c, &px.rules.acls, acls, &mut cx);
                    self.keep(cx);
                    match res {
                        Ok(c) => Some(c),
                        Err(msg) => {
                            self.alert(
                                &r.span,
                                format!("'stick': error detected while parsing sticking condition : {msg}."),
                            );
                            continue;
                        }
                    }
                }
            };
            let table = match r.table.as_deref() {
                Some(t) => self.cfg.find_table(t),
                None => self.cfg.find_table(&px.name),
            };
            let Some(table) = table else {
                let name = r.table.as_deref().unwrap_or(&px.name);
                self.alert(&r.span, format!("proxy '{}': unable to find stick-table '{name}'.", px.name));
                continue;
            };
            let mut cx = self.cx(Site::Stick);
            let res = expr::compile(&r.expr.text, &mut cx);
            self.keep(cx);
            let e = match res {
                Ok(e) => e,
                Err(e) => {
                    self.alert(&r.span, format!("'stick': {e}"));
                    continue;
                }
            };
            let rule = Rule { cond, act: StickAct { kind: r.kind, expr: e, table }, at: RuleAt::default() };
            match r.kind {
                m::StickKind::StoreResponse => out.stick_res.push(rule),
                _ => out.stick.push(rule),
            }
        }
    }
}
