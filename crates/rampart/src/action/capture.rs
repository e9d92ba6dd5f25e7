//! Captures: the slots a frontend declares (`capture request|response header <name> len
//! <n>`, `declare capture request|response len <n>`, `http-request capture <expr> len
//! <n>`), the values one stream captured in them, and the header captures run when a
//! head arrives. `capture.req.hdr(<n>)`, `capture.res.hdr(<n>)`, `%hr` and `%hs` read the
//! values; `http-request capture`, `http-response capture` (and `tcp-request content
//! capture`) write them.
//! HAProxy counterpart: `struct cap_hdr` (include/haproxy/capture-t.h),
//! `http_capture_headers()` (src/http_ana.c), `http_action_req_capture()` and
//! `http_action_res_capture_by_id()` (src/http_act.c).

use rampart_cfg::model;

use crate::http::MsgView;

/// One capture slot of a frontend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapSlot {
    /// The header captured into this slot when the head arrives (`capture ... header`);
    /// `None` for slots only rules fill.
    pub header: Option<Box<[u8]>>,
    /// Most bytes kept; longer values are cut.
    pub len: usize,
}

/// A frontend's capture slots, in declaration order (a slot's index is what `id <n>` and
/// `capture.req.hdr(<n>)` name).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CaptureDecls {
    pub req: Vec<CapSlot>,
    pub res: Vec<CapSlot>,
}

impl CaptureDecls {
    pub fn new(c: &model::Captures) -> CaptureDecls {
        let slot =
            |d: &model::CaptureDecl| CapSlot { header: d.header.as_ref().map(|h| h.as_bytes().into()), len: d.len };
        CaptureDecls { req: c.request.iter().map(slot).collect(), res: c.response.iter().map(slot).collect() }
    }

    /// Whether any slot fills itself from a header of the given direction.
    fn any_header(slots: &[CapSlot]) -> bool {
        slots.iter().any(|s| s.header.is_some())
    }
}

/// Which capture list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapDir {
    Req,
    Res,
}

/// Bytes kept aside for slots of later streams (a stream uses few).
const SPARE_MAX: usize = 16;

/// The values one stream captured: one entry per slot of its frontend, `None` while
/// nothing was captured there.
///
/// PERF: a frontend without captures costs nothing (empty lists, no allocation); one
/// with captures reuses the value buffers of earlier streams.
#[derive(Debug, Default)]
pub struct Captured {
    pub req: Vec<Option<Vec<u8>>>,
    pub res: Vec<Option<Vec<u8>>>,
    spare: Vec<Vec<u8>>,
}

impl Captured {
    /// Empties every slot, then sizes the lists for a frontend with these slots.
    pub fn reset(&mut self, decls: &CaptureDecls) {
        for list in [&mut self.req, &mut self.res] {
            for v in list.drain(..).flatten() {
                if self.spare.len() < SPARE_MAX {
                    self.spare.push(v);
                }
            }
        }
        self.req.resize(decls.req.len(), None);
        self.res.resize(decls.res.len(), None);
    }

    /// Stores `value` cut to `len` bytes in slot `idx` of `dir`; nothing when the stream
    /// has no such slot.
    pub fn store(&mut self, dir: CapDir, idx: usize, value: &[u8], len: usize) {
        let list = match dir {
            CapDir::Req => &mut self.req,
            CapDir::Res => &mut self.res,
        };
        let Some(slot) = list.get_mut(idx) else { return };
        let mut v = slot.take().or_else(|| self.spare.pop()).unwrap_or_default();
        v.clear();
        v.extend_from_slice(&value[..value.len().min(len)]);
        *slot = Some(v);
    }

    /// `capture request|response header`: every header of `msg` named by a slot goes
    /// into it, cut to the slot's length; a later occurrence replaces an earlier one.
    pub fn headers(&mut self, dir: CapDir, slots: &[CapSlot], msg: MsgView<'_>) {
        if !CaptureDecls::any_header(slots) {
            return;
        }
        for (_, name, value) in msg.headers() {
            for (idx, slot) in slots.iter().enumerate() {
                if slot.header.as_deref().is_some_and(|h| h.eq_ignore_ascii_case(name)) {
                    self.store(dir, idx, value, slot.len);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::MsgHead;
    use rampart_proto::http::{HdrKind, Header, Slice};

    fn head(buf: &[u8], names: &[(&str, &str)]) -> MsgHead {
        let mut h = MsgHead { arena_max: 1024, ..MsgHead::default() };
        let mut from = 0;
        for (n, v) in names {
            let ns = from + memchr::memmem::find(&buf[from..], n.as_bytes()).unwrap();
            let vs = ns + n.len() + 2;
            from = vs + v.len();
            h.headers.push(Header {
                name: Slice { start: ns as u32, end: (ns + n.len()) as u32 },
                value: Slice { start: vs as u32, end: from as u32 },
                kind: HdrKind::classify(n.as_bytes()),
                drop: false,
            });
        }
        h
    }

    fn slot(header: Option<&str>, len: usize) -> CapSlot {
        CapSlot { header: header.map(|h| h.as_bytes().into()), len }
    }

    #[test]
    fn header_captures_keep_the_last_occurrence_cut_to_the_slot() {
        let buf = b"Host: abcdef\r\nX-A: 1\r\nx-a: 2 , 3\r\n";
        let h = head(buf, &[("Host", "abcdef"), ("X-A", "1"), ("x-a", "2 , 3")]);
        let decls =
            CaptureDecls { req: vec![slot(Some("host"), 3), slot(None, 5), slot(Some("X-A"), 20)], res: vec![] };
        let mut c = Captured::default();
        c.reset(&decls);
        c.headers(CapDir::Req, &decls.req, h.view(buf));
        assert_eq!(c.req, [Some(b"abc".to_vec()), None, Some(b"2 , 3".to_vec())]);
        assert!(c.res.is_empty());
    }

    #[test]
    fn slots_are_emptied_and_buffers_reused_between_streams() {
        let decls = CaptureDecls { req: vec![slot(None, 4)], res: vec![slot(None, 1)] };
        let mut c = Captured::default();
        c.reset(&decls);
        c.store(CapDir::Req, 0, b"123456", 4);
        c.store(CapDir::Res, 0, b"xy", 1);
        c.store(CapDir::Res, 9, b"ignored", 10);
        assert_eq!((c.req[0].as_deref(), c.res[0].as_deref()), (Some(&b"1234"[..]), Some(&b"x"[..])));
        c.reset(&decls);
        assert_eq!((c.req.as_slice(), c.res.as_slice(), c.spare.len()), (&[None][..], &[None][..], 2));
        c.reset(&CaptureDecls::default());
        assert!(c.req.is_empty() && c.res.is_empty());
    }
}
