//! A cached object's body through the response filters (a hit with `filter
//! compression` after `filter cache`, or `filter trace`): it goes out in pieces of at
//! most a buffer's worth, each filtered (compressed and flushed) and handed to the
//! client before the next one is read, so the first bytes leave before the rest is
//! compressed and the memory used stays one piece's, whatever the object's size.
//! HAProxy does the same: its cache applet fills the response buffer from the object's
//! blocks (`htx_cache_dump_msg()`), and the compression filter compresses and flushes
//! what each fill gave (`comp_http_payload()`) before the applet is called again.
//!
//! [`ObjectRx`] plays the server side for the front's `ResSink::send_body_from`, as the
//! cache applet plays it for HAProxy's stream: the head came from the object, so only
//! the body is ever read through it.

use std::time::Duration;

use super::{FilterState, ResFilter};
use crate::back::{BackRecv, BodyError, HeadError, HeadWait, RawRest, Received, ResFacts};
use crate::http::{BodyLen, MsgHead};

/// The body of a cached object (its data, no framing), read through `filter`.
pub struct ObjectRx<'b> {
    /// What is left to read.
    rest: &'b [u8],
    /// The most one piece takes.
    piece: usize,
    /// The object's own framing: its length.
    len: u64,
    st: FilterState,
    /// The bytes handed by the last [`BackRecv::recv_body`].
    handed: Vec<u8>,
}

impl<'b> ObjectRx<'b> {
    /// Reads `body` through `filter` in pieces of at most `piece` bytes.
    pub fn new(body: &'b [u8], filter: ResFilter, piece: usize) -> ObjectRx<'b> {
        ObjectRx {
            rest: body,
            piece: piece.max(1),
            len: body.len() as u64,
            st: FilterState::new(filter, None),
            handed: Vec::new(),
        }
    }

    /// The first piece filtered, to go with the head (all of the body when it is the
    /// only piece: [`BackRecv::body_done`] then says so).
    pub fn start(&mut self) -> Result<Vec<u8>, BodyError> {
        self.next_piece()?;
        Ok(std::mem::take(&mut self.st.out))
    }

    /// Filters the next piece; after the last one, ends the body (the compressor's
    /// last bytes, the last chunk).
    fn next_piece(&mut self) -> Result<(), BodyError> {
        let (now, rest) = self.rest.split_at(self.piece.min(self.rest.len()));
        self.rest = rest;
        if !now.is_empty() {
            self.st.feed(now)?;
        }
        if self.rest.is_empty() {
            self.st.end()?;
        }
        Ok(())
    }
}

impl BackRecv for ObjectRx<'_> {
    async fn recv_head(&mut self, _res: &mut MsgHead, _wait: HeadWait<'_>) -> Result<Received, HeadError> {
        // never asked: the head is the object's, read before
        Err(HeadError::Status(502))
    }

    fn res_buf(&self) -> &[u8] {
        &[]
    }

    fn res_facts(&self) -> ResFacts {
        self.st.filter.facts(ResFacts { body: BodyLen::Known(self.len), until_close: false })
    }

    fn start_body(&mut self, _tunnel: bool) -> Result<std::ops::Range<usize>, BodyError> {
        Ok(0..0)
    }

    async fn recv_body(&mut self, _timeout: Option<Duration>) -> Result<Option<&[u8]>, BodyError> {
        loop {
            if self.st.hand_over(&mut self.handed) {
                return Ok(Some(&self.handed[..]));
            }
            if self.st.done {
                return Ok(None);
            }
            self.next_piece()?;
        }
    }

