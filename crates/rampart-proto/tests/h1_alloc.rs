//! Proof that the h1 codec allocates nothing per message once warm (STYLE.md §6): a
//! counting global allocator, armed on this thread only, around the parse of requests,
//! responses and chunked bodies with a reused `Head`.

// SAFETY: a test-only global allocator is the one way to count allocations; it only
// forwards to `System` and bumps a counter, so it upholds `GlobalAlloc`'s contract
// exactly as `System` does.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use rampart_proto::h1::{parse_request, parse_response, ChunkedState, Framing, Head, Method};

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

const REQUEST: &[u8] = b"POST /api/v1/items?id=42 HTTP/1.1\r\nHost: example.com\r\nUser-Agent: curl/8.0\r\n\
    Accept: */*\r\nConnection: keep-alive, x-hop\r\nX-Hop: 1\r\nContent-Type: application/json\r\n\
    Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n";
const SMALL_REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nServer: s\r\nDate: Mon, 01 Jan 2024 00:00:00 GMT\r\n\
    Content-Type: text/plain\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\n";
const BODY: &[u8] = b"5;ext=1\r\nhello\r\n10\r\n0123456789abcdef\r\n0\r\nX-Trailer: t\r\n\r\n";

#[test]
fn parsing_allocates_nothing_once_warm() {
    let mut req = Head::default();
    let mut resp = Head::default();
    // warm-up: each Head's header list grows to the largest message once
    assert_eq!(parse_request(REQUEST, 16384, &mut req), Ok(true));
    assert_eq!(parse_response(RESPONSE, 16384, Method::Post, &mut resp), Ok(true));

    let n = allocations(|| {
        for _ in 0..1000 {
            assert_eq!(parse_request(REQUEST, 16384, &mut req), Ok(true));
            assert_eq!(req.framing, Framing::Chunked);
            assert_eq!(parse_request(SMALL_REQUEST, 16384, &mut req), Ok(true));
            assert_eq!(parse_request(&REQUEST[..50], 16384, &mut req), Ok(false));
            assert_eq!(parse_response(RESPONSE, 16384, Method::Post, &mut resp), Ok(true));
            let mut body = ChunkedState::new();
            assert_eq!(body.scan(BODY), Ok((BODY.len(), true)));
        }
    });
    assert_eq!(n, 0, "allocations while parsing");
}

#[test]
fn the_counter_counts() {
    let n = allocations(|| drop(std::hint::black_box(vec![1u8; 64])));
    assert_eq!(n, 1);
}
