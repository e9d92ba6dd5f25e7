//! HPACK, the field compression of HTTP/2 (RFC 7541): a [`Decoder`] for the blocks a
//! peer sends, an [`Encoder`] for ours.
//!
//! HAProxy counterpart: src/hpack-dec.c, src/hpack-enc.c, src/hpack-tbl.c and
//! src/hpack-huff.c. The mux owns one decoder and one encoder per connection, feeds
//! the decoder each reassembled field block (HEADERS or PUSH_PROMISE plus
//! CONTINUATION frames) and frames the encoder's output with
//! [`crate::h2::frame::encode_headers`]. Field validation (lowercase names,
//! pseudo-headers, connection-specific fields, RFC 9113 §8.2) is the mux's, on the
//! fields the decoder hands over.
//!
//! - `primitive`: integers with an N-bit prefix, string literals (§5)
//! - `huffman`: the Huffman code of Appendix B, table-driven decoding (§5.2)
//! - `static_table`: the 61 entries of Appendix A
//! - `table`: the dynamic table, its size accounting and eviction (§4)
//! - `decoder`: [`Decoder`], field blocks to fields, bounded by the list size
//! - `encoder`: [`Encoder`], fields to field blocks, with size updates

mod decoder;
mod encoder;
pub mod huffman;
mod primitive;
mod static_table;
mod table;
#[cfg(test)]
mod tests;

use std::fmt;

pub use decoder::Decoder;
pub use encoder::{Encoder, NOT_INDEXED};
pub use primitive::{encode_int, encode_string};
pub use static_table::{STATIC_LEN, STATIC_TABLE};
pub use table::{entry_size, ENTRY_OVERHEAD};

/// What comes with a field besides its name and value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flags {
    /// The field was (decoding) or is to be (encoding) a never-indexed literal
    /// (§6.2.3): no table may keep it, and an intermediary re-encodes it the same way.
    pub never_indexed: bool,
}

impl Flags {
    /// An ordinary field.
    pub const NONE: Flags = Flags { never_indexed: false };
    /// A sensitive field, never to enter a compression table.
    pub const NEVER_INDEXED: Flags = Flags { never_indexed: true };
}

/// Why a field block could not be decoded. Every variant but [`HpackError::ListTooLarge`]
/// is a COMPRESSION_ERROR (RFC 9113 §4.3): the decoding context is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HpackError {
    /// The block ends inside a representation.
    Truncated,
    /// An integer longer than 5 continuation bytes or above 2^32-1.
    IntegerOverflow,
    /// Index 0, or an index past the static and dynamic tables (§2.3.3).
    BadIndex,
    /// A Huffman string containing EOS, or padded with more than 7 bits or not with
    /// ones (§5.2).
    Huffman,
    /// A dynamic table size update above our SETTINGS_HEADER_TABLE_SIZE (§6.3).
    SizeUpdateTooLarge,
    /// A dynamic table size update after the first field of a block (§4.2).
    LateSizeUpdate,
    /// We lowered SETTINGS_HEADER_TABLE_SIZE and the block did not start with a size
    /// update (RFC 9113 §4.3.1).
    MissingSizeUpdate,
    /// The decoded list passed the maximum list size. The block was still decoded to
    /// its end and the table is up to date: the mux may refuse the stream only.
    ListTooLarge,
}

impl HpackError {
    /// Whether the decoding context is lost (every error but `ListTooLarge`).
    pub fn is_compression_error(self) -> bool {
        self != HpackError::ListTooLarge
    }
}

impl fmt::Display for HpackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HpackError::Truncated => "truncated header block",
            HpackError::IntegerOverflow => "integer overflow in header block",
            HpackError::BadIndex => "invalid table index in header block",
            HpackError::Huffman => "invalid Huffman string in header block",
            HpackError::SizeUpdateTooLarge => "dynamic table size update above the advertised limit",
            HpackError::LateSizeUpdate => "dynamic table size update after a field",
            HpackError::MissingSizeUpdate => "header block lacks the required dynamic table size update",
            HpackError::ListTooLarge => "header list larger than the maximum list size",
        })
    }
}

impl std::error::Error for HpackError {}
