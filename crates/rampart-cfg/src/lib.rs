//! haproxy.cfg -> rampart's typed configuration model, with HAProxy-style diagnostics.
//! No sockets, no runtime: its tests take milliseconds and it fuzzes well.
//!
//! - `span`: file:line of every object
//! - `diag`: alerts and warnings, rendered as HAProxy renders them
//! - `lexer`: text -> lines of words (quotes, `${VAR}`, `.if` blocks, `.alert` ...)
//! - `cond`: the `.if` / `-cc` condition language
//! - `parse`: sections and keywords -> [`model::Config`], cross-reference checks
//! - `kw`: keyword tables, HAProxy keywords not supported yet, did-you-mean
//! - `model`: the typed, resolved configuration the daemon runs

pub mod cond;
pub mod diag;
pub mod lexer;
pub mod model;
pub mod span;
pub mod version;

pub use diag::{Diag, Diags, Level};
pub use lexer::LexCtx;
pub use model::Config;
pub use span::Span;
