//! What an HTTP/2 connection and its streams share: the frames waiting to be written,
//! the HPACK encoder, the peer's settings, both directions' flow-control windows, and
//! one slot per open stream (its received DATA, its windows, who waits for what).
//!
//! Every stream of a connection runs in the connection's task (`conn`), so the state is
//! borrowed, changed and released within one poll, never across a wait: an
//! `AtomicRefCell` whose borrows never overlap, with the wakers of whoever waits. A
//! stream asks (`take_data`, `send_data` ...), and when it cannot go on it leaves its
//! waker in its slot; the connection wakes it when DATA, window or room arrives.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;
use std::task::Waker;

use atomic_refcell::AtomicRefCell;
use rampart_proto::h2::frame::{encode_data, encode_headers, encode_rst_stream, encode_window_update};
use rampart_proto::h2::{ErrorCode, Settings};

use rampart_proto::h2::hpack::{Encoder, Flags};

use crate::buf::Spares;
use crate::sample::vars::VarSnapshot;

/// The state of one connection, shared by its streams.
pub type SharedRef = Arc<AtomicRefCell<Shared>>;

/// Frames are queued until this many bytes wait to be written; then streams wait.
pub const OUT_BUDGET: usize = 64 * 1024;

/// Hands a message's fields, in order, to the function it is given (name, value).
pub type FieldSource<'a> = dyn FnMut(&mut dyn FnMut(&[u8], &[u8])) + 'a;

/// What the connection's task and its streams share.
#[derive(Debug)]
pub struct Shared {
    /// Frames to write, in order.
    pub out: Vec<u8>,
    /// Wakers of streams waiting for `out` to drain below [`OUT_BUDGET`].
    out_waiters: Vec<Waker>,
    pub encoder: FieldEncoder,
    /// The peer's settings (frame size and initial window for what we send).
    pub peer: Settings,
    /// What we may still send as DATA on the connection.
    pub send_window: i64,
    /// The window we announced for each new stream (SETTINGS_INITIAL_WINDOW_SIZE).
    pub stream_window: u32,
    /// DATA bytes the streams consumed that the peer was not told of yet (the
    /// connection's WINDOW_UPDATE, sent once half the window is consumed).
    conn_unacked: u32,
    /// The connection window we keep topping up to.
    pub conn_window: u32,
    /// The connection window was opened past 65535 (after the first SETTINGS ACK).
    pub window_opened: bool,
    /// Streams that consumed DATA not credited back yet ([`Shared::queue_window_updates`]).
    wu_pending: Vec<u32>,
    pub streams: HashMap<u32, Slot, BuildHasherDefault<IdHasher>>,
    /// A request of this connection went to a server already (`http-reuse safe`).
    pub sent_before: bool,
    /// The connection is ending (GOAWAY sent or received, or an error): streams stop.
    pub closing: bool,
    /// A stream asked for the connection to vanish (`silent-drop`).
    pub silent_drop: bool,
    /// Client socket options a stream's rules asked for (`set-mark`, `set-tos`), for
    /// the connection's task to set.
    pub fc: Option<crate::action::sockopt::FcPending>,
    /// The connection's `sess.` variables. Each stream works on a copy taken when it
    /// starts, written back when it ends.
    pub sess_vars: Option<VarSnapshot>,
    /// RST_STREAM frames queued since the connection's task last looked, and those
    /// of them for an error (`h2_rst_stream_resp`, `h2_detected_strm_protocol_errors`).
    pub rst_sent: (u64, u64),
}

/// The hash of a stream id in the slot map. PERF: SipHash cost a hundred instructions a
/// lookup, a dozen lookups per stream; one multiplication suffices, since the map holds
/// at most `tune.h2.max-concurrent-streams` ids, which a client cannot make collide into
/// long chains.
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u32(u32::from(b) ^ (self.0 as u32));
        }
    }

    fn write_u32(&mut self, n: u32) {
        // the high half folded into the low one: the map picks buckets with the low
        // bits, which the multiplication alone leaves odd for odd ids
        let x = u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = x ^ (x >> 29);
    }
}

