//! One HTTP request/response exchange, from a parsed request head to the end of the
//! response, in HAProxy's analyser order:
//!
//! 1. `http-request` rules (`return` answers here),
//! 2. backend switching (`use_backend` / `default_backend`),
//! 3. server connection: reuse an idle one as `http-reuse` allows, or connect (retries),
//! 4. forward the request head and body (the body streams while the response comes),
//! 5. read the response head (interim 1xx forwarded), forward head and body,
//! 6. decide what happens to both connections (keep-alive, pool, close, tunnel).
//!
//! HAProxy counterpart: stream.c process_stream() with http_ana.c's analysers.
//!
//! - `body`: body framing and forwarding
//! - `response`: reading and forwarding the response

pub mod body;
mod response;

use std::net::IpAddr;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;

use rampart_cfg::model::{HttpConnMode, HttpReuse};
use rampart_proto::h1::{Head, Method, Version};

use crate::backend::{self, Reuse, ServerConn};
use crate::buf::{Buf, HeadPair};
use crate::debug::{self, Trace};
use crate::errors::StreamError;
use crate::http::{request_conn_hdr, write_request_head, ReqEdits};
use crate::io::{write_all, Sock};
use crate::mux::h1::H1Conn;
use crate::proxy::{ProxyRt, Reply};
use crate::session::Session;
use body::{forward_rest, Body, BodyError};
use response::{forward_response, RespEnd, RespError};

/// What the client connection does after an exchange.
#[derive(Debug)]
pub enum Next {
    /// Wait for the next request; the buffer holds bytes of it already received.
    KeepAlive(Option<Buf>),
    Close,
}

/// Runs one exchange for the request whose head is parsed in `heads.req` and whose
/// bytes start `req`. Returns what the client connection does next.
pub async fn run<S: Sock>(client: &S, sess: &Session, conn: &mut H1Conn, heads: &mut HeadPair, req: Buf) -> Next {
    if !debug::on() {
        return exchange(client, sess, conn, heads, req, None).await;
    }
    let fe = &sess.rt.proxies[sess.fe];
    let trace = Trace::accept(&fe.name, sess.lfd, client.as_raw_fd(), sess.peer);
    trace.request(&fe.name, &req, &heads.req);
    let next = exchange(client, sess, conn, heads, req, Some(&trace)).await;
    let px = fe.fe.backend.map_or(fe, |be| &sess.rt.proxies[be]);
    trace.end(&px.name);
    next
}

