//! The stream's unique id (`unique-id-format`): rendered once per stream from the
//! frontend's format the first time something asks for it (the `unique-id` fetch, `%ID`,
//! the `unique-id-header`), then kept for the rest of the stream.
//! HAProxy counterpart: `stream_generate_unique_id()` (src/stream.c).

use std::cell::{Cell, OnceCell};

use crate::sample::SampleCtx;

/// Most bytes of an id: HAProxy renders it into a `UNIQUEID_LEN` (128) buffer whose
/// last byte ends the string.
pub const MAX_LEN: usize = 127;

/// One stream's unique id, generated on first use.
#[derive(Debug, Default)]
pub struct UniqueId {
    value: OnceCell<Vec<u8>>,
    /// Set while the format renders: a format naming `%ID` or `unique-id` itself sees
    /// no id then, as in HAProxy (where the id is still unset while it is built).
    busy: Cell<bool>,
}

impl UniqueId {
    /// An id known in advance (tests, and streams that received one).
    pub fn preset(value: &[u8]) -> UniqueId {
        UniqueId { value: OnceCell::from(value.to_vec()), busy: Cell::new(false) }
    }

    /// Forgets the id, for the next stream.
    pub fn reset(&mut self) {
        self.value.take();
        self.busy.set(false);
    }

    /// The id, rendering it from the frontend's `unique-id-format` over `ctx` if this
    /// is the first time; `None` when the frontend has no such format.
    pub fn get<'a>(&'a self, ctx: &SampleCtx<'a>) -> Option<&'a [u8]> {
        if let Some(v) = self.value.get() {
            return Some(v);
        }
        let fmt = ctx.rt.proxies.get(ctx.fe)?.rules.unique_id.as_ref()?;
        if self.busy.replace(true) {
            return None;
        }
        let mut v = Vec::with_capacity(64);
        fmt.render(ctx, &mut v);
        v.truncate(MAX_LEN);
        self.busy.set(false);
        Some(self.value.get_or_init(|| v))
    }
}
