//! NOTIFY fragmentation (SPOE.txt §3.2.2 "Frame fragmentation"): a NOTIFY payload too
//! large for one frame goes out as a NOTIFY frame without the FIN flag, then
//! continuation frames of type UNSET with the same stream-id and frame-id, the last one
//! with FIN. Where the payload is cut is HAProxy 2.6's: each frame carries at most the
//! max-frame-size less 32 bytes of payload (`FRAME_HDR_SIZE`), only string and binary
//! values are split (their type and length go whole, with at least one byte of the
//! value), any other item (a message name and its argument count, an argument name, a
//! number, an address) starts the next frame when it does not fit.
//! HAProxy counterpart: `spoe_encode_messages()`, `spoe_encode_message()`,
//! `spoe_encode_data()` / `spoe_encode_frag_buffer()` (include/haproxy/spoe.h),
//! `spoe_prepare_hafrag_frame()` (src/flt_spoe.c).

use super::data::{Reader, T_BIN, T_STR};
use super::{begin_frame, end_frame, Error, FrameType, FLAG_FIN};

/// The bytes HAProxy keeps for the frame header out of each frame's max-frame-size.
pub const FRAME_HDR_SIZE: u32 = 32;

/// One encoded item of a NOTIFY payload, as the cutting sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    /// Never split: its size, and the room it asks for (HAProxy asks two bytes for
    /// a message name's length and one for the argument count, whatever they take).
    Whole { len: usize, need: usize },
    /// A string or binary value: its type and length (`head` bytes), then `body`
    /// bytes that may spread over frames.
    Split { head: usize, body: usize },
}

/// The items of an encoded NOTIFY payload, in order.
fn items(payload: &[u8]) -> Result<Vec<Item>, Error> {
    let mut r = Reader::new(payload);
    let mut out = Vec::new();
    let at = |r: &Reader<'_>| payload.len() - r.rest().len();
    while !r.is_empty() {
        let start = at(&r);
        let name = r.bytes()?;
        let nargs = r.byte()?;
        out.push(Item::Whole { len: at(&r) - start, need: name.len() + 3 });
        for _ in 0..nargs {
            let start = at(&r);
            r.bytes()?;
            let len = at(&r) - start;
            out.push(Item::Whole { len, need: len });
            let start = at(&r);
            let ty = payload.get(start).copied().ok_or(Error::Truncated)? & 0x0f;
            let d = r.data()?;
            let len = at(&r) - start;
            let body = match d {
                super::Data::Str(b) | super::Data::Bin(b) if (ty == T_STR || ty == T_BIN) && !b.is_empty() => b.len(),
                _ => 0,
            };
            out.push(match body {
                0 => Item::Whole { len, need: len },
                body => Item::Split { head: len - body, body },
            });
        }
    }
    Ok(out)
}

/// The payload sizes of the frames `payload` goes out in, `room` bytes of payload each
/// at most: one size when it needs no fragmentation. `Err(TooBig)` when an item does not
/// fit even in an empty frame.
pub fn cuts(payload: &[u8], room: usize) -> Result<Vec<usize>, Error> {
    // every item fits when the whole payload leaves a byte to spare (an item asks for
    // one byte more than its size at most)
    if payload.len() < room {
        return Ok(vec![payload.len()]);
    }
    let mut frames = Vec::new();
    let mut used = 0;
    for item in items(payload)? {
        match item {
            Item::Whole { len, need } => {
                if room - used < need.max(len) {
                    if used == 0 || need.max(len) > room {
                        return Err(Error::TooBig);
                    }
                    frames.push(used);
                    used = 0;
                }
                used += len;
            }
            Item::Split { head, body } => {
                // the type, the length and one byte of the value at least
                if room - used < head + 1 {
                    if used == 0 || head + 1 > room {
                        return Err(Error::TooBig);
                    }
                    frames.push(used);
                    used = 0;
                }
                let first = body.min(room - used - head);
                used += head + first;
                let mut left = body - first;
                while left > 0 {
                    frames.push(used);
                    used = left.min(room);
                    left -= used;
                }
            }
        }
    }
    frames.push(used);
    Ok(frames)
}

/// The payload room of a frame of at most `max` bytes.
pub fn room(max: u32) -> usize {
    max.saturating_sub(FRAME_HDR_SIZE) as usize
}

