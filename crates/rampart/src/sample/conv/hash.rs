//! Non-cryptographic hashes of a binary sample into an integer. HAProxy counterparts:
//! src/sample.c (`sample_conv_djb2` ...), src/hash.c (`hash_sdbm`, `hash_djb2`,
//! `hash_wt6`), `full_hash()` (include/haproxy/intops.h).
//!
//! The three small string hashes are HAProxy's own and written here; CRC32, CRC32C and
//! xxHash come from crates. The same functions serve `hash-type` (`lb::hash`).

use super::{arg_sint, bytes_of};
use crate::sample::ctx::SampleCtx;
use crate::sample::kw::{Arg, ArgSpec, ArgT, ConvKw};
use crate::sample::types::{Sample, SmpType};

/// SDBM: `h = c + (h << 6) + (h << 16) - h` over the bytes, 32-bit.
pub fn hash_sdbm(key: &[u8]) -> u32 {
    key.iter().fold(0u32, |h, &c| u32::from(c).wrapping_add(h << 6).wrapping_add(h << 16).wrapping_sub(h))
}

/// DJB2: `h = h * 33 + c` from 5381, 32-bit.
pub fn hash_djb2(key: &[u8]) -> u32 {
    key.iter().fold(5381u32, |h, &c| (h << 5).wrapping_add(h).wrapping_add(u32::from(c)))
}

/// WT6, Willy Tarreau's hash: two 32-bit states mixed by data-dependent rotations.
// COMPAT: HAProxy shifts by 32 when a step is 0, which x86 reduces to a shift by 0: a
// rotation by 0, as `rotate_left` does.
pub fn hash_wt6(key: &[u8]) -> u32 {
    let (mut h0, mut h1) = (0xa53c_965a_u32, 0x5ca6_953a_u32);
    let (mut step0, mut step1) = (6u32, 18u32);
    for &c in key {
        let t = u32::from(c);
        h0 = !(h0 ^ t);
        h1 = !(h1.wrapping_add(t));
        let r = h1.rotate_left(step0);
        h1 = h0.rotate_left(step1);
        h0 = r;
        let t = ((h0 >> 16) ^ h1) & 0xffff;
        step0 = t & 0x1f;
        step1 = t >> 11;
    }
    h0 ^ h1
}

/// Bob Jenkins' full avalanche of a 32-bit value, then a multiplication by a prime near
/// 3/4 of the space (HAProxy's `full_hash`).
pub fn full_hash(mut a: u32) -> u32 {
    a = a.wrapping_add(0x7ed5_5d16).wrapping_add(a << 12);
    a = (a ^ 0xc761_c23c) ^ (a >> 19);
    a = a.wrapping_add(0x1656_67b1).wrapping_add(a << 5);
    a = a.wrapping_add(0xd3a2_646c) ^ (a << 9);
    a = a.wrapping_add(0xfd70_46c5).wrapping_add(a << 3);
    a = (a ^ 0xb55a_4f09) ^ (a >> 16);
    a.wrapping_mul(3_221_225_473)
}

/// A 32-bit hash converter with HAProxy's optional `<avalanche>` argument (any
/// non-zero value applies [`full_hash`]).
macro_rules! hash32 {
    ($name:ident, $hash:expr) => {
        fn $name<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
            let b = bytes_of(smp)?;
            let hash: fn(&[u8]) -> u32 = $hash;
            let mut h = hash(&b);
            if arg_sint(args, 0).unwrap_or(0) != 0 {
                h = full_hash(h);
            }
            Some(Sample::Sint(i64::from(h)))
        }
    };
}

hash32!(conv_sdbm, hash_sdbm);
hash32!(conv_djb2, hash_djb2);
hash32!(conv_wt6, hash_wt6);
hash32!(conv_crc32, crc32fast::hash);
hash32!(conv_crc32c, crc32c::crc32c);

/// `xxh32([<seed>])`: the seed is truncated to 32 bits.
fn conv_xxh32<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let seed = arg_sint(args, 0).unwrap_or(0) as u32;
    let b = bytes_of(smp)?;
    Some(Sample::Sint(i64::from(xxhash_rust::xxh32::xxh32(&b, seed))))
}

/// `xxh64([<seed>])`: the 64-bit hash reinterpreted as signed, as HAProxy.
fn conv_xxh64<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let seed = arg_sint(args, 0).unwrap_or(0) as u64;
    let b = bytes_of(smp)?;
    Some(Sample::Sint(xxhash_rust::xxh64::xxh64(&b, seed) as i64))
}

