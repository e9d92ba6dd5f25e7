//! What an HTTP/2 server connection's driver task and its streams share: the frames
//! waiting to be written, the HPACK encoder, the server's settings, both directions'
//! flow-control windows, and one slot per open stream (the header blocks and DATA
//! received for it, its windows, who waits for what). The client role's counterpart of
//! `mux::h2::shared`.
//!
//! The driver and the streams run on the same thread (the worker's runtime), each in
//! its own task: the state is borrowed and released within one poll, never across a
//! wait. A stream that queued frames wakes the driver ([`Shared::kick`]); the driver
//! wakes a stream when what it waits for arrives.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::task::Waker;

use atomic_refcell::AtomicRefCell;
use rampart_proto::h2::frame::{encode_data, encode_headers, encode_rst_stream, encode_window_update};
use rampart_proto::h2::hpack::{Encoder, Flags};
use rampart_proto::h2::{ErrorCode, Settings};

use crate::tls::TlsInfo;

/// A server connection's shared state.
pub type ConnRef = Arc<AtomicRefCell<Shared>>;

/// Frames are queued until this many bytes wait to be written; then streams wait.
pub const OUT_BUDGET: usize = 64 * 1024;
/// The window each stream announces (a streamed response is not throttled by round
/// trips).
pub const STREAM_WINDOW: u32 = 256 * 1024;
/// The connection's receive window.
pub const CONN_WINDOW: u32 = 1024 * 1024;
/// Streams a connection carries at once until the server's SETTINGS say how many
/// (RFC 9113 §6.5.2 leaves it unlimited; HAProxy assumes 100 too).
const DEFAULT_MAX_STREAMS: u32 = 100;
/// The last stream id a client may open.
const MAX_STREAM_ID: u32 = (1 << 31) - 1;

/// A header block received on a stream, decoded: a response head (interim or final)
/// or its trailers.
#[derive(Debug, Default)]
pub struct Block {
    /// The fields' names and values, one after the other.
    pub bytes: Vec<u8>,
    /// Where each field's name and value end in `bytes`.
    pub ends: Vec<(usize, usize)>,
    /// END_STREAM came with it.
    pub end: bool,
}

impl Block {
    pub fn push(&mut self, name: &[u8], value: &[u8]) {
        self.bytes.extend_from_slice(name);
        let n = self.bytes.len();
        self.bytes.extend_from_slice(value);
        self.ends.push((n, self.bytes.len()));
    }

    /// The fields, in order.
    pub fn fields(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        let mut start = 0;
        self.ends.iter().map(move |&(n, v)| {
            let f = (&self.bytes[start..n], &self.bytes[n..v]);
            start = v;
            f
        })
    }
}

/// One open stream.
#[derive(Debug, Default)]
pub struct Slot {
    /// Header blocks received and not taken yet.
    pub blocks: VecDeque<Block>,
    /// DATA received and not taken yet.
    pub inbox: Vec<u8>,
    /// The server ended its side (END_STREAM).
    pub remote_end: bool,
    /// Reset by the server (RST_STREAM, a GOAWAY above it) or by us, with the code.
    pub reset: Option<ErrorCode>,
    /// What the server may still send on this stream.
    pub recv_window: i64,
    /// DATA bytes taken that the server was not told of yet.
    unacked: u32,
    /// What we may still send as DATA on this stream.
    pub send_window: i64,
    /// We sent END_STREAM (or RST_STREAM).
    pub local_end: bool,
    pub recv_waker: Option<Waker>,
    pub send_waker: Option<Waker>,
}

/// What the driver and the streams of one server connection share.
#[derive(Debug)]
pub struct Shared {
    /// Frames to write, in order.
    pub out: Vec<u8>,
    out_waiters: Vec<Waker>,
    encoder: Encoder,
    block: Vec<u8>,
    /// The server's settings.
    pub peer: Settings,
    /// What we may still send as DATA on the connection.
    pub send_window: i64,
    conn_unacked: u32,
    pub streams: HashMap<u32, Slot>,
    next_id: u32,
    /// Streams that took a place on the connection (opened or about to open).
    pub taken: u32,
    /// Streams the connection carried so far.
    pub served: u64,
    /// `max-reuse` plus one: the most streams it may carry (`None`: no limit).
    pub max_served: Option<u64>,
    /// No new stream goes on it (GOAWAY sent or received, ids exhausted).
    pub closing: bool,
    /// The connection is gone: every stream on it fails.
    pub dead: bool,
    /// The server's first SETTINGS arrived (what it offers is known: RFC 8441's
    /// extended CONNECT).
    pub settings_seen: bool,
    /// The driver's waker, to write what the streams queue.
    driver: Option<Waker>,
    /// What the TLS handshake negotiated, for the streams' `ssl_bc*`.
    pub tls: Option<Arc<TlsInfo>>,
}

impl Shared {
    pub fn new(tls: Option<Arc<TlsInfo>>) -> Shared {
        Shared {
            out: Vec::with_capacity(16 * 1024),
            out_waiters: Vec::new(),
            encoder: Encoder::new(),
            block: Vec::new(),
            peer: Settings::default(),
            send_window: i64::from(rampart_proto::h2::DEFAULT_INITIAL_WINDOW_SIZE),
            conn_unacked: 0,
            streams: HashMap::new(),
            next_id: 1,
            taken: 0,
            served: 0,
            max_served: None,
            closing: false,
            dead: false,
            settings_seen: false,
            driver: None,
            tls,
        }
    }

