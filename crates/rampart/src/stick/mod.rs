//! Stick tables: per-key records (client addresses, cookies, ...) with counters,
//! rates and the server a key sticks to; what `track-sc`, the `sc_*`/`src_*` fetches,
//! `stick` rules and the `show table` family read and write.
//! HAProxy counterpart: src/stick_table.c, include/haproxy/freq_ctr.h.
//!
//! - `freq`: rates over a sliding window (current period + weighted previous one)
//! - `key`: table keys from samples or CLI words, and how they print
//! - `data`: an entry's row of counters, laid out per table
//! - `dict`: the strings `server_key` stores, numbered
//! - `table`: [`StickTable`]: sharded, bounded, expiring, least recently used first
//! - `track`: [`Trackers`], the entries a stream tracks and the events it counts
//! - `dump`: the runtime API's rendering (`show table`)
//! - `sync`: what a table replicated by the peers keeps (local update numbers)
//!
//! No proxies, no messages: the rules language (`sample`, `action`) and the stream
//! use it; the runtime model holds one table per proxy that declares one.

pub mod data;
pub mod dict;
pub mod dump;
pub mod freq;
pub mod key;
pub mod sync;
pub mod table;
pub mod track;

pub use key::Key;
pub use table::StickTable;
pub use track::{Tracked, Trackers};

use std::sync::OnceLock;
use std::time::Instant;

/// The millisecond clock of tables (HAProxy's `now_ms`): wraps every 49 days, starts
/// half way so that a fresh rate (tick 0) reads as long past.
pub fn now_ms() -> u32 {
    static BASE: OnceLock<Instant> = OnceLock::new();
    let base = *BASE.get_or_init(Instant::now);
    (base.elapsed().as_millis() as u32).wrapping_add(0x8000_0000)
}
