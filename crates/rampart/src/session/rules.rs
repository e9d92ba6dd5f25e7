//! `tcp-request connection` rules, then `tcp-request session` rules, run on a freshly
//! accepted connection before any mux sees it. They see the addresses (which they may
//! change for the whole connection) and the `sess.` variables (which then live with the
//! connection); no stream exists yet, so no payload, no `txn.` variables.
//! HAProxy counterpart: `tcp_exec_l4_rules()` and `tcp_exec_l5_rules()`
//! (src/tcp_rules.c), called from `session_accept_fd()` and `conn_complete_session()`.
//!
//! The PROXY protocol header (`accept-proxy`, `expect-proxy`) is read between the two
//! lists, as HAProxy's handshake runs between them (`session::start`).

use super::Session;
use crate::action::capture::Captured;
use crate::action::tcp::TcpExec;
use crate::action::{Rule, TcpAct, TcpFlow};
use crate::io::Sock;
use crate::sample::ctx::Dir;
use crate::sample::vars::{Scope, VarStore, Vars};
use crate::stick::Trackers;

/// What the rules decided about a connection.
#[derive(Debug)]
pub enum Accepted {
    /// Serve it, with the `sess.` variables the rules set, if any.
    Serve(Option<Box<VarStore>>),
    /// `tcp-request connection reject`: close with a reset, sending nothing.
    Reset,
    /// `tcp-request session reject`: close, sending nothing (a FIN, or the reset the
    /// kernel sends when the client's first bytes are left unread).
    Close,
    /// `silent-drop`: close without telling the client.
    SilentDrop,
}

/// What the connection rules let through: the `sess.` variables they set, and
/// whether an `expect-proxy layer4` rule asked for a PROXY header.
#[derive(Debug)]
pub struct ConnPassed {
    pub vars: VarStore,
    pub expect_proxy: bool,
}

/// Runs the `tcp-request connection` rules of the session's frontend (the ones of its
/// named `defaults` section first, as they are compiled in front): they see the
/// socket's addresses, before any PROXY header.
pub fn run_connection<S: Sock>(sess: &mut Session, sock: &S) -> Result<ConnPassed, Accepted> {
    let rt = sess.rt.clone();
    let fe = &rt.proxies[sess.fe];
    let vars = VarStore::new(Scope::Sess);
    let mut expect_proxy = false;
    let before = (sess.conn.src, sess.conn.ext.as_ref().and_then(|e| e.dst));
    let flow = run_list(sess, &fe.rules.tcp_conn, &vars, &mut expect_proxy, sock);
    if before != (sess.conn.src, sess.conn.ext.as_ref().and_then(|e| e.dst)) {
        // PERF: only when a rule changed an address
        sess.conn.pin_fc();
    }
    match flow {
        TcpFlow::Reject => {
            fe.fe.denied_conn.inc();
            if let Some(c) = sess.listener_counters() {
                c.denied_conn.inc();
            }
            Err(Accepted::Reset)
        }
        TcpFlow::SilentDrop => {
            fe.fe.denied_req.inc();
            Err(Accepted::SilentDrop)
        }
        _ => Ok(ConnPassed { vars, expect_proxy }),
    }
}

/// Runs the `tcp-request session` rules (after any PROXY header), with the `sess.`
/// variables the connection rules set.
pub fn run_session<S: Sock>(sess: &mut Session, vars: VarStore, sock: &S) -> Accepted {
    let rt = sess.rt.clone();
    let fe = &rt.proxies[sess.fe];
    match run_list(sess, &fe.rules.tcp_sess, &vars, &mut false, sock) {
        TcpFlow::Reject => {
            fe.fe.denied_sess.inc();
            if let Some(c) = sess.listener_counters() {
                c.denied_sess.inc();
            }
            Accepted::Close
        }
        TcpFlow::SilentDrop => {
            fe.fe.denied_req.inc();
            Accepted::SilentDrop
        }
        _ => {
            if let Some(sc) = sess.conn.sess_trackers() {
                sc.session();
            }
            Accepted::Serve((!vars.is_empty()).then(|| Box::new(vars)))
        }
    }
}

