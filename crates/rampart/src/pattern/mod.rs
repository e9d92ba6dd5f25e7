//! Match methods and pattern sets: how an ACL (or a map) compares a sample with its
//! patterns. A [`PatternSet`] is the compiled, immutable index of one list of
//! patterns for one method, built at startup (or when the runtime API changes a list)
//! and shared by the worker threads; matching reads it without lock or allocation.
//!
//! | method | index | per lookup |
//! |---|---|---|
//! | `str`, `bin` | hash ([`exact`]), `-i` folds case in the hash | one probe |
//! | `beg`, `end` | path-compressed trie ([`trie`]), `end` on reversed keys | one walk of the sample |
//! | `sub`, `dir`, `dom` | Aho-Corasick automaton ([`words`]) | one scan of the sample |
//! | `reg`, `regm` | regex crate, screened by a `RegexSet` when large ([`reg`]) | one set scan, then the list |
//! | `int`, `len`, versions | sorted segments ([`int`]) | binary search |
//! | `ip` | one hash table per prefix length ([`ip`]) | one probe per length present |
//!
//! HAProxy counterpart: src/pattern.c (`pat_parse_*`, `pat_idx_*`, `pat_match_*`,
//! `pat_match_names`, `pat_match_types`).
//!
//! - `patref`: pattern sources (files shared by path, inline lists) and their compiled
//!   views, swapped whole by runtime updates (the CLI's `add acl`, `set map` ...)
//! - `refs`: the references of one configuration, numbered for the runtime API
//! - `value`: the value column of a map file
//! - `exact`, `trie`, `words`, `reg`, `int`, `ip`: one index per kind of method
//! - `input`: a sample as the bytes or number a method compares
//!
//! Below the sample language: it sees samples (`sample::types`), never a stream;
//! ACLs (`crate::acl`) and maps (`sample::conv::map`) build on it.

pub mod exact;
pub mod input;
pub mod int;
pub mod ip;
pub mod patref;
pub mod refs;
pub mod reg;
pub mod trie;
pub mod value;
pub mod words;

pub use patref::PatRef;
pub use refs::{PatRefs, RefList};

use rampart_proto::http::Method;
use regex::bytes::Regex;

use crate::sample::types::{Sample, SmpType};
use input::{meth_bytes, with_input, Input};

/// "No pattern" in the index arrays.
pub const NONE: u32 = u32::MAX;

/// A match method (HAProxy's `PAT_MATCH_*`), plus the three that only ACL keywords use:
/// `method`'s, `req.ssl_ver`'s and `http_auth_group`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatchMethod {
    Found,
    Bool,
    Int,
    Ip,
    Bin,
    Len,
    Str,
    Beg,
    Sub,
    Dir,
    Dom,
    End,
    Reg,
    Regm,
    /// HTTP methods: known ones compared by identity, others by spelling.
    Meth,
    /// `major.minor` versions compared as integers.
    Ver,
    /// `http_auth_group`: the sample is a user name of the fetch's userlist, the
    /// patterns group names, compared exactly (HAProxy's `pat_match_auth`); the ACL
    /// evaluation does the user-to-groups step (`acl::expr`).
    Auth,
}

impl MatchMethod {
    /// The method `-m <name>` selects (`pat_find_match_name`).
    pub fn from_name(name: &str) -> Option<MatchMethod> {
        use MatchMethod::*;
        Some(match name {
            "found" => Found,
            "bool" => Bool,
            "int" => Int,
            "ip" => Ip,
            "bin" => Bin,
            "len" => Len,
            "str" => Str,
            "beg" => Beg,
            "sub" => Sub,
            "dir" => Dir,
            "dom" => Dom,
            "end" => End,
            "reg" => Reg,
            "regm" => Regm,
            _ => return None,
        })
    }