async fn exchange<S: Sock>(
    client: &S,
    sess: &Session,
    conn: &mut H1Conn,
    heads: &mut HeadPair,
    mut req: Buf,
    trace: Option<&Trace>,
) -> Next {
    let rt = &sess.rt;
    let fe = &rt.proxies[sess.fe];
    let head = &heads.req;
    let keep_client = head.wants_keep_alive()
        && fe.http_conn_mode != HttpConnMode::Close
        && !head.cl_and_te
        && !rt.global.is_stopping();

    if let Some(reply) = &fe.fe.http_return {
        return send_reply(client, fe, reply, head, req, keep_client).await;
    }

    // The request head and the body bytes already here, in one write.
    let mut body = Body::new(head.framing);
    let body_here = match body.take(&req[head.len..]) {
        Ok(n) => n,
        Err(_) => return send_mux_error(client, fe, 400).await,
    };
    let (method, version) = (head.method, head.version);
    let Some(be_idx) = fe.fe.backend else {
        req.consume(head.len + body_here);
        let answering = Answering { method, version, keep: keep_client && body.is_done(), rest: req };
        return send_error(client, fe, None, 503, answering).await;
    };
    let be = &rt.proxies[be_idx];
    be.be.cum_conn.inc();
    let keep_server = be.http_conn_mode == HttpConnMode::KeepAlive && fe.http_conn_mode == HttpConnMode::KeepAlive;
    let upgrade = head.upgrade.is_some() && head.conn.upgrade;
    let mut out = Buf::take(rt.bufsize);
    write_request_head(
        &mut out,
        &req,
        head,
        ReqEdits {
            conn: request_conn_hdr(head.version, keep_server, upgrade),
            forwarded_for: forwarded_for(fe, be, sess, &req, head),
        },
    );
    out.extend_from_slice(&req[head.len..head.len + body_here]);
    req.consume(head.len + body_here);
    let replayable = body.is_done();

    let reuse = reuse_policy(be.http_reuse, conn.first_done, head.method, replayable);
    let server = match conn.private.take() {
        Some(sc) if be.http_reuse == HttpReuse::Never => Ok(*sc),
        _ => match backend::connect_unless_aborted(client, rt, be_idx, reuse).await {
            Some(r) => r,
            // `option abortonclose`: the client left before a server took the request.
            None => return Next::Close,
        },
    };
    let Ok(mut sc) = server else {
        let answering = Answering { method, version, keep: keep_client && body.is_done(), rest: req };
        return send_error(client, fe, Some(be), 503, answering).await;
    };
    conn.first_done = true;
    trace_server(trace, &sc);

    // Send; a pooled connection that turns out dead is replaced once, transparently.
    if write_all(&sc.stream, &out, be.timeouts.server).await.is_err() {
        match retry_on_new_conn(sess, be_idx, &sc, &out, replayable).await {
            Some(new) => {
                sc = new;
                trace_server(trace, &sc);
            }
            None => {
                let answering = Answering { method, version, keep: keep_client && body.is_done(), rest: req };
                return send_error(client, fe, Some(be), 502, answering).await;
            }
        }
    }

    let progress = response::Progress::default();
    let info = response::ReqInfo {
        method: head.method,
        version: head.version,
        upgrade,
        keep_client,
        progress: &progress,
        trace,
    };
    let mut result = if body.is_done() {
        forward_response(client, &sc.stream, &mut heads.res, info, sess, be_idx, &req).await
    } else {
        let fwd = forward_request_and_response(client, &sc, &mut heads.res, info, sess, be_idx, &mut body, &mut req);
        fwd.await
    };
    if matches!(result, Err(RespError::ServerClosedEarly)) && sc.from_pool {
        if let Some(new) = retry_on_new_conn(sess, be_idx, &sc, &out, replayable).await {
            sc = new;
            trace_server(trace, &sc);
            result = forward_response(client, &sc.stream, &mut heads.res, info, sess, be_idx, &req).await;
        }
    }
    drop(out);

    let code = match result {
        Ok(end) => return finish(sess, conn, be_idx, sc, end, body.is_done() && keep_server, req),
        Err(RespError::ClientGone | RespError::Aborted) => return Next::Close,
        Err(RespError::Status(code)) => code,
        Err(RespError::ServerClosedEarly) => 502,
    };
    drop(sc);
    let answering = Answering { method, version, keep: keep_client && body.is_done(), rest: req };
    send_error(client, fe, Some(be), code, answering).await
}

/// `-d`: the stream is carried by `sc` from now on.
fn trace_server(trace: Option<&Trace>, sc: &ServerConn) {
    if let Some(t) = trace {
        t.set_server(sc.stream.as_raw_fd());
    }
}

/// After a complete response: park or keep the server connection, and keep the client
/// connection if both sides agree.
fn finish(
    sess: &Session,
    conn: &mut H1Conn,
    be_idx: usize,
    sc: ServerConn,
    end: RespEnd,
    keep_server: bool,
    req: Buf,
) -> Next {
    let rt = &sess.rt;
    if keep_server && end.server_reusable {
        if rt.proxies[be_idx].http_reuse == HttpReuse::Never {
            conn.private = Some(Box::new(sc));
        } else {
            sc.park(rt, be_idx);
        }
    }
    if !end.keep_client {
        return Next::Close;
    }
    Next::KeepAlive(if req.is_empty() { None } else { Some(req) })
}