/// `xxh3([<seed>])`: XXH3 64-bit, reinterpreted as signed.
fn conv_xxh3<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let seed = arg_sint(args, 0).unwrap_or(0) as u64;
    let b = bytes_of(smp)?;
    Some(Sample::Sint(xxhash_rust::xxh3::xxh3_64_with_seed(&b, seed) as i64))
}

use SmpType::{Bin, Sint};

const OPT_INT: ArgSpec = ArgSpec::new(&[ArgT::Sint], 0);

pub const KEYWORDS: &[ConvKw] = &[
    ConvKw::new("sdbm", OPT_INT, Bin, Sint, conv_sdbm),
    ConvKw::new("djb2", OPT_INT, Bin, Sint, conv_djb2),
    ConvKw::new("wt6", OPT_INT, Bin, Sint, conv_wt6),
    ConvKw::new("crc32", OPT_INT, Bin, Sint, conv_crc32),
    ConvKw::new("crc32c", OPT_INT, Bin, Sint, conv_crc32c),
    ConvKw::new("xxh3", OPT_INT, Bin, Sint, conv_xxh3),
    ConvKw::new("xxh32", OPT_INT, Bin, Sint, conv_xxh32),
    ConvKw::new("xxh64", OPT_INT, Bin, Sint, conv_xxh64),
];

#[cfg(test)]
mod tests {
    //! Expected values from haproxy 2.6.12: `str(<input>),<hash>[(<arg>)]` through
    //! `lf-string`.
    use super::super::testing::{i, int, st};

    const LONG: &str = "hello world hello world 123456789";

    fn h(name: &str, arg: Option<i64>, input: &str) -> i64 {
        int(name, arg.map(i).into_iter().collect(), st(input)).expect("hash result")
    }

    #[test]
    fn haproxy_string_hashes() {
        assert_eq!(h("djb2", None, "abc"), 193485963);
        assert_eq!(h("sdbm", None, "abc"), 807794786);
        assert_eq!(h("wt6", None, "abc"), 2483038440);
        assert_eq!(h("djb2", None, ""), 5381);
        assert_eq!(h("wt6", None, ""), 4187620192);
        assert_eq!(h("djb2", None, LONG), 2258953338);
        assert_eq!(h("sdbm", None, LONG), 3869329789);
        assert_eq!(h("wt6", None, LONG), 1416968369);
    }

    #[test]
    fn crcs() {
        assert_eq!(h("crc32", None, "abc"), 891568578);
        assert_eq!(h("crc32", None, ""), 0);
        assert_eq!(h("crc32c", None, "abc"), 910901175);
        assert_eq!(h("crc32c", None, LONG), 2582301316);
    }

    #[test]
    fn avalanche_on_any_non_zero_argument() {
        assert_eq!(h("djb2", Some(1), "abc"), 2235766107);
        assert_eq!(h("djb2", Some(2), "abc"), 2235766107);
        assert_eq!(h("djb2", Some(-1), "abc"), 2235766107);
        assert_eq!(h("djb2", Some(0), "abc"), 193485963);
        assert_eq!(h("sdbm", Some(1), "abc"), 659243622);
        assert_eq!(h("wt6", Some(1), "abc"), 266135527);
        assert_eq!(h("crc32", Some(1), "abc"), 930845320);
        assert_eq!(h("crc32c", Some(1), "abc"), 1285784220);
    }

    #[test]
    fn xxhash_with_seeds() {
        assert_eq!(h("xxh3", None, "abc"), 8696274497037089104);
        assert_eq!(h("xxh32", None, "abc"), 852579327);
        assert_eq!(h("xxh64", None, "abc"), 4952883123889572249);
        assert_eq!(h("xxh3", Some(1), "abc"), 7729416884403528232);
        assert_eq!(h("xxh32", Some(1), "abc"), 2856167679);
        assert_eq!(h("xxh64", Some(1), "abc"), -4708009277469325048);
        assert_eq!(h("xxh32", Some(-1), "abc"), 2989167648);
        assert_eq!(h("xxh3", Some(-1), "abc"), 2962310483463817673);
        assert_eq!(h("xxh3", None, LONG), 6280347899710606524);
        assert_eq!(h("xxh3", Some(42), LONG), 8274283040327406969);
    }
}