    /// The `-m` spelling (the two keyword-only methods print as their base method, as
    /// `haproxy -dKacl` does).
    pub fn name(self) -> &'static str {
        use MatchMethod::*;
        match self {
            Found => "found",
            Bool => "bool",
            Int | Ver => "int",
            Ip => "ip",
            Bin => "bin",
            Len => "len",
            Str | Meth | Auth => "str",
            Beg => "beg",
            Sub => "sub",
            Dir => "dir",
            Dom => "dom",
            End => "end",
            Reg => "reg",
            Regm => "regm",
        }
    }

    /// The sample type the method reads (`pat_match_types`).
    pub fn expect(self) -> SmpType {
        use MatchMethod::*;
        match self {
            Found | Bool | Int | Ver => SmpType::Sint,
            Ip => SmpType::Addr,
            Bin => SmpType::Bin,
            Meth => SmpType::Meth,
            Len | Str | Beg | Sub | Dir | Dom | End | Reg | Regm | Auth => SmpType::Str,
        }
    }

    /// Whether ACL lines may use the `eq ge gt le lt` operators with it.
    pub fn takes_operators(self) -> bool {
        matches!(self, MatchMethod::Int | MatchMethod::Len | MatchMethod::Ver)
    }

    /// Whether the method looks at patterns at all (`found` and `bool` do not).
    pub fn uses_patterns(self) -> bool {
        !matches!(self, MatchMethod::Found | MatchMethod::Bool)
    }

    /// The method a sample expression of type `t` gets when none is named.
    pub fn default_for(t: SmpType) -> Option<MatchMethod> {
        match t {
            SmpType::Bool => Some(MatchMethod::Bool),
            SmpType::Sint => Some(MatchMethod::Int),
            SmpType::Addr | SmpType::Ipv4 | SmpType::Ipv6 => Some(MatchMethod::Ip),
            SmpType::Str => Some(MatchMethod::Str),
            SmpType::Bin | SmpType::Meth | SmpType::Any => None,
        }
    }
}

/// The options a pattern list is compiled with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PatFlags {
    /// `-i`: ignore case.
    pub icase: bool,
    /// `-n`: do not resolve host names in address patterns.
    pub no_dns: bool,
}

/// A method pattern: a method HAProxy knows, or a spelling.
#[derive(Debug)]
enum MethPat {
    Known(Method),
    Other(Box<[u8]>),
}

/// The methods HAProxy 2.6 knows by name (`PATCH` is not one of them).
fn haproxy_known(m: Method) -> bool {
    !matches!(m, Method::Patch | Method::Other)
}

#[derive(Debug)]
enum Index {
    Found,
    Bool,
    Exact(exact::ExactSet),
    Trie(trie::Trie),
    Words(words::WordSet),
    Int(int::IntSet),
    Len(int::IntSet),
    Ip(ip::IpSet),
    Reg(reg::RegSet),
    Meth(Vec<(MethPat, u32)>, bool),
}

/// One list of patterns compiled for one method and flags.
#[derive(Debug)]
pub struct PatternSet {
    method: MatchMethod,
    index: Index,
    len: usize,
}

/// Parses hex text into bytes (`parse_binary`).
fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    let b = text.as_bytes();
    if b.len() & 1 == 1 {
        return Err("an even number of hex digit is expected".into());
    }
    b.chunks(2)
        .map(|p| {
            let d = |c: u8| (c as char).to_digit(16).ok_or(c);
            match (d(p[0]), d(p[1])) {
                (Ok(h), Ok(l)) => Ok((h * 16 + l) as u8),
                (Err(c), _) | (_, Err(c)) => Err(format!("an hex digit is expected (found '{}')", c as char)),
            }
        })
        .collect()
}

