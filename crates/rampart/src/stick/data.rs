//! What an entry stores: the table's data types laid out in a row of atomic words,
//! read and updated without a lock (counters add, rates rotate by compare-and-swap).
//! HAProxy counterpart: `stktable_data_types[]`, `stktable_data_ptr()` and the
//! per-type `std_t_*` casts (include/haproxy/stick_table.h).
//!
//! Word use: a rate takes two words (see `freq`), every other type one; an array
//! type (`gpc(<nb>)`) takes that for each of its elements.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use rampart_cfg::model::{DataType, StickTableDef};

use super::freq;

const NONE: u16 = u16::MAX;
const TYPES: usize = DataType::ALL.len();

/// Where each stored data type sits in an entry's row, and the period of each rate.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The first word of each stored type, `NONE` when not stored.
    slot: [u16; TYPES],
    /// Elements of each stored type (an array's `<nb>`, else 1).
    nb: [u8; TYPES],
    period: [u32; TYPES],
    words: usize,
}

/// Where one value (a type, or one element of an array type) sits in a row.
#[derive(Debug, Clone, Copy)]
pub struct Cell {
    /// The type actually stored (`gpc` for `gpc1` when the table stores the array).
    pub data: DataType,
    at: usize,
    period: u32,
}

impl Layout {
    pub fn new(def: &StickTableDef) -> Layout {
        let mut l = Layout { slot: [NONE; TYPES], nb: [0; TYPES], period: [0; TYPES], words: 0 };
        for s in &def.store {
            let i = s.data as usize;
            l.slot[i] = l.words as u16;
            l.nb[i] = s.nb.max(1);
            l.period[i] = s.period.map_or(0, |p| u32::try_from(p.as_millis()).unwrap_or(u32::MAX).max(1));
            l.words += usize::from(l.nb[i]) * if s.data.is_rate() { 2 } else { 1 };
        }
        l
    }

    /// Whether the table stores `d` itself (what `show table` prints, what the CLI's
    /// `data.<type>` accepts).
    #[inline]
    pub fn stores(&self, d: DataType) -> bool {
        self.slot[d as usize] != NONE
    }

    /// Whether `d` has a value in this table: stored, or for `gpc0`, `gpc1`, `gpt0` and
    /// their rates, stored as an element of the array that overrides it.
    #[inline]
    pub fn has(&self, d: DataType) -> bool {
        self.cell(d, 0).is_some()
    }

    /// Where element `idx` of `d` sits (`idx` 0 for a non-array type, which may then
    /// fall back on its array's element as HAProxy's fetches and actions do).
    #[inline]
    pub fn cell(&self, d: DataType, idx: usize) -> Option<Cell> {
        let i = d as usize;
        if self.slot[i] == NONE {
            let (arr, at) = d.array_fallback().filter(|_| idx == 0)?;
            return self.cell(arr, at);
        }
        if idx >= usize::from(self.nb[i]) {
            return None;
        }
        let stride = if d.is_rate() { 2 } else { 1 };
        Some(Cell { data: d, at: usize::from(self.slot[i]) + idx * stride, period: self.period[i] })
    }

    /// The period of rate `d`, in milliseconds.
    pub fn period(&self, d: DataType) -> u32 {
        self.period[d as usize]
    }

    /// Elements of stored type `d` (0 when not stored).
    pub fn elements(&self, d: DataType) -> usize {
        usize::from(self.nb[d as usize])
    }

    /// A fresh row: every counter at zero.
    pub fn new_row(&self) -> Row {
        Row((0..self.words).map(|_| AtomicU64::new(0)).collect())
    }

    /// The stored types, in HAProxy's order.
    pub fn stored(&self) -> impl Iterator<Item = DataType> + '_ {
        DataType::ALL.into_iter().filter(|d| self.stores(*d))
    }
}

/// An entry's data. Shared: the table holds one reference, and each stream tracking
/// the entry another (HAProxy's `ref_cnt`), which keeps it from being purged.
#[derive(Debug, Clone)]
pub struct Row(Arc<[AtomicU64]>);

impl Row {
    /// Streams holding the entry besides the table (`use=` in `show table`).
    pub fn users(&self) -> usize {
        Arc::strong_count(&self.0) - 1
    }

