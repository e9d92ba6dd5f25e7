//! The driver task of an HTTP/2 server connection, and this thread's registry of the
//! connections that take more streams. The driver owns the socket: it writes the
//! frames the streams queue (preface and SETTINGS first), reads frames and files them
//! in the streams' slots (header blocks decoded, DATA within the windows), answers
//! SETTINGS and PING, applies WINDOW_UPDATE, RST_STREAM and GOAWAY, and closes the
//! connection once idle for the backend's `timeout http-keep-alive` (else `timeout
//! server`, else 5 s), or at once when it was private (`http-reuse never`).
//! HAProxy counterpart: mux_h2.c in its back-side role (`h2_init` with a server,
//! `h2c_bck_*`, `h2_process_demux`), the `avail_conns` list of a server.

use std::cell::RefCell;
use std::future::poll_fn;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use atomic_refcell::AtomicRefCell;
use rampart_proto::h2::frame::{
    encode_goaway, encode_ping_ack, encode_settings, encode_settings_ack, encode_window_update, next_frame, Frame,
    PREFACE,
};
use rampart_proto::h2::hpack::{Decoder, HpackError};
use rampart_proto::h2::{ErrorCode, H2Error, Setting, SettingId, DEFAULT_INITIAL_WINDOW_SIZE};

use super::shared::{Block, ConnRef, Shared, CONN_WINDOW, STREAM_WINDOW};
use crate::conn_pool::{BackSock, ConnKey};
use crate::io::Sock;
use crate::timer::Timer;

/// The most bytes a response header block may take once decoded.
const MAX_HEADER_LIST: usize = 64 * 1024;
/// The largest frame we accept (the default SETTINGS_MAX_FRAME_SIZE).
const MAX_FRAME: u32 = 16_384;
/// How long an idle shared connection stays without a keep-alive or server timeout
/// (HAProxy's default `pool-purge-delay`).
const IDLE_DEFAULT: Duration = Duration::from_secs(5);

/// Where a connection is known for sharing: its server's pool key and its [`ConnKey`].
#[derive(Debug, Clone)]
pub struct Home {
    pub pool_key: usize,
    pub key: ConnKey,
}

struct Entry {
    home: Home,
    conn: ConnRef,
}

thread_local! {
    /// The shared HTTP/2 server connections of this thread.
    // PERF: a linear scan; a thread holds few connections per server.
    static REGISTRY: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
}

/// A connection to the server `pool_key` opened for `key` that takes one more stream
/// (its place taken).
pub fn find(pool_key: usize, key: &ConnKey) -> Option<ConnRef> {
    REGISTRY.with(|r| {
        let r = r.borrow();
        let e = r.iter().find(|e| {
            e.home.pool_key == pool_key && e.home.key == *key && e.conn.try_borrow().is_ok_and(|s| s.has_capacity())
        })?;
        e.conn.borrow_mut().take_place();
        Some(e.conn.clone())
    })
}

fn unregister(conn: &ConnRef) {
    let _ = REGISTRY.try_with(|r| r.borrow_mut().retain(|e| !Arc::ptr_eq(&e.conn, conn)));
}

/// Starts HTTP/2 on `sock` (a place taken for the first stream): spawns its driver on
/// this thread's runtime, and registers it for other streams unless `home` is `None`
/// (a private connection). `idle`: how long it stays without a stream. `max_streams`:
/// the server's `max-reuse` plus one; once it carried that many, the connection takes
/// no new stream and closes when its last one ends (HAProxy's `h2_avail_streams()`).
pub fn start(sock: BackSock, home: Option<Home>, idle: Option<Duration>, max_streams: Option<u64>) -> ConnRef {
    let tls = sock.tls().map(|t| t.info.clone());
    let mut shared = Shared::new(tls);
    shared.max_served = max_streams;
    shared.take_place();
    queue_preface(&mut shared);
    let conn: ConnRef = Arc::new(AtomicRefCell::new(shared));
    let private = home.is_none();
    if let Some(home) = home {
        REGISTRY.with(|r| r.borrow_mut().push(Entry { home, conn: conn.clone() }));
    }
    let idle = if private { Some(Duration::ZERO) } else { Some(idle.unwrap_or(IDLE_DEFAULT)) };
    tokio::spawn(drive(sock, conn.clone(), idle));
    conn
}

