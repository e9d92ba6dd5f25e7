//! rampart's own fast DEFLATE encoder (RFC 1951) for gzip, deflate and raw-deflate at
//! `tune.comp.maxlevel 1`, built on the idea of Willy Tarreau's libslz (which Debian's
//! haproxy uses): fixed Huffman codes only (nothing to count, no trees to send), one
//! small hash table of 4-byte sequences giving the last position each was seen at,
//! greedy matching within the 32 KiB window (no chains, no lazy evaluation), and a
//! stored block for a run of literals that fixed codes would make larger.
//!
//! Unlike libslz, the window is carried between the blocks of a response (a match may
//! point into the previous block), and each block ends with a sync flush (an empty
//! stored block), as the zlib encoder did: what the server sent reaches the client at
//! once. Level 0 (the limits of `comp::limit` lowered it) sends stored blocks; the
//! data still enters the window, so level 1 may refer to it again.
//!
//! Memory per response: the hash table (64 KiB) and the window (allocated as data
//! arrives: up to twice the 32 KiB window plus the block being compressed), against
//! zlib's ~262 KiB at its defaults; [`FastDeflate::mem`] says what it holds now.

/// The framing around a deflate stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrap {
    /// RFC 1952: a 10-byte header, then the CRC-32 and the size of the data.
    Gzip,
    /// RFC 1950 (HTTP's `deflate`): a 2-byte header, then the Adler-32 of the data.
    Zlib,
    Raw,
}

/// The gzip header rampart writes: no name, no time, "fastest", Unix.
pub const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 3];
/// The zlib header: deflate with a 32 KiB window, "fastest" (FLEVEL 0), no dictionary.
const ZLIB_HEADER: [u8; 2] = [0x78, 0x01];

/// DEFLATE's window.
const WINDOW: usize = 32 * 1024;
const MIN_MATCH: usize = 4;
const MAX_MATCH: usize = 258;
/// log2 of the hash table's entries.
const HASH_BITS: u32 = 13;
/// The position of the first byte of a stream: an empty table entry (position 0) is
/// then always out of the window.
const FIRST_POS: u32 = 2 * WINDOW as u32;
/// Past this position (below 4 GiB by more than any block), positions start over.
const RESET_POS: u32 = 1 << 30;
/// A stored block holds at most this many bytes.
const STORED_MAX: usize = 65535;
/// A literal run shorter than this is always sent with fixed codes (the cost of
/// counting it is not worth a stored block's few bytes).
const STORED_MIN_RUN: usize = 64;
/// Bits a stored block costs beyond its bytes, when it interrupts a fixed block: the
/// end of block (7), the stored header (3) and its padding (up to 7), LEN and NLEN
/// (32), the next fixed block's header (3).
const STORED_OVERHEAD_BITS: usize = 7 + 3 + 7 + 32 + 3;

/// `code` (`len` bits, most significant first as DEFLATE's Huffman codes go) reversed,
/// since the bit writer sends the least significant bit first.
const fn rev(code: u32, len: u32) -> u32 {
    let mut r = 0;
    let mut i = 0;
    while i < len {
        r |= ((code >> i) & 1) << (len - 1 - i);
        i += 1;
    }
    r
}

/// The fixed code of a literal/length symbol: (reversed code, bits).
const fn fixed_code(sym: u32) -> (u32, u32) {
    match sym {
        0..=143 => (rev(0x30 + sym, 8), 8),
        144..=255 => (rev(0x190 + sym - 144, 9), 9),
        256..=279 => (rev(sym - 256, 7), 7),
        _ => (rev(0xc0 + sym - 280, 8), 8),
    }
}

/// An entry of the code tables: the bits to send (low 24 bits) and how many (high 8).
const fn packed(bits: u32, n: u32) -> u32 {
    bits | (n << 24)
}

/// The literals' codes.
const LIT: [u32; 256] = {
    let mut t = [0; 256];
    let mut i = 0;
    while i < 256 {
        let (c, n) = fixed_code(i as u32);
        t[i] = packed(c, n);
        i += 1;
    }
    t
};

/// The first length of each length symbol (257..=285), and its extra bits.
const LEN_BASE: [u32; 29] =
    [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LEN_EXTRA: [u32; 29] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];

/// A match length's code with its extra bits, by length (3..=258).
const LEN: [u32; 512] = {
    let mut t = [0; 512];
    let mut s = 0;
    while s < 29 {
        let (c, n) = fixed_code(257 + s as u32);
        let last = if s == 28 { 258 } else { LEN_BASE[s + 1] - 1 };
        let mut l = LEN_BASE[s];
        while l <= last {
            t[l as usize] = packed(c | ((l - LEN_BASE[s]) << n), n + LEN_EXTRA[s]);
            l += 1;
        }
        s += 1;
    }
    t
};

