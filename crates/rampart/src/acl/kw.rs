//! ACL keywords: the criterion names that stand for a fetch plus a match method
//! (`path_beg` is `path -m beg`), and the predefined ACLs (`TRUE`, `METH_GET` ...).
//! Any other criterion is a sample expression whose output type picks the method.
//!
//! HAProxy counterpart: the `acl_kws` tables of src/http_acl.c, src/payload.c,
//! src/ssl_sample.c, src/auth.c (`haproxy -dKacl` lists them), and
//! `default_acl_list` in src/acl.c.

use crate::pattern::MatchMethod;

/// An ACL keyword: `name` means fetch `fetch` matched with `method`.
#[derive(Debug, Clone, Copy)]
pub struct AclKw {
    pub name: &'static str,
    pub fetch: &'static str,
    pub method: MatchMethod,
}

const fn kw(name: &'static str, fetch: &'static str, method: MatchMethod) -> AclKw {
    AclKw { name, fetch, method }
}

use MatchMethod::{Auth, Beg, Bin, Dir, Dom, End, Int, Len, Meth, Reg, Str, Sub, Ver};

/// Every ACL keyword of HAProxy 2.6 (`haproxy -dKacl`).
pub const KEYWORDS: &[AclKw] = &[
    kw("base", "base", Str),
    kw("base_beg", "base", Beg),
    kw("base_dir", "base", Dir),
    kw("base_dom", "base", Dom),
    kw("base_end", "base", End),
    kw("base_len", "base", Len),
    kw("base_reg", "base", Reg),
    kw("base_sub", "base", Sub),
    kw("cook", "req.cook", Str),
    kw("cook_beg", "req.cook", Beg),
    kw("cook_dir", "req.cook", Dir),
    kw("cook_dom", "req.cook", Dom),
    kw("cook_end", "req.cook", End),
    kw("cook_len", "req.cook", Len),
    kw("cook_reg", "req.cook", Reg),
    kw("cook_sub", "req.cook", Sub),
    kw("hdr", "req.hdr", Str),
    kw("hdr_beg", "req.hdr", Beg),
    kw("hdr_dir", "req.hdr", Dir),
    kw("hdr_dom", "req.hdr", Dom),
    kw("hdr_end", "req.hdr", End),
    kw("hdr_len", "req.hdr", Len),
    kw("hdr_reg", "req.hdr", Reg),
    kw("hdr_sub", "req.hdr", Sub),
    kw("http_auth_group", "http_auth_group", Auth),
    kw("method", "method", Meth),
    kw("path", "path", Str),
    kw("path_beg", "path", Beg),
    kw("path_dir", "path", Dir),
    kw("path_dom", "path", Dom),
    kw("path_end", "path", End),
    kw("path_len", "path", Len),
    kw("path_reg", "path", Reg),
    kw("path_sub", "path", Sub),
    kw("payload", "req.payload", Bin),
    kw("payload_lv", "req.payload_lv", Bin),
    kw("req.ssl_ver", "req.ssl_ver", Ver),
    kw("req_rdp_cookie", "req.rdp_cookie", Str),
    kw("req_rdp_cookie_cnt", "req.rdp_cookie_cnt", Int),
    kw("req_ssl_sni", "req.ssl_sni", Str),
    kw("req_ssl_ver", "req.ssl_ver", Ver),
    kw("req_ver", "req.ver", Str),
    kw("resp_ver", "res.ver", Str),
    kw("scook", "res.cook", Str),
    kw("scook_beg", "res.cook", Beg),
    kw("scook_dir", "res.cook", Dir),
    kw("scook_dom", "res.cook", Dom),
    kw("scook_end", "res.cook", End),
    kw("scook_len", "res.cook", Len),
    kw("scook_reg", "res.cook", Reg),
    kw("scook_sub", "res.cook", Sub),
    kw("shdr", "res.hdr", Str),
    kw("shdr_beg", "res.hdr", Beg),
    kw("shdr_dir", "res.hdr", Dir),
    kw("shdr_dom", "res.hdr", Dom),
    kw("shdr_end", "res.hdr", End),
    kw("shdr_len", "res.hdr", Len),
    kw("shdr_reg", "res.hdr", Reg),
    kw("shdr_sub", "res.hdr", Sub),
    kw("ssl_fc_sni_end", "ssl_fc_sni", End),
    kw("ssl_fc_sni_reg", "ssl_fc_sni", Reg),
    kw("url", "url", Str),
    kw("url_beg", "url", Beg),
    kw("url_dir", "url", Dir),
    kw("url_dom", "url", Dom),
    kw("url_end", "url", End),
    kw("url_len", "url", Len),
    kw("url_reg", "url", Reg),
    kw("url_sub", "url", Sub),
    kw("urlp", "urlp", Str),
    kw("urlp_beg", "urlp", Beg),
    kw("urlp_dir", "urlp", Dir),
    kw("urlp_dom", "urlp", Dom),
    kw("urlp_end", "urlp", End),
    kw("urlp_len", "urlp", Len),
    kw("urlp_reg", "urlp", Reg),
    kw("urlp_sub", "urlp", Sub),
];