/// The preface and our SETTINGS (no push, our stream window); the connection window
/// is opened once the server's first SETTINGS are acknowledged (some servers, VTest's,
/// take the frame after our SETTINGS to be the acknowledgement of theirs).
fn queue_preface(s: &mut Shared) {
    s.out.extend_from_slice(PREFACE);
    let params = [
        Setting { id: SettingId::EnablePush, value: 0 },
        Setting { id: SettingId::InitialWindowSize, value: STREAM_WINDOW },
        Setting { id: SettingId::MaxHeaderListSize, value: MAX_HEADER_LIST as u32 },
    ];
    encode_settings(&mut s.out, &params);
}

/// What woke the driver.
enum Event {
    Input,
    /// The server closed, or writing failed.
    Gone,
    /// No stream for the idle time.
    Idle,
}

/// What the frames read so far left to know.
struct Demux {
    decoder: Decoder,
    /// A header block spread over CONTINUATION frames: its stream, END_STREAM, the
    /// fragments so far.
    block: Option<(u32, bool, Vec<u8>)>,
}

/// The driver: runs until the connection ends, then fails what still waits on it.
async fn drive(sock: BackSock, conn: ConnRef, idle: Option<Duration>) {
    let mut buf = Vec::with_capacity(16 * 1024);
    let mut decoder = Decoder::new(rampart_proto::h2::DEFAULT_HEADER_TABLE_SIZE as usize);
    decoder.set_max_list_size(MAX_HEADER_LIST);
    let mut demux = Demux { decoder, block: None };
    let mut timer: Option<Timer> = None;
    loop {
        let event = poll_fn(|cx| poll_driver(cx, &sock, &conn, &mut timer, idle)).await;
        match event {
            Event::Input => {
                if let Err(code) = read_frames(&sock, &conn, &mut buf, &mut demux) {
                    // a server opens no stream: the last one we processed is 0
                    encode_goaway(&mut conn.borrow_mut().out, 0, code, b"");
                    break;
                }
            }
            Event::Gone => break,
            Event::Idle => {
                encode_goaway(&mut conn.borrow_mut().out, 0, ErrorCode::NoError, b"");
                break;
            }
        }
    }
    unregister(&conn);
    let out = {
        let mut s = conn.borrow_mut();
        s.closing = true;
        s.dead = true;
        s.wake_all();
        std::mem::take(&mut s.out)
    };
    let _ = crate::io::write_all(&sock, &out, Some(Duration::from_secs(1))).await;
    sock.close_notify();
}

/// One poll of the driver: what was queued is written, then input looked for; an idle
/// connection's timer runs.
fn poll_driver(
    cx: &mut Context<'_>,
    sock: &BackSock,
    conn: &ConnRef,
    timer: &mut Option<Timer>,
    idle: Option<Duration>,
) -> Poll<Event> {
    if flush(cx, sock, conn).is_err() {
        return Poll::Ready(Event::Gone);
    }
    if sock.buffered_input() {
        return Poll::Ready(Event::Input);
    }
    match sock.poll_read_ready(cx) {
        Poll::Ready(Ok(())) => return Poll::Ready(Event::Input),
        Poll::Ready(Err(_)) => return Poll::Ready(Event::Gone),
        Poll::Pending => {}
    }
    let (unused, closing) = {
        let s = conn.borrow();
        (s.taken == 0, s.closing || s.used_up())
    };
    if !unused {
        *timer = None;
        return Poll::Pending;
    }
    if closing || idle == Some(Duration::ZERO) {
        return Poll::Ready(Event::Idle);
    }
    if timer.is_none() {
        *timer = Timer::new(idle).map(Timer::or_stop);
    }
    match timer.as_mut().map(|t| t.poll_expired(cx)) {
        Some(Poll::Ready(())) => Poll::Ready(Event::Idle),
        _ => Poll::Pending,
    }
}

