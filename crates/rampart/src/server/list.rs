//! The servers of a backend: the configured ones, then those `add server` appended at
//! run time. Indices never move and a slot is never freed while the process runs, so a
//! stream, a check or a queued connection holding a server index stays valid after
//! `del server` (the server is only marked deleted, see `SrvState::is_deleted`).
//! Readers take no lock: a configured server is a plain slice index; an added one is
//! one more acquire load. Appends are serialized by a writer lock that the request
//! path never takes.
//! HAProxy counterpart: the `px->srv` list and the server refcount of server.c
//! (`srv_take()`/`srv_drop()`), which let `del server` free a server later.

use std::ops::{Index, IndexMut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
// PERF: only `add server` takes the writer lock; readers never do.
#[allow(clippy::disallowed_types)]
use std::sync::Mutex;

/// Slots of the first chunk of added servers; chunk `k` holds `FIRST << k`.
const FIRST: usize = 16;
/// Chunks: room for `FIRST * (2^CHUNKS - 1)` added servers, far beyond any use.
const CHUNKS: usize = 26;

/// An append-only list of servers readable without a lock.
#[derive(Debug)]
pub struct SrvList<T> {
    /// The servers of the configuration.
    fixed: Box<[T]>,
    /// The servers added at run time, by chunks allocated as they fill.
    added: [OnceLock<Box<[OnceLock<T>]>>; CHUNKS],
    /// How many servers were added (published after the slot is filled).
    added_len: AtomicUsize,
    /// Serializes the appends.
    #[allow(clippy::disallowed_types)]
    writer: Mutex<()>,
}

impl<T> From<Vec<T>> for SrvList<T> {
    fn from(v: Vec<T>) -> SrvList<T> {
        SrvList {
            fixed: v.into_boxed_slice(),
            added: std::array::from_fn(|_| OnceLock::new()),
            added_len: AtomicUsize::new(0),
            #[allow(clippy::disallowed_types)] // appends only, never a reader
            writer: Mutex::new(()),
        }
    }
}

impl<T> Default for SrvList<T> {
    fn default() -> SrvList<T> {
        SrvList::from(Vec::new())
    }
}

/// The chunk and the offset in it of added server `i`.
fn place(i: usize) -> (usize, usize) {
    let k = i + FIRST;
    let chunk = (usize::BITS - 1 - k.leading_zeros()) as usize - FIRST.trailing_zeros() as usize;
    (chunk, k - (FIRST << chunk))
}

impl<T> SrvList<T> {
    /// Servers so far, deleted ones included.
    #[inline]
    pub fn len(&self) -> usize {
        self.fixed.len() + self.added_len.load(Ordering::Acquire)
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many servers the configuration declared (the first indices).
    pub fn configured(&self) -> usize {
        self.fixed.len()
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        match self.fixed.get(i) {
            Some(s) => Some(s),
            None => self.get_added(i - self.fixed.len()),
        }
    }

    #[cold]
    fn get_added(&self, i: usize) -> Option<&T> {
        if i >= self.added_len.load(Ordering::Acquire) {
            return None;
        }
        let (chunk, off) = place(i);
        self.added.get(chunk)?.get()?.get(off)?.get()
    }

    /// A configured server, to finish building it.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.fixed.get_mut(i)
    }

    pub fn iter(&self) -> Iter<'_, T> {
        Iter { list: self, at: 0, end: self.len() }
    }

    /// The configured servers, to finish building them.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.fixed.iter_mut()
    }

    /// Appends a server built by `make` from its index, unless `refuse` (which sees
    /// the servers, under the writer lock) says why not. Returns the new index.
    pub fn push_with<E>(
        &self,
        refuse: impl FnOnce(&Self) -> Result<(), E>,
        make: impl FnOnce(usize) -> Result<T, E>,
    ) -> Result<usize, E> {
        let _w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        refuse(self)?;
        let n = self.added_len.load(Ordering::Acquire);
        let (chunk, off) = place(n);
        let Some(slot) = self.added.get(chunk) else {
            // cannot happen short of exhausting memory first
            panic!("too many servers added at run time");
        };
        let slots = slot.get_or_init(|| (0..FIRST << chunk).map(|_| OnceLock::new()).collect());
        let index = self.fixed.len() + n;
        let srv = make(index)?;
        if slots[off].set(srv).is_err() {
            unreachable!("a slot is filled once, under the writer lock");
        }
        self.added_len.store(n + 1, Ordering::Release);
        Ok(index)
    }
}

impl<T> Index<usize> for SrvList<T> {
    type Output = T;

    #[inline]
    fn index(&self, i: usize) -> &T {
        match self.get(i) {
            Some(s) => s,
            None => panic!("server index {i} out of range ({})", self.len()),
        }
    }
}

impl<T> IndexMut<usize> for SrvList<T> {
    /// Configured servers only (while building).
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.fixed[i]
    }
}

/// The servers in index order, as many as there were when the walk began.
#[derive(Debug)]
pub struct Iter<'a, T> {
    list: &'a SrvList<T>,
    at: usize,
    end: usize,
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;

    #[inline]
    fn next(&mut self) -> Option<&'a T> {
        if self.at >= self.end {
            return None;
        }
        self.at += 1;
        self.list.get(self.at - 1)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.at;
        (n, Some(n))
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}

impl<'a, T> DoubleEndedIterator for Iter<'a, T> {
    fn next_back(&mut self) -> Option<&'a T> {
        if self.at >= self.end {
            return None;
        }
        self.end -= 1;
        self.list.get(self.end)
    }
}

impl<'a, T> IntoIterator for &'a SrvList<T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_indices_without_gaps() {
        assert_eq!(place(0), (0, 0));
        assert_eq!(place(15), (0, 15));
        assert_eq!(place(16), (1, 0));
        assert_eq!(place(47), (1, 31));
        assert_eq!(place(48), (2, 0));
    }

    #[test]
    fn appends_keep_indices_and_are_visible() {
        let l = SrvList::from(vec![10, 11]);
        for n in 0..100 {
            let i = l.push_with(|_| Ok::<_, ()>(()), |i| Ok(i * 10)).unwrap();
            assert_eq!(i, n + 2);
        }
        assert_eq!(l.len(), 102);
        assert_eq!(l[1], 11);
        assert_eq!(l[50], 500);
        assert_eq!(l.iter().count(), 102);
        assert_eq!(l.iter().position(|&v| v == 990), Some(99));
        assert!(l.get(102).is_none());
        assert_eq!(l.push_with(|_| Err("no"), Ok), Err("no"));
        assert_eq!(l.len(), 102);
    }
}
