//! The response side of an HTTP/1 exchange: read the head from the server (forwarding
//! interim 1xx responses), hand it to the stream's response analysers as the neutral
//! message, write it to the client with the body bytes that came with it in one write,
//! stream the rest of the body, and switch to a tunnel after a successful upgrade.
//! HAProxy counterpart: h1 mux input on the back side, http_wait_for_response() and
//! http_response_forward_body() in http_ana.c.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rampart_cfg::model::RetryOnResponse;

use crate::backend::BackSock;
use rampart_proto::h1::{parse_response, Framing, Head, Method, Version};

use crate::action::state::TimeoutOverride;
use crate::buf::Buf;
use crate::debug::Trace;
use crate::h1::body::{forward_rest, Body, BodyError};
use crate::h1::msg::fill;
use crate::h1::write::{response_conn_hdr, write_response_head, ConnHdr, OutFraming};
use crate::http::MsgHead;
use crate::io::{read_some, write_all, IoError, Sock};
use crate::session::types::Session;
use crate::splice::{forward, Activity};
use crate::stream::Verdict;

/// What the response side needs to know about the request.
#[derive(Debug, Clone, Copy)]
pub struct ReqInfo<'a> {
    pub method: Method,
    pub version: Version,
    /// The client asked to upgrade (`Connection: upgrade` + `Upgrade`).
    pub upgrade: bool,
    /// The client connection may stay open after this exchange.
    pub keep_client: bool,
    pub progress: &'a Progress,
    /// `-d` output of this stream.
    pub trace: Option<&'a Trace>,
    /// Timeouts `set-timeout` rules set for this stream.
    pub tmo: TimeoutOverride,
    /// The `retry-on` response conditions, when the request may be sent again.
    pub retry_on: Option<&'a RetryOnResponse>,
}

/// What the two halves of an exchange learn from each other while a request body
/// still streams to the server.
#[derive(Debug, Default)]
pub struct Progress {
    /// Moves whenever request body bytes reach the server: as for HAProxy, a server
    /// receiving a (slow) upload is not idle, so `timeout server` restarts.
    pub upload: Activity,
    /// Set once something of the response was sent to the client: an error page can
    /// no longer be sent.
    pub answered: AtomicBool,
    /// Counts the response bytes sent to the client (`%B`).
    pub download: Activity,
    /// The size of the response head sent to the client (the stats' `bout`).
    pub head: std::sync::atomic::AtomicU64,
}

/// How a forwarded response ended.
#[derive(Debug)]
pub struct RespEnd {
    pub keep_client: bool,
    pub server_reusable: bool,
    /// A response whose every byte came with its head is not written to the client
    /// yet: the caller first frees the server connection (parks it), then sends this
    /// ([`send_tail`]), so that the client's next request, or another client's that
    /// it prompts, finds the connection idle.
    pub tail: Option<Tail>,
}

/// The bytes of a whole response, head first, still to be written to the client.
#[derive(Debug)]
pub struct Tail {
    out: Buf,
    head_len: u64,
}

/// Writes `tail` to `client` within `timeout` and counts its body bytes in `progress`.
pub async fn send_tail<S: Sock>(
    client: &S,
    tail: Tail,
    progress: &Progress,
    timeout: Option<Duration>,
) -> Result<(), RespError> {
    write_all(client, &tail.out, timeout).await.map_err(|_| RespError::ClientGone)?;
    progress.download.add(tail.out.len() as u64 - tail.head_len);
    Ok(())
}

/// Why the response could not be forwarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RespError {
    /// Nothing was sent to the client yet: answer with this error page (502, 504).
    Status(u16),
    /// The server closed or reset before sending any byte (a retry may be possible).
    ServerClosedEarly,
    /// The client went away or stopped reading.
    ClientGone,
    /// Failed after the head was sent: nothing to do but close.
    Aborted,
    /// The response analysers answered instead of the server (their response is in
    /// the stream's head).
    Replaced,
    /// The response analysers closed the stream.
    Closed,
    /// The response analysers dropped the client silently.
    SilentDrop,
    /// A `retry-on` condition met before anything reached the client: send the
    /// request again.
    Retry,
}

/// Whether the outcome of reading a response head (`head`, with `status` when it was
/// read) meets a `retry-on` condition.
fn wants_retry(on: &RetryOnResponse, head: &Result<(), RespError>, status: u16) -> bool {
    match head {
        Ok(()) => on.statuses.contains(&status),
        Err(RespError::ServerClosedEarly) => on.empty_response,
        Err(RespError::Status(504)) => on.response_timeout,
        Err(RespError::Status(502)) => on.junk_response,
        Err(_) => false,
    }
}

