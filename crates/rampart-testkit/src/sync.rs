//! Shared state between a test and the testkit's threads: a poison-tolerant lock and a
//! [`Recorder`], an append-only log a test can snapshot or wait on.
//!
//! A panicking backend thread must not turn every later assertion into a `PoisonError`,
//! so locks are taken through [`lock`], which ignores poisoning.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Locks `m`, ignoring poisoning (the data is plain records, still meaningful).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// An append-only list of records with change notification.
#[derive(Debug)]
pub(crate) struct Recorder<T> {
    items: Mutex<Vec<T>>,
    changed: Condvar,
}

impl<T> Default for Recorder<T> {
    fn default() -> Self {
        Recorder { items: Mutex::new(Vec::new()), changed: Condvar::new() }
    }
}

impl<T: Clone> Recorder<T> {
    /// Appends `item` and returns its index.
    pub fn push(&self, item: T) -> usize {
        let mut items = lock(&self.items);
        items.push(item);
        self.changed.notify_all();
        items.len() - 1
    }

    /// Changes the record at `index` in place.
    pub fn update(&self, index: usize, f: impl FnOnce(&mut T)) {
        let mut items = lock(&self.items);
        if let Some(item) = items.get_mut(index) {
            f(item);
        }
        self.changed.notify_all();
    }

    /// A copy of every record so far.
    pub fn snapshot(&self) -> Vec<T> {
        lock(&self.items).clone()
    }

    /// Waits until `done(records)` holds or `timeout` passes; returns the records then.
    pub fn wait_until(&self, timeout: Duration, done: impl Fn(&[T]) -> bool) -> Vec<T> {
        let deadline = Instant::now() + timeout;
        let mut items = lock(&self.items);
        loop {
            let now = Instant::now();
            if done(&items) || now >= deadline {
                return items.clone();
            }
            items = match self.changed.wait_timeout(items, deadline - now) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }
}
