//! Cookie-based server persistence: the `cookie` keyword of a backend and the server
//! `cookie <value>` it matches (configuration.txt §4.2 `cookie`, §5.2 `cookie`).
//! HAProxy counterpart: the `cookie_*` and `ck_opts` fields of `struct proxy`
//! (include/haproxy/proxy-t.h).

use crate::span::Span;

/// How the persistence cookie reaches the client (`rewrite`, `insert`, `prefix`, or
/// none of them: the server sets it itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CookieMode {
    /// No mode word: the cookie is read, never written (HAProxy's passive mode).
    #[default]
    Passive,
    /// `insert`: rampart adds a `Set-Cookie` to responses.
    Insert,
    /// `rewrite`: the server's own `Set-Cookie` value is replaced.
    Rewrite,
    /// `prefix`: the server's `Set-Cookie` value is prefixed with `<server cookie>~`.
    Prefix,
}

/// `cookie <name> [options]` of a backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CookiePersist {
    pub name: String,
    pub mode: CookieMode,
    /// `indirect`: the cookie never reaches a server that is accessed through it.
    pub indirect: bool,
    /// `nocache`: an inserted cookie makes a cacheable response `Cache-control: private`.
    pub nocache: bool,
    /// `postonly`: insert only in responses to POST requests.
    pub postonly: bool,
    /// `preserve`: a cookie the server set itself is left alone.
    pub preserve: bool,
    pub httponly: bool,
    pub secure: bool,
    /// The `domain` values as the inserted cookie carries them: `a; domain=b` for two.
    pub domain: Option<String>,
    /// The `attr` values, joined with `; `.
    pub attrs: Option<String>,
    /// `maxidle <time>` in seconds (0: off): a cookie not seen for longer is ignored;
    /// inserted cookies then carry the date they were last seen.
    pub maxidle: u32,
    /// `maxlife <time>` in seconds (0: off): a cookie first issued longer ago is
    /// ignored; inserted cookies then carry the date they were first issued.
    pub maxlife: u32,
    pub span: Span,
}

impl CookiePersist {
    /// HAProxy's `PR_CK_ANY`: a mode or `indirect` is set, which is what the log's
    /// persistence flags (`%tsc`) report on.
    pub fn any(&self) -> bool {
        self.mode != CookieMode::Passive || self.indirect
    }
}
