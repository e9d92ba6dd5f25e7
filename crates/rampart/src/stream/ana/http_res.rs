//! `http-response` rules (backend, then frontend) on the server's response head, and
//! `http-after-response` rules (backend, then frontend) on every response, built ones
//! included, just before the front mux writes it.
//! HAProxy counterpart: `http_process_res_common()` and `http_res_get_intercept_rule()`
//! (src/http_ana.c).

use super::http_req::verdict;
use super::Verdict;
use crate::action::http::{run_rules, Exec};
use crate::action::{Flow, HttpAct, Rule};
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
}

/// The proxies whose response rules run, in order: the backend, then the frontend
/// (once for a `listen`).
fn proxies<'rt>(s: &Stream<'rt>) -> impl Iterator<Item = (usize, &'rt ProxyRt)> + 'rt {
    let rt = s.rt;
    let be = s.be.filter(|&b| b != s.fe);
    be.into_iter().chain(std::iter::once(s.fe)).map(move |i| (i, &rt.proxies[i]))
}

/// Runs the `http-response` rules on the server's response `res` (slices into `buf`).
pub fn run<'rt>(s: &Stream<'rt>, res: &mut MsgHead, buf: &[u8], st: &mut ResState<'_, 'rt>) -> Verdict {
    st.vars_reqres_start(s);
    for (idx, px) in proxies(s) {
        let flow = run_list(s, &px.rules.http_res, res, buf, idx, st);
        if flow != Flow::Continue && flow != Flow::Allow {
            return verdict(flow);
        }
    }
    after(s, res, buf, st)
}

/// Runs the `http-after-response` rules on a response about to be written.
pub fn after<'rt>(s: &Stream<'rt>, res: &mut MsgHead, buf: &[u8], st: &mut ResState<'_, 'rt>) -> Verdict {
    for (idx, px) in proxies(s) {
        let flow = run_list(s, &px.rules.http_after, res, buf, idx, st);
        if flow != Flow::Continue && flow != Flow::Allow {
            return verdict(flow);
        }
    }
    Verdict::Continue
}

fn run_list<'rt>(
    s: &Stream<'rt>,
    rules: &'rt [Rule<HttpAct>],
    res: &mut MsgHead,
    buf: &[u8],
    px: usize,
    st: &mut ResState<'_, 'rt>,
) -> Flow {
    if rules.is_empty() {
        return Flow::Continue;
    }
    let env = s.env(Dir::Response, st.sess_vars, st.vars_txn, st.vars_reqres);
    let mut x = Exec {
        msg: res,
        buf,
        out: st.synth,
        reply: st.reply,
        pages: s.pages(px),
        scratch: st.scratch,
        strict: st.strict,
    };
    run_rules(rules, &mut x, &env)
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