/// The distance symbol (0..=29) of a distance minus one: `DIST_SYM[d]` for d < 256,
/// `DIST_SYM[256 + (d >> 7)]` above (every symbol from 16 on spans a multiple of 128
/// distances), as zlib's table.
const DIST_SYM: [u8; 512] = {
    let mut t = [0u8; 512];
    let mut d = 0;
    while d < 32768 {
        let sym = dist_sym(d);
        if d < 256 {
            t[d as usize] = sym as u8;
        } else {
            t[256 + (d >> 7) as usize] = sym as u8;
        }
        d += 1;
    }
    t
};

/// The symbol of a distance minus one, computed (for the tables).
const fn dist_sym(d: u32) -> u32 {
    if d < 4 {
        return d;
    }
    let nb = 31 - d.leading_zeros();
    2 * nb + ((d >> (nb - 1)) & 1)
}

/// By distance symbol: its reversed 5-bit code and the bits it takes with its extra
/// bits (`packed`), and the first distance minus one it stands for.
const DIST: [(u32, u32); 32] = {
    let mut t = [(0, 0); 32];
    let mut s = 0;
    while s < 30 {
        let extra = if s < 4 { 0 } else { s / 2 - 1 };
        let first = if s < 4 { s } else { (2 | (s & 1)) << extra };
        t[s as usize] = (packed(rev(s, 5), 5 + extra), first);
        s += 1;
    }
    t
};

/// A distance's code (the fixed distance codes are 5 bits) with its extra bits:
/// (bits, how many).
#[inline(always)]
fn dist_code(dist: usize) -> (u32, u32) {
    let d = (dist - 1) as u32;
    let idx = if d < 256 { d } else { 256 + (d >> 7) };
    let (code, first) = DIST[(DIST_SYM[(idx & 511) as usize] & 31) as usize];
    ((code & 0xff_ffff) | ((d - first) << 5), code >> 24)
}

/// The checksum of the framing.
enum Check {
    Crc(crc32fast::Hasher),
    Adler(u32),
    None,
}

