//! Per-thread pools of what an exchange needs: I/O buffers and parsed message heads.
//! A connection takes them only while it is exchanging data and gives them back before
//! it waits idle, so an idle connection holds none (HAProxy: dynbuf.c,
//! `b_alloc`/`b_free`, and the pools of pool.c).

use std::cell::RefCell;

use rampart_proto::h1::Head;

/// Buffers kept per thread beyond which returned buffers are freed.
const POOL_MAX: usize = 256;
/// Head pairs kept per thread.
const HEADS_MAX: usize = 256;

thread_local! {
    static POOL: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
    // Boxed on purpose: an exchange holds a pointer, not two heads, in its future.
    #[allow(clippy::vec_box)]
    static HEADS: RefCell<Vec<Box<HeadPair>>> = const { RefCell::new(Vec::new()) };
}

/// The request and response heads of one exchange. Their header lists keep their
/// capacity across exchanges (no allocation per header), so they are pooled rather
/// than kept by each connection.
#[derive(Debug, Default)]
pub struct HeadPair {
    pub req: Head,
    pub res: Head,
}

/// A [`HeadPair`] drawn from the current thread's pool; returns itself on drop.
#[derive(Debug)]
pub struct Heads(Option<Box<HeadPair>>);

impl Heads {
    pub fn take() -> Heads {
        Heads(Some(HEADS.with(|p| p.borrow_mut().pop()).unwrap_or_default()))
    }
}

impl std::ops::Deref for Heads {
    type Target = HeadPair;
    fn deref(&self) -> &HeadPair {
        self.0.as_ref().expect("present until drop")
    }
}

impl std::ops::DerefMut for Heads {
    fn deref_mut(&mut self) -> &mut HeadPair {
        self.0.as_mut().expect("present until drop")
    }
}

impl Drop for Heads {
    fn drop(&mut self) {
        if let Some(pair) = self.0.take() {
            let _ = HEADS.try_with(|p| {
                let mut p = p.borrow_mut();
                if p.len() < HEADS_MAX {
                    p.push(pair);
                }
            });
        }
    }
}

/// A buffer drawn from the current thread's pool; returns itself on drop.
///
/// `len()` is the filled part; the capacity is the configured `tune.bufsize` (or more).
#[derive(Debug)]
pub struct Buf {
    data: Vec<u8>,
}

impl Buf {
    /// Takes a cleared buffer of at least `cap` bytes of capacity.
    pub fn take(cap: usize) -> Buf {
        let data = POOL.with(|p| p.borrow_mut().pop()).unwrap_or_default();
        let mut buf = Buf { data };
        buf.data.clear();
        if buf.data.capacity() < cap {
            buf.data.reserve_exact(cap);
        }
        buf
    }

    #[inline]
    pub fn vec(&mut self) -> &mut Vec<u8> {
        &mut self.data
    }

    /// Removes the first `n` bytes (already consumed).
    #[inline]
    pub fn consume(&mut self, n: usize) {
        if n >= self.data.len() {
            self.data.clear();
        } else {
            self.data.drain(..n);
        }
    }
}

impl std::ops::Deref for Buf {
    type Target = Vec<u8>;
    #[inline]
    fn deref(&self) -> &Vec<u8> {
        &self.data
    }
}

impl std::ops::DerefMut for Buf {
    #[inline]
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        &mut self.data
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        let data = std::mem::take(&mut self.data);
        if data.capacity() == 0 {
            return;
        }
        // `try_with`: during thread teardown the pool may already be gone.
        let _ = POOL.try_with(|p| {
            let mut p = p.borrow_mut();
            if p.len() < POOL_MAX {
                p.push(data);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_recycled_with_their_capacity() {
        let ptr = {
            let mut b = Buf::take(4096);
            b.extend_from_slice(b"hello");
            b.as_ptr()
        };
        let b = Buf::take(4096);
        assert!(b.is_empty());
        assert_eq!(b.as_ptr(), ptr, "the returned buffer is reused");
        assert!(b.capacity() >= 4096);
    }

    #[test]
    fn consume_drops_the_prefix() {
        let mut b = Buf::take(16);
        b.extend_from_slice(b"abcdef");
        b.consume(2);
        assert_eq!(&b[..], b"cdef");
        b.consume(10);
        assert!(b.is_empty());
    }
}