    fn raw_rest(&mut self) -> Option<RawRest<'_>> {
        None
    }

    fn raw_moved(&mut self, _moved: u64) {}

    fn body_done(&self) -> bool {
        self.st.done && self.st.out.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comp::limit::Limits;
    use crate::comp::run::Compressing;
    use rampart_cfg::model::CompAlgo;
    use std::io::Read;
    use std::sync::Arc;

    fn gzip_filter() -> ResFilter {
        let limits = Arc::new(Limits::new(0, 0, 0));
        ResFilter { comp: Compressing::start(CompAlgo::Gzip, 1, &limits, [None, None]), taps: Vec::new() }
    }

    /// Reads an HTTP/1 chunked body: its chunks' data, one entry a chunk.
    fn chunks(mut raw: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            let eol = raw.windows(2).position(|w| w == b"\r\n").unwrap();
            let n = usize::from_str_radix(std::str::from_utf8(&raw[..eol]).unwrap(), 16).unwrap();
            if n == 0 {
                assert_eq!(&raw[eol..], b"\r\n\r\n");
                return out;
            }
            out.push(raw[eol + 2..eol + 2 + n].to_vec());
            raw = &raw[eol + 2 + n + 2..];
        }
    }

    async fn drain(rx: &mut ObjectRx<'_>) -> Vec<Vec<u8>> {
        let mut got = vec![rx.start().unwrap()];
        while let Some(b) = rx.recv_body(None).await.unwrap() {
            got.push(b.to_vec());
        }
        assert!(rx.body_done());
        got
    }

    #[tokio::test]
    async fn a_compressed_object_goes_out_a_piece_at_a_time() {
        let body: Vec<u8> = b"0123456789abcdef".iter().copied().cycle().take(100_000).collect();
        let mut rx = ObjectRx::new(&body, gzip_filter(), 16_384);
        assert_eq!(rx.res_facts().body, BodyLen::Unknown, "chunked once compressed");
        let handed = drain(&mut rx).await;
        // 7 pieces (6 full, one of 1696 bytes, which ends the body): one handing each
        assert_eq!(handed.len(), 7, "{:?}", handed.iter().map(Vec::len).collect::<Vec<_>>());
        let raw = handed.concat();
        let data = chunks(&raw);
        // every piece was flushed on its own (a chunk each), the end in the last
        assert!(data.len() >= 7, "{}", data.len());
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&data.concat()[..]).read_to_end(&mut back).unwrap();
        assert_eq!(back, body);
    }

    #[tokio::test]
    async fn a_small_object_is_whole_with_the_head() {
        let mut rx = ObjectRx::new(b"hello", gzip_filter(), 16_384);
        let first = rx.start().unwrap();
        assert!(rx.body_done(), "one piece: ended with the head");
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&chunks(&first).concat()[..]).read_to_end(&mut back).unwrap();
        assert_eq!(back, b"hello");
        assert!(rx.recv_body(None).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn without_compression_the_bytes_go_as_stored() {
        struct Seen(Arc<parking_lot::Mutex<(Vec<usize>, bool)>>);
        impl crate::filter::Tap for Seen {
            fn data(&mut self, d: &[u8]) {
                self.0.lock().0.push(d.len());
            }
            fn end(&mut self) {
                self.0.lock().1 = true;
            }
        }
        let seen = Arc::new(parking_lot::Mutex::new((Vec::new(), false)));
        let body = vec![7u8; 2500];
        let f = ResFilter { comp: None, taps: vec![Box::new(Seen(seen.clone()))] };
        let mut rx = ObjectRx::new(&body, f, 1000);
        assert_eq!(rx.res_facts().body, BodyLen::Known(2500));
        assert_eq!(drain(&mut rx).await.concat(), body);
        assert_eq!(*seen.lock(), (vec![1000, 1000, 500], true));
    }

    #[tokio::test]
    async fn an_empty_object_ends_at_once() {
        let mut rx = ObjectRx::new(b"", gzip_filter(), 16_384);
        let first = rx.start().unwrap();
        assert!(rx.body_done());
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&chunks(&first).concat()[..]).read_to_end(&mut back).unwrap();
        assert!(back.is_empty());
    }
}
