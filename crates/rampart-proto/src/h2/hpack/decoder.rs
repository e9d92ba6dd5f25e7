//! The HPACK decoder (RFC 7541 §3, §6): one per connection and direction, it turns
//! each field block into fields handed to a callback, keeping the dynamic table in
//! step with the peer's encoder.
//!
//! HAProxy counterpart: `hpack_decode_frame()` (src/hpack-dec.c). Like it, a block is
//! decoded whole (the mux reassembles HEADERS and CONTINUATION first). Unlike it, the
//! fields are not copied into a list: each name and value is handed over as a slice
//! of the block, of the static or dynamic table, or of a scratch buffer holding a
//! Huffman-decoded string, and the callback copies what it keeps.
//!
//! Bounds on the work a peer can cause:
//! - the decoded list is bounded by [`Decoder::set_max_list_size`] (our
//!   SETTINGS_MAX_HEADER_LIST_SIZE): past it no field is handed over, however many
//!   times a block refers to a large table entry (an "HPACK bomb"), and the block ends
//!   with [`HpackError::ListTooLarge`];
//! - memory: the table holds at most the size we advertised, and the scratch buffers
//!   the longest Huffman string seen (8/5 of its coded length at most).

use super::primitive::{decode_int, decode_string, Cursor};
use super::static_table::{self, STATIC_LEN};
use super::table::{entry_size, DynTable};
use super::{Flags, HpackError};

/// An HPACK decoding context.
#[derive(Debug, Clone)]
pub struct Decoder {
    /// The dynamic table, sized by the peer's encoder through size updates.
    table: DynTable,
    /// The SETTINGS_HEADER_TABLE_SIZE in force: no size update may pass it.
    limit: usize,
    /// The limit went below the table's size: the next block must start with a size
    /// update (RFC 9113 §4.3.1).
    need_update: bool,
    /// Largest decoded field list (names, values, 32 bytes per field).
    max_list_size: usize,
    /// Huffman-decoded names and values, reused from block to block.
    name_buf: Vec<u8>,
    value_buf: Vec<u8>,
}

/// Progress through one block.
struct Block {
    /// Size of the field list so far.
    list_size: usize,
    /// The limit is passed: fields are no longer handed over.
    too_large: bool,
    /// A field representation was seen: size updates are no longer allowed.
    fields_seen: bool,
}

impl Decoder {
    /// A decoder whose table size and limit start at `max_table_size`: the initial
    /// SETTINGS_HEADER_TABLE_SIZE, 4096 on an HTTP/2 connection. The field list is not
    /// limited until [`Decoder::set_max_list_size`].
    pub fn new(max_table_size: usize) -> Decoder {
        Decoder {
            table: DynTable::new(max_table_size),
            limit: max_table_size,
            need_update: false,
            max_list_size: usize::MAX,
            name_buf: Vec::new(),
            value_buf: Vec::new(),
        }
    }

    /// A new SETTINGS_HEADER_TABLE_SIZE of ours, once the peer acknowledged it. Going
    /// below the current maximum obliges the peer's encoder to open its next block
    /// with a size update (RFC 9113 §4.3.1); its absence is then
    /// [`HpackError::MissingSizeUpdate`].
    pub fn set_max_table_size(&mut self, n: usize) {
        self.limit = n;
        if n < self.table.max_size() {
            self.need_update = true;
        }
    }

    /// Our SETTINGS_MAX_HEADER_LIST_SIZE, or a lower limit for the blocks to come.
    pub fn set_max_list_size(&mut self, n: usize) {
        self.max_list_size = n;
    }

    /// The dynamic table's current size (§4.1).
    pub fn table_size(&self) -> usize {
        self.table.size()
    }

    /// The dynamic table's current maximum size, as the last size update set it.
    pub fn table_max_size(&self) -> usize {
        self.table.max_size()
    }

    /// Number of entries in the dynamic table.
    pub fn table_len(&self) -> usize {
        self.table.len()
    }

    /// Decodes a whole field block, calling `emit(name, value, flags)` for each field
    /// in order.
    ///
    /// Errors: an [`HpackError`] other than `ListTooLarge` is a COMPRESSION_ERROR, the
    /// contexts are out of step and the connection must close. `ListTooLarge` comes
    /// once the block is fully decoded, the table up to date: the mux may refuse just
    /// the stream (fields already handed over are a truncated list, to be dropped). An
    /// error returned by `emit` stops decoding at once, leaving the table as it is
    /// then: unless the connection closes, have `emit` note the problem and return
    /// `Ok(())`.
    pub fn decode<E, F>(&mut self, block: &[u8], mut emit: F) -> Result<(), E>
    where
        E: From<HpackError>,
        F: FnMut(&[u8], &[u8], Flags) -> Result<(), E>,
    {
        if self.need_update && !block.first().is_some_and(|&b| is_size_update(b)) {
            return Err(HpackError::MissingSizeUpdate.into());
        }
        let mut cur = Cursor::new(block);
        let mut st = Block { list_size: 0, too_large: false, fields_seen: false };
        while let Some(b) = cur.peek() {
            if is_size_update(b) {
                self.size_update(&mut cur, &st)?;
                continue;
            }
            st.fields_seen = true;
            match b {
                0x80.. => self.indexed(&mut cur, &mut st, &mut emit)?,
                0x40.. => self.literal_indexed(&mut cur, &mut st, &mut emit)?,
                0x10.. => self.literal(&mut cur, Flags::NEVER_INDEXED, &mut st, &mut emit)?,
                _ => self.literal(&mut cur, Flags::NONE, &mut st, &mut emit)?,
            }
        }
        if st.too_large {
            return Err(HpackError::ListTooLarge.into());
        }
        Ok(())
    }

