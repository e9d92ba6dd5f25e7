//! The stick-table actions: `track-sc<n>` (start tracking the entry of a key in a
//! slot of the stream), `sc-inc-gpc0/1(<n>)` and `sc-set-gpt0(<n>)` (write the
//! general purpose counter or tag of a tracked entry).
//! HAProxy counterpart: the `ACT_ACTION_TRK_SC*` branch of
//! `http_req_get_intercept_rule()` (src/http_ana.c), `action_inc_gpc0()`,
//! `action_set_gpt0()` (src/stick_table.c). Also the compiled `stick` rules, which
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

/// A compiled `sc-inc-gpc0/1(<n>)` or `sc-set-gpt0(<n>) <v>`.
#[derive(Debug)]
pub enum ScAct {
    /// `sc-inc-gpc0` (`Gpc0`) or `sc-inc-gpc1` (`Gpc1`).
    IncGpc {
        slot: usize,
        gpc: D,
    },
    SetGpt0 {
        slot: usize,
        value: GptValue,
    },
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
    /// Runs the action on the stream's trackers (nothing when the slot tracks nothing
    /// or the table does not store the data).
    pub fn run(&self, ctx: &SampleCtx<'_>, sc: &Trackers) {
        match self {
            ScAct::IncGpc { slot, gpc } => {
                let Some(t) = sc.get(*slot) else { return };
                let rate = if *gpc == D::Gpc1 { D::Gpc1Rate } else { D::Gpc0Rate };
                t.add(rate, 1);
                t.add(*gpc, 1);
            }
            ScAct::SetGpt0 { slot, value } => {
                let Some(t) = sc.get(*slot) else { return };
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
                t.row.set(&t.table.layout, D::Gpt0, v as u32 as u64, crate::stick::now_ms());
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