/// The largest request head buffer kept for the next streams (a larger one was for an
/// unusual head, and memory is not kept for it).
const SPARE_HEAD_MAX: usize = 4096;

thread_local! {
    /// The buffers of ended streams' request heads (PERF: a stream's head is decoded
    /// without allocating and growing a buffer). Per thread, as the pools of `buf`: an
    /// idle connection holds none.
    static HEAD_BUFS: std::cell::RefCell<Spares<Vec<u8>>> = const { std::cell::RefCell::new(Spares::new()) };
}

/// An empty buffer for a request head: an ended stream's, or a new one.
pub fn take_head() -> Vec<u8> {
    HEAD_BUFS.with(|p| p.borrow_mut().take()).unwrap_or_else(|| Vec::with_capacity(1024))
}

/// A stream ended: its request head's buffer is kept for a next stream (as
/// [`Spares`] says, and within [`SPARE_HEAD_MAX`]).
pub fn keep_head(mut buf: Vec<u8>) {
    // `try_with`: during thread teardown the pool may already be gone
    if buf.capacity() > SPARE_HEAD_MAX {
        return;
    }
    buf.clear();
    let _ = HEAD_BUFS.try_with(|p| p.borrow_mut().give(buf));
}

/// Trims this thread's spare request head buffers ([`Spares::trim`]).
pub fn trim_spares() {
    let _ = HEAD_BUFS.try_with(|p| p.borrow_mut().trim());
}

/// One open stream.
#[derive(Debug, Default)]
pub struct Slot {
    /// DATA received and not taken by the stream yet.
    pub inbox: Vec<u8>,
    /// The peer ended its side (END_STREAM); what is in `inbox` is the last of it.
    pub remote_end: bool,
    /// Reset (by the peer's RST_STREAM, or by the connection), with the code.
    pub reset: Option<ErrorCode>,
    /// What the peer may still send on this stream.
    pub recv_window: i64,
    /// DATA bytes taken by the stream that the peer was not told of yet.
    unacked: u32,
    /// What we may still send as DATA on this stream.
    pub send_window: i64,
    /// We sent END_STREAM (or RST_STREAM): nothing more goes out.
    pub local_end: bool,
    /// Our response's header block went out (a client reset before it is a glitch).
    pub responded: bool,
    /// The body bytes the request's `content-length` still announces (RFC 9113
    /// §8.1.1: DATA must add up to it), `None` without one.
    pub expect: Option<u64>,
    /// The peer reset the stream: any frame but PRIORITY on it is now a
    /// STREAM_CLOSED error (RFC 9113 §5.1), where frames after our own reset are
    /// ignored (they may have been in flight).
    pub peer_reset: bool,
    /// Who waits for DATA (or the end, or a reset).
    pub recv_waker: Option<Waker>,
    /// Who waits for window to send.
    pub send_waker: Option<Waker>,
    /// Who watches for a reset (the client cancelling while the server is silent).
    pub reset_waker: Option<Waker>,
}

impl Slot {
    /// Wakes whoever waits on the slot.
    fn wake(&mut self) {
        for w in [self.recv_waker.take(), self.send_waker.take(), self.reset_waker.take()].into_iter().flatten() {
            w.wake();
        }
    }
}

impl Shared {
    /// A connection that announced `stream_window` per stream and `conn_window` for
    /// itself.
    pub fn new(stream_window: u32, conn_window: u32) -> Shared {
        Shared {
            out: Vec::with_capacity(16 * 1024),
            out_waiters: Vec::new(),
            encoder: FieldEncoder::default(),
            peer: Settings::default(),
            send_window: i64::from(rampart_proto::h2::DEFAULT_INITIAL_WINDOW_SIZE),
            stream_window,
            conn_unacked: 0,
            conn_window,
            window_opened: false,
            wu_pending: Vec::new(),
            streams: HashMap::default(),
            sent_before: false,
            closing: false,
            silent_drop: false,
            fc: None,
            sess_vars: None,
            rst_sent: (0, 0),
        }
    }

