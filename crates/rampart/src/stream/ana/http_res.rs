//! `tcp-response content` rules of the backend, `stick store-response` rules, then
//! `http-response` rules (backend, then frontend) on the server's response head, the persistence cookie and `capture
//! cookie` (`super::cookie`), `option checkcache` (`super::checkcache`), and `http-after-response` rules
//! (backend, then frontend) on every response, built ones included, just before the
//! front mux writes it.
//! HAProxy counterpart: `tcp_inspect_response()` (src/tcp_rules.c),
//! `http_process_res_common()` and `http_res_get_intercept_rule()` (src/http_ana.c).

use super::http_req::verdict;
use super::Verdict;
use crate::action::capture::CapDir;
use crate::action::http::{run_rules_from, Exec};
use crate::action::state::StreamState;
use crate::action::tcp::{run_tcp_rules, TcpExec};
use crate::action::{Flow, HttpAct, Rule, TcpFlow};
use crate::http::{MsgHead, Synth};
use crate::proxy::ProxyRt;
use crate::sample::ctx::Dir;
use crate::sample::vars::VarStore;
use crate::stream::Stream;

/// What the response analysers work with besides the response head.
///
/// The variable stores are held mutably (not shared) so that the state can live in the
/// front mux's future across its awaits.
pub struct ResState<'t, 'rt> {
    pub synth: &'t mut MsgHead,
    pub vars_txn: &'t mut VarStore,
    pub vars_reqres: &'t mut VarStore,
    pub sess_vars: &'t mut VarStore,
    pub scratch: &'t mut Vec<u8>,
    pub strict: &'t mut bool,
    pub reply: &'t mut Option<Synth<'rt>>,
    pub st: &'t mut StreamState,
}

/// The proxies whose response rules run, in order: the backend, then the frontend
/// (once for a `listen`).
fn proxies<'rt>(s: &Stream<'rt>) -> impl Iterator<Item = (usize, &'rt ProxyRt)> + 'rt {
    let rt = s.rt;
    let be = s.be.filter(|&b| b != s.fe);
    be.into_iter().chain(std::iter::once(s.fe)).map(move |i| (i, &rt.proxies[i]))
}

/// Captures the frontend's response headers (`capture response header`), then runs
/// the `http-response` rules on the server's response `res` (slices into `buf`).
/// `body`: the response body data in hand, once a `wait-for-body` waited for it. After
/// a [`Verdict::WaitBody`], calling again runs the rules that follow the
/// `wait-for-body`; after a [`Verdict::LuaWait`] (once the wait is over), it resumes
/// the Lua action that waited.
pub fn run<'rt>(
    s: &Stream<'rt>,
    res: &mut MsgHead,
    buf: &[u8],
    body: Option<&[u8]>,
    st: &mut ResState<'_, 'rt>,
) -> Verdict {
    let resume = st.st.res_resume.take();
    if resume.is_none() {
        st.vars_reqres_start(s);
        let v = tcp_response(s, st);
        if v != Verdict::Continue {
            return v;
        }
        st.st.caps.headers(CapDir::Res, &s.rt.proxies[s.fe].rules.captures.res, res.view(buf));
        store_response(s, res, buf, st);
    }
    let mut waited_in = resume;
    for (idx, px) in proxies(s) {
        let mut start = 0;
        if let Some((at, next)) = waited_in {
            // the lists before the one that waited ran already
            if at != idx {
                continue;
            }
            waited_in = None;
            start = next;
        }
        let list = ResList { rules: &px.rules.http_res, start, px: idx, body };
        let (flow, at) = run_list(s, list, res, buf, st);
        if let Flow::WaitBody(w) = flow {
            st.st.res_resume = Some((idx, at + 1));
            return Verdict::WaitBody(w);
        }
        if let Flow::LuaWait(w) = flow {
            // the same rule runs again, and resumes the script
            st.st.res_resume = Some((idx, at));
            return Verdict::LuaWait(w);
        }
        if ends(flow) {
            return verdict(flow);
        }
    }
    let sets_cookie = super::checkcache::server_sets_cookie(s, res, buf);
    let ignore = st.st.persist == crate::action::state::Persist::Ignore;
    let info = super::cookie::ResInfo { s, direct: st.st.direct, dates: st.st.cookie_dates, ignore };
    let c = &mut st.st.log.cookie;
    let mut log = super::cookie::CookieLogRef { res: &mut c.res, srv: &mut c.srv };
    super::cookie::response(info, res, buf, st.scratch, &mut log);
    if let Some(v) = super::checkcache::check(s, sets_cookie, res, buf, st) {
        return v;
    }
    after(s, res, buf, st)
}