/// Reads the response from `server`, runs `on_response` on its head, and forwards it
/// to `client`. `res` receives the neutral head, `h1` the HTTP/1 one.
#[allow(clippy::too_many_arguments)]
pub async fn forward_response<S: Sock, R>(
    client: &S,
    server: &BackSock,
    h1: &mut Head,
    res: &mut MsgHead,
    info: ReqInfo<'_>,
    sess: &Session,
    be_idx: usize,
    client_pending: &[u8],
    on_response: &mut R,
) -> Result<RespEnd, RespError>
where
    R: FnMut(&mut MsgHead, &[u8]) -> Verdict,
{
    let rt = &sess.rt;
    let fe = &rt.proxies[sess.fe];
    let be = &rt.proxies[be_idx];
    let (t_server, t_client) = (info.tmo.server(be.timeouts.server), fe.timeouts.client);
    let mut buf = Buf::take(rt.bufsize);
    let head = read_final_head(client, server, &mut buf, h1, info, &be.name, rt.max_head, t_server, t_client).await;
    if let Some(on) = info.retry_on {
        // once an interim response went out, the client has seen this attempt
        if !info.progress.answered.load(Ordering::Relaxed) && wants_retry(on, &head, h1.status) {
            return Err(RespError::Retry);
        }
    }
    head?;

    fill(res, h1);
    // the body bytes that came with the head share its buffer, as in HAProxy
    res.arena_max = super::front::rewrite_room(rt, buf.len());
    match on_response(res, &buf) {
        Verdict::Continue | Verdict::WaitBody(_) => {}
        Verdict::Reply | Verdict::Tarpit => return Err(RespError::Replaced),
        Verdict::Close => return Err(RespError::Closed),
        Verdict::SilentDrop => return Err(RespError::SilentDrop),
    }

    let tunnel =
        (h1.status == 101 && info.upgrade) || (info.method == Method::Connect && (200..300).contains(&h1.status));
    let until_close = h1.framing == Framing::UntilClose;
    // A soft stop that began during the exchange closes the connection after it.
    let keep_client = info.keep_client && !until_close && !tunnel && !rt.global.is_stopping();
    // A 2xx to CONNECT announces nothing: the connection is a tunnel from now on.
    let conn = match (tunnel, h1.status) {
        (true, 101) => ConnHdr::Upgrade,
        (true, _) => ConnHdr::None,
        (false, _) => response_conn_hdr(info.version, h1.version, keep_client, false),
    };

    let mut body = if tunnel { Body::Done } else { Body::new(h1.framing) };
    let here = body.take(&buf[h1.len..]).map_err(|_| RespError::Status(502))?;
    let mut out = Buf::take(rt.bufsize);
    write_response_head(&mut out, res.view(&buf), conn, out_framing(h1.framing));
    let head_len = out.len() as u64;
    out.extend_from_slice(&buf[h1.len..h1.len + here]);
    buf.consume(h1.len + here);
    info.progress.answered.store(true, Ordering::Relaxed);
    // Bytes after the end of the response: the server is confused, do not reuse it.
    let reusable = |buf: &Buf| buf.is_empty() && !until_close && h1.wants_keep_alive();
    if !tunnel && body.is_done() {
        info.progress.head.store(head_len, Ordering::Relaxed);
        let server_reusable = reusable(&buf);
        return Ok(RespEnd { keep_client, server_reusable, tail: Some(Tail { out, head_len }) });
    }
    write_all(client, &out, t_client).await.map_err(|_| RespError::ClientGone)?;
    info.progress.download.add(out.len() as u64 - head_len);
    info.progress.head.store(head_len, Ordering::Relaxed);
    drop(out);

    if tunnel {
        run_tunnel(client, server, &buf, client_pending, sess, be_idx, info.tmo).await;
        return Ok(RespEnd { keep_client: false, server_reusable: false, tail: None });
    }
    match forward_rest(server, client, &mut body, &mut buf, t_server, t_client, &info.progress.download).await {
        Ok(()) => {}
        Err(BodyError::To(_)) => return Err(RespError::ClientGone),
        Err(BodyError::From(_) | BodyError::Framing(_)) => return Err(RespError::Aborted),
    }
    let server_reusable = reusable(&buf);
    Ok(RespEnd { keep_client, server_reusable, tail: None })
}

/// The framing header the mux writes back if a rule removed the message's own.
pub fn out_framing(framing: Framing) -> OutFraming {
    match framing {
        Framing::Length(n) => OutFraming::Length(n),
        Framing::Chunked => OutFraming::Chunked,
        Framing::None | Framing::UntilClose => OutFraming::AsIs,
    }
}

