//! The connection task of an HTTP/2 client connection: reads frames and acts on them
//! (settings, pings, windows, resets, header blocks that open streams, DATA filed in
//! the streams' slots), runs every stream of the connection (each one a rampart stream
//! through `stream::run`, polled by this task), and writes the frames they queue.
//! HAProxy counterpart: mux_h2.c (`h2_process_demux`, `h2_process_mux`, `h2_io_cb`).
//!
//! Within one poll the task lets its streams run, writes what they queued, then looks
//! for input; frames are handled between polls. A protocol error ends the connection
//! with GOAWAY and the RFC's code; a stream error resets the stream only.

use std::future::poll_fn;
use std::sync::Arc;
use std::task::{Context, Poll};

use atomic_refcell::AtomicRefCell;
use rampart_cfg::model::H2Tune;
use rampart_proto::h2::frame::{
    encode_goaway, encode_ping_ack, encode_settings, encode_settings_ack, encode_window_update, next_frame, Frame,
    PREFACE,
};
use rampart_proto::h2::{ErrorCode, H2Error};
use rampart_proto::h2::{Setting, SettingId, DEFAULT_HEADER_TABLE_SIZE, DEFAULT_INITIAL_WINDOW_SIZE};

use super::front::H2Front;
use super::glitch::{Glitches, SMALL_WINDOW_UPDATE};
use super::shared::{Shared, SharedRef};
use super::streams::Streams;
use crate::buf::Buf;
use crate::counters::stats::H2Stats;
use crate::debug::{self, Trace};
use crate::h2::msg::{response_fields, ReqFields, Tunnel};
use crate::http::{BodyLen, MsgView};
use crate::io::Sock;
use crate::sample::vars::VarStore;
use crate::session::types::Session;
use crate::stream::{self, Txn};
use crate::timer::Timer;
use rampart_proto::h2::hpack::{Decoder, HpackError};

/// The window each stream starts with: large enough that an upload is not throttled by
/// round trips (HAProxy's 65535 makes uploads several times slower than HTTP/1).
pub const STREAM_WINDOW: u32 = 256 * 1024;
/// The connection's window, topped up as the streams consume.
pub const CONN_WINDOW: u32 = 1024 * 1024;
/// The frames one header block may take (HEADERS and CONTINUATION): past this, a
/// CONTINUATION flood ends the connection (ENHANCE_YOUR_CALM) whatever the glitch
/// threshold (a 64 KiB block in 16 KiB frames takes 4).
const MAX_BLOCK_FRAMES: u32 = 512;
/// Input is not read while this many bytes wait to be written: a client that sends
/// PINGs or SETTINGS (whose answers queue) without reading them is held back by TCP
/// rather than by our memory.
const READ_PAUSE: usize = 2 * super::shared::OUT_BUDGET;
/// The largest frame we accept without `tune.h2.max-frame-size` (the default).
const MAX_FRAME: u32 = 16_384;
/// The most bytes a request's header block may take once decoded
/// (SETTINGS_MAX_HEADER_LIST_SIZE).
const MAX_HEADER_LIST: usize = 64 * 1024;

/// What woke the connection.
enum Event {
    /// Bytes to read.
    Input,
    /// The peer closed, or writing failed.
    Gone,
    /// No stream and nothing received for the keep-alive timeout.
    Idle,
    /// A soft stop began (a reload, SIGUSR1).
    Stop,
    /// After a soft stop, the last stream ended.
    Drained,
}

/// The reading side of the connection: what was read, and what the frames so far
/// left to know.
struct Reader {
    buf: Buf,
    /// The preface was read.
    preface: bool,
    demux: Demux,
}

/// What the frames read so far left to know.
struct Demux {
    decoder: Decoder,
    /// A header block spread over CONTINUATION frames.
    block: Option<Block>,
    /// The highest stream id the client opened.
    last_id: u32,
    /// Stream ids below `last_id` the client skipped (never opened), as ranges: a
    /// header block on one of them is a connection error (RFC 9113 §5.1.1), on a
    /// closed stream a stream error.
    skipped: std::collections::VecDeque<(u32, u32)>,
    /// Streams opened so far (the first one is the connection's first request).
    opened: u64,
    /// Frames handled so far, and those of them that were DATA filed in open
    /// streams' slots.
    frames: u64,
    filed: u64,
    /// GOAWAY was received, or sent on a soft stop: no new stream.
    goaway: bool,
    glitches: Glitches,
    /// The frontend's HTTP/2 counters.
    stats: Arc<H2Stats>,
    /// The client connection's descriptor (for the `-d` lines of its streams).
    cfd: i32,
}

/// A header block being received.
struct Block {
    id: u32,
    /// The stream ends with it (END_STREAM on its HEADERS).
    end_stream: bool,
    /// The fragments so far.
    bytes: Vec<u8>,
    /// Its frames so far (HEADERS, CONTINUATIONs).
    frames: u32,
}

