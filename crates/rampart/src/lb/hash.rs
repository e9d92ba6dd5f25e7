//! The hash functions of `hash-type` and the key extraction of the hashing
//! algorithms (`source`, `uri`, `url_param`, `hdr`), giving the same 32-bit value as
//! HAProxy for the same input so that a key lands on the same server.
//! HAProxy counterpart: src/hash.c (`hash_sdbm`, `hash_djb2`, `hash_wt6`,
//! `hash_crc32`), `full_hash()` (include/haproxy/intops.h), and `gen_hash()`,
//! `get_server_sh/uh/ph/hh()` of src/backend.c.

/// The hash function of `hash-type <method> <function>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HashFn {
    #[default]
    Sdbm,
    Djb2,
    Wt6,
    Crc32,
}

/// How a key becomes a 32-bit hash: the function, then the optional `avalanche`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hasher {
    pub func: HashFn,
    pub avalanche: bool,
}

impl Hasher {
    /// The hash of `key` (HAProxy's `gen_hash()` then `full_hash()` with `avalanche`).
    pub fn hash(self, key: &[u8]) -> u32 {
        let h = match self.func {
            HashFn::Sdbm => sdbm(key),
            HashFn::Djb2 => djb2(key),
            HashFn::Wt6 => wt6(key),
            HashFn::Crc32 => crc32(key),
        };
        self.finish(h)
    }

    /// Applies `avalanche` to an already computed value.
    pub fn finish(self, h: u32) -> u32 {
        if self.avalanche {
            full_hash(h)
        } else {
            h
        }
    }
}

// The string hashes and the avalanche are the ones of the `sdbm`, `djb2`, `wt6`
// converters (HAProxy's src/hash.c serves both too).
pub use crate::sample::conv::hash::{full_hash, hash_djb2 as djb2, hash_sdbm as sdbm, hash_wt6 as wt6};

/// The IEEE CRC-32, as HAProxy's `hash_crc32` (and the `crc32` converter).
pub fn crc32(key: &[u8]) -> u32 {
    crc32fast::hash(key)
}

// === key extraction ===

/// `balance source`: the address's 32-bit words in network order, XORed together
/// (no hash function applies; `avalanche` does).
pub fn source_key(ip: std::net::IpAddr) -> u32 {
    let fold = |b: &[u8]| b.chunks_exact(4).fold(0u32, |h, w| h ^ u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
    match ip {
        std::net::IpAddr::V4(a) => fold(&a.octets()),
        std::net::IpAddr::V6(a) => fold(&a.octets()),
    }
}

/// The options of `balance uri`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UriOpts {
    /// `whole`: hash past the `?` too.
    pub whole: bool,
    /// `path-only`: hash the path of an absolute URI, not its scheme and authority.
    pub path_only: bool,
    /// `len N` (0: unlimited): hash at most the first N characters.
    pub len: u32,
    /// `depth N` (0: unlimited): stop at the (N+1)th slash.
    pub depth: u32,
}

/// The part of a request target `balance uri` hashes.
pub fn uri_part(uri: &[u8], o: UriOpts) -> &[u8] {
    let uri = if o.len > 0 { &uri[..uri.len().min(o.len as usize)] } else { uri };
    let mut slashes = 0;
    for (i, &c) in uri.iter().enumerate() {
        if c == b'/' {
            slashes += 1;
            if o.depth > 0 && slashes == o.depth.saturating_add(1) {
                return &uri[..i];
            }
        } else if c == b'?' && !o.whole {
            return &uri[..i];
        }
    }
    uri
}

/// The value of URL parameter `name` in `uri` (after its `?`), as `balance
/// url_param` finds it: the first `name=` at the start of a parameter; the value may
/// be empty.
pub fn url_param<'u>(uri: &'u [u8], name: &[u8]) -> Option<&'u [u8]> {
    let q = memchr::memchr(b'?', uri)?;
    params_value(&uri[q + 1..], name)
}

