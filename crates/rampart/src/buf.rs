//! Per-thread pools of what an exchange needs: I/O buffers and parsed message heads.
//! A connection takes them only while it is exchanging data and gives them back before
//! it waits idle, so an idle connection holds none (HAProxy: dynbuf.c,
//! `b_alloc`/`b_free`, and the pools of pool.c).

use std::cell::RefCell;

use rampart_proto::h1::Head;

/// Buffers kept per thread beyond which returned buffers are freed.
const POOL_MAX: usize = 256;
/// Objects of each [`Poolable`] type kept per thread.
const OBJECTS_MAX: usize = 256;

thread_local! {
    static POOL: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// A type with a per-thread pool of boxed, reusable values: what an exchange needs
/// keeps its capacity (header lists, arenas) from one exchange to the next.
pub trait Poolable: Default + 'static {
    /// This type's pool.
    fn pool() -> &'static std::thread::LocalKey<RefCell<Vec<Box<Self>>>>;
}

/// A value drawn from the current thread's pool of `T`; returns itself on drop.
///
/// Boxed on purpose: an exchange holds a pointer, not the value, in its future.
#[derive(Debug)]
pub struct Pooled<T: Poolable>(Option<Box<T>>);

impl<T: Poolable> Pooled<T> {
    /// A value from the pool (as it was left: the caller resets what it needs), or a
    /// new one.
    pub fn take() -> Pooled<T> {
        Pooled(Some(T::pool().with(|p| p.borrow_mut().pop()).unwrap_or_default()))
    }
}

impl<T: Poolable> std::ops::Deref for Pooled<T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.0.as_ref().expect("present until drop")
    }
}

impl<T: Poolable> std::ops::DerefMut for Pooled<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.0.as_mut().expect("present until drop")
    }
}

impl<T: Poolable> Drop for Pooled<T> {
    fn drop(&mut self) {
        if let Some(value) = self.0.take() {
            // `try_with`: during thread teardown the pool may already be gone.
            let _ = T::pool().try_with(|p| {
                let mut p = p.borrow_mut();
                if p.len() < OBJECTS_MAX {
                    p.push(value);
                }
            });
        }
    }
}

impl Poolable for Head {
    fn pool() -> &'static std::thread::LocalKey<RefCell<Vec<Box<Self>>>> {
        thread_local! {
            #[allow(clippy::vec_box, reason = "pooled values are handed out boxed")]
            static HEADS: RefCell<Vec<Box<Head>>> = const { RefCell::new(Vec::new()) };
        }
        &HEADS
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
