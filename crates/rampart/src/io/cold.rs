//! Rare ways through an async function, kept out of its common one.
//!
//! An `async fn` is one state machine: every future it awaits is part of its state, and
//! the compiler inlines the awaited futures' `poll` code into its own, stack
//! temporaries included. A rarely taken branch (an error page, a retry, a tunnel) then
//! makes every call larger: a larger state to keep and a deeper stack frame, so that a
//! plain request touches more memory than it uses (data-cache misses per request,
//! `scripts/bench-instr.py --cache`). [`cold`] puts such a future on the heap (made only
//! when the branch is taken) and polls it out of line.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A future on the heap, polled by a function of its own (never inlined).
pub struct Cold<F>(Pin<Box<F>>);

/// Wraps `f` for a rarely taken branch: one allocation when the branch is taken, no
/// state or stack frame in the caller's future otherwise.
pub fn cold<F: Future>(f: F) -> Cold<F> {
    Cold(Box::pin(f))
}

impl<F: Future> Future for Cold<F> {
    type Output = F::Output;

    #[inline(never)]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.0.as_mut().poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::cold;

    #[test]
    fn gives_the_output_of_the_future() {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        assert_eq!(rt.block_on(cold(async { 41 + 1 })), 42);
        let big = [7u8; 4096];
        let out = rt.block_on(cold(async move {
            tokio::task::yield_now().await;
            big.iter().map(|&b| u32::from(b)).sum::<u32>()
        }));
        assert_eq!(out, 7 * 4096);
    }
}
