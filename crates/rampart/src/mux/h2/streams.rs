//! The streams of one HTTP/2 connection, run by its task: each stream is polled with a
//! waker of its own, which notes the stream as woken before it wakes the task, so a
//! wake-up of the task polls the streams that have something to do, not all of them.
//! With 10 streams in flight on a connection, a response arriving for one of them
//! polled the 10 before (issue 27: HTTP/2 100x10, proxy CPU per request).
//! HAProxy counterpart: mux_h2.c's send and receive lists (`h2s->subs`), which wake
//! only the streams that subscribed.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Wake, Waker};

use parking_lot::Mutex;

pub type StreamFuture<'s> = Pin<Box<dyn Future<Output = ()> + Send + 's>>;

/// The streams of a connection.
pub struct Streams<'s> {
    /// The stream running in each slot (`None`: a free slot).
    slots: Vec<Option<StreamFuture<'s>>>,
    /// The waker each slot's stream is polled with, made once per slot.
    wakers: Vec<Waker>,
    /// Free slots.
    free: Vec<usize>,
    /// Streams running.
    live: usize,
    woken: Arc<Woken>,
    /// The slots to poll this round (kept from round to round).
    batch: Vec<usize>,
}

impl Default for Streams<'_> {
    fn default() -> Self {
        Streams {
            slots: Vec::new(),
            wakers: Vec::new(),
            free: Vec::new(),
            live: 0,
            woken: Arc::new(Woken::default()),
            batch: Vec::new(),
        }
    }
}

impl<'s> Streams<'s> {
    /// Adds a stream, first polled at the next [`Streams::poll`].
    pub fn push(&mut self, f: StreamFuture<'s>) {
        let slot = self.free.pop().unwrap_or_else(|| {
            let slot = self.slots.len();
            self.slots.push(None);
            self.wakers.push(Waker::from(Arc::new(SlotWaker { slot, woken: self.woken.clone() })));
            self.woken.state.lock().queued.push(false);
            slot
        });
        self.slots[slot] = Some(f);
        self.live += 1;
        // the task runs: noting the slot is enough
        self.woken.note(slot);
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Lets every stream woken since the last round go on; the ended ones leave.
    /// `cx`: the task's, which the streams' wakers wake.
    pub fn poll(&mut self, cx: &mut Context<'_>) {
        let mut batch = std::mem::take(&mut self.batch);
        self.woken.take(cx.waker(), &mut batch);
        for &slot in &batch {
            let Some(f) = self.slots[slot].as_mut() else { continue };
            if f.as_mut().poll(&mut Context::from_waker(&self.wakers[slot])).is_ready() {
                self.slots[slot] = None;
                self.free.push(slot);
                self.live -= 1;
            }
        }
        batch.clear();
        self.batch = batch;
    }
}

/// The slots woken since the task last looked, and the task's waker.
#[derive(Default)]
struct Woken {
    // PERF: one uncontended lock per wake-up of a stream and per round; a stream's
    // wakers are called on its connection's thread, but may be called from another
    // (tokio's wakers are Send)
    state: Mutex<WokenState>,
}

#[derive(Default)]
struct WokenState {
    /// Woken slots, each once.
    list: Vec<usize>,
    /// Whether each slot is in `list`.
    queued: Vec<bool>,
    /// The connection task's waker, as of its last round.
    task: Option<Waker>,
}

impl Woken {
    /// Notes `slot` as woken; returns whether it was not already.
    fn note(&self, slot: usize) -> bool {
        let mut s = self.state.lock();
        Self::note_in(&mut s, slot)
    }

    fn note_in(s: &mut WokenState, slot: usize) -> bool {
        match s.queued.get_mut(slot) {
            Some(queued) if !*queued => {
                *queued = true;
                s.list.push(slot);
                true
            }
            _ => false,
        }
    }

    /// Notes `slot` as woken and wakes the task (once until its next round).
    fn wake(&self, slot: usize) {
        let mut s = self.state.lock();
        if Self::note_in(&mut s, slot) {
            if let Some(task) = &s.task {
                task.wake_by_ref();
            }
        }
    }

