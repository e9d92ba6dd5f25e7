//! Reading the regular expressions of HAProxy 1.x's header keywords: which header a
//! pattern names, what it says of the value, and request-line rewrites that are URI
//! rewrites. Recognises only literal forms; anything else is `None`.

/// `Name: value` (a whole header line as `reqadd` takes it) → `(Name, value)`.
pub fn literal_header_line(s: &str) -> Option<(String, String)> {
    let (name, value) = s.split_once(':')?;
    if name.is_empty() || !name.bytes().all(is_name_byte) {
        return None;
    }
    Some((name.to_string(), value.trim_start_matches([' ', '\t']).to_string()))
}

/// `^Name:<blanks>rest` → `(Name, rest)`: a pattern that names one header literally,
/// `rest` being what it says of the value (without the blanks after the colon).
pub fn header_pattern(re: &str) -> Option<(String, String)> {
    let body = re.strip_prefix('^')?;
    let (name, after) = body.split_once(':')?;
    let name = name.replace("\\-", "-");
    if name.is_empty() || !name.bytes().all(is_name_byte) {
        return None;
    }
    let rest = ["\\s*", "\\s+", "[ \\t]*", "[\\t ]*", " *", " +", " ?", " "]
        .iter()
        .find_map(|blanks| after.strip_prefix(blanks))
        .unwrap_or(after);
    Some((name, rest.to_string()))
}

/// A `reqrep` over the request line that keeps the method and rewrites the URI:
/// search `^([^ :]*) <uri-regex>` with replacement `\1 <uri>` → `(^<uri-regex>, <uri>)`
/// (groups in the replacement still numbered as in the original; see [`shift_groups`]).
pub fn request_line_pattern(search: &str, repl: &str) -> Option<(String, String)> {
    let uri_re = ["^([^ :]*) ", "^([^ ]*) ", "^([^ :]+) ", "^([^ ]+) ", "^([A-Z]+) ", "^([A-Z]*) "]
        .iter()
        .find_map(|method| search.strip_prefix(method))?;
    let uri = repl.strip_prefix("\\1 ")?;
    // the version and the method must not be involved past the first group
    if uri_re.contains("HTTP") || uri.contains("HTTP") || uri.contains("\\1") || uri_re.contains(' ') {
        return None;
    }
    Some((format!("^{uri_re}"), uri.to_string()))
}

/// `\N` (N ≥ 2) → `\N-1`: the groups of a request-line rewrite once the method's group
/// is gone.
pub fn shift_groups(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some(d)) if d.is_ascii_digit() && *d >= '2' => {
                let n = d.to_digit(10).unwrap_or(2) - 1;
                chars.next();
                out.push('\\');
                out.push_str(&n.to_string());
            }
            ('\\', Some(_)) => {
                out.push(c);
                out.extend(chars.next());
            }
            _ => out.push(c),
        }
    }
    out
}

/// A byte of a header name as configurations write them.
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_patterns() {
        assert_eq!(header_pattern("^Host: (.*)"), Some(("Host".into(), "(.*)".into())));
        assert_eq!(header_pattern("^X\\-Real\\-IP:\\s*1\\.2"), Some(("X-Real-IP".into(), "1\\.2".into())));
        assert_eq!(header_pattern("^Server:.*"), Some(("Server".into(), ".*".into())));
        assert_eq!(header_pattern("^X-(A|B):"), None);
        assert_eq!(header_pattern("Host: x"), None);
        assert_eq!(literal_header_line("X-A:  1 2"), Some(("X-A".into(), "1 2".into())));
        assert_eq!(literal_header_line("bad name: 1"), None);
    }

    #[test]
    fn request_lines() {
        assert_eq!(
            request_line_pattern("^([^ :]*) /static/(.*)", "\\1 /\\2"),
            Some(("^/static/(.*)".into(), "/\\2".into()))
        );
        assert_eq!(request_line_pattern("^([^ :]*) /a HTTP/1.1", "\\1 /b HTTP/1.1"), None);
        assert_eq!(request_line_pattern("^(GET|HEAD) (.*)", "\\1 x"), None);
        assert_eq!(shift_groups("/\\2/x\\3\\\\1\\1"), "/\\1/x\\2\\\\1\\1");
    }
}
