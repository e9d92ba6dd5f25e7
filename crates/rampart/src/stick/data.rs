//! What an entry stores: the table's data types laid out in a row of atomic words,
//! read and updated without a lock (counters add, rates rotate by compare-and-swap).
//! HAProxy counterpart: `stktable_data_types[]`, `stktable_data_ptr()` and the
//! per-type `std_t_*` casts (include/haproxy/stick_table.h).
//!
//! Word use: a rate takes two words (see `freq`), every other type one.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use rampart_cfg::model::{DataType, StickTableDef};

use super::freq;

const NONE: u8 = u8::MAX;
const TYPES: usize = DataType::ALL.len();

/// Where each stored data type sits in an entry's row, and the period of each rate.
#[derive(Debug, Clone)]
pub struct Layout {
    slot: [u8; TYPES],
    period: [u32; TYPES],
    words: usize,
}

impl Layout {
    pub fn new(def: &StickTableDef) -> Layout {
        let mut l = Layout { slot: [NONE; TYPES], period: [0; TYPES], words: 0 };
        for s in &def.store {
            let i = s.data as usize;
            l.slot[i] = l.words as u8;
            l.period[i] = s.period.map_or(0, |p| u32::try_from(p.as_millis()).unwrap_or(u32::MAX).max(1));
            l.words += if s.data.is_rate() { 2 } else { 1 };
        }
        l
    }

    /// Whether the table stores `d`.
    #[inline]
    pub fn has(&self, d: DataType) -> bool {
        self.slot[d as usize] != NONE
    }

    /// The period of rate `d`, in milliseconds.
    pub fn period(&self, d: DataType) -> u32 {
        self.period[d as usize]
    }

    /// A fresh row: every counter at zero.
    pub fn new_row(&self) -> Row {
        Row((0..self.words).map(|_| AtomicU64::new(0)).collect())
    }

    /// The stored types, in HAProxy's order.
    pub fn stored(&self) -> impl Iterator<Item = DataType> + '_ {
        DataType::ALL.into_iter().filter(|d| self.has(*d))
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

    fn words(&self, l: &Layout, d: DataType) -> Option<&[AtomicU64]> {
        let s = l.slot[d as usize];
        (s != NONE).then(|| &self.0[s as usize..])
    }

    /// The value of `d` at `now` (a rate over its period); `None` when not stored.
    pub fn get(&self, l: &Layout, d: DataType, now: u32) -> Option<u64> {
        let w = self.words(l, d)?;
        Some(if d.is_rate() { u64::from(freq::read(&w[0], &w[1], l.period(d), now)) } else { w[0].load(Relaxed) })
    }

    /// Adds `n` to counter `d` (or `n` events to rate `d`); returns whether stored.
    #[inline]
    pub fn add(&self, l: &Layout, d: DataType, n: u64, now: u32) -> bool {
        let Some(w) = self.words(l, d) else { return false };
        if d.is_rate() {
            freq::update(&w[0], &w[1], l.period(d), now, u32::try_from(n).unwrap_or(u32::MAX));
        } else if is_32bit(d) {
            // 32-bit counters wrap as HAProxy's unsigned ints do
            let _ = w[0].fetch_update(Relaxed, Relaxed, |v| Some(u64::from((v as u32).wrapping_add(n as u32))));
        } else {
            w[0].fetch_add(n, Relaxed);
        }
        true
    }

    /// Takes one from `d` unless it is zero (`conn_cur` when a stream stops tracking).
    pub fn dec(&self, l: &Layout, d: DataType) {
        if let Some(w) = self.words(l, d) {
            let _ = w[0].fetch_update(Relaxed, Relaxed, |v| v.checked_sub(1));
        }
    }

    /// Sets `d` (a rate restarts with `v` events in a period starting now).
    pub fn set(&self, l: &Layout, d: DataType, v: u64, now: u32) -> bool {
        let Some(w) = self.words(l, d) else { return false };
        if d.is_rate() {
            w[0].store((u64::from(now) << 32) | (v & 0xffff_ffff), Relaxed);
            w[1].store(0, Relaxed);
        } else {
            w[0].store(if is_32bit(d) { v & 0xffff_ffff } else { v }, Relaxed);
        }
        true
    }

    /// Appends ` name=value` for every stored type (` name(period)=value` for rates), as
    /// `show table` prints an entry's data.
    pub fn render(&self, l: &Layout, now: u32, out: &mut String) {
        for d in l.stored() {
            let v = self.get(l, d, now).unwrap_or(0);
            let _ = if d.is_rate() {
                write!(out, " {}({})={v}", d.name(), l.period(d))
            } else if d == DataType::ServerId {
                write!(out, " {}={}", d.name(), v as u32 as i32)
            } else {
                write!(out, " {}={v}", d.name())
            };
        }
    }
}

/// The types HAProxy keeps in 32 bits (the byte counters are 64-bit).
fn is_32bit(d: DataType) -> bool {
    !matches!(d, DataType::BytesInCnt | DataType::BytesOutCnt)
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
            store: store.iter().map(|&(data, p)| StoreSpec { data, period: p.map(Duration::from_millis) }).collect(),
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
}