    /// Opens stream `id`.
    pub fn open(&mut self, id: u32) {
        let slot = Slot {
            recv_window: i64::from(self.stream_window),
            send_window: i64::from(self.peer.initial_window_size),
            ..Slot::default()
        };
        self.streams.insert(id, slot);
    }

    /// Whether frames may be queued now; else `waker` is called once they drained.
    pub fn has_room(&mut self, waker: &Waker) -> bool {
        if self.out.len() < OUT_BUDGET {
            return true;
        }
        if !self.out_waiters.iter().any(|w| w.will_wake(waker)) {
            self.out_waiters.push(waker.clone());
        }
        false
    }

    /// Part of `out` was written: wakes the streams waiting for room.
    pub fn drained(&mut self) {
        if self.out.len() < OUT_BUDGET {
            self.out_waiters.drain(..).for_each(Waker::wake);
        }
    }

    /// Queues a header block (HEADERS and CONTINUATION frames) on stream `id`: the
    /// fields `fields` hands to its argument, in order.
    pub fn send_headers(&mut self, id: u32, fields: &mut FieldSource<'_>, end: bool) {
        let block = self.encoder.encode(fields);
        encode_headers(&mut self.out, id, block, end, self.peer.max_frame_size);
        if let Some(slot) = self.streams.get_mut(&id) {
            slot.responded = true;
            slot.local_end |= end;
        }
    }

    /// Queues as much of `data` as the windows and the frame size let go on stream
    /// `id`; returns how many bytes. `end`: these are the last bytes (END_STREAM goes
    /// with the frame carrying the last of them; an empty `data` sends an empty frame).
    pub fn send_data(&mut self, id: u32, data: &[u8], end: bool) -> usize {
        let Some(slot) = self.streams.get_mut(&id) else { return 0 };
        let room = slot.send_window.min(self.send_window).max(0) as usize;
        let n = data.len().min(room).min(self.peer.max_frame_size as usize);
        if n == 0 && !(data.is_empty() && end) {
            return 0;
        }
        slot.send_window -= n as i64;
        self.send_window -= n as i64;
        let last = end && n == data.len();
        encode_data(&mut self.out, id, &data[..n], last);
        if last {
            self.end_local(id);
        }
        n
    }

    /// Whether stream `id` may send DATA now; else its waker waits for a
    /// WINDOW_UPDATE.
    pub fn can_send(&mut self, id: u32, waker: &Waker) -> bool {
        let conn_open = self.send_window > 0;
        let Some(slot) = self.streams.get_mut(&id) else { return true };
        if slot.reset.is_some() || (conn_open && slot.send_window > 0) {
            return true;
        }
        slot.send_waker = Some(waker.clone());
        false
    }

    /// The stream sent its last frame.
    fn end_local(&mut self, id: u32) {
        if let Some(slot) = self.streams.get_mut(&id) {
            slot.local_end = true;
        }
    }

    /// Resets stream `id` from our side (RST_STREAM), unless it ended or was reset
    /// already.
    pub fn reset(&mut self, id: u32, code: ErrorCode) {
        let Some(slot) = self.streams.get_mut(&id) else { return };
        if (slot.local_end && slot.remote_end) || slot.reset.is_some() {
            return;
        }
        slot.local_end = true;
        slot.reset.get_or_insert(code);
        self.rst(id, code);
        // the stream learns of it when polled: only woken streams are
        self.wake(id);
    }

    /// Answers a frame on a stream that has no slot (closed, or never opened) with
    /// RST_STREAM `code`.
    pub fn reset_closed(&mut self, id: u32, code: ErrorCode) {
        self.rst(id, code);
    }

