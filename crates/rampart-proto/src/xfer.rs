//! The data bytes of HAProxy's listening-socket transfer (`_getsocks` on a stats socket
//! with `expose-fd listeners`, fetched by a new process started with `-x`): one record
//! per socket, in the order of the descriptors that travel beside them (SCM_RIGHTS):
//!
//! ```text
//! <ns_len: u8> <namespace: ns_len bytes> <if_len: u8> <interface: if_len bytes> <0u32>
//! ```
//!
//! The four zero bytes held the listener options before HAProxy 2.3; readers skip them.
//! Before the records, the sender sends the number of sockets as a native-endian
//! `i32` alone; descriptors go by batches of at most [`MAX_SEND_FD`], and after a full
//! batch the sender waits for a 4-byte acknowledgement. HAProxy counterpart:
//! `_getsocks()` in src/cli.c, `sock_get_old_sockets()` in src/sock.c.

/// The most descriptors in one message (HAProxy's `MAX_SEND_FD`).
pub const MAX_SEND_FD: usize = 252;

/// The longest record: both names at their longest (255 bytes, the length is one byte)
/// and the options word.
pub const MAX_RECORD: usize = 1 + 255 + 1 + 255 + 4;

/// What travels with one socket.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SockMeta {
    /// The network namespace of the listener (`namespace`), empty when none.
    pub namespace: Vec<u8>,
    /// The interface the listener is bound to (`interface`), empty when none.
    pub interface: Vec<u8>,
}

/// Why the records do not match the descriptors received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XferError {
    /// The bytes end inside a record, or before the record of every descriptor
    /// (HAProxy: "Inconsistency while transferring sockets").
    Truncated,
    /// A name longer than 255 bytes cannot be sent.
    NameTooLong,
}

/// Appends the record of one socket to `out`.
pub fn encode(meta: &SockMeta, out: &mut Vec<u8>) -> Result<(), XferError> {
    for name in [&meta.namespace, &meta.interface] {
        let len = u8::try_from(name.len()).map_err(|_| XferError::NameTooLong)?;
        out.push(len);
        out.extend_from_slice(name);
    }
    out.extend_from_slice(&[0; 4]);
    Ok(())
}

/// Reads the records of `count` sockets from the start of `buf`. Bytes after them are
/// ignored, as HAProxy ignores them.
pub fn parse(buf: &[u8], count: usize) -> Result<Vec<SockMeta>, XferError> {
    let mut out = Vec::with_capacity(count.min(buf.len() / 6));
    let mut rest = buf;
    for _ in 0..count {
        let (namespace, after) = name(rest)?;
        let (interface, after) = name(after)?;
        rest = after.get(4..).ok_or(XferError::Truncated)?;
        out.push(SockMeta { namespace: namespace.to_vec(), interface: interface.to_vec() });
    }
    Ok(out)
}

/// One length-prefixed name and what follows it.
fn name(buf: &[u8]) -> Result<(&[u8], &[u8]), XferError> {
    let (&len, rest) = buf.split_first().ok_or(XferError::Truncated)?;
    let len = usize::from(len);
    if rest.len() < len {
        return Err(XferError::Truncated);
    }
    Ok(rest.split_at(len))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(ns: &str, iface: &str) -> SockMeta {
        SockMeta { namespace: ns.into(), interface: iface.into() }
    }

    #[test]
    fn records_are_length_prefixed_names_then_four_zero_bytes() {
        let mut buf = Vec::new();
        encode(&meta("", ""), &mut buf).unwrap();
        encode(&meta("blue", "eth0"), &mut buf).unwrap();
        assert_eq!(buf, b"\0\0\0\0\0\0\x04blue\x04eth0\0\0\0\0");
        assert_eq!(parse(&buf, 2).unwrap(), [meta("", ""), meta("blue", "eth0")]);
    }

    #[test]
    fn a_record_cut_anywhere_is_refused() {
        let mut buf = Vec::new();
        encode(&meta("ns", "lo"), &mut buf).unwrap();
        encode(&meta("", "eth1"), &mut buf).unwrap();
        for cut in 0..buf.len() {
            assert_eq!(parse(&buf[..cut], 2), Err(XferError::Truncated), "cut at {cut}");
        }
        assert_eq!(parse(&buf, 1).unwrap(), [meta("ns", "lo")]);
        assert_eq!(parse(&buf, 3), Err(XferError::Truncated));
    }

    #[test]
    fn a_name_past_255_bytes_cannot_be_sent() {
        let long = "x".repeat(256);
        assert_eq!(encode(&meta(&long, ""), &mut Vec::new()), Err(XferError::NameTooLong));
        let mut buf = Vec::new();
        encode(&meta(&long[..255], &long[..255]), &mut buf).unwrap();
        assert_eq!(buf.len(), MAX_RECORD);
    }
}