/// Appends the frames of the NOTIFY `payload` with `stream_id` and `frame_id`, cut as
/// [`cuts`] says for frames of `max` bytes. Returns how many frames.
pub fn write_notify(
    out: &mut Vec<u8>,
    payload: &[u8],
    ids: (u64, u64),
    max: u32,
    sizes: &[usize],
) -> Result<usize, Error> {
    let mut off = 0;
    for (i, &n) in sizes.iter().enumerate() {
        let ty = if i == 0 { FrameType::Notify } else { FrameType::Unset };
        let flags = if i + 1 == sizes.len() { FLAG_FIN } else { 0 };
        let at = begin_frame(out, ty, flags, ids.0, ids.1);
        out.extend_from_slice(payload.get(off..off + n).ok_or(Error::Truncated)?);
        end_frame(out, at, max)?;
        off += n;
    }
    Ok(sizes.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spoe::data::Data;
    use crate::spoe::{next_frame, NotifyWriter, MAX_FRAME_SIZE};

    /// A NOTIFY payload: message `m` with `s` (a string of `n` bytes) then `i` (an int).
    fn payload(n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let big = vec![b'x'; n];
        let mut w = NotifyWriter::new(&mut out, 0, 0);
        w.message("m");
        w.arg(b"s", &Data::Str(&big));
        w.arg(b"i", &Data::Int64(300));
        w.finish(u32::MAX).unwrap();
        out.split_off(11)
    }

    #[test]
    fn a_payload_that_fits_is_one_frame() {
        let p = payload(10);
        assert_eq!(cuts(&p, 224).unwrap(), [p.len()]);
    }

    #[test]
    fn strings_split_and_other_items_move_whole() {
        // header "m" + nargs: 3 bytes; "s": 2; STR type + 2-byte length: 3; then the
        // value; "i": 2; INT64 300: 3
        let p = payload(500);
        assert_eq!(p.len(), 3 + 2 + 3 + 500 + 2 + 3);
        // 224 - 8 = 216 value bytes in the first frame, 224 in the second, 60 in the
        // third with "i" and its value
        assert_eq!(cuts(&p, 224).unwrap(), [224, 224, 60 + 5]);
        // a value that ends the frame exactly (217 bytes: a 1-byte length): "i"
        // starts the next one
        let p = payload(217);
        assert_eq!(cuts(&p, 224).unwrap(), [224, 5]);
        // no room for the type, the length and a byte of the value: the string starts
        // the next frame
        let mut p = vec![1, b'a', 0];
        p.extend(payload(100));
        let sizes = cuts(&p, 3 + 3 + 2 + 2).unwrap();
        assert_eq!(sizes[0], 3 + 3 + 2, "{sizes:?}");
        assert_eq!(sizes.iter().sum::<usize>(), p.len());
    }

    #[test]
    fn a_message_name_asks_for_two_length_bytes() {
        // "m" + nargs is 3 bytes but HAProxy asks 4 (2 + 1 + 1) of room
        let mut p = vec![1, b'a', 0];
        p.extend([1, b'b', 0]);
        assert_eq!(cuts(&p, 6).unwrap(), [3, 3]);
        assert_eq!(cuts(&p, 7).unwrap(), [6]);
    }

    #[test]
    fn an_item_bigger_than_a_frame_is_too_big() {
        let mut p = vec![10];
        p.extend_from_slice(b"0123456789");
        p.push(0);
        assert_eq!(cuts(&p, 12), Err(Error::TooBig));
    }

    #[test]
    fn fragments_are_notify_then_unset_frames_with_fin_last() {
        let p = payload(500);
        let sizes = cuts(&p, room(256)).unwrap();
        let mut out = Vec::new();
        assert_eq!(write_notify(&mut out, &p, (7, 2), 256, &sizes).unwrap(), 3);
        let mut rest = &out[..];
        let mut got = Vec::new();
        let mut joined = Vec::new();
        while let Some((f, n)) = next_frame(rest, MAX_FRAME_SIZE).unwrap() {
            got.push((f.ty, f.is_fin(), f.stream_id, f.frame_id));
            joined.extend_from_slice(f.payload);
            rest = &rest[n..];
        }
        assert_eq!(
            got,
            [(FrameType::Notify, false, 7, 2), (FrameType::Unset, false, 7, 2), (FrameType::Unset, true, 7, 2)]
        );
        assert_eq!(joined, p);
    }
}
