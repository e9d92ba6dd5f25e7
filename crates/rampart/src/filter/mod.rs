//! Filters on a response body between the server side and the client: compression
//! (`filter compression`, `compression ...`), the cache's store (`filter cache`,
//! `http-response cache-store`, `store`) and `filter trace` (`trace`). [`FilteredRx`] wraps the server
//! side's receiving half and is handed to the front's `ResSink::send_body_from` in its
//! place, so every front mux (HTTP/1, HTTP/2) gets filtered bodies unchanged.
//!
//! The body bytes of the server side travel in its HTTP/1 framing (`crate::back`): a
//! filter reads their data (`h1::body::Unchunk` for a chunked body), and a compressing
//! one writes its output chunked, with the trailers the server sent. Without
//! compression the bytes go out as they came, and are only read on their way (the
//! cache's store). A body that breaks its framing or ends early ends the response
//! with an error, and nothing of it is stored.
//!
//! HAProxy counterpart: the `http_payload` / `http_end` callbacks of src/filters.c as
//! src/flt_http_comp.c and src/cache.c use them.
//!
//! - `held`: the body `http-response wait-for-body` holds for the rules after it
//! - `object`: a cached object's body through the filters (a hit), piece by piece
//! - `spoe`: the connections to SPOE agents (no body filter: the stream awaits them)
//! - `store`: the cache's store
//! - `trace`: `filter trace`

pub mod held;
pub mod object;
pub mod spoe;
pub mod store;
pub mod trace;

use std::time::Duration;

use crate::back::{BackRecv, BackRx, BodyError, HeadError, HeadWait, RawRest, Received, ResFacts};
use crate::comp::run::Compressing;
use crate::h1::body::Unchunk;
use crate::http::{BodyLen, MsgHead};
use crate::io::IoError;

/// Where a body's data goes besides the client (the cache's store).
pub trait Tap: Send {
    /// The next body data (framing removed).
    fn data(&mut self, data: &[u8]);
    /// The body ended cleanly: the data seen is the whole body.
    fn end(&mut self);
}

/// What the filters do to one response body.
#[derive(Default)]
pub struct ResFilter {
    /// Compresses the body (its framing becomes chunked).
    pub comp: Option<Compressing>,
    /// See the body's data (the cache's store, `filter trace`).
    pub taps: Vec<Box<dyn Tap>>,
}

impl std::fmt::Debug for ResFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResFilter").field("comp", &self.comp.is_some()).field("taps", &self.taps.len()).finish()
    }
}

impl ResFilter {
    /// Whether any filter applies.
    pub fn is_active(&self) -> bool {
        self.comp.is_some() || !self.taps.is_empty()
    }

    /// The framing the client side writes: chunked when compressing.
    pub fn facts(&self, facts: ResFacts) -> ResFacts {
        match self.comp {
            Some(_) => ResFacts { body: BodyLen::Unknown, until_close: false },
            None => facts,
        }
    }
}

/// The server side's receiving half seen through the response filters.
pub struct FilteredRx<'r, 'a> {
    inner: &'r mut BackRx<'a>,
    st: FilterState,
    /// The bytes handed by the last [`BackRecv::recv_body`].
    handed: Vec<u8>,
}

/// A filtered body's state, apart from the server side it reads.
struct FilterState {
    filter: ResFilter,
    /// Reads a chunked body's data (`None`: the bytes are the data).
    unchunk: Option<Box<Unchunk>>,
    /// What goes to the client next.
    out: Vec<u8>,
    /// Scratch: the data of the bytes being filtered, the compressor's output.
    data: Vec<u8>,
    enc: Vec<u8>,
    done: bool,
}

impl<'r, 'a> FilteredRx<'r, 'a> {
    /// Filters the body of `inner`, whose framing is `facts` (the server's).
    pub fn new(inner: &'r mut BackRx<'a>, filter: ResFilter, facts: ResFacts) -> Self {
        let chunked = facts.body == BodyLen::Unknown && !facts.until_close;
        let st = FilterState::new(filter, chunked.then(Box::<Unchunk>::default));
        FilteredRx { inner, st, handed: Vec::new() }
    }

    /// Filters the body bytes that came with the head (`body`, in the server side's
    /// buffer) into what goes to the client, returned; with `end`, they end the body.
    pub fn start(&mut self, body: std::ops::Range<usize>, end: bool) -> Result<Vec<u8>, BodyError> {
        self.st.feed(&self.inner.res_buf()[body])?;
        self.started(end)
    }

