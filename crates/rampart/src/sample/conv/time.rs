//! Date converters: `ltime` and `utime` (strftime formats, local or UTC), `http_date`
//! (IMF-fixdate). HAProxy counterparts: src/sample.c (`sample_conv_ltime`,
//! `sample_conv_utime`), src/http_conv.c (`sample_conv_http_date`).
//!
//! As HAProxy, the input is masked to 55 bits first (a negative date becomes a huge
//! positive one, years in the billions, rendered as glibc does). Local time uses the
//! process time zone (`TZ`, else /etc/localtime), read once like `localtime_r`.

use std::sync::OnceLock;

use jiff::tz::TimeZone;
use jiff::Timestamp;

use super::strftime::{strftime, Tm};
use super::{arg_bytes, arg_sint, new_str, sint_of};
use crate::sample::ctx::SampleCtx;
use crate::sample::expr::CompileCx;
use crate::sample::kw::{Arg, ArgList, ArgSpec, ArgT, ConvKw};
use crate::sample::types::{Sample, SmpType};

/// HAProxy's mask keeping dates positive.
const DATE_MASK: i64 = 0x007f_ffff_ffff_ffff;

/// The process time zone, resolved on first use.
fn local_tz() -> &'static TimeZone {
    static TZ: OnceLock<TimeZone> = OnceLock::new();
    TZ.get_or_init(|| TimeZone::try_system().unwrap_or(TimeZone::UTC))
}

/// Reads the process time zone now (at startup, before a `chroot` hides the zone files).
pub fn load_time_zone() {
    local_tz();
}

/// `strftime(fmt)` of date `t` (seconds since the epoch) in the process time zone,
/// as `localtime_r` then `strftime` (the email alerts' `Date:` header).
pub fn local_strftime(fmt: &[u8], t: i64) -> Vec<u8> {
    ltime_in(local_tz(), fmt, t)
}

/// The zone's offset, abbreviation and standard offset at `t` (clamped to the range
/// the zone rules cover; beyond it the rules no longer change).
fn zone_at(tz: &TimeZone, t: i64) -> (i64, String, i64) {
    let ts = Timestamp::from_second(t).unwrap_or(if t < 0 { Timestamp::MIN } else { Timestamp::MAX });
    let info = tz.to_offset_info(ts);
    let off = i64::from(info.offset().seconds());
    let std = if info.dst().is_dst() { off - 3600 } else { off };
    (off, info.abbreviation().to_owned(), std)
}

/// The date of a `ltime`/`utime` input: masked, then shifted by the optional offset.
fn date_arg(args: &[Arg], smp: &Sample<'_>) -> Option<i64> {
    let t = sint_of(smp)? & DATE_MASK;
    Some(t.wrapping_add(arg_sint(args, 1).unwrap_or(0)))
}

/// `ltime` in zone `tz`.
fn ltime_in(tz: &TimeZone, fmt: &[u8], t: i64) -> Vec<u8> {
    let (off, abbr, _) = zone_at(tz, t);
    strftime(fmt, &Tm::from_epoch(t, off, &abbr))
}

/// `utime`; `%s` reads the UTC fields as local standard time, as glibc's `mktime`
/// does on a `gmtime` result.
fn utime_in(tz: &TimeZone, fmt: &[u8], t: i64) -> Vec<u8> {
    let mut tm = Tm::from_epoch(t, 0, "GMT");
    tm.epoch = t.wrapping_sub(zone_at(tz, t).2);
    strftime(fmt, &tm)
}

/// `ltime(<format>[,<offset>])`
fn conv_ltime<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let t = date_arg(args, &smp)?;
    Some(new_str(ltime_in(local_tz(), arg_bytes(args, 0), t)))
}

/// `utime(<format>[,<offset>])`
fn conv_utime<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let t = date_arg(args, &smp)?;
    Some(new_str(utime_in(local_tz(), arg_bytes(args, 0), t)))
}

// === http_date ===