/// The backend's `tcp-response content` rules, once the response head arrived. As in
/// HAProxy 2.6, whose response inspection runs as soon as the server connection is up,
/// they see no HTTP response (`status`, `res.hdr` find nothing) nor payload: the
/// connection, the variables and the stream's state. Nothing waits: the inspection is
/// final (`wait_end` is true), as in HAProxy for a complete response (`CF_EOI`).
/// `close` is refused at startup in HTTP backends.
///
/// COMPAT: HAProxy waits (up to `tcp-response inspect-delay`) on a response whose
/// body is still arriving; rampart decides on the head.
///
/// COMPAT: HAProxy decides before the server answers (a rejecting server finds its
/// connection closed while it answers); rampart decides on the head (the answer is
/// read, then dropped). The client sees the same close.
fn tcp_response(s: &Stream<'_>, st: &mut ResState<'_, '_>) -> Verdict {
    let Some(be) = s.be else { return Verdict::Continue };
    let rules = &s.rt.proxies[be].rules.tcp_res;
    if rules.is_empty() {
        return Verdict::Continue;
    }
    let vars = crate::sample::vars::Vars {
        proc: Some(&s.rt.proc_vars),
        sess: Some(&*st.sess_vars),
        txn: Some(&*st.vars_txn),
        reqres: Some(&*st.vars_reqres),
        check: None,
    };
    let ResState { st: state, scratch, .. } = st;
    let mut x = TcpExec {
        rt: s.rt,
        fe: s.fe,
        be: s.be,
        dir: Dir::Response,
        conn: &mut state.conn,
        payload: None,
        req: None,
        res: None,
        caps: &mut state.caps,
        vars,
        first_req: s.first_req,
        scratch,
        last_rule: state.last_rule,
        log_level: state.log.level,
        // `tcp-response content` has no tracking action
        sc: None,
        http: true,
        fc: state.fc,
        log: Some(&state.log),
        // (the inspection is final here: a script cannot wait, the slot only says
        // which Lua state the stream's calls run in)
        lua: Some(&mut state.lua),
        final_data: false,
        resolving: None,
        chan: None,
    };
    let flow = run_tcp_rules(rules, true, &mut x);
    let (last_rule, log_level, fc) = (x.last_rule, x.log_level, x.fc);
    state.last_rule = last_rule;
    state.log.level = log_level;
    state.fc = fc;
    match flow {
        TcpFlow::Reject => Verdict::Close,
        TcpFlow::SilentDrop => Verdict::SilentDrop,
        _ => Verdict::Continue,
    }
}

/// The backend's `stick store-response` rules, on the response as the server sent it
/// (before the `http-response` rules, as HAProxy's store analyser runs first).
fn store_response(s: &Stream<'_>, res: &MsgHead, buf: &[u8], st: &ResState<'_, '_>) {
    let Some(be) = s.be.filter(|&be| !s.rt.proxies[be].rules.stick_res.is_empty()) else { return };
    let ctx = s.ctx(Dir::Response, None, Some((res, buf)), st.sess_vars, st.vars_txn, st.vars_reqres, st.st);
    super::sticking::response(s, be, &ctx);
}

/// Runs the `http-after-response` rules on a response about to be written.
pub fn after<'rt>(s: &Stream<'rt>, res: &mut MsgHead, buf: &[u8], st: &mut ResState<'_, 'rt>) -> Verdict {
    for (idx, px) in proxies(s) {
        if px.rules.http_after.is_empty() {
            continue;
        }
        // a response rampart built got no server response: its `res.` variables
        // begin here, as HAProxy's `http_eval_after_res_rules()` switches the scope
        st.vars_reqres_start(s);
        let list = ResList { rules: &px.rules.http_after, start: 0, px: idx, body: None };
        let (flow, _) = run_list(s, list, res, buf, st);
        if ends(flow) {
            return verdict(flow);
        }
    }
    Verdict::Continue
}

/// Whether a response rule list's outcome ends the response analysers (a
/// `wait-for-body` is handled by the caller; `http-after-response` has none).
fn ends(flow: Flow) -> bool {
    !matches!(flow, Flow::Continue | Flow::Allow | Flow::WaitBody(_))
}

/// One response rule list to run: its rules, from which one, its proxy, and the body
/// data a `wait-for-body` waited for.
struct ResList<'rt, 'b> {
    rules: &'rt [Rule<HttpAct>],
    start: usize,
    px: usize,
    body: Option<&'b [u8]>,
}

/// Runs a list; returns what ended it and at which rule (as `run_rules_from`).
fn run_list<'rt>(
    s: &Stream<'rt>,
    list: ResList<'rt, '_>,
    res: &mut MsgHead,
    buf: &[u8],
    st: &mut ResState<'_, 'rt>,
) -> (Flow, usize) {
    let ResList { rules, start, px, body } = list;
    if rules.len() <= start {
        return (Flow::Continue, rules.len());
    }
    let mut env = s.env(Dir::Response, st.sess_vars, st.vars_txn, st.vars_reqres);
    env.res_body = body;
    let mut x = Exec {
        msg: res,
        buf,
        out: st.synth,
        reply: st.reply,
        pages: s.pages(px),
        scratch: st.scratch,
        strict: st.strict,
        st: st.st,
    };
    run_rules_from(rules, start, &mut x, &env)
}

impl ResState<'_, '_> {
    /// The `req.` variables end and the `res.` ones begin with the response.
    fn vars_reqres_start(&self, s: &Stream<'_>) {
        let vars = crate::sample::vars::Vars {
            proc: Some(&s.rt.proc_vars),
            reqres: Some(&*self.vars_reqres),
            ..Default::default()
        };
        vars.start_response();
    }
}
