//! The HPACK encoder (RFC 7541 §6): one per connection and direction, it writes field
//! lists as field blocks into the caller's buffer.
//!
//! HAProxy counterpart: src/hpack-enc.c, which uses the static table only. rampart
//! also indexes fields in a dynamic table, with a simple policy:
//! - a field equal to an entry of the static or dynamic table is sent as its index;
//! - a field marked never-indexed (`Flags::never_indexed`, §7.1.3: credentials,
//!   cookies with little entropy, or a field that came never-indexed and so must stay
//!   so, §6.2.3) is a never-indexed literal;
//! - a field whose value is rarely repeated ([`NOT_INDEXED`]: `:path`, lengths, dates
//!   of validators...) or that would take more than 3/4 of the table is a literal
//!   without indexing;
//! - any other field is a literal with incremental indexing.
//!
//! Names refer to a table entry when one has them. Strings are Huffman-coded unless
//! that is longer. The table never exceeds the peer's SETTINGS_HEADER_TABLE_SIZE nor our
//! own cap; changes of either are signalled by size updates at the start of the next
//! block (§4.2, §6.3). Names must already be lowercase (RFC 9113 §8.2).

use super::primitive::{encode_int, encode_string};
use super::static_table::{self, STATIC_LEN};
use super::table::{entry_size, DynTable};
use super::Flags;
use crate::h2::settings::DEFAULT_HEADER_TABLE_SIZE;

/// Fields whose values change from one message to the next: indexing them would only
/// push useful entries out.
pub const NOT_INDEXED: [&[u8]; 11] = [
    b":path",
    b"content-length",
    b"content-range",
    b"etag",
    b"last-modified",
    b"if-modified-since",
    b"if-none-match",
    b"if-range",
    b"age",
    b"expires",
    b"range",
];

/// An HPACK encoding context.
#[derive(Debug, Clone)]
pub struct Encoder {
    /// The dynamic table, as the peer's decoder sees it once our updates are read.
    table: DynTable,
    /// The largest table we are willing to keep, whatever the peer allows.
    cap: usize,
    /// Size updates owed at the start of the next block.
    pending: Option<SizeUpdates>,
    /// Whether strings may be Huffman-coded.
    huffman: bool,
}

/// The size updates to send: the smallest maximum since the last block, then the
/// final one when it differs (§4.2).
#[derive(Debug, Clone, Copy)]
struct SizeUpdates {
    min: usize,
    last: usize,
}

impl Default for Encoder {
    fn default() -> Encoder {
        Encoder::new()
    }
}

impl Encoder {
    /// An encoder using up to the initial SETTINGS_HEADER_TABLE_SIZE (4096 bytes).
    pub fn new() -> Encoder {
        Encoder::with_table_cap(DEFAULT_HEADER_TABLE_SIZE as usize)
    }

    /// An encoder whose table never passes `cap` bytes; 0 keeps no dynamic table at
    /// all. Below 4096, the first block tells the peer with a size update.
    pub fn with_table_cap(cap: usize) -> Encoder {
        let initial = DEFAULT_HEADER_TABLE_SIZE as usize;
        let mut enc = Encoder { table: DynTable::new(initial), cap, pending: None, huffman: true };
        enc.resize(initial.min(cap));
        enc
    }

    /// An encoder whose peer already uses a table of `size` bytes (as in the examples
    /// of RFC 7541 Appendix C.5): no size update is sent for it.
    #[cfg(test)]
    pub(crate) fn with_agreed_table_size(size: usize) -> Encoder {
        Encoder { table: DynTable::new(size), cap: size, pending: None, huffman: true }
    }

    /// The peer's SETTINGS_HEADER_TABLE_SIZE changed (from its SETTINGS frame): the
    /// table follows it, within our cap.
    pub fn set_peer_table_size(&mut self, n: u32) {
        self.resize((n as usize).min(self.cap));
    }

    /// Allows or forbids Huffman coding (allowed by default).
    pub fn set_huffman(&mut self, on: bool) {
        self.huffman = on;
    }

    /// The dynamic table's current size (§4.1).
    pub fn table_size(&self) -> usize {
        self.table.size()
    }

    /// Number of entries in the dynamic table.
    pub fn table_len(&self) -> usize {
        self.table.len()
    }

    /// Appends the field block of a field list to `out`: first the size updates owed,
    /// then one representation per field, in order.
    pub fn encode<'f, I>(&mut self, fields: I, out: &mut Vec<u8>)
    where
        I: IntoIterator<Item = (&'f [u8], &'f [u8], Flags)>,
    {
        self.write_size_updates(out);
        for (name, value, flags) in fields {
            self.encode_field(name, value, flags, out);
        }
    }

    /// Sets the table's maximum size now, and owes the peer a size update for it.
    fn resize(&mut self, size: usize) {
        if size == self.table.max_size() && self.pending.is_none() {
            return;
        }
        self.table.set_max_size(size);
        let min = self.pending.map_or(size, |p| p.min.min(size));
        self.pending = Some(SizeUpdates { min, last: size });
    }

    fn write_size_updates(&mut self, out: &mut Vec<u8>) {
        let Some(p) = self.pending.take() else { return };
        if p.min < p.last {
            encode_int(out, p.min, 5, 0x20);
        }
        encode_int(out, p.last, 5, 0x20);
    }

    /// One field, with the policy of the module documentation.
    fn encode_field(&mut self, name: &[u8], value: &[u8], flags: Flags, out: &mut Vec<u8>) {
        let stat = static_table::find(name, value);
        if let (false, Some((index, true))) = (flags.never_indexed, stat) {
            // PERF: the dynamic table is not searched for a field the static one has
            encode_int(out, index, 7, 0x80);
            return;
        }
        let dynamic = self.table.find(name, value);
        if let (false, Some((pos, true))) = (flags.never_indexed, dynamic) {
            encode_int(out, STATIC_LEN + 1 + pos, 7, 0x80);
            return;
        }
        let name_index = stat.map(|(i, _)| i).or_else(|| dynamic.map(|(pos, _)| STATIC_LEN + 1 + pos)).unwrap_or(0);
        let index_it = !flags.never_indexed && self.should_index(name, value);
        match (flags.never_indexed, index_it) {
            (true, _) => encode_int(out, name_index, 4, 0x10),
            (false, true) => encode_int(out, name_index, 6, 0x40),
            (false, false) => encode_int(out, name_index, 4, 0x00),
        }
        if name_index == 0 {
            encode_string(out, name, self.huffman);
        }
        encode_string(out, value, self.huffman);
        if index_it {
            self.table.insert(name, value);
        }
    }

    /// Whether a literal field is worth a table entry.
    fn should_index(&self, name: &[u8], value: &[u8]) -> bool {
        entry_size(name, value) <= self.table.max_size() / 4 * 3 && !NOT_INDEXED.contains(&name)
    }
}
