//! `http-response` rules (backend, then frontend) and `http-after-response` rules on
//! the response head, before the front mux writes it.
//! HAProxy counterpart: `http_process_res_common()` (src/http_ana.c).

use super::Verdict;
use crate::http::MsgHead;
use crate::stream::Stream;

/// Runs the response rules on `res` (its slices point into `buf`).
pub fn run(s: &mut Stream<'_>, res: &mut MsgHead, buf: &[u8]) -> Verdict {
    let _ = (s, res, buf);
    Verdict::Continue
}