    /// §6.3: a new maximum size, only before the first field, at most the limit.
    fn size_update(&mut self, cur: &mut Cursor<'_>, st: &Block) -> Result<(), HpackError> {
        if st.fields_seen {
            return Err(HpackError::LateSizeUpdate);
        }
        let size = decode_int(cur, 5)?;
        if size > self.limit {
            return Err(HpackError::SizeUpdateTooLarge);
        }
        self.table.set_max_size(size);
        self.need_update = false;
        Ok(())
    }

    /// §6.1: a whole field from the tables.
    fn indexed<E, F>(&mut self, cur: &mut Cursor<'_>, st: &mut Block, emit: &mut F) -> Result<(), E>
    where
        E: From<HpackError>,
        F: FnMut(&[u8], &[u8], Flags) -> Result<(), E>,
    {
        let index = decode_int(cur, 7)?;
        let (name, value) = lookup(&self.table, index)?;
        st.field(name, value, Flags::NONE, self.max_list_size, emit)
    }

    /// §6.2.1: a literal field added to the table. A name taken from the dynamic table
    /// is copied first, as the insertion may evict its entry.
    fn literal_indexed<E, F>(&mut self, cur: &mut Cursor<'_>, st: &mut Block, emit: &mut F) -> Result<(), E>
    where
        E: From<HpackError>,
        F: FnMut(&[u8], &[u8], Flags) -> Result<(), E>,
    {
        let index = decode_int(cur, 6)?;
        let Decoder { table, name_buf, value_buf, max_list_size, .. } = self;
        let name: &[u8] = match index {
            0 => decode_string(cur, name_buf)?,
            1..=STATIC_LEN => static_table::get(index).ok_or(HpackError::BadIndex)?.0,
            _ => {
                let name = lookup(table, index)?.0;
                name_buf.clear();
                name_buf.extend_from_slice(name);
                &name_buf[..]
            }
        };
        let value = decode_string(cur, value_buf)?;
        st.field(name, value, Flags::NONE, *max_list_size, emit)?;
        table.insert(name, value);
        Ok(())
    }

    /// §6.2.2 and §6.2.3 (`flags` says which): a literal field the table does not keep.
    fn literal<E, F>(&mut self, cur: &mut Cursor<'_>, flags: Flags, st: &mut Block, emit: &mut F) -> Result<(), E>
    where
        E: From<HpackError>,
        F: FnMut(&[u8], &[u8], Flags) -> Result<(), E>,
    {
        let index = decode_int(cur, 4)?;
        let Decoder { table, name_buf, value_buf, max_list_size, .. } = self;
        let name = match index {
            0 => decode_string(cur, name_buf)?,
            _ => lookup(table, index)?.0,
        };
        let value = decode_string(cur, value_buf)?;
        st.field(name, value, flags, *max_list_size, emit)
    }
}

impl Block {
    /// Counts a field and hands it over unless the list is already too large.
    fn field<E, F>(&mut self, name: &[u8], value: &[u8], flags: Flags, max: usize, emit: &mut F) -> Result<(), E>
    where
        F: FnMut(&[u8], &[u8], Flags) -> Result<(), E>,
    {
        self.list_size = self.list_size.saturating_add(entry_size(name, value));
        if self.list_size > max {
            self.too_large = true;
        }
        if self.too_large {
            return Ok(());
        }
        emit(name, value, flags)
    }
}

/// Whether a representation's first byte is a dynamic table size update (`001xxxxx`).
fn is_size_update(b: u8) -> bool {
    b & 0xe0 == 0x20
}

/// The field at an index of the combined address space (§2.3.3): the static table,
/// then the dynamic table, newest first. Index 0 and indexes past both are errors.
fn lookup(table: &DynTable, index: usize) -> Result<(&[u8], &[u8]), HpackError> {
    let found = match index {
        1..=STATIC_LEN => static_table::get(index),
        _ => index.checked_sub(STATIC_LEN + 1).and_then(|pos| table.get(pos)),
    };
    found.ok_or(HpackError::BadIndex)
}