    /// Whether `a` and `b` are the same entry.
    pub fn same(a: &Row, b: &Row) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// An address identifying the entry (the `0x...:` of `show table`).
    pub fn addr(&self) -> usize {
        Arc::as_ptr(&self.0) as *const AtomicU64 as usize
    }

    /// The value of `d` at `now` (a rate over its period); `None` when not stored.
    pub fn get(&self, l: &Layout, d: DataType, now: u32) -> Option<u64> {
        Some(self.get_cell(l.cell(d, 0)?, now))
    }

    /// The value in cell `c` at `now`.
    pub fn get_cell(&self, c: Cell, now: u32) -> u64 {
        let w = &self.0[c.at..];
        if c.data.is_rate() {
            u64::from(freq::read(&w[0], &w[1], c.period, now))
        } else {
            w[0].load(Relaxed)
        }
    }

    /// Adds `n` to counter `d` (or `n` events to rate `d`); returns whether stored.
    #[inline]
    pub fn add(&self, l: &Layout, d: DataType, n: u64, now: u32) -> bool {
        let Some(c) = l.cell(d, 0) else { return false };
        self.add_cell(c, n, now);
        true
    }

    /// Adds `n` to cell `c` (`n` events to a rate); returns the counter's new value,
    /// or a rate's events in its current period (what HAProxy's `*_inc_gpc*` return).
    pub fn add_cell(&self, c: Cell, n: u64, now: u32) -> u64 {
        let w = &self.0[c.at..];
        if c.data.is_rate() {
            let n = u32::try_from(n).unwrap_or(u32::MAX);
            return u64::from(freq::update(&w[0], &w[1], c.period, now, n));
        }
        if is_32bit(c.data) {
            // 32-bit counters wrap as HAProxy's unsigned ints do
            let f = |v: u64| u64::from((v as u32).wrapping_add(n as u32));
            let old = w[0].fetch_update(Relaxed, Relaxed, |v| Some(f(v))).unwrap_or_default();
            f(old)
        } else {
            w[0].fetch_add(n, Relaxed).wrapping_add(n)
        }
    }

    /// Takes one from `d` unless it is zero (`conn_cur` when a stream stops tracking).
    pub fn dec(&self, l: &Layout, d: DataType) {
        if let Some(c) = l.cell(d, 0) {
            let _ = self.0[c.at].fetch_update(Relaxed, Relaxed, |v| v.checked_sub(1));
        }
    }

    /// Sets `d` (a rate restarts with `v` events in a period starting now).
    pub fn set(&self, l: &Layout, d: DataType, v: u64, now: u32) -> bool {
        let Some(c) = l.cell(d, 0) else { return false };
        self.set_cell(c, v, now);
        true
    }

    /// Sets cell `c`, likewise.
    pub fn set_cell(&self, c: Cell, v: u64, now: u32) {
        let w = &self.0[c.at..];
        if c.data.is_rate() {
            w[0].store((u64::from(now) << 32) | (v & 0xffff_ffff), Relaxed);
            w[1].store(0, Relaxed);
        } else {
            w[0].store(if is_32bit(c.data) { v & 0xffff_ffff } else { v }, Relaxed);
        }
    }

    /// A rate's state as the peers send it: the start of its current period (a tick),
    /// the events counted in it and in the period before.
    pub fn freq_raw(&self, c: Cell) -> (u32, u32, u32) {
        let w = &self.0[c.at..];
        let cur = w[0].load(Relaxed);
        ((cur >> 32) as u32, cur as u32, w[1].load(Relaxed) as u32)
    }

    /// Sets a rate's state as a peer sent it.
    pub fn set_freq_raw(&self, c: Cell, tick: u32, curr: u32, prev: u32) {
        let w = &self.0[c.at..];
        w[0].store((u64::from(tick) << 32) | u64::from(curr), Relaxed);
        w[1].store(u64::from(prev), Relaxed);
    }

    /// Appends ` name=value` for every stored type (` name(period)=value` for rates), as
    /// `show table` prints an entry's data.
    pub fn render(&self, l: &Layout, now: u32, out: &mut String) {
        for d in l.stored() {
            if d.is_array() {
                self.render_array(l, d, now, out);
                continue;
            }
            let v = self.get(l, d, now).unwrap_or(0);
            let _ = if d.is_rate() {
                write!(out, " {}({})={v}", d.name(), l.period(d))
            } else if d == DataType::ServerId {
                write!(out, " {}={}", d.name(), v as u32 as i32)
            } else if d == DataType::ServerKey {
                write!(out, " {}={}", d.name(), super::dict::value(v).as_deref().unwrap_or("-"))
            } else {
                write!(out, " {}={v}", d.name())
            };
        }
    }

