//! The stick-table actions: `track-sc<n>` (start tracking the entry of a key in a
//! slot of the stream), `sc-inc-gpc0/1(<n>)`, `sc-inc-gpc(<i>,<n>)`, `sc-set-gpt0(<n>)`
//! and `sc-set-gpt(<i>,<n>)` (write a general purpose counter or tag of a tracked
//! entry; the legacy forms fall back on the arrays' first elements, as HAProxy).
//! HAProxy counterpart: the `ACT_ACTION_TRK_SC*` branch of
//! `http_req_get_intercept_rule()` (src/http_ana.c), `action_inc_gpc0()`,
//! `action_inc_gpc()`, `action_set_gpt0()`, `action_set_gpt()` (src/stick_table.c). Also the compiled `stick` rules, which
//! `stream::ana::sticking` runs.

use rampart_cfg::model::{DataType as D, StickKind};

use crate::sample::expr::Expr;
use crate::sample::SampleCtx;
use crate::stick::Trackers;

/// A compiled `track-sc<n> <key> [table <t>]`.
#[derive(Debug)]
pub struct TrackSc {
    pub slot: usize,
    pub key: Expr,
    /// The proxy holding the table.
    pub table: usize,
}

/// What `sc-set-gpt0` stores.
#[derive(Debug)]
pub enum GptValue {
    Int(i64),
    Expr(Expr),
}

/// A compiled `sc-inc-gpc0/1(<n>)`, `sc-inc-gpc(<i>,<n>)`, `sc-set-gpt0(<n>) <v>` or
/// `sc-set-gpt(<i>,<n>) <v>`.
#[derive(Debug)]
pub enum ScAct {
    /// Adds one to counter `gpc` (`Gpc0`, `Gpc1`, or element `idx` of `Gpc`) and one
    /// event to its rate.
    IncGpc { slot: usize, gpc: D, idx: usize },
    /// Sets tag `gpt` (`Gpt0`, or element `idx` of `Gpt`).
    SetGpt { slot: usize, gpt: D, idx: usize, value: GptValue },
}

impl ScAct {
    /// The action of `a`, its value (`sc-set-gpt*`) compiled by the caller.
    pub fn new(a: &rampart_cfg::model::ScAction, value: Option<GptValue>) -> ScAct {
        use rampart_cfg::model::ScAction as A;
        let value = value.unwrap_or(GptValue::Int(0));
        match *a {
            A::IncGpc0(n) => ScAct::IncGpc { slot: usize::from(n), gpc: D::Gpc0, idx: 0 },
            A::IncGpc1(n) => ScAct::IncGpc { slot: usize::from(n), gpc: D::Gpc1, idx: 0 },
            A::IncGpc { idx, slot } => ScAct::IncGpc { slot: usize::from(slot), gpc: D::Gpc, idx: idx as usize },
            A::SetGpt0(n, _) => ScAct::SetGpt { slot: usize::from(n), gpt: D::Gpt0, idx: 0, value },
            A::SetGpt { idx, slot, .. } => {
                ScAct::SetGpt { slot: usize::from(slot), gpt: D::Gpt, idx: idx as usize, value }
            }
        }
    }
}

impl TrackSc {
    /// Starts tracking the key's entry in the stream's slot, unless the slot tracks
    /// one already, the key gives no value, or the table is full and keeps its
    /// entries (`nopurge`). `ctx` reads the stream; the tracking is stored in `sc`.
    /// `http`: the request is counted too (an HTTP rule runs once it is parsed).
    pub fn run(&self, ctx: &SampleCtx<'_>, http: bool) -> Option<Pending> {
        if ctx.sc.is_some_and(|sc| sc.get(self.slot).is_some()) {
            return None;
        }
        let table = ctx.rt.stick_table(self.table)?.clone();
        let smp = self.key.eval(ctx)?;
        let key = crate::sample::conv::stick::sample_key(&table, smp)?;
        let row = table.get_or_create(&key)?;
        Some(Pending { slot: self.slot, table, key, row, http })
    }
}

/// A tracking decided while the stream was borrowed for the evaluation, to store in
/// its [`Trackers`] right after.
pub struct Pending {
    slot: usize,
    table: std::sync::Arc<crate::stick::StickTable>,
    key: crate::stick::Key,
    row: crate::stick::data::Row,
    http: bool,
}

impl Pending {
    pub fn store(self, sc: &mut Trackers) {
        sc.track(self.slot, &self.table, self.key, self.row, self.http);
    }
}

impl ScAct {
    /// Runs the action on the entry the slot tracks (the stream's, else the session's,
    /// as HAProxy's streams start with the session's counters); nothing when the slot
    /// tracks nothing or the table does not store the data.
    pub fn run(&self, ctx: &SampleCtx<'_>) {
        match self {
            ScAct::IncGpc { slot, gpc, idx } => {
                let Some(t) = ctx.tracked(*slot) else { return };
                let (l, now) = (&t.table.layout, crate::stick::now_ms());
                if let Some(c) = gpc.gpc_rate().and_then(|r| l.cell(r, *idx)) {
                    t.row.add_cell(c, 1, now);
                }
                if let Some(c) = l.cell(*gpc, *idx) {
                    t.row.add_cell(c, 1, now);
                }
                t.table.touch_local(&t.key);
            }
            ScAct::SetGpt { slot, gpt, idx, value } => {
                let Some(t) = ctx.tracked(*slot) else { return };
                let Some(c) = t.table.layout.cell(*gpt, *idx) else { return };
                let v = match value {
                    GptValue::Int(n) => *n,
                    GptValue::Expr(e) => {
                        let smp = e.eval(ctx).and_then(|s| crate::sample::cast::cast(s, crate::sample::SmpType::Sint));
                        match smp {
                            Some(crate::sample::Sample::Sint(n)) => n,
                            _ => return,
                        }
                    }
                };
                t.row.set_cell(c, v as u32 as u64, crate::stick::now_ms());
                t.table.touch_local(&t.key);
            }
        }
    }
}

/// A compiled `stick on|match|store-request` rule.
#[derive(Debug)]
pub struct StickAct {
    pub kind: StickKind,
    pub expr: Expr,
    /// The proxy holding the table.
    pub table: usize,
}

impl StickAct {
    /// Whether the rule looks its key up to choose the server.
    pub fn matches(&self) -> bool {
        matches!(self.kind, StickKind::On | StickKind::Match)
    }

    /// Whether the rule stores its key with the server that got the request.
    pub fn stores(&self) -> bool {
        matches!(self.kind, StickKind::On | StickKind::StoreRequest)
    }
}