/// Serves one HTTP/2 connection (`pre`: bytes already read from it) until it closes;
/// `sess_vars`: the `sess.` variables the connection rules set.
pub async fn serve<S: Sock>(client: S, mut sess: Session, pre: Option<Buf>, sess_vars: Option<Box<VarStore>>) {
    let glitch_count = Arc::new(std::sync::atomic::AtomicU32::new(0));
    sess.conn.set_glitches(glitch_count.clone());
    let rt = &sess.rt;
    let tune = &rt.h2;
    let h2_stats = rt.proxies[sess.fe].stats.fe_h2.clone();
    let _open = Open::new(&h2_stats.total_conns, &h2_stats.open_conns);
    let stream_window = tune.initial_window_size.unwrap_or(STREAM_WINDOW);
    let shared = Shared::new(stream_window, CONN_WINDOW.max(stream_window));
    let shared: SharedRef = Arc::new(AtomicRefCell::new(shared));
    shared.borrow_mut().sess_vars = sess_vars.map(|v| v.into_snapshot());
    queue_settings(&mut shared.borrow_mut(), tune, stream_window);
    let mut reader = Reader {
        buf: pre.unwrap_or_else(|| Buf::take(rt.bufsize)),
        preface: false,
        demux: Demux {
            decoder: decoder(tune.header_table_size),
            block: None,
            last_id: 0,
            skipped: Default::default(),
            opened: 0,
            frames: 0,
            filed: 0,
            goaway: false,
            glitches: Glitches::new(tune.fe_glitches_threshold, glitch_count),
            stats: h2_stats.clone(),
            cfd: client.as_raw_fd(),
        },
    };
    let mut streams = Streams::default();
    let sess = &sess;
    let sref = &shared;
    // `close-spread-time infinite`: a soft stop sends no GOAWAY
    let mut stop = if rt.global.stop_keeps_alive() { None } else { Timer::stop_only() };
    // the GOAWAY of a soft stop waits for a random moment of the `close-spread-time`
    // window, once
    let mut spread = true;
    // What the HTTP/1 side read before it saw the preface is decoded first: it may hold
    // the client's first requests too (written with the preface), and the socket may
    // have nothing more to say until they are answered.
    let mut pre_read = !reader.buf.is_empty();
    // ended by an error: the client may still be sending (a flood)
    let mut failed = false;
    loop {
        let keep_alive = rt.proxies[sess.fe].timeouts.http_keep_alive;
        let mut idle = streams.is_empty().then(|| Timer::new(keep_alive)).flatten();
        let draining = stop.is_none() && reader.demux.goaway;
        let event = if std::mem::take(&mut pre_read) {
            Event::Input
        } else {
            poll_fn(|cx| {
                let wake = Wake { idle: idle.as_mut(), stop: stop.as_mut(), draining };
                drive(cx, &client, sref, &mut streams, wake)
            })
            .await
        };
        match event {
            Event::Input => {
                if let Err(e) = read_frames(&client, sess, sref, &mut reader, &mut streams) {
                    goaway(sref, &reader.demux, e);
                    failed = e != ErrorCode::NoError;
                    break;
                }
            }
            Event::Gone | Event::Drained => break,
            Event::Idle => {
                goaway(sref, &reader.demux, ErrorCode::NoError);
                break;
            }
            Event::Stop => {
                stop = None;
                if std::mem::take(&mut spread) {
                    let delay = rt.global.stop_idle_delay().filter(|d| !d.is_zero());
                    if let Some(timer) = Timer::new(delay) {
                        stop = Some(timer);
                        continue;
                    }
                }
                soft_stop(sref, &mut reader.demux);
                if streams.is_empty() {
                    break;
                }
            }
        }
        let fc = {
            let mut sh = sref.borrow_mut();
            count_resets(&mut sh, &h2_stats);
            if sh.silent_drop {
                drop(sh);
                crate::io::silent_drop(&client);
                return;
            }
            sh.fc.take()
        };
        if let Some(fc) = fc {
            crate::io::set_fc(&client, fc.mark, fc.tos);
        }
    }
    // the streams end with the connection; what was queued (GOAWAY) goes out
    drop(streams);
    count_resets(&mut sref.borrow_mut(), &h2_stats);
    let out = std::mem::take(&mut sref.borrow_mut().out);
    let _ = crate::io::write_all(&client, &out, rt.proxies[sess.fe].timeouts.client).await;
    if failed {
        // a FIN after the GOAWAY, then what the client still sends is dropped for a
        // while: closing at once would turn the close into a reset that can destroy
        // the GOAWAY before the client reads it
        crate::io::linger_close(client, LINGER_AFTER_ERROR).await;
    } else {
        client.close_notify();
    }
}

/// How long a connection ended by an error keeps reading (and dropping) what the client
/// sends after our GOAWAY.
const LINGER_AFTER_ERROR: std::time::Duration = std::time::Duration::from_millis(500);

/// An open HTTP/2 connection or stream in its frontend's stats (`h2_open_connections`
/// and `h2_total_connections`; `h2_backend_open_streams` and `h2_backend_total_streams`,
/// until the stream ends or its connection does): counted in both on creation, out
/// of the open one when dropped.
struct Open<'a>(&'a std::sync::atomic::AtomicU64);

