//! The data a TCP stream's content rules hold, as Lua actions change it through
//! `txn.req`/`txn.res` (HAProxy's channel buffer seen from a script: output, the bytes
//! already forwarded, then input, the bytes the rules look at).
//! HAProxy counterpart: the buffer edits of `hlua_channel_*()` (src/hlua.c),
//! `b_insert_blk()`, `b_move()`, `channel_forward()`.
//!
//! The stream owns the buffer and lends its input to the rules read-only; a script's
//! first change copies that input here (copy on write), the later rules and fetches
//! read the copy ([`Chan::input`]), and the stream applies it once the rules returned
//! ([`Chan::apply`]). A stream no script writes to pays nothing.

/// One direction's channel of a TCP stream, while content rules run on it.
#[derive(Debug, Default)]
pub struct Chan {
    /// The input as scripts changed it since the stream last applied the changes,
    /// with the bytes they forwarded meanwhile at its front (`fwd`); `None`: unchanged.
    edit: Option<Vec<u8>>,
    /// How many bytes at the front of `edit` scripts forwarded.
    fwd: usize,
    /// How many bytes at the front of the stream's buffer are output (forwarded, held
    /// until the peer can take them): the rules see the buffer past them.
    pub out: usize,
    /// The buffer's size (`tune.bufsize`): what a script adds must fit in it.
    pub size: usize,
    /// What scripts sent through the other direction's channel while these rules ran
    /// (`txn.res:send()` in request rules): the stream writes it to that peer.
    pub back: Vec<u8>,
}

/// What a write that did not fit returns (HAProxy's -1).
pub const NO_ROOM: i64 = -1;

impl Chan {
    pub fn new(size: usize) -> Chan {
        Chan { size, ..Chan::default() }
    }

    /// The input the rules see: the copy a script changed, else `orig`, the stream's.
    pub fn input<'a>(&'a self, orig: &'a [u8]) -> &'a [u8] {
        self.edit.as_deref().map_or(orig, |e| &e[self.fwd..])
    }

    /// Whether a script changed the data since the stream last applied them.
    pub fn changed(&self) -> bool {
        self.edit.is_some()
    }

    /// The output's length (HAProxy's `co_data()`).
    pub fn output(&self) -> usize {
        self.out + self.fwd
    }

    /// Free room in the buffer (`c_room()`), `orig` being the stream's input.
    pub fn room(&self, orig: &[u8]) -> usize {
        self.size.saturating_sub(self.output() + self.input(orig).len())
    }

    /// The copy scripts change (made from `orig` on first need) and where its input
    /// starts.
    fn edit(&mut self, orig: &[u8]) -> (&mut Vec<u8>, usize) {
        let fwd = self.fwd;
        (self.edit.get_or_insert_with(|| orig.to_vec()), fwd)
    }

    /// Inserts `s` at `at` in the input (`at` within it); the length copied, or
    /// [`NO_ROOM`].
    pub fn insert(&mut self, orig: &[u8], at: usize, s: &[u8]) -> i64 {
        if s.is_empty() {
            return 0;
        }
        if s.len() > self.room(orig) {
            return NO_ROOM;
        }
        let (e, fwd) = self.edit(orig);
        e.splice(fwd + at..fwd + at, s.iter().copied());
        s.len() as i64
    }

    /// Removes `len` bytes of the input from `at` (both within it).
    pub fn remove(&mut self, orig: &[u8], at: usize, len: usize) {
        if len == 0 {
            return;
        }
        let (e, fwd) = self.edit(orig);
        e.drain(fwd + at..fwd + at + len);
    }

    /// Replaces `len` bytes of the input from `at` with `s`; the length copied, or
    /// [`NO_ROOM`] (nothing changed) when `s` does not fit once they are removed.
    pub fn set(&mut self, orig: &[u8], at: usize, len: usize, s: &[u8]) -> i64 {
        if s.len() > self.room(orig) + len {
            return NO_ROOM;
        }
        self.remove(orig, at, len);
        self.insert(orig, at, s)
    }

    /// Forwards up to `n` bytes of the input (they become output); how many.
    pub fn forward(&mut self, orig: &[u8], n: usize) -> usize {
        let n = n.min(self.input(orig).len());
        if n > 0 {
            self.edit(orig);
            self.fwd += n;
        }
        n
    }

    /// Puts `s` at the end of the output, ahead of the input (`Channel:send`).
    pub fn send(&mut self, orig: &[u8], s: &[u8]) -> usize {
        if s.is_empty() {
            return 0;
        }
        let (e, fwd) = self.edit(orig);
        e.splice(fwd..fwd, s.iter().copied());
        self.fwd += s.len();
        s.len()
    }

    /// Applies the changes to `buf`, the stream's buffer (output, then the input the
    /// rules saw): its input becomes the changed one, the forwarded bytes output.
    pub fn apply(&mut self, buf: &mut Vec<u8>) {
        let Some(e) = self.edit.take() else { return };
        buf.truncate(self.out);
        buf.extend_from_slice(&e);
        self.out += std::mem::take(&mut self.fwd);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_copy_the_input_once_and_apply_to_the_buffer() {
        let mut buf = b"hello world".to_vec();
        let mut c = Chan::new(64);
        assert!(!c.changed());
        assert_eq!(c.input(&buf), b"hello world");
        assert_eq!(c.set(&buf, 0, 5, b"HELLO"), 5);
        assert_eq!(c.insert(&buf, 11, b"!"), 1);
        assert_eq!(c.input(&buf), b"HELLO world!");
        assert_eq!(c.forward(&buf, 6), 6);
        assert_eq!(c.send(&buf, b"<>"), 2);
        assert_eq!(c.input(&buf), b"world!");
        assert_eq!(c.output(), 8);
        c.remove(&buf, 0, 1);
        assert_eq!(c.input(&buf), b"orld!");
        c.apply(&mut buf);
        assert_eq!(buf, b"HELLO <>orld!");
        assert_eq!((c.out, c.changed()), (8, false));
        // the next pass sees the input past the output
        let input = buf[c.out..].to_vec();
        assert_eq!(c.insert(&input, 0, b"w"), 1);
        c.apply(&mut buf);
        assert_eq!(buf, b"HELLO <>world!");
    }

    #[test]
    fn what_does_not_fit_is_refused() {
        let buf = b"abcd".to_vec();
        let mut c = Chan::new(6);
        assert_eq!(c.insert(&buf, 0, b"xyz"), NO_ROOM);
        assert!(!c.changed());
        assert_eq!(c.set(&buf, 0, 1, b"xyz"), 3);
        assert_eq!(c.input(&buf), b"xyzbcd");
        assert_eq!(c.room(&buf), 0);
        assert_eq!(c.insert(&buf, 0, b""), 0);
        assert_eq!(c.forward(&buf, 100), 6);
    }
}
