//! Fetch keywords, one file per family, each ending with its `KEYWORDS` table.
//! HAProxy counterparts: src/tcp_sample.c, src/http_fetch.c, src/payload.c, src/sample.c.
//!
//! - `internal`: constants, `env`, `date`, `rand` and other internal state
//! - `conn`: client connection addresses (`src`, `dst`, `fc_*`)
//! - `pp`: the PROXY protocol header received (`fc_rcvd_proxy`, `fc_pp_*`)
//! - `proxy`: frontends, backends, servers (`fe_name`, `nbsrv`, `srv_is_up` ...)
//! - `listener`: the `bind` a connection came through (`so_name`, `so_id`, `dst_conn`)
//! - `http`: start lines, target, body, transaction (`path`, `url_param`, `status` ...)
//! - `http_hdr`: headers and cookies (`req.hdr`, `req.cook` ...)
//! - `auth`: `Authorization` credentials and their check against userlists
//!   (`http_auth`, `http_auth_group`, `http_auth_user` ...)
//! - `ssl_bc`: the TLS connection to the server (`ssl_bc_protocol` ...)
//! - `payload`, `tls_hello`: raw TCP bytes and TLS ClientHellos (`req.payload`,
//!   `req.ssl_sni` ...)
//! - `rdp`: the RDP cookie of a Remote Desktop connection request (`req.rdp_cookie`)
//! - `ssl`: the client connection's TLS layer (`ssl_fc`, `ssl_fc_sni`, `ssl_c_s_dn` ...)
//! - `stick`: stick-table counters, tracked (`sc_*`, `sc0_*` ...) or of the client
//!   address (`src_*`)
//! - `stream`: the stream's own record (`last_rule_file`, `last_rule_line`)
//! - `filter`: what compression and the cache decided (`res.comp`, `res.cache_hit` ...)
//!
//! `var` lives with the variables (`sample::vars`).

pub mod auth;
pub mod conn;
pub mod filter;
pub mod http;
pub mod http_hdr;
pub mod internal;
pub mod listener;
pub mod payload;
pub mod pp;
pub mod proxy;
pub mod rdp;
pub mod ssl;
pub mod ssl_bc;
mod ssl_cert;
pub mod stick;
pub mod stream;
#[cfg(test)]
mod tests;
pub mod tls_hello;

use super::kw::FetchKw;
use super::types::Sample;

/// What a fetch calls with each of its values (see [`super::kw::FetchFn`]).
pub type Emit<'e, 'a> = &'e mut dyn FnMut(Sample<'a>) -> bool;

/// Every fetch table, searched in order.
pub const ALL: &[&[FetchKw]] = &[
    internal::KEYWORDS,
    conn::KEYWORDS,
    pp::KEYWORDS,
    proxy::KEYWORDS,
    listener::KEYWORDS,
    http::KEYWORDS,
    http_hdr::KEYWORDS,
    auth::KEYWORDS,
    payload::KEYWORDS,
    rdp::KEYWORDS,
    ssl::KEYWORDS,
    ssl_bc::KEYWORDS,
    stream::KEYWORDS,
    filter::KEYWORDS,
    stick::KEYWORDS,
    super::vars::FETCHES,
];

/// The fetch named `name`.
pub fn find(name: &str) -> Option<&'static FetchKw> {
    ALL.iter().flat_map(|t| t.iter()).find(|k| k.name == name)
}

/// Every fetch name, for did-you-mean suggestions.
pub fn names() -> impl Iterator<Item = &'static str> {
    ALL.iter().flat_map(|t| t.iter()).map(|k| k.name)
}
