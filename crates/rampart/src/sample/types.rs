//! Typed sample values: what fetches return, converters transform and ACLs match.
//! HAProxy counterpart: `struct sample` and `enum smp_type` (include/haproxy/sample-t.h),
//! and the implicit casts of `sample_casts[][]` (src/sample.c).

use std::borrow::Cow;
use std::net::{Ipv4Addr, Ipv6Addr};

use crate::http::Method;

/// The type of a sample, as HAProxy names them in messages (`smp_to_type[]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SmpType {
    /// Any type (a converter or fetch that accepts or returns several).
    Any,
    Bool,
    Sint,
    /// IPv4 or IPv6 (HAProxy's `SMP_T_ADDR`).
    Addr,
    Ipv4,
    Ipv6,
    Str,
    Bin,
    Meth,
}

impl SmpType {
    /// HAProxy's name of the type, for messages.
    pub fn name(self) -> &'static str {
        match self {
            SmpType::Any => "any",
            SmpType::Bool => "bool",
            SmpType::Sint => "sint",
            SmpType::Addr => "addr",
            SmpType::Ipv4 => "ipv4",
            SmpType::Ipv6 => "ipv6",
            SmpType::Str => "str",
            SmpType::Bin => "bin",
            SmpType::Meth => "meth",
        }
    }
}

/// A sample value. Strings and binaries borrow from the message (or the
/// configuration) when they can, and own their bytes only once a converter produced
/// new ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sample<'a> {
    Bool(bool),
    Sint(i64),
    Ipv4(Ipv4Addr),
    Ipv6(Ipv6Addr),
    Str(Cow<'a, [u8]>),
    Bin(Cow<'a, [u8]>),
    /// A method: known ones by enum, others by their spelling.
    Meth(Method, Cow<'a, [u8]>),
}

impl<'a> Sample<'a> {
    pub fn smp_type(&self) -> SmpType {
        match self {
            Sample::Bool(_) => SmpType::Bool,
            Sample::Sint(_) => SmpType::Sint,
            Sample::Ipv4(_) => SmpType::Ipv4,
            Sample::Ipv6(_) => SmpType::Ipv6,
            Sample::Str(_) => SmpType::Str,
            Sample::Bin(_) => SmpType::Bin,
            Sample::Meth(..) => SmpType::Meth,
        }
    }

    /// A string sample borrowing `b`.
    #[inline]
    pub fn str(b: &'a [u8]) -> Sample<'a> {
        Sample::Str(Cow::Borrowed(b))
    }

    /// The same value, owning its bytes (to outlive the message it was read from).
    pub fn into_owned(self) -> Sample<'static> {
        match self {
            Sample::Bool(b) => Sample::Bool(b),
            Sample::Sint(i) => Sample::Sint(i),
            Sample::Ipv4(a) => Sample::Ipv4(a),
            Sample::Ipv6(a) => Sample::Ipv6(a),
            Sample::Str(s) => Sample::Str(Cow::Owned(s.into_owned())),
            Sample::Bin(s) => Sample::Bin(Cow::Owned(s.into_owned())),
            Sample::Meth(m, s) => Sample::Meth(m, Cow::Owned(s.into_owned())),
        }
    }
}
