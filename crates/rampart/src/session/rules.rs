//! `tcp-request connection` rules, then `tcp-request session` rules, run on a freshly
//! accepted connection before any mux sees it. They see the addresses (which they may
//! change for the whole connection) and the `sess.` variables (which then live with the
//! connection); no stream exists yet, so no payload, no `txn.` variables.
//! HAProxy counterpart: `tcp_exec_l4_rules()` and `tcp_exec_l5_rules()`
//! (src/tcp_rules.c), called from `session_accept_fd()` and `conn_complete_session()`.
//!
//! The two lists run back to back here: rampart has no handshake between them yet (TLS,
//! PROXY protocol) where HAProxy would wait.

use super::Session;
use crate::action::capture::Captured;
use crate::action::tcp::{run_tcp_rules, TcpExec};
use crate::action::{Rule, TcpAct, TcpFlow};
use crate::sample::ctx::Dir;
use crate::sample::vars::{Scope, VarStore, Vars};

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

/// Runs the connection rules, then the session rules, of the session's frontend (the
/// ones of its named `defaults` section first, as they are compiled in front).
pub fn run(sess: &mut Session) -> Accepted {
    let rt = sess.rt.clone();
    let fe = &rt.proxies[sess.fe];
    let sess_vars = VarStore::new(Scope::Sess);
    let lists: [(&[Rule<TcpAct>], Accepted); 2] =
        [(&fe.rules.tcp_conn, Accepted::Reset), (&fe.rules.tcp_sess, Accepted::Close)];
    for (rules, on_reject) in lists {
        if rules.is_empty() {
            continue;
        }
        let mut scratch = Vec::new();
        let mut x = TcpExec {
            rt: &rt,
            fe: sess.fe,
            be: None,
            dir: Dir::Request,
            conn: &mut sess.conn,
            payload: None,
            req: None,
            res: None,
            caps: &mut Captured::default(),
            vars: Vars { proc: Some(&rt.proc_vars), sess: Some(&sess_vars), ..Vars::default() },
            first_req: true,
            scratch: &mut scratch,
        };
        match run_tcp_rules(rules, true, &mut x) {
            TcpFlow::Continue | TcpFlow::Accept | TcpFlow::Wait | TcpFlow::CloseServer => {}
            TcpFlow::Reject => {
                if matches!(on_reject, Accepted::Reset) {
                    fe.fe.denied_conn.inc();
                } else {
                    fe.fe.denied_sess.inc();
                }
                return on_reject;
            }
            TcpFlow::SilentDrop => {
                fe.fe.denied_req.inc();
                return Accepted::SilentDrop;
            }
        }
    }
    Accepted::Serve((!sess_vars.is_empty()).then(|| Box::new(sess_vars)))
}