/// Adler-32 (RFC 1950) of `data`, continuing `sum`.
fn adler32(sum: u32, data: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    // the most bytes whose sums cannot overflow 32 bits before the modulo
    const NMAX: usize = 5552;
    let (mut a, mut b) = (sum & 0xffff, sum >> 16);
    for chunk in data.chunks(NMAX) {
        for &x in chunk {
            a += u32::from(x);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

/// The bits waiting to be sent, least significant first.
#[derive(Default, Clone, Copy)]
struct Bits {
    acc: u64,
    n: u32,
}

impl Bits {
    /// Queues `n` (at most 32) bits; whole 32-bit words go to `out`.
    #[inline(always)]
    fn put(&mut self, out: &mut Vec<u8>, bits: u32, n: u32) {
        self.acc |= u64::from(bits) << self.n;
        self.n += n;
        if self.n >= 32 {
            out.extend_from_slice(&(self.acc as u32).to_le_bytes());
            self.acc >>= 32;
            self.n -= 32;
        }
    }

    #[inline(always)]
    fn put_code(&mut self, out: &mut Vec<u8>, code: u32) {
        self.put(out, code & 0xff_ffff, code >> 24);
    }

    /// Pads to a byte boundary and sends every queued byte.
    fn align(&mut self, out: &mut Vec<u8>) {
        let bytes = self.n.div_ceil(8) as usize;
        out.extend_from_slice(&self.acc.to_le_bytes()[..bytes]);
        self.acc = 0;
        self.n = 0;
    }
}

/// The block structure of the output: the bit writer, and which block is open.
#[derive(Default)]
struct Blocks {
    bits: Bits,
    /// A fixed-code block is open.
    in_fixed: bool,
    /// Something was sent since the last flush.
    dirty: bool,
}

impl Blocks {
    /// Sends `run` as literals: fixed codes, or stored blocks when those are shorter.
    fn literals(&mut self, run: &[u8], out: &mut Vec<u8>) {
        if run.len() >= STORED_MIN_RUN {
            // fixed codes take 8 bits for bytes below 144, 9 for the others
            let nine = run.iter().filter(|&&b| b >= 144).count();
            if nine > STORED_OVERHEAD_BITS {
                return self.stored(run, out);
            }
        }
        self.open_fixed(out);
        for &b in run {
            self.bits.put_code(out, LIT[b as usize]);
        }
    }

    /// Sends `run` in stored blocks.
    fn stored(&mut self, run: &[u8], out: &mut Vec<u8>) {
        self.end_fixed(out);
        for chunk in run.chunks(STORED_MAX) {
            self.bits.put(out, 0, 3);
            self.bits.align(out);
            let len = chunk.len() as u16;
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&(!len).to_le_bytes());
            out.extend_from_slice(chunk);
        }
        self.dirty = true;
    }

    #[inline(always)]
    fn open_fixed(&mut self, out: &mut Vec<u8>) {
        if !self.in_fixed {
            // BFINAL 0, BTYPE 01
            self.bits.put(out, 0b010, 3);
            self.in_fixed = true;
            self.dirty = true;
        }
    }

    fn end_fixed(&mut self, out: &mut Vec<u8>) {
        if self.in_fixed {
            // the end-of-block symbol (256): 7 zero bits
            self.bits.put(out, 0, 7);
            self.in_fixed = false;
        }
    }

    /// A sync flush: the open block ends, an empty stored block aligns the stream to
    /// a byte, and every byte goes out.
    fn flush(&mut self, out: &mut Vec<u8>) {
        if !self.dirty {
            return;
        }
        self.end_fixed(out);
        self.bits.put(out, 0, 3);
        self.bits.align(out);
        out.extend_from_slice(&[0, 0, 0xff, 0xff]);
        self.dirty = false;
    }

    /// The end of the stream: an empty final fixed block.
    fn finish(&mut self, out: &mut Vec<u8>) {
        self.end_fixed(out);
        // BFINAL, BTYPE 01, end of block
        self.bits.put(out, 0b011, 3);
        self.bits.put(out, 0, 7);
        self.bits.align(out);
    }
}

/// The hash table's entries.
const TABLE: usize = 1 << HASH_BITS;

/// One response's deflate stream.
pub struct FastDeflate {
    wrap: Wrap,
    /// 1: compress; 0: stored blocks.
    level: u32,
    /// The last `WINDOW` bytes (at least) of the data, then the block being compressed.
    win: Vec<u8>,
    /// The position of `win[0]` in the stream, counted from `FIRST_POS`.
    base: u32,
    /// By hash of 4 bytes: those 4 bytes (high half) and the position they were last
    /// seen at (low half). Carrying the bytes spares a read of the window for every
    /// candidate that is not a match.
    table: Box<[u64; TABLE]>,
    blocks: Blocks,
    header_sent: bool,
    check: Check,
    /// The size of the data, modulo 2^32 (gzip's ISIZE).
    size: u32,
}

impl FastDeflate {
    /// A stream at `level` (0: stored blocks, else compressed).
    pub fn new(wrap: Wrap, level: u32) -> FastDeflate {
        let check = match wrap {
            Wrap::Gzip => Check::Crc(crc32fast::Hasher::new()),
            Wrap::Zlib => Check::Adler(1),
            Wrap::Raw => Check::None,
        };
        let table: Box<[u64]> = vec![0; TABLE].into_boxed_slice();
        FastDeflate {
            wrap,
            level: level.min(1),
            win: Vec::new(),
            base: FIRST_POS,
            table: table.try_into().expect("TABLE entries"),
            blocks: Blocks::default(),
            header_sent: false,
            check,
            size: 0,
        }
    }

    /// The memory the stream holds: itself, its hash table and its window as allocated
    /// (it grows with the first blocks, up to twice the window plus a block). What
    /// `maxzlibmem` counts for it.
    pub fn mem(&self) -> u64 {
        (std::mem::size_of::<FastDeflate>() + std::mem::size_of::<[u64; TABLE]>() + self.win.capacity()) as u64
    }

    /// From the next block on: 0 sends stored blocks, anything else compresses.
    pub fn set_level(&mut self, level: u32) {
        self.level = level.min(1);
    }

    /// Compresses `data` and flushes (sync flush); appends what can be sent to `out`.
    pub fn push(&mut self, data: &[u8], out: &mut Vec<u8>) {
        self.header(out);
        if data.is_empty() {
            return;
        }
        match &mut self.check {
            Check::Crc(h) => h.update(data),
            Check::Adler(s) => *s = adler32(*s, data),
            Check::None => {}
        }
        self.size = self.size.wrapping_add(data.len() as u32);
        // worst case: stored blocks, plus a flush
        out.reserve(data.len() + data.len() / 8 + 64);
        let start = self.win.len();
        self.win.extend_from_slice(data);
        if self.level == 0 {
            self.blocks.stored(&self.win[start..], out);
        } else {
            compress(&self.win, start, self.base, &mut self.table, &mut self.blocks, out);
        }
        self.blocks.flush(out);
        self.slide();
    }

    /// Ends the stream: the last block and the framing's trailer.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        self.header(out);
        self.blocks.finish(out);
        match &self.check {
            Check::Crc(h) => {
                out.extend_from_slice(&h.clone().finalize().to_le_bytes());
                out.extend_from_slice(&self.size.to_le_bytes());
            }
            Check::Adler(s) => out.extend_from_slice(&s.to_be_bytes()),
            Check::None => {}
        }
    }

    fn header(&mut self, out: &mut Vec<u8>) {
        if !self.header_sent {
            match self.wrap {
                Wrap::Gzip => out.extend_from_slice(&GZIP_HEADER),
                Wrap::Zlib => out.extend_from_slice(&ZLIB_HEADER),
                Wrap::Raw => {}
            }
            self.header_sent = true;
        }
    }

    /// Keeps the last `WINDOW` bytes once `win` holds twice that. Positions never
    /// wrap: past `RESET_POS` the table forgets everything and they count again from
    /// `FIRST_POS` (a few matches lost once per GiB).
    fn slide(&mut self) {
        if self.win.len() > 2 * WINDOW {
            let drop = self.win.len() - WINDOW;
            self.win.drain(..drop);
            self.base += drop as u32;
        }
        if self.base > RESET_POS {
            self.table.fill(0);
            self.base = FIRST_POS;
        }
    }
}

/// The greedy matching of `win[start..]`, `win[0]` being at stream position `base`.
/// The bit writer is a local copy while the loop runs (kept in registers), put back
/// around the rare calls that need the `Blocks`.
fn compress(win: &[u8], start: usize, base: u32, table: &mut [u64; TABLE], blocks: &mut Blocks, out: &mut Vec<u8>) {
    let end = win.len();
    let mut i = start;
    let mut lit = start;
    let mut bits = blocks.bits;
    let mut in_fixed = blocks.in_fixed;
    while i + MIN_MATCH <= end {
        let w = read32(win, i);
        let h = (w.wrapping_mul(0x9e37_79b1) >> (32 - HASH_BITS)) as usize;
        let pos = base.wrapping_add(i as u32);
        let cand = std::mem::replace(&mut table[h & (TABLE - 1)], (u64::from(w) << 32) | u64::from(pos));
        let dist = pos.wrapping_sub(cand as u32) as usize;
        // the same 4 bytes, within the window and still in `win` (positions only
        // grow: see `slide`, so an entry is never newer than `pos`)
        if (cand >> 32) as u32 == w && dist <= WINDOW && dist <= i {
            let len = MIN_MATCH + match_len(win, i - dist + MIN_MATCH, i + MIN_MATCH, end.min(i + MAX_MATCH));
            if lit == i && in_fixed {
                // matches one after the other: the common case of text
            } else if in_fixed && i - lit < STORED_MIN_RUN {
                // a short run in the open block: fixed codes, inline
                for &b in &win[lit..i] {
                    bits.put_code(out, LIT[b as usize]);
                }
            } else {
                blocks.bits = bits;
                if lit < i {
                    blocks.literals(&win[lit..i], out);
                }
                blocks.open_fixed(out);
                bits = blocks.bits;
                in_fixed = true;
            }
            let (dc, dn) = dist_code(dist);
            let lc = LEN[len & 511];
            let ln = lc >> 24;
            bits.put(out, (lc & 0xff_ffff) | (dc << ln), ln + dn);
            i += len;
            lit = i;
        } else {
            i += 1;
        }
    }
    blocks.bits = bits;
    if lit < end {
        blocks.literals(&win[lit..end], out);
    }
}

#[inline(always)]
fn read32(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().unwrap())
}

/// How many bytes from `a` and `b` (`a` < `b`) are equal, `b` not going past `end`.
#[inline(always)]
fn match_len(w: &[u8], a: usize, b: usize, end: usize) -> usize {
    let mut k = 0;
    while b + k + 8 <= end {
        let x = u64::from_le_bytes(w[a + k..a + k + 8].try_into().unwrap())
            ^ u64::from_le_bytes(w[b + k..b + k + 8].try_into().unwrap());
        if x != 0 {
            return k + (x.trailing_zeros() / 8) as usize;
        }
        k += 8;
    }
    while b + k < end && w[a + k] == w[b + k] {
        k += 1;
    }
    k
}

#[cfg(test)]
mod tests;