impl<'a> Open<'a> {
    fn new(total: &crate::counters::Counter, open: &'a std::sync::atomic::AtomicU64) -> Open<'a> {
        total.inc();
        open.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Open(open)
    }
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Adds the RST_STREAM frames the connection and its streams queued to the stats.
fn count_resets(s: &mut Shared, stats: &H2Stats) {
    let (sent, errors) = std::mem::take(&mut s.rst_sent);
    if sent > 0 {
        stats.rst_stream_resp.add(sent);
        stats.strm_proto_err.add(errors);
    }
}

/// The connection's HPACK decoder, within our settings (`tune.h2.header-table-size`).
fn decoder(table_size: u32) -> Decoder {
    let mut d = Decoder::new(table_size as usize);
    d.set_max_list_size(MAX_HEADER_LIST);
    d
}

/// What else than input wakes the connection.
struct Wake<'t> {
    /// The keep-alive timeout, while there is no stream.
    idle: Option<&'t mut Timer>,
    /// Expires when a soft stop begins (until it did).
    stop: Option<&'t mut Timer>,
    /// A soft stop began: the connection ends with its last stream.
    draining: bool,
}

/// One poll of the connection: its streams run, what they queued is written, then
/// input is looked for.
fn drive<S: Sock>(
    cx: &mut Context<'_>,
    client: &S,
    shared: &SharedRef,
    streams: &mut Streams<'_>,
    wake: Wake<'_>,
) -> Poll<Event> {
    streams.poll(cx);
    if flush(cx, client, shared).is_err() {
        return Poll::Ready(Event::Gone);
    }
    if wake.draining && streams.is_empty() {
        return Poll::Ready(Event::Drained);
    }
    if let Some(Poll::Ready(())) = wake.stop.map(|t| t.poll_expired(cx)) {
        return Poll::Ready(Event::Stop);
    }
    if shared.borrow().out.len() >= READ_PAUSE {
        // woken when the socket takes more (`flush`)
        return Poll::Pending;
    }
    if client.buffered_input() {
        return Poll::Ready(Event::Input);
    }
    match client.poll_read_ready(cx) {
        Poll::Ready(Ok(())) => return Poll::Ready(Event::Input),
        Poll::Ready(Err(_)) => return Poll::Ready(Event::Gone),
        Poll::Pending => {}
    }
    if let Some(Poll::Ready(())) = wake.idle.map(|t| t.poll_expired(cx)) {
        return Poll::Ready(Event::Idle);
    }
    Poll::Pending
}

/// Writes what the streams and the connection queued, as far as the socket takes it.
fn flush<S: Sock>(cx: &mut Context<'_>, client: &S, shared: &SharedRef) -> std::io::Result<()> {
    let mut s = shared.borrow_mut();
    s.queue_window_updates();
    while !s.out.is_empty() {
        match client.try_write(&s.out) {
            Ok(n) => {
                s.out.drain(..n);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => return Err(e),
        }
    }
    match client.try_flush() {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        Err(e) => return Err(e),
    }
    s.drained();
    if !s.out.is_empty() || client.try_flush().is_err() {
        // wake when the socket takes more
        match client.poll_write_ready(cx) {
            Poll::Ready(Err(e)) => return Err(e),
            Poll::Ready(Ok(())) => cx.waker().wake_by_ref(),
            Poll::Pending => {}
        }
    }
    Ok(())
}

/// Our SETTINGS (`tune.h2.*`; the table and frame sizes only when not the defaults).
fn queue_settings(s: &mut Shared, tune: &H2Tune, stream_window: u32) {
    let mut params = vec![
        Setting { id: SettingId::MaxConcurrentStreams, value: tune.max_concurrent_streams },
        Setting { id: SettingId::InitialWindowSize, value: stream_window },
        Setting { id: SettingId::MaxHeaderListSize, value: MAX_HEADER_LIST as u32 },
    ];
    // RFC 8441 §3: extended CONNECT (WebSocket over HTTP/2) is offered, as HAProxy
    // offers it unless `h2-workaround-bogus-websocket-clients`
    if !tune.no_websocket {
        params.push(Setting { id: SettingId::EnableConnectProtocol, value: 1 });
    }
    if tune.header_table_size != DEFAULT_HEADER_TABLE_SIZE {
        params.push(Setting { id: SettingId::HeaderTableSize, value: tune.header_table_size });
    }
    if let Some(size) = tune.max_frame_size {
        params.push(Setting { id: SettingId::MaxFrameSize, value: size });
    }
    encode_settings(&mut s.out, &params);
}

/// Acknowledges the peer's SETTINGS; after the first ones (the preface's), opens the
/// connection window past its initial 65535. Not before: some clients (VTest) take
/// the frame after our SETTINGS to be the acknowledgement of theirs, as HAProxy sends.
fn ack_settings(s: &mut Shared) {
    encode_settings_ack(&mut s.out);
    if !s.window_opened {
        s.window_opened = true;
        let increment = s.conn_window - DEFAULT_INITIAL_WINDOW_SIZE;
        encode_window_update(&mut s.out, 0, increment);
    }
}

/// Ends the connection with GOAWAY `code` (naming the last stream it will have served).
/// As HAProxy, an error other than ENHANCE_YOUR_CALM counts in `h2_goaway_resp` and
/// `h2_detected_conn_protocol_errors`.
fn goaway(shared: &SharedRef, reader: &Demux, code: ErrorCode) {
    if !matches!(code, ErrorCode::NoError | ErrorCode::EnhanceYourCalm) {
        reader.stats.goaway_resp.inc();
        reader.stats.conn_proto_err.inc();
    }
    let mut s = shared.borrow_mut();
    s.closing = true;
    encode_goaway(&mut s.out, reader.last_id, code, b"");
    s.wake_all();
}

/// A soft stop: GOAWAY NO_ERROR names the last stream served, the streams open go on,
/// no new one starts (the client sends it on a new connection, to the new process).
fn soft_stop(shared: &SharedRef, reader: &mut Demux) {
    reader.goaway = true;
    let mut s = shared.borrow_mut();
    encode_goaway(&mut s.out, reader.last_id, ErrorCode::NoError, b"");
    s.wake_all();
}

/// The reads one wake-up of the connection may take while the socket fills the buffer
/// each time (an upload's DATA), before the streams run: a stream then takes several
/// frames' data at once, forwards them in one write and credits them back in one
/// WINDOW_UPDATE, where one read per wake-up cost a server write, a WINDOW_UPDATE and a
/// wake-up of each side per 16 KiB frame (issue 21 §4).
const READS_PER_WAKE: usize = 8;

/// Reads what is there and handles every complete frame, again while the reads fill the
/// buffer (up to [`READS_PER_WAKE`] times). `Err`: a connection error.
fn read_frames<'s, S: Sock>(
    client: &S,
    sess: &'s Session,
    shared: &'s SharedRef,
    reader: &mut Reader,
    streams: &mut Streams<'s>,
) -> Result<(), ErrorCode> {
    for _ in 0..READS_PER_WAKE {
        let buf = reader.buf.vec();
        if buf.len() == buf.capacity() {
            buf.reserve(4096);
        }
        let spare = buf.capacity() - buf.len();
        let filled = match crate::io::try_read_some(client, buf) {
            Ok(0) => return Err(ErrorCode::NoError),
            Ok(n) => spare > 0 && n == spare,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
            Err(_) => return Err(ErrorCode::NoError),
        };
        let (frames, filed) = (reader.demux.frames, reader.demux.filed);
        handle_frames(sess, shared, reader, streams)?;
        // PERF: a buffer grown to 64 KiB while reads fill it took fewer reads but made
        // smaller batches (more server writes and wake-ups per upload): not kept.
        // Only DATA for open streams (or the start of a frame) makes another read:
        // other frames (a flood among them) are read as before, the streams running
        // between two reads
        let other = reader.demux.frames - frames != reader.demux.filed - filed;
        let s = shared.borrow();
        if !filled || other || s.out.len() >= READ_PAUSE || s.closing {
            break;
        }
    }
    Ok(())
}

/// Handles every complete frame read so far (the preface first).
fn handle_frames<'s>(
    sess: &'s Session,
    shared: &'s SharedRef,
    reader: &mut Reader,
    streams: &mut Streams<'s>,
) -> Result<(), ErrorCode> {
    if !reader.preface {
        if reader.buf.len() < PREFACE.len() {
            return if PREFACE.starts_with(&reader.buf) { Ok(()) } else { Err(ErrorCode::ProtocolError) };
        }
        if !reader.buf.starts_with(PREFACE) {
            let _ = reader.demux.glitches.report(1);
            return Err(ErrorCode::ProtocolError);
        }
        reader.buf.consume(PREFACE.len());
        reader.preface = true;
    }
    let mut used = 0;
    loop {
        let max_frame = sess.rt.h2.max_frame_size.unwrap_or(MAX_FRAME);
        let (frame, n) = match next_frame(&reader.buf[used..], max_frame) {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(H2Error::Connection(code)) => return Err(code),
            Err(H2Error::Stream(id, code)) => {
                // the frame's length is known: skip it once all of it is here (the
                // error is reported from its header alone)
                let len =
                    rampart_proto::h2::frame::FrameHeader::parse(&reader.buf[used..]).map_or(0, |h| h.frame_len());
                if reader.buf.len() - used < len {
                    break;
                }
                reset_any(&mut shared.borrow_mut(), id, code);
                reader.demux.glitches.report(1)?;
                reader.demux.frames += 1;
                used += len;
                continue;
            }
        };
        used += n;
        reader.demux.frames += 1;
        on_frame(frame, sess, shared, &mut reader.demux, streams)?;
    }
    reader.buf.consume(used);
    Ok(())
}

