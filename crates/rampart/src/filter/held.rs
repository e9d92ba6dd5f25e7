//! `http-response wait-for-body`: the response head and the start of its body held
//! while the stream waits for more of the body, so that the rules after the wait read
//! it (`res.body`, `res.body_len`, `res.body_size`). Only a stream whose rules ask
//! comes here: a response without the rule streams as before, nothing copied.
//!
//! The head's bytes are copied once (its slices keep their offsets), then the body
//! bytes as the server side hands them (their framing kept, to be forwarded unchanged);
//! a chunked body's data is read beside them. The wait stops as HAProxy's
//! `http_wait_for_msg_body()` does: the whole body, `at-least` bytes of data, a full
//! buffer (`tune.bufsize - tune.maxrewrite`), or the time given (then a 504).
//! HAProxy counterpart: `http_action_wait_for_body()` (src/http_act.c) on a response.

use std::time::Duration;

use crate::action::WaitBody;
use crate::back::{BackRecv, BodyError, ResFacts};
use crate::h1::body::Unchunk;
use crate::http::BodyLen;
use crate::io::IoError;

/// Why the wait could not go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitFailed {
    /// The time given, or the server's timeout, expired: answer with a 504.
    Timeout,
    /// The server closed, reset, or broke the body's framing: answer with a 502.
    Server,
}

/// A response head and the body bytes in hand, held by the stream.
#[derive(Debug)]
pub struct HeldBody {
    /// The head's bytes (the response message's slices point into them), then the
    /// body bytes in hand, as received.
    buf: Vec<u8>,
    /// Where the body bytes begin in `buf`.
    body_at: usize,
    /// Reads a chunked body's data into `data` (`None`: the bytes are the data).
    unchunk: Option<Box<Unchunk>>,
    data: Vec<u8>,
    /// The most of the message the buffer holds (`tune.bufsize - tune.maxrewrite`).
    max: usize,
}

impl HeldBody {
    /// Holds the head in `rx`'s buffer and the body bytes that came with it (the
    /// body starts here); `facts`: the response's framing; `max`: `tune.bufsize -
    /// tune.maxrewrite`.
    pub fn start<R: BackRecv>(rx: &mut R, facts: ResFacts, max: usize) -> Result<HeldBody, WaitFailed> {
        let body = rx.start_body(false).map_err(|_| WaitFailed::Server)?;
        let chunked = facts.body == BodyLen::Unknown && !facts.until_close;
        let mut held = HeldBody {
            buf: rx.res_buf()[..body.end].to_vec(),
            body_at: body.start,
            unchunk: chunked.then(Box::<Unchunk>::default),
            data: Vec::new(),
            max,
        };
        held.read_data(body.start);
        Ok(held)
    }

    /// The bytes the response head's slices point into.
    pub fn head_buf(&self) -> &[u8] {
        &self.buf
    }

    /// The body bytes in hand, as received (what goes to the client with the head).
    pub fn raw_body(&self) -> &[u8] {
        &self.buf[self.body_at..]
    }

    /// The body data in hand, framing removed, as much of it as the buffer holds
    /// (what the rules read).
    pub fn data(&self) -> &[u8] {
        let data = match &self.unchunk {
            Some(_) => &self.data[..],
            None => self.raw_body(),
        };
        let room = self.max.saturating_sub(self.body_at);
        &data[..data.len().min(room)]
    }

    /// Adds body bytes as received.
    fn push(&mut self, raw: &[u8]) {
        let from = self.buf.len();
        self.buf.extend_from_slice(raw);
        self.read_data(from);
    }

    /// Reads the data of a chunked body's bytes from `from` on.
    fn read_data(&mut self, from: usize) {
        if let Some(u) = &mut self.unchunk {
            let data = &mut self.data;
            u.feed(&self.buf[from..], |d| data.extend_from_slice(d));
        }
    }

    /// Whether the wait is over without reading more: the whole body, `at_least`
    /// bytes of data (0: no such limit), or a full buffer.
    fn enough<R: BackRecv>(&self, rx: &R, at_least: u64) -> bool {
        let data = match &self.unchunk {
            Some(_) => self.data.len(),
            None => self.buf.len() - self.body_at,
        };
        rx.body_done() || (at_least > 0 && data as u64 >= at_least) || self.buf.len() >= self.max
    }

    /// Reads more of the body from `rx` until [`HeldBody::enough`], for at most
    /// `w.time`; `t_server`: the server's inactivity timeout.
    pub async fn wait<R: BackRecv>(
        &mut self,
        rx: &mut R,
        w: WaitBody,
        t_server: Option<Duration>,
    ) -> Result<(), WaitFailed> {
        let deadline = w.time.map(|t| tokio::time::Instant::now() + t);
        while !self.enough(rx, w.at_least) {
            let left = deadline.map(|d| d.saturating_duration_since(tokio::time::Instant::now()));
            let timeout = match (left, t_server) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            match rx.recv_body(timeout).await {
                Ok(Some(raw)) => self.push(raw),
                Ok(None) => return Ok(()),
                Err(BodyError::From(IoError::Timeout)) => return Err(WaitFailed::Timeout),
                Err(_) => return Err(WaitFailed::Server),
            }
        }
        Ok(())
    }
}
