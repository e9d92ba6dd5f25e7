//! `%{+json}o`: a log line as one JSON object of the format's named nodes
//! (`%(name)ci`), as HAProxy 3.x writes it; an extension of HAProxy 2.6, where the
//! option does not exist. Numbers stay numbers, an absent value is `null`, anything
//! else is a JSON string (quotes, backslashes and control characters escaped), so
//! structured log pipelines need no parsing step. Nodes without a name are left out.
//! HAProxy counterpart: the `LOG_OPT_ENCODE_JSON` paths of `sess_build_logline()`
//! (src/log.c, 3.0).

use std::cell::RefCell;

thread_local! {
    /// A value being re-encoded as a JSON string.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Writes `{"name": value, ...}`; `seg(i, out)` renders node `i` as text.
pub fn render(names: &[(Box<str>, usize)], mut seg: impl FnMut(usize, &mut Vec<u8>), out: &mut Vec<u8>) {
    out.push(b'{');
    for (n, (name, i)) in names.iter().enumerate() {
        if n > 0 {
            out.extend_from_slice(b", ");
        }
        string(out, name.as_bytes());
        out.extend_from_slice(b": ");
        let at = out.len();
        seg(*i, out);
        value(out, at);
    }
    out.push(b'}');
}

/// Turns the text rendered from `at` into a JSON value.
fn value(out: &mut Vec<u8>, at: usize) {
    let v = &out[at..];
    if v.is_empty() || v == b"-" {
        out.truncate(at);
        out.extend_from_slice(b"null");
        return;
    }
    if is_number(v) {
        return;
    }
    // a `+Q` value already carries quotes: encode what they hold
    let quoted = v.len() >= 2 && v[0] == b'"' && v[v.len() - 1] == b'"';
    let (from, to) = if quoted { (at + 1, out.len() - 1) } else { (at, out.len()) };
    SCRATCH.with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else { return };
        s.clear();
        s.extend_from_slice(&out[from..to]);
        out.truncate(at);
        string(out, &s);
    });
}

fn is_number(v: &[u8]) -> bool {
    let digits = v.strip_prefix(b"-").unwrap_or(v);
    !digits.is_empty()
        && digits.len() < 19
        && digits.iter().all(u8::is_ascii_digit)
        && (digits == b"0" || digits[0] != b'0')
}

/// `s` as a JSON string.
fn string(out: &mut Vec<u8>, s: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for &c in s {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            c if c < 0x20 || c == 0x7f => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(c >> 4)]);
                out.push(HEX[usize::from(c & 15)]);
            }
            c => out.push(c),
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(values: &[&[u8]]) -> String {
        let names: Vec<(Box<str>, usize)> = (0..values.len()).map(|i| (format!("k{i}").into(), i)).collect();
        let mut out = Vec::new();
        render(&names, |i, o| o.extend_from_slice(values[i]), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn values_keep_their_json_type() {
        assert_eq!(
            enc(&[b"200", b"-1", b"0", b"007", b"-"]),
            r#"{"k0": 200, "k1": -1, "k2": 0, "k3": "007", "k4": null}"#
        );
        assert_eq!(
            enc(&[b"127.0.0.1", b"\"GET / HTTP/1.1\"", b"a\"b\\c\nd\x01"]),
            r#"{"k0": "127.0.0.1", "k1": "GET / HTTP/1.1", "k2": "a\"b\\c\nd\u0001"}"#
        );
        assert_eq!(enc(&[]), "{}");
    }
}
