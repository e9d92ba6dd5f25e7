//! HTTP/1 on the client side: wait for a request (holding no buffer while idle),
//! read and parse its head under `timeout http-request`, answer parse errors with
//! HAProxy's 400 and timeouts with 408, hand each request to the stream, and loop
//! for keep-alive and pipelined requests (answered in order, one at a time).
//! HAProxy counterpart: mux_h1.c (front side).

use std::time::Duration;

use rampart_proto::h1::{parse_request, H1Error, Head};
use tokio::time::Instant;

use crate::backend::ServerConn;
use crate::buf::Buf;
use crate::io::{write_all, IoError, Sock};
use crate::proxy::{GlobalRt, ProxyRt};
use crate::session::Session;
use crate::stream::{self, Next};

/// How long a connection closing after an error keeps reading (and discarding) what
/// the client still sends, so the kernel does not reset the connection before the
/// client has read the error page.
const LINGER: Duration = Duration::from_millis(500);

/// Per-connection HTTP/1 state reused from one exchange to the next.
#[derive(Debug, Default)]
pub struct H1Conn {
    /// The current request head (its header list keeps its capacity).
    pub req: Head,
    /// The current response head.
    pub res: Head,
    /// Whether a request was already sent to a server on this connection (the first
    /// one is special for `http-reuse safe`).
    pub first_done: bool,
    /// The server connection kept for this client only (`http-reuse never`).
    pub private: Option<ServerConn>,
}

/// Why no request head could be read.
#[derive(Debug, PartialEq, Eq)]
enum HeadError {
    /// The client closed (or reset) before sending anything.
    ClosedEmpty,
    /// The client closed in the middle of a head.
    ClosedPartial,
    /// `timeout http-request` expired; `empty` if nothing at all arrived.
    Timeout {
        empty: bool,
    },
    Invalid(H1Error),
}

/// Serves one HTTP/1 client connection until it closes.
pub async fn serve<S: Sock>(client: S, sess: Session) {
    let rt = sess.rt.clone();
    let fe = &rt.proxies[sess.fe];
    let mut conn = H1Conn::default();
    let mut pending: Option<Buf> = None;
    let mut first = true;
    loop {
        let mut buf = match pending.take() {
            Some(buf) => buf,
            None if first => Buf::take(rt.bufsize),
            None => {
                if !wait_next_request(&client, fe.timeouts.http_keep_alive, &rt.global).await {
                    return;
                }
                Buf::take(rt.bufsize)
            }
        };
        if let Err(e) = read_request_head(&client, &mut buf, &mut conn.req, rt.max_head, fe.timeouts.http_request).await
        {
            // As haproxy 2.6 (without `option http-ignore-probes`), a connection that
            // ends or times out before its first request gets a 400 or 408; between
            // requests of a kept-alive connection, it closes silently.
            match e {
                HeadError::ClosedEmpty if !first => {}
                HeadError::Timeout { empty } if empty && !first => {}
                HeadError::Timeout { .. } => close_with_error(&client, fe, 408).await,
                HeadError::ClosedEmpty | HeadError::ClosedPartial | HeadError::Invalid(_) => {
                    close_with_error(&client, fe, 400).await
                }
            }
            return;
        }
        first = false;
        match Box::pin(stream::run(&client, &sess, &mut conn, buf)).await {
            Next::KeepAlive(next) => pending = next,
            Next::Close => return,
        }
    }
}

/// Waits, holding no buffer, until the next request starts. `false` when the
/// connection should close instead: keep-alive timeout, soft stop, error.
async fn wait_next_request<S: Sock>(client: &S, timeout: Option<Duration>, global: &GlobalRt) -> bool {
    let stop = global.stop_notify.notified();
    tokio::pin!(stop);
    stop.as_mut().enable();
    if global.is_stopping() {
        return false;
    }
    // The readiness left by the previous request's last read says nothing about the
    // next one: each wake-up is confirmed by a peek, else `timeout http-keep-alive`
    // would never start.
    let next_bytes = async {
        loop {
            client.readable().await?;
            if crate::io::input_pending(client) {
                return std::io::Result::Ok(());
            }
        }
    };
    let ready = async {
        match timeout {
            Some(d) => tokio::time::timeout(d, next_bytes).await.is_ok_and(|r| r.is_ok()),
            None => next_bytes.await.is_ok(),
        }
    };
    tokio::select! {
        ok = ready => ok,
        _ = stop => false,
    }
}

/// Reads until `head` holds a complete request head at the start of `buf`.
async fn read_request_head<S: Sock>(
    client: &S,
    buf: &mut Buf,
    head: &mut Head,
    max_head: usize,
    timeout: Option<Duration>,
) -> Result<(), HeadError> {
    let mut deadline: Option<Instant> = None;
    loop {
        if !buf.is_empty() {
            match parse_request(buf, max_head, head) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => return Err(HeadError::Invalid(e)),
            }
        }
        // PERF: the clock is read only when the head is not there in one go.
        let left = match timeout {
            Some(d) => {
                let at = *deadline.get_or_insert_with(|| Instant::now() + d);
                Some(at.saturating_duration_since(Instant::now()))
            }
            None => None,
        };
        let empty = buf.is_empty();
        match crate::io::read_some(client, buf.vec(), left).await {
            Ok(0) | Err(IoError::Closed) | Err(IoError::Io(_)) => {
                return Err(if empty { HeadError::ClosedEmpty } else { HeadError::ClosedPartial })
            }
            Ok(_) => {}
            Err(IoError::Timeout) => return Err(HeadError::Timeout { empty }),
        }
    }
}

/// Sends an error page as the H1 mux does (`Connection: close`), then closes softly.
async fn close_with_error<S: Sock>(client: &S, fe: &ProxyRt, code: u16) {
    let page = fe.errors.mux(code);
    if write_all(client, &page, fe.timeouts.client).await.is_ok() {
        linger(client).await;
    }
}

/// Half-closes, then discards what the client still sends for a short while.
async fn linger<S: Sock>(client: &S) {
    crate::io::shutdown_write(client);
    let mut scratch = Vec::with_capacity(4096);
    let deadline = Instant::now() + LINGER;
    loop {
        scratch.clear();
        let left = deadline.saturating_duration_since(Instant::now());
        match crate::io::read_some(client, &mut scratch, Some(left)).await {
            Ok(n) if n > 0 => continue,
            _ => return,
        }
    }
}
