//! Per-thread pools of what an exchange needs: I/O buffers and parsed message heads.
//! A connection takes them only while it is exchanging data and gives them back before
//! it waits idle, so an idle connection holds none (HAProxy: dynbuf.c,
//! `b_alloc`/`b_free`, and the pools of pool.c).

use std::cell::RefCell;

use rampart_proto::h1::Head;

/// Spare values of one kind a thread keeps after a quiet period.
const SPARE_FLOOR: usize = 256;
/// The most spare values of one kind a thread keeps.
const SPARE_MAX: usize = 4096;

/// The spare values of one kind a thread keeps for reuse: up to [`SPARE_MAX`] while
/// they are being used, and the surplus dropped by [`Spares::trim`] every few seconds
/// (the values no taker needed since the last trim, beyond [`SPARE_FLOOR`]). A busy
/// thread (a thousand HTTP/2 streams in flight, each holding two buffers) then finds
/// what the next streams need instead of going to the allocator (issue 27: a fixed
/// cap of 256 made most buffers of such a load fresh allocations, 12 % of its
/// instructions), and a thread whose load went down gives the surplus back.
/// HAProxy counterpart: the pools of pool.c, which keep what was allocated until
/// memory runs short.
#[derive(Debug)]
pub struct Spares<T> {
    free: Vec<T>,
    /// The fewest values `free` held since the last trim: that many were not needed.
    unused: usize,
}

impl<T> Spares<T> {
    pub const fn new() -> Spares<T> {
        Spares { free: Vec::new(), unused: 0 }
    }

    /// A spare value, if any (the caller makes one otherwise).
    pub fn take(&mut self) -> Option<T> {
        let value = self.free.pop();
        self.unused = self.unused.min(self.free.len());
        value
    }

    /// A value comes back: kept, unless [`SPARE_MAX`] are.
    pub fn give(&mut self, value: T) {
        if self.free.len() < SPARE_MAX {
            self.free.push(value);
        }
    }

    /// Drops the values no taker needed since the last trim, but [`SPARE_FLOOR`] of
    /// them (the oldest go first).
    pub fn trim(&mut self) {
        let surplus = self.unused.saturating_sub(SPARE_FLOOR);
        self.free.drain(..surplus);
        self.unused = self.free.len();
    }

    /// Spare values kept.
    pub fn len(&self) -> usize {
        self.free.len()
    }

    pub fn is_empty(&self) -> bool {
        self.free.is_empty()
    }
}

impl<T> Default for Spares<T> {
    fn default() -> Self {
        Spares::new()
    }
}

/// Trims this thread's spare buffers and message heads ([`Spares::trim`]); called
/// every few seconds by each thread.
pub fn trim_spares() {
    let _ = POOL.try_with(|p| p.borrow_mut().trim());
    trim_pool::<Head>();
}

/// Trims this thread's pool of `T`.
pub fn trim_pool<T: Poolable>() {
    let _ = T::pool().try_with(|p| p.borrow_mut().trim());
}

thread_local! {
    static POOL: RefCell<Spares<Vec<u8>>> = const { RefCell::new(Spares::new()) };
}

/// A type with a per-thread pool of boxed, reusable values: what an exchange needs
/// keeps its capacity (header lists, arenas) from one exchange to the next.
pub trait Poolable: Default + 'static {
    /// This type's pool.
    fn pool() -> &'static std::thread::LocalKey<RefCell<Spares<Box<Self>>>>;
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
        Pooled(Some(T::pool().with(|p| p.borrow_mut().take()).unwrap_or_default()))
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
            let _ = T::pool().try_with(|p| p.borrow_mut().give(value));
        }
    }
}

impl Poolable for Head {
    fn pool() -> &'static std::thread::LocalKey<RefCell<Spares<Box<Self>>>> {
        thread_local! {
            static HEADS: RefCell<Spares<Box<Head>>> = const { RefCell::new(Spares::new()) };
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
        let data = POOL.with(|p| p.borrow_mut().take()).unwrap_or_default();
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
        let _ = POOL.try_with(|p| p.borrow_mut().give(data));
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
    fn spares_are_kept_while_used_and_trimmed_when_not() {
        let mut spares = Spares::new();
        let in_use: Vec<u32> = (0..1000).map(|i| spares.take().unwrap_or(i)).collect();
        // a busy thread keeps all that comes back, where a fixed cap of 256 would not
        in_use.into_iter().for_each(|v| spares.give(v));
        assert_eq!(spares.len(), 1000);
        spares.trim(); // the first trim only starts the count
        assert_eq!(spares.len(), 1000);
        // 600 of them used again in the next period: 400 were not needed
        let again: Vec<u32> = (0..600).map(|_| spares.take().expect("a spare")).collect();
        again.into_iter().for_each(|v| spares.give(v));
        spares.trim();
        assert_eq!(spares.len(), 1000 - (400 - SPARE_FLOOR));
        // a quiet period: down to the floor
        spares.trim();
        assert_eq!(spares.len(), SPARE_FLOOR);
        spares.trim();
        assert_eq!(spares.len(), SPARE_FLOOR);
        // never more than the cap
        (0..SPARE_MAX as u32 + 10).for_each(|v| spares.give(v));
        assert_eq!(spares.len(), SPARE_MAX);
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
