//! `add-acl(<file>)`, `del-acl(<file>)`, `set-map(<file>)`, `del-map(<file>)`: rules that
//! change the entries of a pattern file, as the runtime API's `add acl`, `del map`...
//! do, seen by every ACL and map that loaded the file, on every thread, from the next
//! evaluation.
//!
//! HAProxy counterpart: `http_action_set_map()`, `parse_http_set_map()` (src/http_act.c).

use std::sync::{Arc, OnceLock};

use crate::log::format::LogFormat;
use crate::pattern::patref::PatRef;
use crate::sample::SampleCtx;

pub use rampart_cfg::model::PatRefOp;

/// The reference an action names, found once every rule of the configuration is
/// compiled (a rule may name a file an ACL written after it loads); empty when no ACL
/// or map loads that file, and the action then does nothing, as in HAProxy.
pub type RefSlot = Arc<OnceLock<Arc<PatRef>>>;

/// A compiled `add-acl`, `del-acl`, `set-map` or `del-map`.
#[derive(Debug)]
pub struct PatRefAct {
    pub op: PatRefOp,
    pub target: RefSlot,
    pub key: LogFormat,
    /// `set-map`'s value.
    pub value: Option<LogFormat>,
}

impl PatRefAct {
    /// Renders the key (and the value) in `ctx`, then changes the reference.
    pub fn run(&self, ctx: &SampleCtx<'_>, scratch: &mut Vec<u8>) {
        let Some(r) = self.target.get() else { return };
        scratch.clear();
        self.key.render(ctx, scratch);
        let key = text(scratch);
        // As HAProxy, a refused entry (a value the map's type cannot read) changes
        // nothing and the rules go on.
        let _ = match (self.op, &self.value) {
            (PatRefOp::AddAcl, _) => r.add_absent(&key),
            (PatRefOp::SetMap, Some(value)) => {
                scratch.clear();
                value.render(ctx, scratch);
                r.set_or_add(&key, &text(scratch))
            }
            _ => r.del(&key).map(drop),
        };
    }
}

/// A rendered key or value as the reference stores it: up to the first NUL byte (the
/// C string HAProxy hands to its pattern functions), bytes that are not UTF-8 replaced.
fn text(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::text;

    #[test]
    fn keys_stop_at_a_nul_byte() {
        assert_eq!(text(b"10.0.0.1"), "10.0.0.1");
        assert_eq!(text(b"ab\0cd"), "ab");
        assert_eq!(text(b""), "");
    }
}