/// The value of `name` in a `a=b&c=d` list.
pub fn params_value<'u>(mut params: &'u [u8], name: &[u8]) -> Option<&'u [u8]> {
    while params.len() > name.len() {
        if params[name.len()] == b'=' && params.starts_with(name) {
            let v = &params[name.len() + 1..];
            return Some(&v[..memchr::memchr(b'&', v).unwrap_or(v.len())]);
        }
        params = &params[memchr::memchr(b'&', params)? + 1..];
    }
    None
}

/// `hdr(<name>) use_domain_only`: the label before the last dot (`www.example.com`
/// → `example`), or the whole value when it has no dot.
pub fn domain_only(v: &[u8]) -> &[u8] {
    let Some(last) = memchr::memrchr(b'.', v) else { return v };
    let start = memchr::memrchr(b'.', &v[..last]).map_or(0, |d| d + 1);
    &v[start..last]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_functions_match_known_values() {
        // reference values computed with HAProxy 2.6's functions
        assert_eq!(sdbm(b""), 0);
        assert_eq!(sdbm(b"a"), 97);
        assert_eq!(sdbm(b"ab"), 97u32.wrapping_mul(65599).wrapping_add(98));
        assert_eq!(djb2(b""), 5381);
        assert_eq!(djb2(b"a"), 5381 * 33 + 97);
        // the IEEE CRC-32 check value
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b"123456789"), crc32fast::hash(b"123456789"));
        assert_eq!(wt6(b""), 0xa53c_965a ^ 0x5ca6_953a);
    }

    #[test]
    fn wt6_one_byte_by_hand() {
        let h0 = !(0xa53c_965a_u32 ^ 0x61);
        let h1 = !(0x5ca6_953a_u32.wrapping_add(0x61));
        assert_eq!(wt6(b"a"), h1.rotate_left(6) ^ h0.rotate_left(18));
    }

    #[test]
    fn full_hash_mixes() {
        assert_ne!(full_hash(0), 0);
        assert_ne!(full_hash(1), full_hash(2));
        let h = Hasher { func: HashFn::Sdbm, avalanche: true };
        assert_eq!(h.hash(b"a"), full_hash(97));
        assert_eq!(Hasher::default().hash(b"a"), 97);
    }

    #[test]
    fn source_key_folds_words() {
        assert_eq!(source_key("10.0.0.1".parse().unwrap()), 0x0a00_0001);
        assert_eq!(source_key("::1".parse().unwrap()), 1);
        assert_eq!(source_key("1:2::3:4".parse().unwrap()), 0x0001_0002 ^ 0x0003_0004);
    }

    #[test]
    fn uri_part_options() {
        let d = UriOpts::default();
        assert_eq!(uri_part(b"/a/b?x=1", d), b"/a/b");
        assert_eq!(uri_part(b"/a/b?x=1", UriOpts { whole: true, ..d }), b"/a/b?x=1");
        assert_eq!(uri_part(b"/a/b/c", UriOpts { depth: 1, ..d }), b"/a");
        assert_eq!(uri_part(b"/a/b/c", UriOpts { depth: 2, ..d }), b"/a/b");
        assert_eq!(uri_part(b"/a/b/c", UriOpts { len: 3, ..d }), b"/a/");
        assert_eq!(uri_part(b"", d), b"");
        assert_eq!(uri_part(b"/a/b", UriOpts { depth: u32::MAX, len: u32::MAX, ..d }), b"/a/b");
    }

    #[test]
    fn url_param_lookup() {
        assert_eq!(url_param(b"/p?a=1&id=42&b=2", b"id"), Some(&b"42"[..]));
        assert_eq!(url_param(b"/p?id=&b=2", b"id"), Some(&b""[..]));
        assert_eq!(url_param(b"/p?xid=4&id=5", b"id"), Some(&b"5"[..]));
        assert_eq!(url_param(b"/p?a=1", b"id"), None);
        assert_eq!(url_param(b"/p", b"id"), None);
        assert_eq!(url_param(b"/p?id", b"id"), None);
    }

    #[test]
    fn domain_only_takes_the_label_before_the_tld() {
        assert_eq!(domain_only(b"www.example.com"), b"example");
        assert_eq!(domain_only(b"example.com"), b"example");
        assert_eq!(domain_only(b"localhost"), b"localhost");
    }
}