    /// Whether one more stream may take a place on the connection.
    pub fn has_capacity(&self) -> bool {
        let max = self.peer.max_concurrent_streams.unwrap_or(DEFAULT_MAX_STREAMS);
        let ids_left = u64::from(MAX_STREAM_ID - self.next_id.min(MAX_STREAM_ID)) / 2;
        !self.closing && !self.dead && !self.used_up() && self.taken < max && u64::from(self.taken) < ids_left
    }

    /// Whether the connection carried as many streams as `max-reuse` allows.
    pub fn used_up(&self) -> bool {
        self.max_served.is_some_and(|m| self.served >= m)
    }

    /// Takes a place for a stream (see [`Shared::has_capacity`]).
    pub fn take_place(&mut self) {
        self.taken += 1;
        self.served += 1;
    }

    /// Opens the next stream: its id.
    pub fn open(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id += 2;
        let slot = Slot {
            recv_window: i64::from(STREAM_WINDOW),
            send_window: i64::from(self.peer.initial_window_size),
            ..Slot::default()
        };
        self.streams.insert(id, slot);
        id
    }

    /// The highest stream id opened so far (0: none).
    pub fn last_opened(&self) -> u32 {
        self.next_id.saturating_sub(2)
    }

    /// A stream gives its place back (`id`: the stream it opened, if it did): a stream
    /// that did not end both ways is reset (CANCEL).
    pub fn release(&mut self, id: Option<u32>) {
        self.taken = self.taken.saturating_sub(1);
        if let Some(id) = id {
            self.reset(id, ErrorCode::Cancel);
            self.streams.remove(&id);
        }
        self.kick();
    }

    /// Wakes the driver to write what was queued (or to notice a stream left).
    pub fn kick(&mut self) {
        if let Some(w) = self.driver.take() {
            w.wake();
        }
    }

    /// The driver waits: `waker` is woken by [`Shared::kick`].
    pub fn set_driver(&mut self, waker: &Waker) {
        if !self.driver.as_ref().is_some_and(|w| w.will_wake(waker)) {
            self.driver = Some(waker.clone());
        }
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

    /// Whether the server's settings are known (or the connection is gone); else
    /// `waker` is called once they are.
    pub fn settings_known(&mut self, waker: &Waker) -> bool {
        if self.settings_seen || self.dead {
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

    /// Queues a header block on stream `id` with the fields of `block`.
    pub fn send_headers(&mut self, id: u32, block: &Block, end: bool) {
        let fields = block.fields().map(|(n, v)| (n, v, Flags::NONE));
        self.block.clear();
        self.encoder.encode(fields, &mut self.block);
        encode_headers(&mut self.out, id, &self.block, end, self.peer.max_frame_size);
        if end {
            self.end_local(id);
        }
        self.kick();
    }

    /// The server's SETTINGS_HEADER_TABLE_SIZE changed.
    pub fn set_encoder_table(&mut self, n: u32) {
        self.encoder.set_peer_table_size(n);
    }

    /// Queues as much of `data` as the windows and the frame size let go on stream
    /// `id`; returns how many bytes. `end`: these are the last bytes (an empty `data`
    /// sends an empty frame ending the stream).
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
        self.kick();
        n
    }

    /// Whether stream `id` may send DATA now; else its waker waits for a window.
    pub fn can_send(&mut self, id: u32, waker: &Waker) -> bool {
        let conn_open = self.send_window > 0;
        let Some(slot) = self.streams.get_mut(&id) else { return true };
        if slot.reset.is_some() || (conn_open && slot.send_window > 0) {
            return true;
        }
        slot.send_waker = Some(waker.clone());
        false
    }

    fn end_local(&mut self, id: u32) {
        if let Some(slot) = self.streams.get_mut(&id) {
            slot.local_end = true;
        }
    }

    /// Resets stream `id` from our side, unless it ended both ways or was reset.
    pub fn reset(&mut self, id: u32, code: ErrorCode) {
        let Some(slot) = self.streams.get_mut(&id) else { return };
        if (slot.local_end && slot.remote_end) || slot.reset.is_some() {
            return;
        }
        slot.local_end = true;
        slot.reset = Some(code);
        encode_rst_stream(&mut self.out, id, code);
        self.kick();
    }

    /// `n` DATA bytes of stream `id` (or, with `id` 0, of the connection only) were
    /// consumed: credited back to the server once a quarter of a window is.
    pub fn consumed(&mut self, id: u32, n: u32) {
        self.conn_unacked += n;
        if self.conn_unacked >= CONN_WINDOW / 4 {
            encode_window_update(&mut self.out, 0, self.conn_unacked);
            self.conn_unacked = 0;
            self.kick();
        }
        let Some(slot) = self.streams.get_mut(&id) else { return };
        slot.unacked += n;
        if slot.unacked >= STREAM_WINDOW / 4 && !slot.remote_end && slot.reset.is_none() {
            slot.recv_window += i64::from(slot.unacked);
            encode_window_update(&mut self.out, id, slot.unacked);
            slot.unacked = 0;
            self.kick();
        }
    }

    /// Wakes whoever waits on stream `id`.
    pub fn wake(&mut self, id: u32) {
        if let Some(slot) = self.streams.get_mut(&id) {
            wake_slot(slot);
        }
    }

    /// Wakes every stream (the connection ends, a window opened for all).
    pub fn wake_all(&mut self) {
        self.streams.values_mut().for_each(wake_slot);
        self.out_waiters.drain(..).for_each(Waker::wake);
    }
}

fn wake_slot(slot: &mut Slot) {
    if let Some(w) = slot.recv_waker.take() {
        w.wake();
    }
    if let Some(w) = slot.send_waker.take() {
        w.wake();
    }
}
