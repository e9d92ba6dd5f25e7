//! Tracked counters: the entries a stream tracks (`track-sc0..2`), and the events
//! counted in them while it runs (connection at the start of tracking, HTTP requests,
//! HTTP errors, bytes) until it ends.
//! HAProxy counterpart: `struct stkctr` and the `stream_*_counters()` helpers
//! (include/haproxy/stream.h, src/stream.c).

use std::sync::Arc;

use rampart_cfg::model::DataType as D;

use super::data::Row;
use super::key::Key;
use super::table::StickTable;

/// Counter slots (`tune.stick-counters`: 3 in HAProxy 2.6, `track-sc0..2`).
pub const SLOTS: usize = 3;

/// One tracked entry: its table and its data row.
#[derive(Debug, Clone)]
pub struct Tracked {
    pub table: Arc<StickTable>,
    pub row: Row,
    /// Its key (`sc_*(<n>,<other table>)` looks it up in another table).
    pub key: Key,
}

impl Tracked {
    /// Adds `n` to `d` of the entry (a rate: `n` events now).
    #[inline]
    pub fn add(&self, d: D, n: u64) -> bool {
        self.row.add(&self.table.layout, d, n, super::now_ms())
    }

    /// Adds `n` to each of `ds` that the table stores, reading the clock once (and not
    /// at all when it stores none of them).
    /// PERF: the request path counts three to five types per event; most tables store
    /// one or two.
    #[inline]
    pub fn add_all(&self, ds: &[D], n: u64) {
        let l = &self.table.layout;
        let mut now = None;
        for c in ds.iter().filter_map(|&d| l.cell(d, 0)) {
            let t = *now.get_or_insert_with(super::now_ms);
            self.row.add_cell(c, n, t);
        }
    }

    /// The value of `d` now, when the table stores it.
    pub fn get(&self, d: D) -> Option<u64> {
        self.row.get(&self.table.layout, d, super::now_ms())
    }
}

/// The counters a stream tracks, by slot.
#[derive(Debug, Default)]
pub struct Trackers {
    pub slots: [Option<Tracked>; SLOTS],
}

impl Trackers {
    /// The entry slot `n` tracks.
    #[inline]
    pub fn get(&self, n: usize) -> Option<&Tracked> {
        self.slots.get(n)?.as_ref()
    }

    /// Whether no slot tracks anything (the request path then skips counting).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.slots.iter().all(Option::is_none)
    }

    /// Starts tracking `row` of `table` in slot `n`, unless the slot already tracks an
    /// entry; counts the stream as a connection of the entry (`conn_cur`, `conn_cnt`,
    /// `conn_rate`), and, `http` being set, its request (`http_req_cnt`,
    /// `http_req_rate`), which was parsed before the rule ran.
    pub fn track(&mut self, n: usize, table: &Arc<StickTable>, key: Key, row: Row, http: bool) {
        let Some(slot) = self.slots.get_mut(n) else { return };
        if slot.is_some() {
            return;
        }
        let t = Tracked { table: table.clone(), row, key };
        if http {
            t.add_all(&[D::ConnCur, D::ConnCnt, D::ConnRate, D::HttpReqCnt, D::HttpReqRate], 1);
        } else {
            t.add_all(&[D::ConnCur, D::ConnCnt, D::ConnRate], 1);
        }
        *slot = Some(t);
    }

    /// The entry of each slot: this stream's, else the session's `sess` (HAProxy counts a
    /// stream's events in the session's entries for the slots it does not track).
    pub fn each<'t>(&'t self, sess: Option<&'t Trackers>) -> impl Iterator<Item = &'t Tracked> {
        (0..SLOTS).filter_map(move |n| self.get(n).or_else(|| sess?.get(n)))
    }

    /// Counts an HTTP request in the session's entries of the slots the stream does not
    /// track (each request of a connection tracked by `tcp-request connection|session`).
    pub fn http_req(&self, sess: &Trackers) {
        for t in (0..SLOTS).filter(|&n| self.get(n).is_none()).filter_map(|n| sess.get(n)) {
            t.add_all(&[D::HttpReqCnt, D::HttpReqRate], 1);
        }
    }

    /// Counts a new session (`sess_cnt`, `sess_rate`) in every tracked entry (a
    /// connection the `tcp-request connection|session` rules let through).
    pub fn session(&self) {
        for t in self.slots.iter().flatten() {
            t.add_all(&[D::SessCnt, D::SessRate], 1);
        }
    }

    /// Counts an HTTP error (a 4xx response) in the stream's entries, else the session's.
    pub fn http_err(&self, sess: Option<&Trackers>) {
        for t in self.each(sess) {
            t.add_all(&[D::HttpErrCnt, D::HttpErrRate], 1);
        }
    }

    /// Counts an HTTP failure (a 5xx response but 501 and 505), likewise.
    pub fn http_fail(&self, sess: Option<&Trackers>) {
        for t in self.each(sess) {
            t.add_all(&[D::HttpFailCnt, D::HttpFailRate], 1);
        }
    }

    /// Counts the bytes the stream received from the client (`bytes_in`) and sent to
    /// it (`bytes_out`), in the stream's entries, else the session's.
    /// COMPAT: the bytes on the wire; HAProxy counts its internal message (heads without
    /// their separators, `Connection` headers it adds or consumes), a few bytes apart
    /// per message.
    pub fn bytes(&self, sess: Option<&Trackers>, bytes_in: u64, bytes_out: u64) {
        for t in self.each(sess) {
            t.add_all(&[D::BytesInCnt, D::BytesInRate], bytes_in);
            t.add_all(&[D::BytesOutCnt, D::BytesOutRate], bytes_out);
        }
    }

    /// Stops tracking: the stream's connection leaves each entry (`conn_cur`), and the
    /// peers learn what it counted (a branch for tables that are not replicated).
    pub fn release(&mut self) {
        for t in self.slots.iter_mut().filter_map(Option::take) {
            t.row.dec(&t.table.layout, D::ConnCur);
            t.table.touch_local(&t.key);
        }
    }
}

impl Drop for Trackers {
    fn drop(&mut self) {
        self.release();
    }
}
