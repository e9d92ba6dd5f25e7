//! The static table (RFC 7541 §2.3.1, Appendix A): 61 fields every HPACK context
//! starts with, at indexes 1 to 61, before the dynamic table.
//!
//! HAProxy counterpart: `hpack_sht[]` (src/hpack-tbl.c) and, for the encoder's
//! lookups, the generated tables of src/hpack-enc.c. Here a `match` on the name finds
//! the run of indexes that share it.

/// The entries, index 1 first: (name, value).
pub const STATIC_TABLE: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// Number of static entries; dynamic indexes start after them.
pub const STATIC_LEN: usize = STATIC_TABLE.len();

/// The entry at a 1-based static index.
pub(crate) fn get(index: usize) -> Option<(&'static [u8], &'static [u8])> {
    let (name, value) = STATIC_TABLE.get(index.checked_sub(1)?)?;
    Some((name.as_bytes(), value.as_bytes()))
}

/// Looks a field up: the index of an entry with this name and value, else of the
/// first entry with this name; the flag says whether the value matched.
pub(crate) fn find(name: &[u8], value: &[u8]) -> Option<(usize, bool)> {
    let (first, last) = name_range(name)?;
    let exact = (first..=last).find(|&i| STATIC_TABLE[i - 1].1.as_bytes() == value);
    Some(exact.map_or((first, false), |i| (i, true)))
}

/// The first and last index of the entries named `name`.
fn name_range(name: &[u8]) -> Option<(usize, usize)> {
    Some(match name {
        b":authority" => (1, 1),
        b":method" => (2, 3),
        b":path" => (4, 5),
        b":scheme" => (6, 7),
        b":status" => (8, 14),
        b"accept-charset" => (15, 15),
        b"accept-encoding" => (16, 16),
        b"accept-language" => (17, 17),
        b"accept-ranges" => (18, 18),
        b"accept" => (19, 19),
        b"access-control-allow-origin" => (20, 20),
        b"age" => (21, 21),
        b"allow" => (22, 22),
        b"authorization" => (23, 23),
        b"cache-control" => (24, 24),
        b"content-disposition" => (25, 25),
        b"content-encoding" => (26, 26),
        b"content-language" => (27, 27),
        b"content-length" => (28, 28),
        b"content-location" => (29, 29),
        b"content-range" => (30, 30),
        b"content-type" => (31, 31),
        b"cookie" => (32, 32),
        b"date" => (33, 33),
        b"etag" => (34, 34),
        b"expect" => (35, 35),
        b"expires" => (36, 36),
        b"from" => (37, 37),
        b"host" => (38, 38),
        b"if-match" => (39, 39),
        b"if-modified-since" => (40, 40),
        b"if-none-match" => (41, 41),
        b"if-range" => (42, 42),
        b"if-unmodified-since" => (43, 43),
        b"last-modified" => (44, 44),
        b"link" => (45, 45),
        b"location" => (46, 46),
        b"max-forwards" => (47, 47),
        b"proxy-authenticate" => (48, 48),
        b"proxy-authorization" => (49, 49),
        b"range" => (50, 50),
        b"referer" => (51, 51),
        b"refresh" => (52, 52),
        b"retry-after" => (53, 53),
        b"server" => (54, 54),
        b"set-cookie" => (55, 55),
        b"strict-transport-security" => (56, 56),
        b"transfer-encoding" => (57, 57),
        b"user-agent" => (58, 58),
        b"vary" => (59, 59),
        b"via" => (60, 60),
        b"www-authenticate" => (61, 61),
        _ => return None,
    })
}
