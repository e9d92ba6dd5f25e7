//! The stream's unique id (`unique-id-format`): rendered once per stream from the
//! frontend's format the first time something asks for it (the `unique-id` fetch, `%ID`,
//! the `unique-id-header`), then kept for the rest of the stream.
//! HAProxy counterpart: `stream_generate_unique_id()` (src/stream.c).

use std::cell::{Cell, OnceCell};

use super::SampleCtx;

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

    /// The id if something rendered it already (renders nothing).
    pub fn rendered(&self) -> Option<&[u8]> {
        self.value.get().map(Vec::as_slice)
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
        if self.busy.replace(true) {
            return None;
        }
        let mut v = Vec::with_capacity(64);
        let rendered = ctx.rt.render_unique_id(ctx.fe, ctx, &mut v);
        if !rendered {
            self.busy.set(false);
            return None;
        }
        v.truncate(MAX_LEN);
        self.busy.set(false);
        Some(self.value.get_or_init(|| v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::testutil::{config, conn, runtime};

    fn ctx_with<'a>(
        rt: &'a crate::proxy::Runtime,
        c: &'a crate::sample::ctx::ConnInfo,
        uid: &'a UniqueId,
    ) -> SampleCtx<'a> {
        SampleCtx { unique_id: Some(uid), uniq_id: 7, ..SampleCtx::new(rt, c, 0) }
    }

    #[test]
    fn the_id_is_rendered_once_on_first_use() {
        let cfg = config(
            "defaults\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n\
             frontend fe\n bind :80\n unique-id-format \"%ci-%rt-[%ID]-%[unique-id]\"\n default_backend be\n\
             backend be\n server s 127.0.0.1:1\n",
        );
        let rt = runtime(&cfg);
        let mut c = conn();
        let uid = UniqueId::default();
        // the format's own `%ID` / `unique-id` see no id while it renders
        assert_eq!(ctx_with(&rt, &c, &uid).unique_id(), Some(&b"192.168.1.10-7-[]-"[..]));
        c.src = Some("10.0.0.1:1".parse().unwrap());
        assert_eq!(ctx_with(&rt, &c, &uid).unique_id(), Some(&b"192.168.1.10-7-[]-"[..]));
        let mut uid = uid;
        uid.reset();
        assert_eq!(ctx_with(&rt, &c, &uid).unique_id(), Some(&b"10.0.0.1-7-[]-"[..]));
    }

    #[test]
    fn no_format_no_id() {
        let cfg = config(crate::sample::testutil::CFG);
        let rt = runtime(&cfg);
        let c = conn();
        let uid = UniqueId::default();
        assert_eq!(ctx_with(&rt, &c, &uid).unique_id(), None);
        assert_eq!(ctx_with(&rt, &c, &UniqueId::preset(b"x")).unique_id(), Some(&b"x"[..]));
    }

    #[test]
    fn long_ids_are_cut() {
        let long = "a".repeat(300);
        let cfg = config(&format!(
            "defaults\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n\
             frontend fe\n bind :80\n unique-id-format {long}\n default_backend be\n\
             backend be\n server s 127.0.0.1:1\n"
        ));
        let rt = runtime(&cfg);
        let c = conn();
        let uid = UniqueId::default();
        assert_eq!(ctx_with(&rt, &c, &uid).unique_id().map(<[u8]>::len), Some(MAX_LEN));
    }
}