/// Units of `http_date` (and of the `date` fetch): stored as `Arg::Sint`.
const UNIT_S: i64 = 0;
const UNIT_MS: i64 = 1;
const UNIT_US: i64 = 2;

/// The unit name becomes `Arg::Sint(UNIT_*)` (HAProxy's `smp_check_date_unit`).
fn check_http_date(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    let unit = match args.get(1) {
        None => return Ok(()),
        Some(Arg::Str(u)) => match &u[..] {
            b"s" => UNIT_S,
            b"ms" => UNIT_MS,
            b"us" => UNIT_US,
            other => return Err(format!("expects 's', 'ms' or 'us', got '{}'", String::from_utf8_lossy(other))),
        },
        Some(_) => return Err("Unexpected arg type".into()),
    };
    args[1] = Arg::Sint(unit);
    Ok(())
}

/// The IMF-fixdate of `v` (plus `.<fraction>` for the ms and us units, the fraction
/// printed unpadded as HAProxy does).
fn http_date(v: i64, unit: i64) -> Vec<u8> {
    let (t, frac) = match unit {
        UNIT_MS => (v / 1000, Some(v % 1000)),
        UNIT_US => (v / 1_000_000, Some(v % 1_000_000)),
        _ => (v, None),
    };
    let tm = Tm::from_epoch(t & DATE_MASK, 0, "GMT");
    let mut out = strftime(b"%a, %d %b ", &tm);
    out.extend_from_slice(format!("{:04}", tm.year).as_bytes());
    out.extend_from_slice(&strftime(b" %H:%M:%S", &tm));
    if let Some(f) = frac {
        out.extend_from_slice(format!(".{f}").as_bytes());
    }
    out.extend_from_slice(b" GMT");
    out
}

/// `http_date([<offset>[,<unit>]])`
fn conv_http_date<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let v = sint_of(&smp)?.wrapping_add(arg_sint(args, 0).unwrap_or(0));
    Some(new_str(http_date(v, arg_sint(args, 1).unwrap_or(UNIT_S))))
}

use ArgT::{Sint as SINT, Str as STR};
use SmpType::{Sint, Str};

pub const KEYWORDS: &[ConvKw] = &[
    ConvKw::new("ltime", ArgSpec::new(&[STR, SINT], 1), Sint, Str, conv_ltime),
    ConvKw::new("utime", ArgSpec::new(&[STR, SINT], 1), Sint, Str, conv_utime),
    ConvKw::new("http_date", ArgSpec::new(&[SINT, STR], 0), Sint, Str, conv_http_date).check(check_http_date),
];

#[cfg(test)]
mod tests {
    //! Expected values from haproxy 2.6.12 run with `TZ=Europe/Paris` or
    //! `TZ=America/New_York` (`int(<date>),ltime(...)` through `lf-string`).
    use super::super::testing::{check, i, s, text};
    use super::*;

    fn paris() -> TimeZone {
        TimeZone::get("Europe/Paris").unwrap_or_else(|_| TimeZone::posix("CET-1CEST,M3.5.0,M10.5.0/3").unwrap())
    }

    fn new_york() -> TimeZone {
        TimeZone::get("America/New_York").unwrap_or_else(|_| TimeZone::posix("EST5EDT,M3.2.0,M11.1.0").unwrap())
    }

