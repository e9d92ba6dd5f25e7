//! Dates as log lines write them: syslog's `Mmm dd hh:mm:ss`, ISO 8601 with
//! microseconds, and HAProxy's `dd/Mmm/yyyy:hh:mm:ss[.mmm] [+zzzz]`, in local time or
//! GMT. The broken-down time is computed once per second per thread (HAProxy keeps
//! one per thread too), so a line costs a few digit writes. [`wall`] dates an instant
//! a stream already read without reading the system clock.
//! HAProxy counterpart: `date2str_log()`, `gmt2str_log()`, `localdate2str_log()`,
//! the header dates of `update_log_hdr()` (src/tools.c, src/log.c).

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const MONTHS: [&[u8; 3]; 12] =
    [b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec"];

/// A second of civil time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Civil {
    pub year: i16,
    pub month: i8,
    pub day: i8,
    pub hour: i8,
    pub minute: i8,
    pub second: i8,
    /// Offset from UTC in seconds (0 for GMT).
    pub offset: i32,
}

/// The broken-down forms of one second.
#[derive(Debug, Clone, Copy)]
struct Parts {
    secs: i64,
    local: Civil,
    gmt: Civil,
}

thread_local! {
    static CACHE: Cell<Option<Parts>> = const { Cell::new(None) };
    /// [`wall`]'s readings of the system clock and the monotonic one, taken together.
    static ANCHOR: Cell<Option<(SystemTime, Instant)>> = const { Cell::new(None) };
}

fn system_tz() -> &'static jiff::tz::TimeZone {
    static TZ: OnceLock<jiff::tz::TimeZone> = OnceLock::new();
    TZ.get_or_init(jiff::tz::TimeZone::system)
}

/// Reads the local time zone now (at startup, before a `chroot` hides the zone files).
pub fn load_time_zone() {
    system_tz();
}

fn civil(secs: i64, tz: &jiff::tz::TimeZone) -> Civil {
    let offset = jiff::Timestamp::from_second(secs).map_or(0, |ts| tz.to_offset(ts).seconds());
    let t = secs + i64::from(offset);
    let (days, rem) = (t.div_euclid(86_400), t.rem_euclid(86_400));
    // days since 1970-01-01 to a civil date (H. Hinnant's algorithm)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    Civil {
        year: year as i16,
        month: month as i8,
        day: day as i8,
        hour: (rem / 3600) as i8,
        minute: (rem / 60 % 60) as i8,
        second: (rem % 60) as i8,
        offset,
    }
}

fn parts(secs: i64) -> Parts {
    CACHE.with(|c| match c.get() {
        Some(p) if p.secs == secs => p,
        _ => {
            let p = Parts { secs, local: civil(secs, system_tz()), gmt: civil(secs, &jiff::tz::TimeZone::UTC) };
            c.set(Some(p));
            p
        }
    })
}

/// The wall-clock date of `at`, from a per-thread pair of readings of both clocks
/// taken within a second of it: a stream dates its log line from the instants it
/// already read instead of reading the system clock again (each read costs about
/// 45 ns on a virtual machine). A step of the system clock shows within a second.
/// HAProxy counterpart: `date`, updated once per polling loop (src/clock.c).
pub fn wall(at: Instant) -> SystemTime {
    const REANCHOR: Duration = Duration::from_secs(1);
    ANCHOR.with(|a| {
        let (sys, inst) = match a.get() {
            Some((sys, inst)) if at.max(inst) - at.min(inst) < REANCHOR => (sys, inst),
            _ => {
                let fresh = (SystemTime::now(), Instant::now());
                a.set(Some(fresh));
                fresh
            }
        };
        match at.checked_duration_since(inst) {
            Some(d) => sys.checked_add(d),
            None => sys.checked_sub(inst.saturating_duration_since(at)),
        }
        .unwrap_or(sys)
    })
}

/// Seconds and microseconds since the epoch.
pub fn split(t: SystemTime) -> (i64, u32) {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    (d.as_secs() as i64, d.subsec_micros())
}

/// The local (or GMT) civil time of `secs`.
pub fn at(secs: i64, local: bool) -> Civil {
    let p = parts(secs);
    if local {
        p.local
    } else {
        p.gmt
    }
}

fn n2(out: &mut Vec<u8>, n: i64) {
    out.extend_from_slice(&[b'0' + (n / 10 % 10) as u8, b'0' + (n % 10) as u8]);
}

fn n_width(out: &mut Vec<u8>, n: i64, width: u32) {
    for i in (0..width).rev() {
        out.push(b'0' + (n / 10i64.pow(i) % 10) as u8);
    }
}

fn hms(out: &mut Vec<u8>, c: &Civil) {
    n2(out, c.hour.into());
    out.push(b':');
    n2(out, c.minute.into());
    out.push(b':');
    n2(out, c.second.into());
}

fn month(c: &Civil) -> &'static [u8; 3] {
    MONTHS[usize::try_from(c.month - 1).unwrap_or(0).min(11)]
}