    /// A frame came on stream `id` after it closed (`id` at most the last stream
    /// opened): answered with STREAM_CLOSED (then `true`: a glitch), unless we reset
    /// the stream ourselves and the frame may have crossed our RST_STREAM.
    pub fn after_close(&mut self, id: u32) -> bool {
        match self.streams.get(&id) {
            Some(slot) if slot.reset.is_some() && !slot.peer_reset => return false,
            // half-closed (remote): our side stops too
            Some(slot) if !slot.local_end => self.reset(id, ErrorCode::StreamClosed),
            _ => self.rst(id, ErrorCode::StreamClosed),
        }
        true
    }

    /// Queues RST_STREAM `code` on stream `id`, counted for the frontend's stats.
    fn rst(&mut self, id: u32, code: ErrorCode) {
        encode_rst_stream(&mut self.out, id, code);
        self.rst_sent.0 += 1;
        // HAProxy counts malformed requests, bodies and windows, not STREAM_CLOSED
        if matches!(code, ErrorCode::ProtocolError | ErrorCode::FlowControlError) {
            self.rst_sent.1 += 1;
        }
    }

    /// Takes what stream `id` received (appended to `into`): `Some(end)` when there was
    /// something to take or the stream ended (`end`: nothing more will come), `None`
    /// when the caller must wait (its waker is kept). The bytes taken are credited back
    /// to the peer (WINDOW_UPDATE once half a window is consumed).
    pub fn take_data(&mut self, id: u32, into: &mut Vec<u8>, waker: &Waker) -> Option<bool> {
        let Some(slot) = self.streams.get_mut(&id) else { return Some(true) };
        if slot.inbox.is_empty() && !slot.remote_end && slot.reset.is_none() {
            slot.recv_waker = Some(waker.clone());
            return None;
        }
        let n = slot.inbox.len();
        if into.is_empty() {
            // PERF: the bytes change hands without a copy (the two buffers alternate)
            std::mem::swap(into, &mut slot.inbox);
        } else {
            into.extend_from_slice(&slot.inbox);
            slot.inbox.clear();
        }
        let end = slot.remote_end || slot.reset.is_some();
        if n > 0 {
            self.consumed(id, n as u32);
        }
        Some(end)
    }

    /// `n` DATA bytes of stream `id` (or, with `id` 0, of the connection only: padding,
    /// a closed stream's) were consumed: credits them back to the peer in batches.
    pub fn consumed(&mut self, id: u32, n: u32) {
        self.conn_unacked += n;
        if self.conn_unacked >= self.conn_window / 2 {
            encode_window_update(&mut self.out, 0, self.conn_unacked);
            self.conn_unacked = 0;
        }
        let Some(slot) = self.streams.get_mut(&id) else { return };
        // credited even once the stream's request ended, as HAProxy (clients and
        // VTest scripts expect the WINDOW_UPDATE)
        if slot.unacked == 0 && n > 0 {
            self.wu_pending.push(id);
        }
        slot.unacked += n;
    }

    /// Credits back what each stream consumed since the last write (one WINDOW_UPDATE
    /// per stream and write, as HAProxy acknowledges what it took; the connection's
    /// own window is credited in half-window batches).
    pub fn queue_window_updates(&mut self) {
        for id in self.wu_pending.drain(..) {
            let Some(slot) = self.streams.get_mut(&id) else { continue };
            if slot.reset.is_some() || slot.unacked == 0 {
                continue;
            }
            slot.recv_window += i64::from(slot.unacked);
            encode_window_update(&mut self.out, id, slot.unacked);
            slot.unacked = 0;
        }
    }

    /// Wakes whoever waits on stream `id`'s slot.
    pub fn wake(&mut self, id: u32) {
        if let Some(slot) = self.streams.get_mut(&id) {
            slot.wake();
        }
    }

    /// Wakes every stream (the connection ends, a window opened for all).
    pub fn wake_all(&mut self) {
        for slot in self.streams.values_mut() {
            slot.wake();
        }
        self.out_waiters.drain(..).for_each(Waker::wake);
    }
}