impl PatternSet {
    /// Compiles `pats` (pattern texts, numbered by position) for `method`. `resolve`:
    /// host names in address patterns may be looked up (startup, without `-n`). On
    /// error: the position of the bad pattern and HAProxy's message.
    pub fn build(
        method: MatchMethod,
        flags: PatFlags,
        pats: &[&str],
        resolve: bool,
    ) -> Result<PatternSet, (usize, String)> {
        use MatchMethod::*;
        let numbered = || pats.iter().enumerate().map(|(i, p)| (i, *p, i as u32));
        let index = match method {
            Found => Index::Found,
            Bool => Index::Bool,
            Int | Len | Ver => {
                let parse = if method == Ver { int::parse_dotted_ver } else { int::parse_int };
                let ranges = numbered()
                    .map(|(i, p, n)| parse(p).map(|r| (r, n)).map_err(|e| (i, e)))
                    .collect::<Result<Vec<_>, _>>()?;
                let set = int::IntSet::build(&ranges);
                if method == Len {
                    Index::Len(set)
                } else {
                    Index::Int(set)
                }
            }
            Ip => {
                let resolve = resolve && !flags.no_dns;
                let nets = numbered()
                    .map(|(i, p, n)| ip::parse_net(p, resolve).map(|r| (r, n)).map_err(|e| (i, e)))
                    .collect::<Result<Vec<_>, _>>()?;
                Index::Ip(ip::IpSet::build(&nets))
            }
            Bin | Str | Auth => {
                let mut set = exact::ExactSet::new(flags.icase && method == Str);
                for (i, p, n) in numbered() {
                    if method == Bin {
                        set.insert(&parse_hex(p).map_err(|e| (i, e))?, n);
                    } else {
                        set.insert(p.as_bytes(), n);
                    }
                }
                Index::Exact(set)
            }
            Beg | End => {
                let keys: Vec<(&[u8], u32)> = numbered().map(|(_, p, n)| (p.as_bytes(), n)).collect();
                let pick = if method == Beg && !flags.icase { trie::Pick::Longest } else { trie::Pick::First };
                Index::Trie(trie::Trie::build(&keys, flags.icase, method == End, pick))
            }
            Sub | Dir | Dom => {
                let kind = match method {
                    Sub => words::Kind::Sub,
                    Dir => words::Kind::Dir,
                    _ => words::Kind::Dom,
                };
                let keys: Vec<(&[u8], u32)> = numbered().map(|(_, p, n)| (p.as_bytes(), n)).collect();
                Index::Words(words::WordSet::build(kind, &keys, flags.icase).map_err(|e| (0, e))?)
            }
            Reg | Regm => {
                let list = numbered()
                    .map(|(i, p, n)| reg::compile(p, flags.icase).map(|r| (r, n)).map_err(|e| (i, e)))
                    .collect::<Result<Vec<_>, _>>()?;
                Index::Reg(reg::RegSet::new(list, pats, flags.icase))
            }
            Meth => {
                let list = numbered()
                    .map(|(_, p, n)| {
                        let m = Method::from_bytes(p.as_bytes());
                        let pat =
                            if haproxy_known(m) { MethPat::Known(m) } else { MethPat::Other(p.as_bytes().into()) };
                        (pat, n)
                    })
                    .collect();
                Index::Meth(list, flags.icase)
            }
        };
        Ok(PatternSet { method, index, len: pats.len() })
    }

    pub fn method(&self) -> MatchMethod {
        self.method
    }

    /// How many patterns the set was built from.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `smp` matches any pattern (ACL evaluation).
    pub fn matches(&self, smp: &Sample<'_>) -> bool {
        match self.index {
            Index::Found => true,
            _ => self.find_in(smp, true).is_some(),
        }
    }

    /// The pattern `smp` matches, by HAProxy's rule for the method (first in order,
    /// or longest prefix), with the regex that matched for `regm` (map lookups).
    pub fn lookup(&self, smp: &Sample<'_>) -> Option<(u32, Option<&Regex>)> {
        match &self.index {
            Index::Reg(set) => with_input(smp, SmpType::Str, |i| match i {
                Input::Bytes(b) => set.find(b).map(|(r, n)| (n, Some(r))),
                _ => None,
            }),
            _ => self.find_in(smp, false).map(|n| (n, None)),
        }
    }

    fn find_in(&self, smp: &Sample<'_>, any: bool) -> Option<u32> {
        with_input(smp, self.method.expect(), |input| match (&self.index, input) {
            (Index::Found, _) => Some(0),
            (Index::Bool, Input::Int(v)) => (v != 0).then_some(0),
            (Index::Exact(s), Input::Bytes(b)) => s.find(b),
            (Index::Trie(t), Input::Bytes(b)) => t.find(b, any),
            (Index::Words(w), Input::Bytes(b)) => w.find(b, any),
            (Index::Int(s), Input::Int(v)) => s.find(v),
            (Index::Len(s), Input::Bytes(b)) => s.find(b.len() as i64),
            (Index::Ip(s), Input::V4(a)) => s.find4(a),
            (Index::Ip(s), Input::V6(a)) => s.find6(a),
            (Index::Reg(s), Input::Bytes(b)) if any => s.any(b).then_some(0),
            (Index::Reg(s), Input::Bytes(b)) => s.find(b).map(|m| m.1),
            (Index::Meth(list, icase), Input::Meth(m, spelling)) => find_meth(list, *icase, m, spelling),
            _ => None,
        })
    }
}

fn find_meth(list: &[(MethPat, u32)], icase: bool, m: Method, spelling: &[u8]) -> Option<u32> {
    let known = haproxy_known(m);
    let spelling = meth_bytes(m, spelling);
    list.iter()
        .find(|(p, _)| match p {
            MethPat::Known(pm) => known && *pm == m,
            MethPat::Other(s) if !known => {
                if icase {
                    s.eq_ignore_ascii_case(spelling)
                } else {
                    **s == *spelling
                }
            }
            MethPat::Other(_) => false,
        })
        .map(|e| e.1)
}

#[cfg(test)]
mod tests;
