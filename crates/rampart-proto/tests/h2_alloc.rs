//! Proof that the HTTP/2 codec allocates nothing per message once warm (STYLE.md §6):
//! a counting global allocator, armed on this thread only, around HPACK encoding and
//! decoding through dynamic-table insertions and evictions, and the framing and
//! parsing of HEADERS, CONTINUATION, DATA and WINDOW_UPDATE frames into reused buffers.

// SAFETY: a test-only global allocator is the one way to count allocations; it only
// forwards to `System` and bumps a counter, so it upholds `GlobalAlloc`'s contract
// exactly as `System` does.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use rampart_proto::h2::frame::{encode_data, encode_headers, encode_window_update};
use rampart_proto::h2::hpack::{Decoder, Encoder, Flags, HpackError};
use rampart_proto::h2::{next_frame, Frame, DEFAULT_MAX_FRAME_SIZE};

struct Counting;

thread_local! {
    // per thread, so that tests running in parallel do not count for each other
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    if ARMED.with(Cell::get) {
        ALLOCS.with(|n| n.set(n.get() + 1));
    }
}

// SAFETY: every method forwards its arguments unchanged to `System`.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `f` on this thread.
fn allocations(f: impl FnOnce()) -> usize {
    let before = ALLOCS.with(Cell::get);
    ARMED.with(|a| a.set(true));
    f();
    ARMED.with(|a| a.set(false));
    ALLOCS.with(Cell::get) - before
}

/// Buffers a connection keeps from one request to the next.
struct Conn {
    enc: Encoder,
    dec: Decoder,
    block: Vec<u8>,
    wire: Vec<u8>,
    fragments: Vec<u8>,
}

/// One request: a field list whose `x-request-id` changes every time (so each block
/// inserts an entry and, once the table is full, evicts one), framed in small frames,
/// parsed back, reassembled and decoded; then a DATA frame and a WINDOW_UPDATE.
fn exchange(c: &mut Conn, id: u32) {
    let mut digits = *b"00000000";
    for (i, d) in digits.iter_mut().rev().enumerate() {
        *d = b'0' + (id / 10u32.pow(i as u32) % 10) as u8;
    }
    let fields: [(&[u8], &[u8], Flags); 7] = [
        (b":method", b"POST", Flags::NONE),
        (b":scheme", b"https", Flags::NONE),
        (b":authority", b"www.example.com", Flags::NONE),
        (b":path", b"/api/v1/items?id=42", Flags::NONE),
        (b"user-agent", b"rampart-test/1.0", Flags::NONE),
        (b"authorization", b"Bearer abcdefghijklmnopqrstuvwxyz", Flags::NEVER_INDEXED),
        (b"x-request-id", &digits, Flags::NONE),
    ];
    c.block.clear();
    c.enc.encode(fields.iter().copied(), &mut c.block);
    c.wire.clear();
    encode_headers(&mut c.wire, 1, &c.block, false, 32);
    encode_data(&mut c.wire, 1, b"{\"hello\":\"world\"}", true);
    encode_window_update(&mut c.wire, 0, 17);
    c.fragments.clear();
    let mut buf = &c.wire[..];
    while let Some((frame, n)) = next_frame(buf, DEFAULT_MAX_FRAME_SIZE).unwrap() {
        match frame {
            Frame::Headers { fragment, .. } | Frame::Continuation { fragment, .. } => {
                c.fragments.extend_from_slice(fragment)
            }
            Frame::Data { data, .. } => assert_eq!(data.len(), 17),
            Frame::WindowUpdate { increment, .. } => assert_eq!(increment, 17),
            other => panic!("{other:?}"),
        }
        buf = &buf[n..];
    }
    let mut count = 0;
    c.dec
        .decode(&c.fragments, |name, value, _| {
            assert_eq!((name, value), (fields[count].0, fields[count].1));
            count += 1;
            Ok::<(), HpackError>(())
        })
        .unwrap();
    assert_eq!(count, fields.len());
}

#[test]
fn hpack_and_framing_allocate_nothing_once_warm() {
    let mut c = Conn {
        enc: Encoder::new(),
        dec: Decoder::new(4096),
        block: Vec::new(),
        wire: Vec::new(),
        fragments: Vec::new(),
    };
    // Warm-up: the tables fill, evict, and their buffers reach their largest size.
    for id in 0..1000 {
        exchange(&mut c, id);
    }
    let n = allocations(|| {
        for id in 1000..3000 {
            exchange(&mut c, id);
        }
    });
    assert_eq!(n, 0, "allocations while encoding and decoding");
    assert!(c.dec.table_len() > 50, "the table is in use");
}

#[test]
fn the_counter_counts() {
    let n = allocations(|| drop(std::hint::black_box(vec![1u8; 64])));
    assert_eq!(n, 1);
}