/// Acts on one frame.
fn on_frame<'s>(
    frame: Frame<'_>,
    sess: &'s Session,
    shared: &'s SharedRef,
    reader: &mut Demux,
    streams: &mut Streams<'s>,
) -> Result<(), ErrorCode> {
    if reader.block.is_some() && !matches!(frame, Frame::Continuation { .. }) {
        // RFC 9113 §6.10: nothing may come between a header block's frames
        return Err(ErrorCode::ProtocolError);
    }
    match frame {
        Frame::Settings { ack, params } => {
            // HAProxy counts the client's first SETTINGS twice (as the preface's, then
            // as a frame)
            let first = !ack && !shared.borrow().window_opened;
            reader.stats.settings_rcvd.add(1 + u64::from(first));
            if !ack {
                reader.glitches.overhead()?;
                let mut s = shared.borrow_mut();
                let before = s.peer.initial_window_size;
                s.peer.apply(params).map_err(|e| e.code())?;
                if s.window_opened && s.peer.initial_window_size < before {
                    // not the first SETTINGS: a late reduction is suspicious (HAProxy)
                    reader.glitches.report(1)?;
                }
                let delta = i64::from(s.peer.initial_window_size) - i64::from(before);
                for slot in s.streams.values_mut() {
                    slot.send_window += delta;
                }
                let table = s.peer.header_table_size;
                s.encoder.set_max_table_size(table);
                ack_settings(&mut s);
                s.wake_all();
            }
        }
        Frame::Ping { ack, data } => {
            if !ack {
                reader.glitches.overhead()?;
                encode_ping_ack(&mut shared.borrow_mut().out, data);
            }
        }
        Frame::WindowUpdate { stream_id, increment } => {
            if increment < SMALL_WINDOW_UPDATE {
                reader.glitches.overhead()?;
            }
            if window_update(shared, reader.last_id, stream_id, increment)? {
                reader.glitches.report(1)?; // an increment of 0 on a stream
            }
        }
        Frame::RstStream { stream_id, error } => {
            reader.stats.rst_stream_rcvd.inc();
            if stream_id > reader.last_id {
                return Err(ErrorCode::ProtocolError); // an idle stream
            }
            let mut s = shared.borrow_mut();
            if let Some(slot) = s.streams.get_mut(&stream_id) {
                if !slot.responded && slot.reset.is_none() {
                    // reset before its response: a rapid reset (CVE-2023-44487)
                    reader.glitches.report(1)?;
                }
                slot.peer_reset = slot.reset.is_none();
                slot.reset.get_or_insert(error);
                slot.local_end = true;
                slot.remote_end = true;
            }
            s.wake(stream_id);
        }
        Frame::GoAway { .. } => {
            reader.stats.goaway_rcvd.inc();
            reader.goaway = true;
        }
        Frame::Data { stream_id, data, end_stream, flow_len } => {
            on_data(shared, reader, stream_id, data, end_stream, flow_len)?;
        }
        Frame::Headers { stream_id, fragment, end_stream, end_headers, priority } => {
            reader.stats.headers_rcvd.inc();
            if priority.is_some_and(|p| p.dependency == stream_id) {
                reset_any(&mut shared.borrow_mut(), stream_id, ErrorCode::ProtocolError);
                return reader.glitches.report(1);
            }
            if end_headers {
                // PERF: a whole header block is decoded from the frame, without a copy
                on_block(sess, shared, reader, streams, (stream_id, end_stream, fragment))?;
            } else {
                reader.block = Some(Block { id: stream_id, end_stream, bytes: fragment.to_vec(), frames: 1 });
            }
        }
        Frame::Continuation { stream_id, fragment, end_headers } => {
            let Some(block) = reader.block.as_mut() else { return Err(ErrorCode::ProtocolError) };
            if block.id != stream_id {
                return Err(ErrorCode::ProtocolError);
            }
            block.frames += 1;
            if block.bytes.len() + fragment.len() > MAX_HEADER_LIST * 2 || block.frames > MAX_BLOCK_FRAMES {
                let _ = reader.glitches.report(1);
                return Err(ErrorCode::EnhanceYourCalm); // a CONTINUATION flood
            }
            block.bytes.extend_from_slice(fragment);
            reader.glitches.continuation(block.frames, block.bytes.len())?;
            if end_headers {
                if let Some(Block { id, end_stream, bytes, .. }) = reader.block.take() {
                    on_block(sess, shared, reader, streams, (id, end_stream, &bytes))?;
                }
            }
        }
        Frame::Priority { stream_id, priority } => {
            reader.glitches.overhead()?;
            if priority.dependency == stream_id {
                reset_any(&mut shared.borrow_mut(), stream_id, ErrorCode::ProtocolError);
                reader.glitches.report(1)?;
            }
        }
        // a client never promises
        Frame::PushPromise { .. } => return Err(ErrorCode::ProtocolError),
        Frame::Unknown { .. } => {}
    }
    Ok(())
}