    /// An array's elements as HAProxy prints them: the index after the name's first
    /// part (`gpc0=`, `gpc1_rate(10000)=`).
    fn render_array(&self, l: &Layout, d: DataType, now: u32, out: &mut String) {
        let (head, tail) = d.name().split_once('_').map_or((d.name(), ""), |(h, _)| (h, &d.name()[h.len()..]));
        for idx in 0..l.elements(d) {
            let Some(c) = l.cell(d, idx) else { break };
            let v = self.get_cell(c, now);
            let _ = if d.is_rate() {
                write!(out, " {head}{idx}{tail}({})={v}", l.period(d))
            } else {
                write!(out, " {head}{idx}{tail}={v}")
            };
        }
    }
}

/// The types HAProxy keeps in 32 bits (the byte counters are 64-bit; `server_key`
/// holds a dictionary number).
fn is_32bit(d: DataType) -> bool {
    !matches!(d, DataType::BytesInCnt | DataType::BytesOutCnt | DataType::ServerKey)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rampart_cfg::model::{StickKeyType, StoreSpec};
    use std::time::Duration;

    pub(crate) fn def(store: &[(DataType, Option<u64>)]) -> StickTableDef {
        StickTableDef {
            key: StickKeyType::Ip,
            size: 10,
            expire: None,
            nopurge: false,
            store: store
                .iter()
                .map(|&(data, p)| StoreSpec {
                    data,
                    period: p.map(Duration::from_millis),
                    nb: if data.is_array() { 2 } else { 1 },
                })
                .collect(),
            peers: None,
            srvkey: Default::default(),
            write_to: None,
            span: Default::default(),
        }
    }

    #[test]
    fn rows_store_only_what_the_table_says() {
        use DataType as D;
        let l = Layout::new(&def(&[(D::Gpc0, None), (D::HttpReqRate, Some(10_000)), (D::BytesInCnt, None)]));
        let r = l.new_row();
        let now = 0x8000_0000;
        assert!(r.add(&l, D::Gpc0, 1, now));
        assert!(!r.add(&l, D::Gpc1, 1, now));
        assert!(r.add(&l, D::HttpReqRate, 3, now));
        r.add(&l, D::BytesInCnt, 5_000_000_000, now);
        assert_eq!(r.get(&l, D::Gpc0, now), Some(1));
        assert_eq!(r.get(&l, D::HttpReqRate, now + 10), Some(3));
        assert_eq!(r.get(&l, D::BytesInCnt, now), Some(5_000_000_000));
        assert_eq!(r.get(&l, D::ConnCur, now), None);
        r.dec(&l, D::Gpc0);
        r.dec(&l, D::Gpc0);
        assert_eq!(r.get(&l, D::Gpc0, now), Some(0));
        let mut s = String::new();
        r.render(&l, now + 10, &mut s);
        assert_eq!(s, " gpc0=0 http_req_rate(10000)=3 bytes_in_cnt=5000000000");
        assert_eq!(r.users(), 0);
    }

    #[test]
    fn arrays_stand_for_the_legacy_types_they_override() {
        use DataType as D;
        let l = Layout::new(&def(&[(D::Gpt, None), (D::Gpc, None), (D::GpcRate, Some(1000))]));
        let r = l.new_row();
        let now = 0x8000_0000;
        assert!(l.has(D::Gpc1) && !l.stores(D::Gpc1));
        assert!(l.cell(D::Gpc, 2).is_none(), "two elements");
        assert!(l.cell(D::Gpc1, 1).is_none(), "a legacy type has one element");
        assert_eq!(r.add_cell(l.cell(D::Gpc1, 0).unwrap(), 2, now), 2);
        assert_eq!(r.add_cell(l.cell(D::GpcRate, 1).unwrap(), 1, now), 1);
        assert!(r.set(&l, D::Gpt0, 7, now));
        assert_eq!(r.get(&l, D::Gpc1Rate, now), Some(1));
        let mut s = String::new();
        r.render(&l, now, &mut s);
        assert_eq!(s, " gpt0=7 gpt1=0 gpc0=0 gpc1=2 gpc0_rate(1000)=0 gpc1_rate(1000)=1");
    }
}