/// One list, as `run_tcp_rules` runs it on final data, noting `expect-proxy` (which
/// only the session acts on); the socket options the rules asked for (`set-mark`,
/// `set-tos`) are set on `sock` once the list ended.
fn run_list<S: Sock>(
    sess: &mut Session,
    rules: &[Rule<TcpAct>],
    vars: &VarStore,
    expect_proxy: &mut bool,
    sock: &S,
) -> TcpFlow {
    if rules.is_empty() {
        return TcpFlow::Continue;
    }
    let rt = sess.rt.clone();
    let mut scratch = Vec::new();
    // HAProxy 3.x `do-log` before any stream: a record of the session alone (its
    // accept is now, the connection and session rules run at the accept), which
    // HAProxy 3.2 reports as a request the proxy ended (`PR`), status 0, nothing
    // measured but its total time (`-1/-1/-1/-1/0 0 0 - - PR--` in `httplog`)
    let session_log = rules.iter().any(|r| matches!(r.act, TcpAct::DoLog)).then(|| {
        let mut l = crate::log::StreamLog {
            cause: crate::log::Cause::Proxy,
            phase: crate::log::Phase::Request,
            status: Some(0),
            ..Default::default()
        };
        l.end = Some(l.accept);
        l
    });
    // the session's tracked entries so far (those of the connection rules), to add to
    let mut sc = take_trackers(&mut sess.conn);
    let mut x = TcpExec {
        rt: &*rt,
        fe: sess.fe,
        be: None,
        dir: Dir::Request,
        conn: &mut sess.conn,
        payload: None,
        req: None,
        res: None,
        caps: &mut Captured::default(),
        vars: Vars { proc: Some(&rt.proc_vars), sess: Some(vars), ..Vars::default() },
        first_req: true,
        scratch: &mut scratch,
        // HAProxy notes the last rule per stream: connection rules run before one
        last_rule: None,
        // not an action of these lists
        log_level: Default::default(),
        sc: Some(&mut sc),
        http: false,
        fc: Default::default(),
        // no stream yet: `do-log` renders the session alone
        log: session_log.as_ref(),
        lua: None,
        final_data: false,
        resolving: None,
        chan: None,
    };
    let mut flow = TcpFlow::Continue;
    for rule in rules {
        if rule.cond.as_ref().is_some_and(|c| !c.eval(&x.ctx())) {
            continue;
        }
        if matches!(rule.act, TcpAct::ExpectProxy) {
            *expect_proxy = true;
            continue;
        }
        flow = rule.act.exec(&mut x);
        if flow != TcpFlow::Continue {
            break;
        }
    }
    if let Some(fc) = x.fc.take() {
        crate::io::set_fc(sock, fc.mark, fc.tos);
    }
    put_trackers(&mut sess.conn, sc);
    flow
}

/// The session's trackers, out of its addresses for the rules to add to (the session
/// holds the only reference while its rules run).
fn take_trackers(conn: &mut crate::sample::ctx::ConnInfo) -> Trackers {
    let Some(ext) = conn.ext.as_mut() else { return Trackers::default() };
    let ext = std::sync::Arc::make_mut(ext);
    let Some(sc) = ext.sc.take() else { return Trackers::default() };
    match std::sync::Arc::try_unwrap(sc) {
        Ok(sc) => sc,
        Err(shared) => {
            // not expected: leave them as they are, the rules then track nothing more
            debug_assert!(false, "the session's trackers are shared before its rules ran");
            ext.sc = Some(shared);
            Trackers::default()
        }
    }
}

/// Gives the session's trackers back to its addresses (every stream copies them).
fn put_trackers(conn: &mut crate::sample::ctx::ConnInfo, sc: Trackers) {
    if sc.is_empty() {
        return;
    }
    let ext = conn.ext.get_or_insert_with(Default::default);
    std::sync::Arc::make_mut(ext).sc = Some(std::sync::Arc::new(sc));
}