/// A WINDOW_UPDATE: more room to send on the connection or a stream. `Ok(true)`: a
/// glitch (an increment of 0 on a stream, which resets it).
fn window_update(shared: &SharedRef, last_id: u32, stream_id: u32, increment: u32) -> Result<bool, ErrorCode> {
    let mut s = shared.borrow_mut();
    if stream_id == 0 {
        if increment == 0 {
            return Err(ErrorCode::ProtocolError);
        }
        s.send_window += i64::from(increment);
        if s.send_window > i64::from(i32::MAX) {
            return Err(ErrorCode::FlowControlError);
        }
        s.wake_all();
        return Ok(false);
    }
    let Some(slot) = s.streams.get_mut(&stream_id) else {
        return if stream_id > last_id { Err(ErrorCode::ProtocolError) } else { Ok(false) };
    };
    if increment == 0 {
        s.reset(stream_id, ErrorCode::ProtocolError);
        return Ok(true);
    }
    slot.send_window += i64::from(increment);
    if slot.send_window > i64::from(i32::MAX) {
        s.reset(stream_id, ErrorCode::FlowControlError);
        return Ok(true);
    }
    s.wake(stream_id);
    Ok(false)
}

/// DATA: filed in the stream's slot, within the windows.
fn on_data(
    shared: &SharedRef,
    reader: &mut Demux,
    stream_id: u32,
    data: &[u8],
    end_stream: bool,
    flow_len: u32,
) -> Result<(), ErrorCode> {
    if data.is_empty() && !end_stream {
        reader.glitches.overhead()?; // an empty DATA flood
    }
    let mut s = shared.borrow_mut();
    // the connection window covers every DATA frame, padding included
    let padding = flow_len - data.len() as u32;
    let Some(slot) = s.streams.get_mut(&stream_id).filter(|slot| !slot.remote_end) else {
        if stream_id > reader.last_id {
            return Err(ErrorCode::ProtocolError); // an idle stream
        }
        // closed, or half-closed (remote): counted in the connection's window only
        s.consumed(0, flow_len);
        if s.after_close(stream_id) {
            reader.glitches.report(1)?;
        }
        return Ok(());
    };
    // counted on an open stream only, as HAProxy counts it
    reader.stats.data_rcvd.inc();
    if i64::from(flow_len) > slot.recv_window {
        return Err(ErrorCode::FlowControlError);
    }
    slot.recv_window -= i64::from(flow_len);
    let len = data.len() as u64;
    let beyond = slot.expect.is_some_and(|n| len > n);
    let short = end_stream && slot.expect.is_some_and(|n| n != len);
    slot.expect = slot.expect.map(|n| n.saturating_sub(len));
    slot.inbox.extend_from_slice(data);
    reader.filed += 1;
    // a malformed body resets the stream even when its response is already out
    slot.remote_end = end_stream && !(beyond || short);
    if padding > 0 {
        s.consumed(0, padding);
    }
    if beyond || short {
        // RFC 9113 §8.1.1: DATA that does not add up to content-length
        s.reset(stream_id, ErrorCode::ProtocolError);
        reader.glitches.report(1)?;
    }
    s.wake(stream_id);
    Ok(())
}