/// `Mmm dd hh:mm:ss` (the day padded with a space), local time.
pub fn syslog(out: &mut Vec<u8>, secs: i64) {
    let c = at(secs, true);
    out.extend_from_slice(month(&c));
    out.push(b' ');
    if c.day < 10 {
        out.push(b' ');
        out.push(b'0' + c.day as u8);
    } else {
        n2(out, c.day.into());
    }
    out.push(b' ');
    hms(out, &c);
}

fn offset(out: &mut Vec<u8>, off: i32, colon: bool) {
    out.push(if off < 0 { b'-' } else { b'+' });
    let a = i64::from(off.unsigned_abs());
    n2(out, a / 3600);
    if colon {
        out.push(b':');
    }
    n2(out, a / 60 % 60);
}

/// `yyyy-mm-ddThh:mm:ss.uuuuuu+hh:mm`, local time.
pub fn iso(out: &mut Vec<u8>, secs: i64, usec: u32) {
    let c = at(secs, true);
    n_width(out, c.year.into(), 4);
    out.push(b'-');
    n2(out, c.month.into());
    out.push(b'-');
    n2(out, c.day.into());
    out.push(b'T');
    hms(out, &c);
    out.push(b'.');
    n_width(out, usec.into(), 6);
    offset(out, c.offset, true);
}

/// `dd/Mmm/yyyy:hh:mm:ss`, then `.mmm` with `ms`, then ` +zzzz` with `zone`.
pub fn clf(out: &mut Vec<u8>, secs: i64, local: bool, ms: Option<u32>, zone: bool) {
    let c = at(secs, local);
    n2(out, c.day.into());
    out.push(b'/');
    out.extend_from_slice(month(&c));
    out.push(b'/');
    n_width(out, c.year.into(), 4);
    out.push(b':');
    hms(out, &c);
    if let Some(ms) = ms {
        out.push(b'.');
        n_width(out, ms.into(), 3);
    }
    if zone {
        out.push(b' ');
        offset(out, c.offset, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2009-02-06 12:14:14 UTC
    const T: i64 = 1_233_922_454;

    fn s(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut v = Vec::new();
        f(&mut v);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn gmt_forms() {
        assert_eq!(s(|o| clf(o, T, false, Some(655), false)), "06/Feb/2009:12:14:14.655");
        assert_eq!(s(|o| clf(o, T, false, None, true)), "06/Feb/2009:12:14:14 +0000");
        assert_eq!(s(|o| clf(o, T, false, Some(7), false)), "06/Feb/2009:12:14:14.007");
        assert_eq!(at(T, false), Civil { year: 2009, month: 2, day: 6, hour: 12, minute: 14, second: 14, offset: 0 });
    }

    #[test]
    fn local_forms_follow_the_system_zone() {
        let c = at(T, true);
        let syslog_day = if c.day < 10 { format!(" {}", c.day) } else { c.day.to_string() };
        assert!(s(|o| syslog(o, T)).starts_with(&format!("Feb {syslog_day} ")));
        let iso = s(|o| iso(o, T, 42));
        assert_eq!(iso.len(), "2009-02-06T12:14:14.000042+00:00".len(), "{iso}");
        assert!(iso.contains(".000042"), "{iso}");
    }

    #[test]
    fn civil_dates_across_leap_years() {
        let utc = jiff::tz::TimeZone::UTC;
        let c = civil(951_782_400, &utc); // 2000-02-29 00:00:00
        assert_eq!((c.year, c.month, c.day, c.hour), (2000, 2, 29, 0));
        let c = civil(1_798_761_599, &utc); // 2026-12-31 23:59:59
        assert_eq!((c.year, c.month, c.day, c.hour, c.minute, c.second), (2026, 12, 31, 23, 59, 59));
    }

    #[test]
    fn offsets() {
        assert_eq!(s(|o| offset(o, -(5 * 3600 + 1800), false)), "-0530");
        assert_eq!(s(|o| offset(o, 3600, true)), "+01:00");
    }

    #[test]
    fn wall_dates_instants_from_one_reading_of_both_clocks() {
        let now = Instant::now();
        let date = wall(now);
        let off = |a: SystemTime, b: SystemTime| a.duration_since(b).unwrap_or_else(|e| e.duration());
        assert!(off(SystemTime::now(), date) < Duration::from_millis(50), "close to the system clock");
        // instants after and before the anchor keep their distance to it
        let later = now + Duration::from_millis(300);
        assert_eq!(wall(later).duration_since(date).unwrap(), Duration::from_millis(300));
        let earlier = now.checked_sub(Duration::from_millis(20)).unwrap();
        assert_eq!(date.duration_since(wall(earlier)).unwrap(), Duration::from_millis(20));
        // past the second, the pair is read again: still the system clock's date
        let far = now + Duration::from_secs(5);
        assert!(off(wall(far), SystemTime::now() + Duration::from_secs(5)) < Duration::from_millis(50));
    }
}