/// The request body still streams in while the response may already come back (a
/// server may answer before reading everything). If the response ends first, the
/// connections cannot be reused: the exchange ends with a close.
///
/// As in HAProxy, `timeout server` bounds this phase (restarted by every body byte the
/// server receives), not `timeout client`: a client pausing in its upload gets a 504
/// when the server timeout strikes. An invalid chunk gets a 400 if nothing of the
/// response was sent yet.
#[allow(clippy::too_many_arguments)]
async fn forward_request_and_response<S: Sock>(
    client: &S,
    sc: &ServerConn,
    res: &mut Head,
    info: response::ReqInfo<'_>,
    sess: &Session,
    be_idx: usize,
    body: &mut Body,
    req: &mut Buf,
) -> Result<RespEnd, RespError> {
    let fe = &sess.rt.proxies[sess.fe];
    let be = &sess.rt.proxies[be_idx];
    let client_timeout = if be.timeouts.server.is_some() { None } else { fe.timeouts.client };
    let up = forward_rest(client, &sc.stream, body, req, client_timeout, be.timeouts.server, &info.progress.upload);
    let down = forward_response(client, &sc.stream, res, info, sess, be_idx, &[]);
    tokio::pin!(up, down);
    let mut up_done = false;
    loop {
        tokio::select! {
            r = &mut down => {
                let mut end = r?;
                if !up_done {
                    end.keep_client = false;
                    end.server_reusable = false;
                }
                return Ok(end);
            }
            r = &mut up, if !up_done => {
                up_done = true;
                match r {
                    Ok(()) => {}
                    Err(BodyError::Framing(_)) if !info.progress.answered.load(Ordering::Relaxed) => {
                        return Err(RespError::Status(400))
                    }
                    Err(_) => return Err(RespError::Aborted),
                }
            }
        }
    }
}

/// A connection taken from the pool failed before any response byte: open a new one
/// to the same server and send the request again, if the request can be replayed.
async fn retry_on_new_conn(
    sess: &Session,
    be_idx: usize,
    sc: &ServerConn,
    out: &[u8],
    replayable: bool,
) -> Option<ServerConn> {
    if !sc.from_pool || !replayable {
        return None;
    }
    let new = backend::reconnect(&sess.rt, be_idx, sc.srv).await.ok()?;
    write_all(&new.stream, out, sess.rt.proxies[be_idx].timeouts.server).await.ok()?;
    Some(new)
}

/// Which idle connections this request may use (`http-reuse`).
///
/// COMPAT: with `safe` (the default), HAProxy sends the first request of a client
/// connection on a new server connection, so that a server closing an idle connection
/// cannot make that request fail. rampart gives the same guarantee more cheaply: a
/// first request that can be replayed (idempotent method, whole request already in
/// hand) may use an idle connection, and if that connection fails before any response
/// byte the request is sent again on a new connection, invisibly to the client.
fn reuse_policy(mode: HttpReuse, first_done: bool, method: Method, replayable: bool) -> Reuse {
    match mode {
        HttpReuse::Never => Reuse::No,
        HttpReuse::Always => Reuse::MinUses(0),
        _ if first_done => Reuse::MinUses(0),
        HttpReuse::Aggressive => Reuse::MinUses(2),
        HttpReuse::Safe if method.is_idempotent() && replayable => Reuse::MinUses(0),
        HttpReuse::Safe => Reuse::No,
    }
}

/// The `X-Forwarded-For` header to add, if `option forwardfor` applies. As HAProxy
/// (http_process_request): enabled by the frontend or the backend; the backend's header
/// name wins; `if-none` holds only if neither side asks to always add; a client in
/// either side's `except` network gets no header.
fn forwarded_for<'a>(
    fe: &'a ProxyRt,
    be: &'a ProxyRt,
    sess: &Session,
    src: &[u8],
    head: &Head,
) -> Option<(&'a str, IpAddr)> {
    let sides = [fe.forwardfor.as_ref(), be.forwardfor.as_ref()];
    let header = sides[1].or(sides[0])?.header.as_str();
    let ip = sess.peer?.ip();
    if sides.iter().flatten().any(|ff| ff.except.is_some_and(|net| net.contains(ip))) {
        return None;
    }
    let always = sides.iter().flatten().any(|ff| !ff.if_none);
    if !always && crate::http::has_header(src, head, header) {
        return None;
    }
    Some((header, ip))
}