/// A whole header block (`(stream id, END_STREAM, the block)`): a new stream (its
/// request), or the trailers of an open one.
fn on_block<'s>(
    sess: &'s Session,
    shared: &'s SharedRef,
    reader: &mut Demux,
    streams: &mut Streams<'s>,
    (id, end_stream, block): (u32, bool, &[u8]),
) -> Result<(), ErrorCode> {
    if id % 2 == 0 {
        let _ = reader.glitches.report(1); // HEADERS on an invalid stream id
        return Err(ErrorCode::ProtocolError);
    }
    if id <= reader.last_id {
        return trailers(shared, reader, id, end_stream, block);
    }
    skip_to(reader, id);
    let rt = &sess.rt;
    let mut txn = Txn::fresh(rt.bufsize);
    let mut head_buf = super::shared::take_head();
    let mut fields = ReqFields::new(&mut head_buf, &mut txn.req);
    let mut malformed = None;
    let decoded = reader.decoder.decode::<HpackError, _>(block, |n, v, _| {
        if malformed.is_none() {
            malformed = fields.field(n, v).err();
        }
        Ok(())
    });
    let finished = match (decoded, malformed) {
        (Err(HpackError::ListTooLarge), _) => Err(crate::h2::msg::Malformed("header list too large")),
        (Err(_), _) => {
            let _ = reader.glitches.report(1);
            return Err(ErrorCode::CompressionError);
        }
        (Ok(()), Some(m)) => Err(m),
        (Ok(()), None) => fields.finish(end_stream),
    };
    let mut s = shared.borrow_mut();
    if reader.goaway || s.closing {
        return Ok(());
    }
    if s.streams.len() >= rt.h2.max_concurrent_streams as usize {
        s.open(id);
        s.reset(id, ErrorCode::RefusedStream);
        s.streams.remove(&id);
        return reader.glitches.report(1); // past the stream limit
    }
    s.open(id);
    let tunnel = match finished {
        Ok(tunnel) => tunnel,
        Err(m) => {
            if m.answered_400() {
                refuse_400(&mut s, id);
            } else {
                s.reset(id, ErrorCode::ProtocolError);
            }
            s.streams.remove(&id);
            return reader.glitches.report(1); // a malformed or too large request
        }
    };
    if let Some(slot) = s.streams.get_mut(&id) {
        slot.remote_end = end_stream;
        slot.expect = match txn.req.body {
            // the DATA of a tunnel are the tunnel's bytes
            _ if tunnel.is_some() => None,
            BodyLen::Known(n) => Some(n),
            BodyLen::None => Some(0),
            BodyLen::Unknown => None,
        };
    }
    drop(s);
    reader.glitches.stream_opened();
    reader.opened += 1;
    let first = reader.opened == 1;
    let opened = Opened { id, end_stream, first, tunnel, cfd: reader.cfd };
    streams.push(Box::pin(run_stream(sess, shared, opened, txn, head_buf)));
    Ok(())
}

