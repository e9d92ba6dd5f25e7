//! Samples: fetches read a value from the stream (connection, request, response,
//! variables ...), converters transform it; a sample expression `fetch(args),conv(args),...`
//! is compiled once at startup (names to functions, arguments checked and typed,
//! regexes compiled) and evaluated per stream. ACLs, actions, log-formats and balancers
//! are built on it.
//!
//! HAProxy counterpart: src/sample.c (expression parser, casts, generic converters),
//! src/arg.c, src/http_fetch.c, src/tcp_sample.c, src/payload.c (fetches), src/vars.c.
//!
//! No sockets, no tokio here: the stream hands a [`SampleCtx`] of references, so this
//! module is tested like a codec and fuzzed.
//!
//! - `types`: [`Sample`], [`SmpType`]
//! - `cast`: implicit casts between types (HAProxy's `sample_casts`)
//! - `ctx`: [`SampleCtx`], what an evaluation can read (and the variables it can set)
//! - `arg`: keyword arguments: quoting, typing, name resolution
//! - `expr`: compiling and evaluating `fetch,conv,...` expressions
//! - `fetch`, `conv`: the keyword tables, one file per family
//! - `kw`: the shape of fetch and converter keywords ([`kw::FetchKw`], [`kw::ConvKw`])
//! - `vars`: variables, their stores and budgets; `set-var`/`unset-var` converters
//! - `host`: [`Host`], what evaluations read of the running process (proxies, servers)
//! - `unique_id`: the stream's `unique-id-format` id, rendered on first use
//! - `lua`: `lua.<name>` fetches and converters, called through [`lua::LuaSample`]
//! - `haproxy26`: HAProxy 2.6's fetch names ("not supported yet" versus unknown)
//! - `compat` (tests): docs/COMPATIBILITY.md's fetch and converter tables, rendered
//!   from the keyword tables

pub mod arg;
pub mod cast;
#[cfg(test)]
mod compat;
pub mod conv;
pub mod ctx;
pub mod expr;
#[cfg(test)]
mod expr_tests;
pub mod fetch;
pub mod haproxy26;
pub mod host;
pub mod kw;
pub mod lua;
#[cfg(test)]
pub(crate) mod testutil;
pub mod types;
pub mod unique_id;
pub mod vars;

pub use ctx::SampleCtx;
pub use host::Host;
pub use types::{Sample, SmpType};
