//! Address converters: `ipmask`. HAProxy counterpart: src/sample.c
//! (`sample_conv_ipmask`).

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::sample::ctx::SampleCtx;
use crate::sample::kw::{Arg, ArgSpec, ArgT, ConvKw};
use crate::sample::types::{Sample, SmpType};

/// The IPv4 mask of an argument: a mask, a network's mask or a prefix length.
fn mask4(arg: Option<&Arg>) -> Option<u32> {
    match arg? {
        Arg::Ipv4(m) | Arg::Net4(_, m) => Some(u32::from(*m)),
        Arg::Sint(len @ 0..=32) => Some(u32::MAX.checked_shl(32 - *len as u32).unwrap_or(0)),
        _ => None,
    }
}

/// The IPv6 mask of an argument: a mask, a network's prefix or a prefix length.
fn mask6(arg: Option<&Arg>) -> Option<u128> {
    let len = match arg? {
        Arg::Ipv6(m) => return Some(u128::from(*m)),
        Arg::Net6(_, len) => i64::from(*len),
        Arg::Sint(len) => *len,
        _ => return None,
    };
    let len = u32::try_from(len).ok().filter(|&l| l <= 128)?;
    Some(u128::MAX.checked_shl(128 - len).unwrap_or(0))
}

/// `ipmask(<mask4>[,<mask6>])`: an IPv4 address (IPv4-mapped IPv6 ones included)
/// masked with `mask4`; an IPv6 one masked with `mask6`, and absent without it.
fn conv_ipmask<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let v4 = match smp {
        Sample::Ipv4(a) => a,
        Sample::Ipv6(a) => match a.to_ipv4_mapped() {
            Some(a) => a,
            None => {
                let m = mask6(args.get(1))?;
                return Some(Sample::Ipv6(Ipv6Addr::from(u128::from(a) & m)));
            }
        },
        _ => return None,
    };
    let m = mask4(args.first())?;
    Some(Sample::Ipv4(Ipv4Addr::from(u32::from(v4) & m)))
}

pub const KEYWORDS: &[ConvKw] =
    &[ConvKw::new("ipmask", ArgSpec::new(&[ArgT::Msk4, ArgT::Msk6], 1), SmpType::Addr, SmpType::Ipv4, conv_ipmask)];

#[cfg(test)]
mod tests {
    //! Expected values from haproxy 2.6.12 (`ipv4(...)`/`ipv6(...)`, `ipmask(...)`).
    use super::super::testing::run;
    use super::*;

    fn v4(s: &str) -> Sample<'static> {
        Sample::Ipv4(s.parse().unwrap())
    }

    fn v6(s: &str) -> Sample<'static> {
        Sample::Ipv6(s.parse().unwrap())
    }

    fn m4(s: &str) -> Arg {
        Arg::Ipv4(s.parse().unwrap())
    }

    fn m6(s: &str) -> Arg {
        Arg::Ipv6(s.parse().unwrap())
    }

    #[test]
    fn ipv4_masks() {
        assert_eq!(run("ipmask", vec![m4("255.255.255.0")], v4("192.168.1.77")), Some(v4("192.168.1.0")));
        assert_eq!(run("ipmask", vec![m4("255.255.0.0")], v4("192.168.1.77")), Some(v4("192.168.0.0")));
        assert_eq!(run("ipmask", vec![m4("255.0.255.0")], v4("192.168.1.77")), Some(v4("192.0.1.0")));
        assert_eq!(run("ipmask", vec![m4("0.0.0.0")], v4("192.168.1.77")), Some(v4("0.0.0.0")));
        assert_eq!(run("ipmask", vec![Arg::Sint(24)], v4("192.168.1.77")), Some(v4("192.168.1.0")));
        assert_eq!(run("ipmask", vec![Arg::Sint(0)], v4("192.168.1.77")), Some(v4("0.0.0.0")));
    }

    #[test]
    fn ipv6_needs_a_mask6() {
        assert_eq!(run("ipmask", vec![m4("255.255.255.0")], v6("2001:db8::1")), None);
        let both = || vec![m4("255.255.255.0"), m6("ffff:ffff::")];
        assert_eq!(run("ipmask", both(), v6("2001:db8:1:2::1")), Some(v6("2001:db8::")));
        assert_eq!(run("ipmask", vec![m4("255.255.255.0"), Arg::Sint(32)], v6("2001:db8::1")), Some(v6("2001:db8::")));
        assert_eq!(
            run("ipmask", vec![m4("255.255.255.0"), Arg::Sint(128)], v6("2001:db8::1")),
            Some(v6("2001:db8::1"))
        );
    }

    #[test]
    fn mapped_ipv6_becomes_ipv4() {
        assert_eq!(run("ipmask", vec![m4("255.255.255.0")], v6("::ffff:10.1.2.3")), Some(v4("10.1.2.0")));
        let both = vec![m4("255.255.255.0"), m6("ffff:ffff:ffff:ffff::")];
        assert_eq!(run("ipmask", both, v6("::ffff:10.1.2.3")), Some(v4("10.1.2.0")));
    }
}