/// `-d`: the stream's `accept` line and its request (`clireq`, `clihdr`), as HAProxy
/// prints an HTTP/2 request: the target as the stream has it (absolute form with an
/// `:authority`), `HTTP/2.0`, the fields (`host` from the `:authority`).
fn trace_request(sess: &Session, cfd: i32, req: MsgView<'_>) -> Trace {
    let fe = &sess.rt.proxies[sess.fe].name;
    let trace = Trace::accept(fe, sess.lfd, cfd, sess.conn.src);
    let mut line = Vec::with_capacity(req.method().len() + req.uri().len() + 10);
    line.extend_from_slice(req.method());
    line.push(b' ');
    line.extend_from_slice(req.uri());
    line.extend_from_slice(b" HTTP/2.0");
    trace.request_fields(fe, &line, req.headers().map(|(_, n, v)| (n, v)));
    trace
}

/// Answers stream `id` with HAProxy's 400 page, then lets the client stop sending
/// (RST_STREAM NO_ERROR if its request did not end).
/// COMPAT: the frontend's `errorfile 400` is not used and no log line is written.
fn refuse_400(s: &mut Shared, id: u32) {
    let page = crate::errors::builtin_page(400);
    let view = page.head.view(&page.buf);
    let mut lower = Vec::new();
    s.send_headers(id, &mut |emit| response_fields(view, &mut lower, emit), false);
    // the page is 90 bytes: a peer announcing a smaller window gets it cut short
    s.send_data(id, &page.buf[page.body.clone()], true);
    s.reset(id, ErrorCode::NoError);
}

/// A header block on an open stream: its trailers, which end it.
fn trailers(shared: &SharedRef, reader: &mut Demux, id: u32, end_stream: bool, block: &[u8]) -> Result<(), ErrorCode> {
    // the block must be decoded for the HPACK state, its fields are not forwarded
    // COMPAT: request trailers are not sent to HTTP/1 servers yet
    match reader.decoder.decode::<HpackError, _>(block, |_, _, _| Ok(())) {
        Ok(()) | Err(HpackError::ListTooLarge) => {}
        Err(_) => return Err(ErrorCode::CompressionError),
    }
    let mut s = shared.borrow_mut();
    match s.streams.get_mut(&id) {
        Some(slot) if slot.remote_end => {
            if s.after_close(id) {
                reader.glitches.report(1)?; // a header block on a closed stream
            }
        }
        Some(slot) if end_stream && slot.expect.is_none_or(|n| n == 0) => {
            slot.remote_end = true;
            s.wake(id);
        }
        // trailers must end the stream, and the body must be whole
        Some(_) => {
            s.reset(id, ErrorCode::ProtocolError);
            reader.glitches.report(1)?;
        }
        // a stream the client never opened: it must open streams in order
        None if was_skipped(reader, id) => return Err(ErrorCode::ProtocolError),
        None => return Err(ErrorCode::StreamClosed),
    }
    Ok(())
}

/// Stream `id` opens: the ids between the last one and it were skipped.
fn skip_to(reader: &mut Demux, id: u32) {
    /// Skipped ranges remembered; older ones are forgotten (then taken as closed).
    const MAX_SKIPPED: usize = 32;
    let next = if reader.last_id == 0 { 1 } else { reader.last_id + 2 };
    if id > next {
        if reader.skipped.len() == MAX_SKIPPED {
            reader.skipped.pop_front();
        }
        reader.skipped.push_back((next, id - 2));
    }
    reader.last_id = id;
}

/// Whether the client skipped stream `id` (a smaller id than one it opened).
fn was_skipped(reader: &Demux, id: u32) -> bool {
    reader.skipped.iter().any(|&(from, to)| (from..=to).contains(&id))
}

/// Resets stream `id` whether it has a slot or not (an idle or closed stream).
fn reset_any(s: &mut Shared, id: u32, code: ErrorCode) {
    if s.streams.contains_key(&id) {
        s.reset(id, code);
    } else {
        s.reset_closed(id, code);
    }
}

/// What the header block that opened a stream said of it.
#[derive(Debug, Clone, Copy)]
struct Opened {
    id: u32,
    /// The HEADERS ended the stream (no body).
    end_stream: bool,
    /// The first stream of the connection.
    first: bool,
    /// A CONNECT or an extended CONNECT.
    tunnel: Option<Tunnel>,
    /// The client connection's descriptor.
    cfd: i32,
}