/// The ACL keyword a criterion starts with: its leading identifier characters
/// (HAProxy's `is_idchar`), before any `(` or `,`.
pub fn find(criterion: &str) -> Option<&'static AclKw> {
    let end = criterion
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | ':')))
        .unwrap_or(criterion.len());
    let name = &criterion[..end];
    KEYWORDS.iter().find(|k| k.name == name)
}

/// A predefined ACL: its name and the words of its definition.
#[derive(Debug, Clone, Copy)]
pub struct Predefined {
    pub name: &'static str,
    pub words: &'static [&'static str],
}

const fn pre(name: &'static str, words: &'static [&'static str]) -> Predefined {
    Predefined { name, words }
}

/// HAProxy's predefined ACLs (configuration.txt §7.4). A proxy's own ACL of the same
/// name takes precedence.
pub const PREDEFINED: &[Predefined] = &[
    pre("TRUE", &["always_true"]),
    pre("FALSE", &["always_false"]),
    pre("LOCALHOST", &["src", "127.0.0.1/8", "::1"]),
    pre("HTTP", &["req.proto_http"]),
    pre("HTTP_1.0", &["req.ver", "1.0"]),
    pre("HTTP_1.1", &["req.ver", "1.1"]),
    pre("HTTP_2.0", &["req.ver", "2.0"]),
    pre("METH_CONNECT", &["method", "CONNECT"]),
    pre("METH_DELETE", &["method", "DELETE"]),
    pre("METH_GET", &["method", "GET", "HEAD"]),
    pre("METH_HEAD", &["method", "HEAD"]),
    pre("METH_OPTIONS", &["method", "OPTIONS"]),
    pre("METH_POST", &["method", "POST"]),
    pre("METH_PUT", &["method", "PUT"]),
    pre("METH_TRACE", &["method", "TRACE"]),
    pre("HTTP_URL_ABS", &["url_reg", "^[^/:]*://"]),
    pre("HTTP_URL_SLASH", &["url_beg", "/"]),
    pre("HTTP_URL_STAR", &["url", "*"]),
    pre("HTTP_CONTENT", &["req.hdr_val(content-length)", "gt", "0"]),
    pre("RDP_COOKIE", &["req.rdp_cookie_cnt", "gt", "0"]),
    pre("REQ_CONTENT", &["req.len", "gt", "0"]),
    pre("WAIT_END", &["wait_end"]),
];

pub fn predefined(name: &str) -> Option<&'static Predefined> {
    PREDEFINED.iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyword_lookup_stops_at_args_and_converters() {
        assert_eq!(find("hdr_beg(host)").unwrap().fetch, "req.hdr");
        assert_eq!(find("path_beg,lower").unwrap().method, Beg);
        assert_eq!(find("req.ssl_ver").unwrap().method, Ver);
        assert_eq!(find("method").unwrap().method, Meth);
        assert!(find("path_begx").is_none());
        assert!(find("req.hdr(host)").is_none());
        assert!(find("hdr_cnt").is_none());
    }

    #[test]
    fn tables_are_sorted_and_unique() {
        for w in KEYWORDS.windows(2) {
            assert!(w[0].name < w[1].name, "{} / {}", w[0].name, w[1].name);
        }
        assert_eq!(KEYWORDS.len(), 77);
        assert_eq!(PREDEFINED.len(), 22);
        assert_eq!(predefined("METH_GET").unwrap().words, ["method", "GET", "HEAD"]);
        assert!(predefined("meth_get").is_none());
    }
}