/// Writes what is queued as far as the socket takes it; the driver's waker is left
/// for the streams.
fn flush(cx: &mut Context<'_>, sock: &BackSock, conn: &ConnRef) -> std::io::Result<()> {
    let mut s = conn.borrow_mut();
    s.set_driver(cx.waker());
    while !s.out.is_empty() {
        match sock.try_write(&s.out) {
            Ok(n) => {
                s.out.drain(..n);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => return Err(e),
        }
    }
    match sock.try_flush() {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        Err(e) => return Err(e),
    }
    s.drained();
    if !s.out.is_empty() || sock.try_flush().is_err() {
        match sock.poll_write_ready(cx) {
            Poll::Ready(Err(e)) => return Err(e),
            Poll::Ready(Ok(())) => cx.waker().wake_by_ref(),
            Poll::Pending => {}
        }
    }
    Ok(())
}

/// Reads what is there and handles every complete frame. `Err`: a connection error.
fn read_frames(sock: &BackSock, conn: &ConnRef, buf: &mut Vec<u8>, demux: &mut Demux) -> Result<(), ErrorCode> {
    match crate::io::try_read_some(sock, buf) {
        Ok(0) => return Err(ErrorCode::NoError),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        Err(_) => return Err(ErrorCode::NoError),
    }
    let mut used = 0;
    loop {
        let (frame, n) = match next_frame(&buf[used..], MAX_FRAME) {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(H2Error::Connection(code)) => return Err(code),
            Err(H2Error::Stream(id, code)) => {
                let len = rampart_proto::h2::frame::FrameHeader::parse(&buf[used..]).map_or(0, |h| h.frame_len());
                conn.borrow_mut().reset(id, code);
                used += len;
                continue;
            }
        };
        used += n;
        on_frame(frame, conn, demux)?;
    }
    buf.drain(..used);
    Ok(())
}

/// Acts on one frame.
fn on_frame(frame: Frame<'_>, conn: &ConnRef, demux: &mut Demux) -> Result<(), ErrorCode> {
    if demux.block.is_some() && !matches!(frame, Frame::Continuation { .. }) {
        return Err(ErrorCode::ProtocolError);
    }
    match frame {
        Frame::Settings { ack: false, params } => {
            let mut s = conn.borrow_mut();
            let before = s.peer.initial_window_size;
            s.peer.apply(params).map_err(|e| e.code())?;
            let delta = i64::from(s.peer.initial_window_size) - i64::from(before);
            s.streams.values_mut().for_each(|slot| slot.send_window += delta);
            let table = s.peer.header_table_size;
            s.set_encoder_table(table);
            encode_settings_ack(&mut s.out);
            if !std::mem::replace(&mut s.settings_seen, true) {
                encode_window_update(&mut s.out, 0, CONN_WINDOW - DEFAULT_INITIAL_WINDOW_SIZE);
            }
            s.wake_all();
        }
        Frame::Settings { ack: true, .. } => {}
        Frame::Ping { ack, data } => {
            if !ack {
                encode_ping_ack(&mut conn.borrow_mut().out, data);
            }
        }
        Frame::WindowUpdate { stream_id, increment } => window_update(conn, stream_id, increment)?,
        Frame::RstStream { stream_id, error } => {
            let mut s = conn.borrow_mut();
            if let Some(slot) = s.streams.get_mut(&stream_id) {
                slot.reset.get_or_insert(error);
                slot.local_end = true;
                slot.remote_end = true;
            }
            s.wake(stream_id);
        }
        Frame::GoAway { last_stream_id, .. } => goaway(conn, last_stream_id),
        Frame::Data { stream_id, data, end_stream, flow_len } => on_data(conn, stream_id, data, end_stream, flow_len)?,
        Frame::Headers { stream_id, fragment, end_stream, end_headers, .. } => {
            demux.block = Some((stream_id, end_stream, fragment.to_vec()));
            if end_headers {
                on_block(conn, demux)?;
            }
        }
        Frame::Continuation { stream_id, fragment, end_headers } => {
            let Some((id, _, block)) = demux.block.as_mut() else { return Err(ErrorCode::ProtocolError) };
            if *id != stream_id || block.len() + fragment.len() > MAX_HEADER_LIST * 2 {
                return Err(ErrorCode::ProtocolError);
            }
            block.extend_from_slice(fragment);
            if end_headers {
                on_block(conn, demux)?;
            }
        }
        // push was disabled in our SETTINGS
        Frame::PushPromise { .. } => return Err(ErrorCode::ProtocolError),
        Frame::Priority { .. } | Frame::Unknown { .. } => {}
    }
    Ok(())
}

/// GOAWAY: no new stream; the streams above `last_id` were not processed and fail as
/// refused (the request may go elsewhere).
fn goaway(conn: &ConnRef, last_id: u32) {
    unregister(conn);
    let mut s = conn.borrow_mut();
    s.closing = true;
    for (&id, slot) in s.streams.iter_mut() {
        if id > last_id && slot.reset.is_none() {
            slot.reset = Some(ErrorCode::RefusedStream);
            slot.local_end = true;
        }
    }
    s.wake_all();
}

/// A WINDOW_UPDATE: more room to send on the connection or a stream.
fn window_update(conn: &ConnRef, stream_id: u32, increment: u32) -> Result<(), ErrorCode> {
    let mut s = conn.borrow_mut();
    if stream_id == 0 {
        if increment == 0 {
            return Err(ErrorCode::ProtocolError);
        }
        s.send_window += i64::from(increment);
        if s.send_window > i64::from(i32::MAX) {
            return Err(ErrorCode::FlowControlError);
        }
        s.wake_all();
        return Ok(());
    }
    let Some(slot) = s.streams.get_mut(&stream_id) else { return Ok(()) };
    slot.send_window += i64::from(increment);
    if increment == 0 || slot.send_window > i64::from(i32::MAX) {
        s.reset(stream_id, ErrorCode::FlowControlError);
    }
    s.wake(stream_id);
    Ok(())
}

/// DATA: filed in the stream's slot, within the windows.
fn on_data(conn: &ConnRef, stream_id: u32, data: &[u8], end_stream: bool, flow_len: u32) -> Result<(), ErrorCode> {
    let mut s = conn.borrow_mut();
    let padding = flow_len - data.len() as u32;
    let Some(slot) = s.streams.get_mut(&stream_id).filter(|slot| !slot.remote_end) else {
        if stream_id > s.last_opened() {
            return Err(ErrorCode::ProtocolError);
        }
        // a stream we reset or that ended: the connection's window only
        s.consumed(0, flow_len);
        return Ok(());
    };
    if i64::from(flow_len) > slot.recv_window {
        return Err(ErrorCode::FlowControlError);
    }
    slot.recv_window -= i64::from(flow_len);
    slot.inbox.extend_from_slice(data);
    slot.remote_end = end_stream;
    if padding > 0 {
        s.consumed(0, padding);
    }
    s.wake(stream_id);
    Ok(())
}

/// A whole header block: a response head or trailers, filed in its stream's slot.
fn on_block(conn: &ConnRef, demux: &mut Demux) -> Result<(), ErrorCode> {
    let Some((id, end, raw)) = demux.block.take() else { return Ok(()) };
    let mut block = Block { end, ..Block::default() };
    let decoded = demux.decoder.decode::<HpackError, _>(&raw, |n, v, _| {
        block.push(n, v);
        Ok(())
    });
    let mut s = conn.borrow_mut();
    match decoded {
        Ok(()) => {}
        Err(HpackError::ListTooLarge) => {
            s.reset(id, ErrorCode::ProtocolError);
            return Ok(());
        }
        Err(_) => return Err(ErrorCode::CompressionError),
    }
    if id == 0 || id % 2 == 0 || id > s.last_opened() {
        return Err(ErrorCode::ProtocolError);
    }
    let Some(slot) = s.streams.get_mut(&id).filter(|slot| !slot.remote_end) else { return Ok(()) };
    slot.blocks.push_back(block);
    slot.remote_end = end;
    s.wake(id);
    Ok(())
}