    /// Moves the woken slots to `into` (which is empty) and keeps `task` to wake.
    fn take(&self, task: &Waker, into: &mut Vec<usize>) {
        let mut s = self.state.lock();
        if !s.task.as_ref().is_some_and(|t| t.will_wake(task)) {
            s.task = Some(task.clone());
        }
        std::mem::swap(into, &mut s.list);
        for &slot in into.iter() {
            s.queued[slot] = false;
        }
    }
}

/// The waker of one slot's stream.
struct SlotWaker {
    slot: usize,
    woken: Arc<Woken>,
}

impl Wake for SlotWaker {
    fn wake(self: Arc<Self>) {
        self.woken.wake(self.slot);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.wake(self.slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Poll;

    /// A stream that counts its polls and stays pending until told to end, keeping the
    /// waker it was last polled with.
    struct Probe {
        polls: AtomicUsize,
        waker: Mutex<Option<Waker>>,
        done: std::sync::atomic::AtomicBool,
    }

    fn probe() -> Arc<Probe> {
        Arc::new(Probe { polls: AtomicUsize::new(0), waker: Mutex::new(None), done: false.into() })
    }

    fn run(p: Arc<Probe>) -> StreamFuture<'static> {
        Box::pin(std::future::poll_fn(move |cx| {
            p.polls.fetch_add(1, Ordering::Relaxed);
            *p.waker.lock() = Some(cx.waker().clone());
            if p.done.load(Ordering::Relaxed) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        }))
    }

    struct TaskWakes(AtomicUsize);
    impl Wake for TaskWakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn only_the_woken_streams_are_polled_again() {
        let task = Arc::new(TaskWakes(AtomicUsize::new(0)));
        let waker = Waker::from(task.clone());
        let mut cx = Context::from_waker(&waker);
        let (a, b) = (probe(), probe());
        let mut streams = Streams::default();
        streams.push(run(a.clone()));
        streams.push(run(b.clone()));
        streams.poll(&mut cx);
        assert_eq!((a.polls.load(Ordering::Relaxed), b.polls.load(Ordering::Relaxed)), (1, 1));
        streams.poll(&mut cx);
        assert_eq!((a.polls.load(Ordering::Relaxed), b.polls.load(Ordering::Relaxed)), (1, 1));
        let wb = b.waker.lock().clone().unwrap();
        wb.wake_by_ref();
        wb.wake_by_ref();
        assert_eq!(task.0.load(Ordering::Relaxed), 1, "the task is woken once per round");
        streams.poll(&mut cx);
        assert_eq!((a.polls.load(Ordering::Relaxed), b.polls.load(Ordering::Relaxed)), (1, 2));
        b.done.store(true, Ordering::Relaxed);
        wb.wake();
        streams.poll(&mut cx);
        assert!(!streams.is_empty());
        a.done.store(true, Ordering::Relaxed);
        a.waker.lock().clone().unwrap().wake();
        streams.poll(&mut cx);
        assert!(streams.is_empty());
    }

    #[test]
    fn a_free_slot_is_reused_and_a_stale_wake_is_harmless() {
        let task = Arc::new(TaskWakes(AtomicUsize::new(0)));
        let waker = Waker::from(task.clone());
        let mut cx = Context::from_waker(&waker);
        let a = probe();
        a.done.store(true, Ordering::Relaxed);
        let mut streams = Streams::default();
        streams.push(run(a.clone()));
        streams.poll(&mut cx);
        assert!(streams.is_empty());
        let stale = a.waker.lock().clone().unwrap();
        let b = probe();
        streams.push(run(b.clone()));
        streams.poll(&mut cx);
        stale.wake();
        streams.poll(&mut cx);
        // the slot's new stream takes the stale wake-up as a spurious one
        assert_eq!(b.polls.load(Ordering::Relaxed), 2);
        assert_eq!(streams.slots.len(), 1);
    }
}