    /// [`FilteredRx::start`] for body bytes held apart from the server side's buffer
    /// (`http-response wait-for-body`).
    pub fn start_with(&mut self, raw: &[u8], end: bool) -> Result<Vec<u8>, BodyError> {
        self.st.feed(raw)?;
        self.started(end)
    }

    fn started(&mut self, end: bool) -> Result<Vec<u8>, BodyError> {
        if end {
            self.st.end()?;
        }
        Ok(std::mem::take(&mut self.st.out))
    }
}

impl FilterState {
    /// Moves what goes to the client next into `handed` (what was handed last time is
    /// gone: the caller asks for what follows); `false` when there is nothing.
    fn hand_over(&mut self, handed: &mut Vec<u8>) -> bool {
        if self.out.is_empty() {
            return false;
        }
        handed.clear();
        std::mem::swap(handed, &mut self.out);
        true
    }

    fn new(filter: ResFilter, unchunk: Option<Box<Unchunk>>) -> FilterState {
        FilterState { filter, unchunk, out: Vec::new(), data: Vec::new(), enc: Vec::new(), done: false }
    }

    /// Filters the body bytes `raw` (as received) into `out`.
    fn feed(&mut self, raw: &[u8]) -> Result<(), BodyError> {
        self.data.clear();
        let data = match &mut self.unchunk {
            Some(u) => {
                let d = &mut self.data;
                u.feed(raw, |bytes| d.extend_from_slice(bytes));
                &self.data[..]
            }
            None => raw,
        };
        for t in &mut self.filter.taps {
            t.data(data);
        }
        match &mut self.filter.comp {
            Some(enc) => {
                self.enc.clear();
                enc.push(data, &mut self.enc).map_err(|e| BodyError::To(IoError::Io(e)))?;
                if !self.enc.is_empty() {
                    crate::h1::write::push_chunk(&mut self.out, &self.enc);
                }
            }
            None => self.out.extend_from_slice(raw),
        }
        Ok(())
    }

    /// The body ended: the compressor's last bytes, the last chunk and the trailers.
    fn end(&mut self) -> Result<(), BodyError> {
        self.done = true;
        if let Some(enc) = self.filter.comp.take() {
            self.enc.clear();
            enc.finish(&mut self.enc).map_err(|e| BodyError::To(IoError::Io(e)))?;
            if !self.enc.is_empty() {
                crate::h1::write::push_chunk(&mut self.out, &self.enc);
            }
            self.out.extend_from_slice(b"0\r\n");
            if let Some(u) = &self.unchunk {
                for (n, v) in u.trailers() {
                    self.out.extend_from_slice(n);
                    self.out.extend_from_slice(b": ");
                    self.out.extend_from_slice(v);
                    self.out.extend_from_slice(b"\r\n");
                }
            }
            self.out.extend_from_slice(b"\r\n");
        }
        for t in &mut self.filter.taps {
            t.end();
        }
        Ok(())
    }
}

impl BackRecv for FilteredRx<'_, '_> {
    async fn recv_head(&mut self, res: &mut MsgHead, wait: HeadWait<'_>) -> Result<Received, HeadError> {
        self.inner.recv_head(res, wait).await
    }

    fn res_buf(&self) -> &[u8] {
        self.inner.res_buf()
    }

    fn res_facts(&self) -> ResFacts {
        self.st.filter.facts(self.inner.res_facts())
    }

    fn start_body(&mut self, tunnel: bool) -> Result<std::ops::Range<usize>, BodyError> {
        self.inner.start_body(tunnel)
    }

    async fn recv_body(&mut self, timeout: Option<Duration>) -> Result<Option<&[u8]>, BodyError> {
        loop {
            if self.st.hand_over(&mut self.handed) {
                return Ok(Some(&self.handed[..]));
            }
            if self.st.done {
                return Ok(None);
            }
            if let Some(raw) = self.inner.recv_body(timeout).await? {
                self.st.feed(raw)?;
            }
            if self.inner.body_done() {
                self.st.end()?;
            }
        }
    }

    fn raw_rest(&mut self) -> Option<RawRest<'_>> {
        // every byte is read on its way
        None
    }

    fn raw_moved(&mut self, _moved: u64) {}

    fn body_done(&self) -> bool {
        self.st.done && self.st.out.is_empty()
    }
}