/// The connection's HPACK encoder, fed by callbacks: the fields are gathered in one
/// buffer (kept from block to block), then encoded.
#[derive(Debug, Default)]
pub struct FieldEncoder {
    encoder: Encoder,
    /// The names and values of the block being built, one after the other.
    bytes: Vec<u8>,
    /// Where each field's name and value end in `bytes`.
    ends: Vec<(usize, usize)>,
    /// The encoded block.
    block: Vec<u8>,
}

impl FieldEncoder {
    /// The peer's SETTINGS_HEADER_TABLE_SIZE changed.
    pub fn set_max_table_size(&mut self, n: u32) {
        self.encoder.set_peer_table_size(n);
    }

    /// Encodes the fields `fields` hands over into a block.
    fn encode(&mut self, fields: &mut FieldSource<'_>) -> &[u8] {
        let (bytes, ends) = (&mut self.bytes, &mut self.ends);
        bytes.clear();
        ends.clear();
        fields(&mut |name, value| {
            bytes.extend_from_slice(name);
            let name_end = bytes.len();
            bytes.extend_from_slice(value);
            ends.push((name_end, bytes.len()));
        });
        self.block.clear();
        let mut start = 0;
        let bytes = &self.bytes;
        let list = self.ends.iter().map(|&(n, v)| {
            let field = (&bytes[start..n], &bytes[n..v], Flags::NONE);
            start = v;
            field
        });
        self.encoder.encode(list, &mut self.block);
        &self.block
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn stream_ids_spread_over_the_buckets() {
        // the low bits pick a bucket: consecutive client ids (odd) must not share them
        let build = BuildHasherDefault::<IdHasher>::default();
        let mut low: Vec<u64> = (0..64u32).map(|i| build.hash_one(2 * i + 1) & 63).collect();
        low.sort_unstable();
        low.dedup();
        assert!(low.len() >= 40, "only {} of 64 buckets used", low.len());
        // and the map works with it
        let mut s = Shared::new(65_535, 65_535);
        for id in (1..400).step_by(2) {
            s.open(id);
        }
        assert!((1..400).step_by(2).all(|id| s.streams.contains_key(&id)));
        assert!(!s.streams.contains_key(&2) && !s.streams.contains_key(&401));
    }

    #[test]
    fn ended_streams_leave_small_head_buffers_for_the_next_ones() {
        let spare = || HEAD_BUFS.with(|p| p.borrow().len());
        let mut used = Vec::with_capacity(2048);
        used.extend_from_slice(b"GET / HTTP/2.0");
        keep_head(used);
        keep_head(Vec::with_capacity(SPARE_HEAD_MAX + 1)); // too large: freed
        assert_eq!(spare(), 1);
        let again = take_head();
        assert!(again.is_empty() && again.capacity() >= 2048);
        assert_eq!(spare(), 0);
        assert!(take_head().capacity() >= 1024); // none left: a new one
                                                 // what no stream took again goes at the trims (`buf::Spares`)
        for _ in 0..2000 {
            keep_head(Vec::with_capacity(64));
        }
        assert_eq!(spare(), 2000);
        trim_spares();
        trim_spares();
        assert!(spare() < 2000, "{} kept", spare());
    }

    #[test]
    fn data_taken_into_an_empty_buffer_changes_hands_whole() {
        let mut s = Shared::new(65_535, 65_535);
        s.open(1);
        s.streams.get_mut(&1).unwrap().inbox.extend_from_slice(b"abc");
        let waker = std::task::Waker::noop();
        let mut into = Vec::new();
        assert_eq!(s.take_data(1, &mut into, waker), Some(false));
        assert_eq!(into, b"abc");
        // appended to what the caller holds
        s.streams.get_mut(&1).unwrap().inbox.extend_from_slice(b"de");
        assert_eq!(s.take_data(1, &mut into, waker), Some(false));
        assert_eq!(into, b"abcde");
        assert!(s.streams[&1].inbox.is_empty());
        // five bytes consumed: credited back with the next write
        s.queue_window_updates();
        assert_eq!(s.out, [0, 0, 4, 8, 0, 0, 0, 0, 1, 0, 0, 0, 5]);
    }
}
