//! Keywords of SPOE configuration files (the file `filter spoe ... config <file>`
//! names; HAProxy's doc/SPOE.txt §2), per section, and the events a `spoe-message`
//! may name. Rendered in docs/COMPATIBILITY.md (section "SPOE configuration file");
//! `parse::spoe` reads them and refuses those marked not yet.

use super::{Kw, Support};
use Support::{No, Partial, Yes};

const fn kw(name: &'static str, support: Support) -> Kw {
    Kw { name, support }
}

/// `spoe-agent` section keywords (`option` ones with their prefix).
pub static SPOE_AGENT: &[Kw] = &[
    kw("groups", Yes),
    kw("log global", Partial("accepted; SPOE events are not logged")),
    kw("log <target> ...", No),
    kw("no log", No),
    kw("maxconnrate", Yes),
    kw("maxerrrate", Yes),
    kw("max-frame-size", Yes),
    kw("max-waiting-frames", Yes),
    kw("messages", Yes),
    kw("option async", Yes),
    kw("option continue-on-error", Yes),
    kw("option dontlog-normal", No),
    kw("option force-set-var", No),
    kw("option pipelining", Yes),
    kw("option send-frag-payload", Partial("on by default as in HAProxy 2.6: a NOTIFY larger than the max-frame-size less 32 bytes goes out in fragments (NOTIFY without FIN, then UNSET frames) to an agent that announced `fragmentation`, cut where HAProxy cuts; else error 3 (`no option`, or an item larger than a frame) or, for an agent without the capability, error 1 at `timeout processing` (as HAProxy). Fragmented ACKs are refused (DISCONNECT status 10, then the waiting frames fail with 256 + the status the disconnection ends on), as HAProxy 2.6, which never announces `fragmentation`; a fragment is cut by each connection's max-frame-size (HAProxy: the smallest of the thread's connections)")),
    kw("option set-on-error", Yes),
    kw("option set-process-time", Yes),
    kw("option set-total-time", Yes),
    kw("option var-prefix", Yes),
    kw("register-var-names", Partial("accepted; agents may set any non-proc variable, as HAProxy 2.6 does")),
    kw("timeout hello", Yes),
    kw("timeout idle", Yes),
    kw("timeout processing", Yes),
    kw("use-backend", Partial("the backend's balancing and server states pick the server; the agent connections count in the balancer's load (leastconn) and in its and its servers' stot, scur, smax, connect, bin and bout; not queued on a full server (a server's maxconn is not waited for)")),
    kw("engine-name", No),
];

/// `spoe-message` section keywords.
pub static SPOE_MESSAGE: &[Kw] = &[
    kw("acl", No),
    kw("args", Yes),
    kw("event", Partial("on-frontend-http-request and on-backend-http-request; the other events are refused")),
];

/// `spoe-group` section keywords.
pub static SPOE_GROUP: &[Kw] = &[kw("messages", Yes)];

/// Events of `event <name>`.
pub static SPOE_EVENTS: &[Kw] = &[
    kw("on-client-session", No),
    kw("on-frontend-tcp-request", No),
    kw("on-backend-tcp-request", No),
    kw("on-tcp-response", No),
    kw("on-frontend-http-request", Yes),
    kw("on-backend-http-request", Yes),
    kw("on-http-response", No),
];