/// Reads response heads until a final one (status >= 200 or 101), forwarding interim
/// responses to the client as they are (no rule runs on them).
#[allow(clippy::too_many_arguments)]
async fn read_final_head<S: Sock>(
    client: &S,
    server: &BackSock,
    buf: &mut Buf,
    res: &mut Head,
    info: ReqInfo<'_>,
    be_name: &str,
    max_head: usize,
    t_server: Option<Duration>,
    t_client: Option<Duration>,
) -> Result<(), RespError> {
    let mut interim = MsgHead::default();
    loop {
        read_head(server, buf, res, info.method, max_head, t_server, &info.progress.upload).await?;
        if let Some(trace) = info.trace {
            trace.response(be_name, buf, res);
        }
        if res.status >= 200 || res.status == 101 {
            return Ok(());
        }
        fill(&mut interim, res);
        let mut out = Buf::take(res.len + 16);
        write_response_head(&mut out, interim.view(buf), ConnHdr::None, OutFraming::AsIs);
        info.progress.answered.store(true, Ordering::Relaxed);
        write_all(client, &out, t_client).await.map_err(|_| RespError::ClientGone)?;
        buf.consume(res.len);
    }
}

/// Reads one response head into `res` (bytes in `buf`). `timeout` is the server's
/// inactivity: request bytes still reaching it (`upload`) count as activity.
async fn read_head(
    server: &BackSock,
    buf: &mut Buf,
    res: &mut Head,
    method: Method,
    max_head: usize,
    timeout: Option<Duration>,
    upload: &Activity,
) -> Result<(), RespError> {
    loop {
        if !buf.is_empty() {
            match parse_response(buf, max_head, method, res) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(_) => return Err(RespError::Status(502)),
            }
        }
        let empty = buf.is_empty();
        let seen = upload.get();
        match read_some(server, buf.vec(), timeout).await {
            Ok(0) if empty => return Err(RespError::ServerClosedEarly),
            Ok(0) => return Err(RespError::Status(502)),
            Ok(_) => {}
            Err(IoError::Timeout) if upload.get() != seen => {}
            Err(IoError::Timeout) => return Err(RespError::Status(504)),
            Err(_) if empty => return Err(RespError::ServerClosedEarly),
            Err(_) => return Err(RespError::Status(502)),
        }
    }
}

/// After `101 Switching Protocols` (or a CONNECT): bytes flow both ways untouched
/// under `timeout tunnel` until both sides closed. `pending` holds bytes the server
/// sent right after its head, `client_pending` bytes the client sent after its request.
async fn run_tunnel<S: Sock>(
    client: &S,
    server: &BackSock,
    pending: &[u8],
    client_pending: &[u8],
    sess: &Session,
    be_idx: usize,
    tmo: TimeoutOverride,
) {
    let fe = &sess.rt.proxies[sess.fe];
    let mut be = sess.rt.proxies[be_idx].timeouts;
    be.server = tmo.server(be.server);
    be.tunnel = tmo.tunnel(be.tunnel);
    let (up, down) = crate::splice::tunnel_timeouts(&fe.timeouts, &be);
    if !pending.is_empty() && write_all(client, pending, up.read).await.is_err() {
        return;
    }
    if !client_pending.is_empty() && write_all(server, client_pending, up.write).await.is_err() {
        return;
    }
    let activity = Activity::default();
    let _ =
        tokio::try_join!(forward(client, server, None, up, &activity), forward(server, client, None, down, &activity),);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_conditions_match_the_failure_they_name() {
        let on = RetryOnResponse { empty_response: true, statuses: vec![503], ..Default::default() };
        assert!(wants_retry(&on, &Ok(()), 503));
        assert!(!wants_retry(&on, &Ok(()), 500));
        assert!(wants_retry(&on, &Err(RespError::ServerClosedEarly), 0));
        assert!(!wants_retry(&on, &Err(RespError::Status(504)), 0));
        assert!(!wants_retry(&on, &Err(RespError::Status(502)), 0));
        let on = RetryOnResponse { junk_response: true, response_timeout: true, ..Default::default() };
        assert!(wants_retry(&on, &Err(RespError::Status(504)), 0));
        assert!(wants_retry(&on, &Err(RespError::Status(502)), 0));
        assert!(!wants_retry(&on, &Err(RespError::ServerClosedEarly), 0));
        assert!(!wants_retry(&on, &Err(RespError::ClientGone), 0));
    }
}