/// One stream: the rampart stream of its request, then its slot is freed (the stream
/// reset if its response did not end).
async fn run_stream(sess: &Session, shared: &SharedRef, opened: Opened, mut txn: Txn, head_buf: Vec<u8>) {
    let Opened { id, end_stream, first, tunnel, cfd } = opened;
    let rt = &sess.rt;
    let trace = debug::on().then(|| trace_request(sess, cfd, txn.req.view(&head_buf)));
    let h2_stats = &rt.proxies[sess.fe].stats.fe_h2;
    let _open = Open::new(&h2_stats.total_streams, &h2_stats.open_streams);
    let body_len = txn.req.body;
    txn.req.arena_max = rt.bufsize.saturating_sub(head_buf.len().min(rt.max_head));
    let mut front = H2Front {
        shared,
        id,
        sess,
        method: txn.req.method,
        head_buf,
        body_len,
        body: Vec::new(),
        body_done: end_stream || body_len == BodyLen::None,
        sent: false,
        raw: Vec::new(),
        first,
        tunnel,
        info: Default::default(),
        trace: trace.as_ref(),
    };
    front.info.head_received = front.head_buf.len() as u64;
    if rt.proxies[sess.fe].log.is_some() {
        let (line, fields) = request_line(txn.req.view(&front.head_buf));
        log_request(&mut txn.st.log, sess, first, &line, fields);
    }
    if front.body_done && body_len == BodyLen::Unknown {
        front.raw.extend_from_slice(b"0\r\n\r\n");
    }
    stream::run(&mut front, rt, &sess.conn, sess.fe, &mut txn).await;
    if let Some(t) = &trace {
        let fe = &rt.proxies[sess.fe];
        t.end(&fe.fe.backend.map_or(fe, |be| &rt.proxies[be]).name);
    }
    drain_request(shared, id).await;
    let mut s = shared.borrow_mut();
    // a whole response sent before the whole request came: the client may stop sending
    // (RFC 9113 §8.1, NO_ERROR); a response cut short: the stream is cancelled
    let answered = s.streams.get(&id).is_some_and(|slot| slot.local_end && slot.reset.is_none());
    s.reset(id, if answered { ErrorCode::NoError } else { ErrorCode::Cancel });
    s.streams.remove(&id);
    drop(s);
    super::shared::keep_head(std::mem::take(&mut front.head_buf));
}

/// The request bytes a stream still reads after its whole response went out: a client
/// sending the end of its body then sees the stream end cleanly.
const DRAIN_MAX: usize = STREAM_WINDOW as usize;
/// How long a stream waits for the end of its request after its whole response.
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(1);

/// After the response: the rest of the request is read and dropped (up to
/// [`DRAIN_MAX`] bytes for [`DRAIN_TIME`]), so that a client still sending sees its
/// stream end with its request, as HAProxy ends it. A client sending more is then told
/// to stop (RST_STREAM NO_ERROR, RFC 9113 §8.1).
async fn drain_request(shared: &SharedRef, id: u32) {
    let answered = |s: &Shared| s.streams.get(&id).is_some_and(|slot| slot.local_end && slot.reset.is_none());
    if !answered(&shared.borrow()) {
        return;
    }
    let mut sink = Vec::new();
    let mut drained = 0;
    let drain = async {
        while drained < DRAIN_MAX {
            sink.clear();
            let end = poll_fn(|cx| match shared.borrow_mut().take_data(id, &mut sink, cx.waker()) {
                Some(end) => Poll::Ready(end),
                None => Poll::Pending,
            })
            .await;
            drained += sink.len();
            if end {
                return;
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_TIME, drain).await;
}

/// An HTTP/2 request's line as HAProxy logs it (`GET https://host/path HTTP/2.0`), and
/// the size of its fields for `%U`.
fn request_line(req: crate::http::MsgView<'_>) -> (Vec<u8>, u64) {
    let mut line = Vec::with_capacity(req.method().len() + req.uri().len() + 10);
    line.extend_from_slice(req.method());
    line.push(b' ');
    line.extend_from_slice(req.uri());
    line.extend_from_slice(b" HTTP/2.0");
    (line, crate::log::stream_log::htx_req_fields_size(req))
}

/// Starts the log record of a stream's request (`line`, with `fields` bytes of fields).
/// The first stream of a connection starts at its accept (the handshakes' time before
/// now); the next ones when their header block was decoded, with no idle time.
fn log_request(l: &mut crate::log::StreamLog, sess: &Session, first: bool, line: &[u8], fields: u64) {
    use crate::log::stream_log::htx_req_head_size;
    let at = std::time::Instant::now();
    let now = (crate::log::date::wall(at), at);
    let accept = if first {
        let th = sess.conn.handshake_time();
        (now.0.checked_sub(th).unwrap_or(now.0), now.1.checked_sub(th).unwrap_or(now.1))
    } else {
        now
    };
    l.begin(accept, now, 0);
    l.head_done = Some(at);
    l.bytes_in = htx_req_head_size(line, fields);
    l.req_line.extend_from_slice(&line[..line.len().min(sess.rt.log_uri_len)]);
}