/// What a synthetic response (error page, `http-request return`) needs to know about
/// the request it answers.
struct Answering {
    method: Method,
    version: Version,
    /// The client connection may stay open after the response: the client asked for it
    /// and the whole request was read.
    keep: bool,
    /// Bytes received after the request (the start of the next one).
    rest: Buf,
}

/// Answers with an `http-request return` reply.
async fn send_reply<S: Sock>(
    client: &S,
    fe: &ProxyRt,
    reply: &Reply,
    head: &Head,
    req: Buf,
    keep_client: bool,
) -> Next {
    let mut req = req;
    let mut body = Body::new(head.framing);
    let here = body.take(&req[head.len..]).unwrap_or(0);
    req.consume(head.len + here);
    // The request body is not waited for: if it is not all here, the connection closes.
    let answering =
        Answering { method: head.method, version: head.version, keep: keep_client && body.is_done(), rest: req };
    send_response(client, fe, &reply.head, &reply.body, Version::Http11, true, answering).await
}

/// Sends a response built by rampart: `head` (status and header lines, each ending
/// with CRLF) gets the
/// `Connection` header this exchange needs, the body is left out for HEAD.
async fn send_response<S: Sock>(
    client: &S,
    fe: &ProxyRt,
    head: &[u8],
    body: &[u8],
    res_version: Version,
    has_length: bool,
    req: Answering,
) -> Next {
    let keep = req.keep && has_length;
    let conn = crate::http::response_conn_hdr(req.version, res_version, keep, false);
    let mut out = Buf::take(head.len() + body.len() + 64);
    out.extend_from_slice(head);
    out.extend_from_slice(conn.line());
    out.extend_from_slice(b"\r\n");
    if req.method != Method::Head {
        out.extend_from_slice(body);
    }
    if write_all(client, &out, fe.timeouts.client).await.is_err() || !keep {
        return Next::Close;
    }
    Next::KeepAlive(if req.rest.is_empty() { None } else { Some(req.rest) })
}

/// Sends the error page for `code` produced by the stream (502, 503, 504), the
/// backend's `errorfile` first, then the frontend's, then HAProxy's default. Like any
/// response it keeps the client connection when the request allows.
async fn send_error<S: Sock>(client: &S, fe: &ProxyRt, be: Option<&ProxyRt>, code: u16, req: Answering) -> Next {
    let pages = match be {
        Some(be) if be.errors.is_custom(code) => &be.errors,
        _ => &fe.errors,
    };
    match pages.stream(code) {
        StreamError::Page(p) => send_response(client, fe, &p.head, &p.body, p.version, p.has_length, req).await,
        StreamError::Raw(bytes) => {
            let _ = write_all(client, bytes, fe.timeouts.client).await;
            Next::Close
        }
        StreamError::Nothing => Next::Close,
    }
}

/// Sends an error page as the H1 mux does (400: mixed case, `Connection: close`).
async fn send_mux_error<S: Sock>(client: &S, fe: &ProxyRt, code: u16) -> Next {
    let page = fe.errors.mux(code);
    let _ = write_all(client, &page, fe.timeouts.client).await;
    Next::Close
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_reuse_lets_only_replayable_first_requests_take_idle_connections() {
        assert_eq!(reuse_policy(HttpReuse::Safe, false, Method::Get, true), Reuse::MinUses(0));
        assert_eq!(reuse_policy(HttpReuse::Safe, false, Method::Post, true), Reuse::No);
        assert_eq!(reuse_policy(HttpReuse::Safe, false, Method::Get, false), Reuse::No);
        assert_eq!(reuse_policy(HttpReuse::Safe, true, Method::Post, false), Reuse::MinUses(0));
        assert_eq!(reuse_policy(HttpReuse::Never, true, Method::Get, true), Reuse::No);
        assert_eq!(reuse_policy(HttpReuse::Aggressive, false, Method::Post, false), Reuse::MinUses(2));
        assert_eq!(reuse_policy(HttpReuse::Always, false, Method::Post, false), Reuse::MinUses(0));
    }
}