    fn st(v: Vec<u8>) -> String {
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn ltime_uses_the_zone() {
        assert_eq!(st(ltime_in(&paris(), b"%Y%m%d%H%M%S", 1_700_000_000)), "20231114231320");
        assert_eq!(st(ltime_in(&paris(), b"%H %z %Z %s", 1_690_000_000)), "06 +0200 CEST 1690000000");
        assert_eq!(st(ltime_in(&paris(), b"%c %z %Z", 1_700_000_000)), "Tue Nov 14 23:13:20 2023 +0100 CET");
        assert_eq!(
            st(ltime_in(&new_york(), b"[%z][%Z][%s][%5s][%-z]", 1_700_000_000 + 86_400_000)),
            "[-0400][EDT][1786400000][1786400000][-400]"
        );
    }

    #[test]
    fn utime_and_its_epoch() {
        assert_eq!(st(utime_in(&paris(), b"%Y%m%d%H%M%S %Z %z", 1_700_000_000)), "20231114221320 GMT +0000");
        // glibc's %s on a gmtime result: the UTC fields read as local standard time
        assert_eq!(st(utime_in(&paris(), b"%s", 1_700_000_000)), "1699996400");
        assert_eq!(st(utime_in(&new_york(), b"%s", 1_700_000_000)), "1700018000");
        assert_eq!(st(utime_in(&TimeZone::UTC, b"%s", 1_700_000_000)), "1700000000");
    }

    #[test]
    fn utime_converter_masks_and_offsets() {
        let u = |v: i64, args| text("utime", args, Sample::Sint(v));
        assert_eq!(u(1_700_000_000, vec![s("%Y%m%d%H%M%S")]).as_deref(), Some("20231114221320"));
        assert_eq!(u(1_700_000_000, vec![s("%Y%m%d%H%M%S"), i(-86400)]).as_deref(), Some("20231113221320"));
        assert_eq!(u(-1, vec![s("%Y%m%d%H%M%S")]).as_deref(), Some("11417090970613062607"));
        assert_eq!(u(-1, vec![s("%Y-%m-%d %H:%M:%S"), i(-36028797018963967)]).as_deref(), Some("1970-01-01 00:00:00"));
        assert_eq!(u(0, vec![s("%Y-%m-%d %H:%M:%S"), i(-86400)]).as_deref(), Some("1969-12-31 00:00:00"));
        assert_eq!(u(0, vec![s("")]).as_deref(), Some(""));
        assert!(text("ltime", vec![s("%Y")], Sample::Sint(1_700_000_000)).is_some());
    }

    fn hd(v: i64, args: Vec<Arg>) -> Option<String> {
        text("http_date", args, Sample::Sint(v))
    }

    #[test]
    fn http_date_formats() {
        assert_eq!(hd(1_700_000_000, vec![]).as_deref(), Some("Tue, 14 Nov 2023 22:13:20 GMT"));
        assert_eq!(hd(1_700_000_000, vec![i(3600)]).as_deref(), Some("Tue, 14 Nov 2023 23:13:20 GMT"));
        assert_eq!(hd(1_700_000_000_123, vec![i(0), s("ms")]).as_deref(), Some("Tue, 14 Nov 2023 22:13:20.123 GMT"));
        assert_eq!(hd(1_700_000_000_005, vec![i(0), s("ms")]).as_deref(), Some("Tue, 14 Nov 2023 22:13:20.5 GMT"));
        assert_eq!(hd(1_700_000_000_000_005, vec![i(0), s("us")]).as_deref(), Some("Tue, 14 Nov 2023 22:13:20.5 GMT"));
        assert_eq!(hd(1_700_000_000, vec![i(0), s("s")]).as_deref(), Some("Tue, 14 Nov 2023 22:13:20 GMT"));
        assert_eq!(
            hd(-1_700_000_000_005, vec![i(0), s("ms")]).as_deref(),
            Some("Mon, 31 Jul 1141709043 08:12:48.-5 GMT")
        );
        assert_eq!(hd(-1, vec![]).as_deref(), Some("Sun, 13 Jun 1141709097 06:26:07 GMT"));
        assert_eq!(hd(253_402_300_800, vec![]).as_deref(), Some("Sat, 01 Jan 10000 00:00:00 GMT"));
        assert_eq!(hd(0, vec![]).as_deref(), Some("Thu, 01 Jan 1970 00:00:00 GMT"));
    }

    #[test]
    fn http_date_unit_check() {
        assert_eq!(check("http_date", vec![i(0), s("m")]).unwrap_err(), "expects 's', 'ms' or 'us', got 'm'");
        assert!(matches!(check("http_date", vec![i(0), s("us")]).unwrap()[1], Arg::Sint(UNIT_US)));
    }
}
