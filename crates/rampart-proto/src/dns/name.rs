//! Domain names in wire form: length-prefixed labels ending with the root label, and
//! compression pointers (two bytes, top bits set) to an earlier name of the message.

/// The longest name in wire form (RFC 1035 §2.3.4).
const MAX_NAME: usize = 255;
/// The longest label.
const MAX_LABEL: usize = 63;

/// Why a name could not be read or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameError {
    /// The message ends inside the name.
    Truncated,
    /// A label longer than 63 bytes, or an empty one inside a name.
    BadLabel,
    /// Longer than 255 bytes.
    TooLong,
    /// A compression pointer that does not point before the name (a loop, or ahead).
    BadPointer,
    /// A label type other than plain or pointer (0x40, 0x80).
    BadLabelType,
}

/// Appends `name` in wire form (a final dot is allowed; the root is `""` or `"."`).
pub fn write_name(out: &mut Vec<u8>, name: &str) -> Result<(), NameError> {
    let name = name.strip_suffix('.').unwrap_or(name);
    let start = out.len();
    if !name.is_empty() {
        for label in name.split('.') {
            if label.is_empty() || label.len() > MAX_LABEL {
                out.truncate(start);
                return Err(NameError::BadLabel);
            }
            out.push(label.len() as u8);
            out.extend_from_slice(label.as_bytes());
        }
    }
    out.push(0);
    if out.len() - start > MAX_NAME {
        out.truncate(start);
        return Err(NameError::TooLong);
    }
    Ok(())
}

/// Reads the name at `*at` of message `msg`, lower-cased, labels joined by dots (the
/// root is `""`), and moves `*at` past it (past the first pointer when compressed).
/// Each pointer must point strictly before the label that holds it, so that reading
/// always ends.
pub fn read_name(msg: &[u8], at: &mut usize) -> Result<String, NameError> {
    let mut out = String::new();
    let mut pos = *at;
    let mut end: Option<usize> = None;
    let mut wire_len = 1;
    loop {
        let len = *msg.get(pos).ok_or(NameError::Truncated)?;
        match len & 0xc0 {
            0 if len == 0 => {
                *at = end.unwrap_or(pos + 1);
                return Ok(out);
            }
            0 => {
                let len = usize::from(len);
                let label = msg.get(pos + 1..pos + 1 + len).ok_or(NameError::Truncated)?;
                wire_len += len + 1;
                if wire_len > MAX_NAME {
                    return Err(NameError::TooLong);
                }
                if !out.is_empty() {
                    out.push('.');
                }
                out.extend(label.iter().map(|b| char::from(b.to_ascii_lowercase())));
                pos += 1 + len;
            }
            0xc0 => {
                let low = *msg.get(pos + 1).ok_or(NameError::Truncated)?;
                let target = usize::from(u16::from_be_bytes([len & 0x3f, low]));
                if target >= pos {
                    return Err(NameError::BadPointer);
                }
                end.get_or_insert(pos + 2);
                pos = target;
            }
            _ => return Err(NameError::BadLabelType),
        }
    }
}
