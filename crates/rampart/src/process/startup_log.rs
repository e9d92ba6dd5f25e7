//! What `show startup-logs` shows: the startup messages of this process, as they were
//! printed (and, in a worker or a daemon's child, the configuration's warnings its
//! parent printed, recorded without printing them again). HAProxy counterpart: the
//! `startup_logs` ring of src/errors.c (65536 bytes, written while `MODE_STARTING`).
//!
//! Recording ends with [`close`]: a worker closes it once it serves, the master once a
//! load concluded (its worker ready, or the load failed), so that the master's buffer
//! holds the messages of the latest startup or reload attempt (its parse errors too),
//! as HAProxy 3.x's master CLI `show startup-logs` does.

// a lock taken at startup and by the CLI command, never on the request path
#![allow(clippy::disallowed_types)]

use std::sync::Mutex;

/// HAProxy's `STARTUP_LOG_SIZE`.
const SIZE: usize = 65536;

struct Log {
    text: String,
    closed: bool,
}

static LOG: Mutex<Log> = Mutex::new(Log { text: String::new(), closed: false });

/// Appends whole lines; the oldest lines go when the buffer is full (a ring).
pub fn record(lines: &str) {
    let Ok(mut log) = LOG.lock() else { return };
    if log.closed {
        return;
    }
    log.text.push_str(lines);
    trim(&mut log.text, SIZE);
}

/// Drops the oldest whole lines of `text` until it fits in `max` bytes.
fn trim(text: &mut String, max: usize) {
    if text.len() <= max {
        return;
    }
    let over = text.len() - max;
    let cut = text[over..].find('\n').map_or(text.len(), |i| over + i + 1);
    text.drain(..cut);
}

/// Ends the startup: later messages are not recorded.
pub fn close() {
    if let Ok(mut log) = LOG.lock() {
        log.closed = true;
    }
}

/// The recorded messages.
pub fn text() -> String {
    LOG.lock().map(|l| l.text.clone()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::trim;

    #[test]
    fn the_oldest_whole_lines_go_first() {
        let mut t = "aaaa\nbbbb\ncccc\n".to_owned();
        trim(&mut t, 12);
        assert_eq!(t, "bbbb\ncccc\n");
        let mut t = "aaaa\nbbbb\ncccc\n".to_owned();
        trim(&mut t, 9);
        assert_eq!(t, "cccc\n");
        let mut t = "aa\nbb\n".to_owned();
        trim(&mut t, 6);
        assert_eq!(t, "aa\nbb\n");
    }
}
