//! The dynamic table (RFC 7541 §2.3.2, §4): a FIFO of fields, newest first, whose size
//! is the sum of each entry's name, value and 32 bytes of overhead, kept at or under a
//! maximum size by evicting the oldest entries.
//!
//! HAProxy counterpart: `struct hpack_dht` (include/haproxy/hpack-tbl-t.h) and
//! src/hpack-tbl.c, which keep the entries' bytes in one area and defragment it when
//! needed. Same idea here: names and values are appended to one byte buffer, evicting
//! only moves its start, and the live bytes move back to the front when the buffer
//! would grow past twice the maximum size. So the buffer stops growing at
//! 2 × max size and a steady stream of inserts allocates nothing.

use std::collections::VecDeque;

/// Bytes an entry counts beyond its name and value (§4.1).
pub const ENTRY_OVERHEAD: usize = 32;

/// Size of a field in the table's accounting.
pub fn entry_size(name: &[u8], value: &[u8]) -> usize {
    name.len() + value.len() + ENTRY_OVERHEAD
}

/// Where an entry's name and value lie in [`DynTable::bytes`].
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Offset of the name; the value follows it.
    off: usize,
    name_len: usize,
    value_len: usize,
}

impl Entry {
    fn size(&self) -> usize {
        self.name_len + self.value_len + ENTRY_OVERHEAD
    }
}

/// An HPACK dynamic table, shared by the encoder and the decoder sides.
#[derive(Debug, Clone)]
pub(crate) struct DynTable {
    /// Entries' bytes, oldest first from `start`; bytes before `start` are evicted.
    bytes: Vec<u8>,
    /// Offset in `bytes` of the oldest live entry.
    start: usize,
    /// Entries, oldest at the front, newest (dynamic index 1) at the back.
    entries: VecDeque<Entry>,
    /// Sum of the entries' sizes; never above `max_size`.
    size: usize,
    /// Current maximum size, as last set by a size update (or agreed initially).
    max_size: usize,
}

impl DynTable {
    /// An empty table of this maximum size.
    pub fn new(max_size: usize) -> DynTable {
        DynTable { bytes: Vec::new(), start: 0, entries: VecDeque::new(), size: 0, max_size }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Current size (§4.1).
    pub fn size(&self) -> usize {
        self.size
    }

    /// Current maximum size.
    pub fn max_size(&self) -> usize {
        self.max_size
    }

    /// The entry at a 0-based position from the newest (dynamic index 1 is position 0).
    pub fn get(&self, pos: usize) -> Option<(&[u8], &[u8])> {
        let i = self.entries.len().checked_sub(pos + 1)?;
        let e = self.entries[i];
        let name_end = e.off + e.name_len;
        Some((&self.bytes[e.off..name_end], &self.bytes[name_end..name_end + e.value_len]))
    }

    /// Changes the maximum size, evicting entries until the table fits (§4.3).
    pub fn set_max_size(&mut self, max_size: usize) {
        self.max_size = max_size;
        self.evict_to(max_size);
    }

    /// Adds a field as the newest entry after evicting what it needs (§4.4). A field
    /// larger than the maximum size empties the table and is not added.
    pub fn insert(&mut self, name: &[u8], value: &[u8]) {
        let size = entry_size(name, value);
        if size > self.max_size {
            self.evict_to(0);
            return;
        }
        self.evict_to(self.max_size - size);
        let n = name.len() + value.len();
        if self.bytes.len() + n > 2 * self.max_size {
            self.compact();
        }
        let off = self.bytes.len();
        self.bytes.extend_from_slice(name);
        self.bytes.extend_from_slice(value);
        self.entries.push_back(Entry { off, name_len: name.len(), value_len: value.len() });
        self.size += size;
    }

    /// Position (from the newest) of an entry with this name and value, else of the
    /// newest entry with this name; the flag says whether the value matched.
    ///
    /// PERF: a linear scan; a table of 4096 bytes holds at most 128 entries.
    pub fn find(&self, name: &[u8], value: &[u8]) -> Option<(usize, bool)> {
        let mut by_name = None;
        // PERF: the lengths are compared before the bytes
        for (pos, e) in self.entries.iter().rev().enumerate() {
            if e.name_len != name.len() || &self.bytes[e.off..e.off + e.name_len] != name {
                continue;
            }
            let v = e.off + e.name_len;
            if e.value_len == value.len() && &self.bytes[v..v + e.value_len] == value {
                return Some((pos, true));
            }
            by_name.get_or_insert((pos, false));
        }
        by_name
    }

    /// Evicts the oldest entries until the size is at most `target`.
    fn evict_to(&mut self, target: usize) {
        while self.size > target {
            let Some(e) = self.entries.pop_front() else { break };
            self.size -= e.size();
        }
        match self.entries.front() {
            Some(e) => self.start = e.off,
            None => {
                self.bytes.clear();
                self.start = 0;
            }
        }
    }

    /// Moves the live bytes to the front of the buffer.
    fn compact(&mut self) {
        self.bytes.drain(..self.start);
        for e in self.entries.iter_mut() {
            e.off -= self.start;
        }
        self.start = 0;
    }
}
