//! A `strftime(3)` for `ltime` and `utime`, following glibc in the C locale (what
//! HAProxy calls): every conversion glibc has, the `_ - 0 ^ #` flags, field widths,
//! the `E`/`O` modifiers where glibc accepts them, and an unknown conversion copied
//! as written. Dates are broken down here for any 64-bit second count, as glibc does
//! for the huge values HAProxy's 55-bit mask lets through (years in the billions).

/// A broken-down time (`struct tm`), plus what `%s`, `%z` and `%Z` print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tm {
    pub year: i64,
    /// 0..=11
    pub mon: u32,
    /// 1..=31
    pub mday: u32,
    pub hour: u32,
    pub min: u32,
    pub sec: u32,
    /// 0 = Sunday
    pub wday: u32,
    /// 0..=365
    pub yday: u32,
    /// Offset from UTC in seconds (`%z`).
    pub gmtoff: i64,
    /// Zone abbreviation (`%Z`).
    pub zone: String,
    /// What `%s` prints (glibc computes it with `mktime`, so `utime` shows the
    /// broken-down UTC time read as local standard time).
    pub epoch: i64,
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

impl Tm {
    /// The broken-down time of `t` seconds since the epoch shifted by `gmtoff`.
    pub fn from_epoch(t: i64, gmtoff: i64, zone: &str) -> Tm {
        let local = i128::from(t) + i128::from(gmtoff);
        let days = local.div_euclid(86400);
        let secs = local.rem_euclid(86400) as u32;
        // Howard Hinnant's civil_from_days, in i128 so no value overflows.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let mday = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let mon = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = (yoe + era * 400 + i128::from(mon <= 2)) as i64;
        let cumul = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
        let yday = cumul[mon as usize - 1] + mday - 1 + u32::from(mon > 2 && is_leap(year));
        Tm {
            year,
            mon: mon - 1,
            mday,
            hour: secs / 3600,
            min: secs / 60 % 60,
            sec: secs % 60,
            wday: (days + 4).rem_euclid(7) as u32,
            yday,
            gmtoff,
            zone: zone.to_owned(),
            epoch: t,
        }
    }

    /// ISO 8601 week-based year and week number (`%G`, `%V`).
    fn iso_week(&self) -> (i64, u32) {
        // Days since the Monday of ISO week 1 of the current year (glibc's
        // iso_week_days).
        fn days(yday: i64, wday: i64) -> i64 {
            let big = (366 / 7 + 2) * 7;
            yday - (yday - wday + 4 + big) % 7 + 4 - 1
        }
        let (yday, wday) = (i64::from(self.yday), i64::from(self.wday));
        let mut year = self.year;
        let mut d = days(yday, wday);
        if d < 0 {
            year -= 1;
            d = days(yday + 365 + i64::from(is_leap(year)), wday);
        } else {
            let next = days(yday - (365 + i64::from(is_leap(year))), wday);
            if next >= 0 {
                year += 1;
                d = next;
            }
        }
        (year, (d / 7 + 1) as u32)
    }
}

const DAYS: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// One conversion's flags and width.
#[derive(Clone, Copy)]
struct Spec {
    /// `_`, `-`, `0` or none.
    pad: Option<u8>,
    upcase: bool,
    swapcase: bool,
    width: Option<usize>,
}

impl Spec {
    /// Appends `s`, padded on the left to the width (zeros only with the `0` flag).
    fn add(&self, out: &mut Vec<u8>, s: &[u8]) {
        let fill = if self.pad == Some(b'0') { b'0' } else { b' ' };
        let w = self.width.unwrap_or(0);
        out.extend(std::iter::repeat_n(fill, w.saturating_sub(s.len())));
        out.extend_from_slice(s);
    }

    /// A text field: `^` upper-cases it, `#` upper-cases (names) or lower-cases
    /// (`lower_on_swap`: `%p`, `%Z`) it.
    fn text(&self, out: &mut Vec<u8>, s: &str, lower_on_swap: bool) {
        let s = if self.swapcase && lower_on_swap {
            s.to_ascii_lowercase()
        } else if self.upcase || self.swapcase {
            s.to_ascii_uppercase()
        } else {
            s.to_owned()
        };
        self.add(out, s.as_bytes());
    }

    /// A number of at least `digits` digits, padded with zeros (spaces for
    /// `spacepad` conversions or the `_` flag, nothing with `-`), then to the width.
    fn number(mut self, out: &mut Vec<u8>, v: i64, digits: usize, spacepad: bool) {
        if spacepad && self.pad != Some(b'0') && self.pad != Some(b'-') {
            self.pad = Some(b'_');
        }
        let mut s = v.unsigned_abs().to_string().into_bytes();
        if self.pad != Some(b'-') {
            let fill = if self.pad == Some(b'_') { b' ' } else { b'0' };
            let missing = digits.saturating_sub(s.len() + usize::from(v < 0));
            s.splice(0..0, std::iter::repeat_n(fill, missing));
        }
        if v < 0 {
            s.insert(0, b'-');
        }
        if self.pad.is_none() {
            self.pad = Some(b'0');
        }
        self.add(out, &s);
    }

    /// A year-like number: not padded unless a width is given.
    fn year(self, out: &mut Vec<u8>, v: i64) {
        self.number(out, v, 1, false);
    }

    /// A sub-format (`%c`, `%D` ...) padded as one field.
    fn sub(&self, out: &mut Vec<u8>, fmt: &[u8], tm: &Tm) {
        let mut tmp = Vec::new();
        format_into(&mut tmp, fmt, tm);
        if self.upcase {
            tmp.make_ascii_uppercase();
        }
        self.add(out, &tmp);
    }
}

/// Formats `tm` per `fmt`.
pub fn strftime(fmt: &[u8], tm: &Tm) -> Vec<u8> {
    let mut out = Vec::with_capacity(fmt.len() + 16);
    format_into(&mut out, fmt, tm);
    out
}

fn format_into(out: &mut Vec<u8>, fmt: &[u8], tm: &Tm) {
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            let next = memchr::memchr(b'%', &fmt[i..]).map_or(fmt.len(), |p| i + p);
            out.extend_from_slice(&fmt[i..next]);
            i = next;
            continue;
        }
        let start = i;
        i += 1;
        let mut spec = Spec { pad: None, upcase: false, swapcase: false, width: None };
        while let Some(&c) = fmt.get(i) {
            match c {
                b'_' | b'-' | b'0' => spec.pad = Some(c),
                b'^' => spec.upcase = true,
                b'#' => spec.swapcase = true,
                _ => break,
            }
            i += 1;
        }
        while let Some(d) = fmt.get(i).filter(|c| c.is_ascii_digit()) {
            let w = spec.width.unwrap_or(0).saturating_mul(10).saturating_add(usize::from(d - b'0'));
            spec.width = Some(w.min(4096));
            i += 1;
        }
        let modifier = fmt.get(i).copied().filter(|&c| c == b'E' || c == b'O');
        i += usize::from(modifier.is_some());
        let Some(&conv) = fmt.get(i) else {
            // A cut specification is copied as written ("%", "abc%5").
            spec.add(out, &fmt[start..]);
            return;
        };
        i += 1;
        if !modifier_ok(modifier, conv) || !convert(out, spec, conv, tm) {
            spec.add(out, &fmt[start..i]);
        }
    }
}

/// Whether glibc accepts modifier `E` or `O` on conversion `c`.
fn modifier_ok(modifier: Option<u8>, c: u8) -> bool {
    match modifier {
        None => true,
        Some(b'E') => b"cCxXyYzZs".contains(&c),
        _ => b"deHIklmMSuUVwWyzZsgG".contains(&c),
    }
}

/// Appends conversion `c`; `false` if glibc does not know it.
fn convert(out: &mut Vec<u8>, spec: Spec, c: u8, tm: &Tm) -> bool {
    let h12 = match tm.hour % 12 {
        0 => 12,
        h => h,
    };
    let pm = if tm.hour >= 12 { "PM" } else { "AM" };
    match c {
        b'a' => spec.text(out, &DAYS[tm.wday as usize][..3], false),
        b'A' => spec.text(out, DAYS[tm.wday as usize], false),
        b'b' | b'h' => spec.text(out, &MONTHS[tm.mon as usize][..3], false),
        b'B' => spec.text(out, MONTHS[tm.mon as usize], false),
        b'c' => spec.sub(out, b"%a %b %e %H:%M:%S %Y", tm),
        b'C' => spec.year(out, tm.year.div_euclid(100)),
        b'd' => spec.number(out, tm.mday.into(), 2, false),
        b'D' | b'x' => spec.sub(out, b"%m/%d/%y", tm),
        b'e' => spec.number(out, tm.mday.into(), 2, true),
        b'F' => spec.sub(out, b"%Y-%m-%d", tm),
        b'g' => spec.number(out, tm.iso_week().0.rem_euclid(100), 2, false),
        b'G' => spec.year(out, tm.iso_week().0),
        b'H' => spec.number(out, tm.hour.into(), 2, false),
        b'I' => spec.number(out, h12.into(), 2, false),
        b'j' => spec.number(out, i64::from(tm.yday) + 1, 3, false),
        b'k' => spec.number(out, tm.hour.into(), 2, true),
        b'l' => spec.number(out, h12.into(), 2, true),
        b'm' => spec.number(out, i64::from(tm.mon) + 1, 2, false),
        b'M' => spec.number(out, tm.min.into(), 2, false),
        b'n' => spec.add(out, b"\n"),
        b'p' => spec.text(out, pm, true),
        b'P' => spec.text(out, &pm.to_ascii_lowercase(), false),
        b'r' => spec.sub(out, b"%I:%M:%S %p", tm),
        b'R' => spec.sub(out, b"%H:%M", tm),
        b's' => spec.add(out, tm.epoch.to_string().as_bytes()),
        b'S' => spec.number(out, tm.sec.into(), 2, false),
        b't' => spec.add(out, b"\t"),
        b'T' | b'X' => spec.sub(out, b"%H:%M:%S", tm),
        b'u' => spec.number(out, if tm.wday == 0 { 7 } else { tm.wday.into() }, 1, false),
        b'U' => spec.number(out, (i64::from(tm.yday) - i64::from(tm.wday) + 7) / 7, 2, false),
        b'V' => spec.number(out, tm.iso_week().1.into(), 2, false),
        b'w' => spec.number(out, tm.wday.into(), 1, false),
        b'W' => spec.number(out, (i64::from(tm.yday) - (i64::from(tm.wday) + 6) % 7 + 7) / 7, 2, false),
        b'y' => spec.number(out, tm.year.rem_euclid(100), 2, false),
        b'Y' => spec.year(out, tm.year),
        b'z' => {
            let off = tm.gmtoff.abs() / 60;
            spec.add(out, if tm.gmtoff < 0 { b"-" } else { b"+" });
            spec.number(out, off / 60 * 100 + off % 60, 4, false);
        }
        b'Z' => spec.text(out, &tm.zone, true),
        b'%' => spec.add(out, b"%"),
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    //! Expected strings from haproxy 2.6.12 `utime(<format>)` (glibc 2.36 strftime).
    use super::*;

    fn utc(t: i64, fmt: &str) -> String {
        String::from_utf8(strftime(fmt.as_bytes(), &Tm::from_epoch(t, 0, "GMT"))).unwrap()
    }

    #[test]
    fn breakdown() {
        let tm = Tm::from_epoch(1_700_000_000, 0, "GMT");
        assert_eq!((tm.year, tm.mon, tm.mday, tm.hour, tm.min, tm.sec), (2023, 10, 14, 22, 13, 20));
        assert_eq!((tm.wday, tm.yday), (2, 317));
        let tm = Tm::from_epoch(-86400, 0, "GMT");
        assert_eq!((tm.year, tm.mon, tm.mday, tm.wday), (1969, 11, 31, 3));
        let tm = Tm::from_epoch(951_782_400, 0, "GMT"); // 2000-02-29
        assert_eq!((tm.mon, tm.mday, tm.yday), (1, 29, 59));
    }

    #[test]
    fn every_conversion() {
        let all = "%a %A %b %B %c|%C %d %D %e %F %g %G %h %H %I %j %k %l %m %M %n %p %P %r %R %S %t %T %u %U %V %w %W %x %X %y %Y %z %Z %%";
        assert_eq!(
            utc(1_700_000_000, all),
            "Tue Tuesday Nov November Tue Nov 14 22:13:20 2023|20 14 11/14/23 14 2023-11-14 23 2023 Nov 22 10 318 22 10 11 13 \n \
             PM pm 10:13:20 PM 22:13 20 \t 22:13:20 2 46 46 2 46 11/14/23 22:13:20 23 2023 +0000 GMT %"
        );
    }

    #[test]
    fn flags_and_widths() {
        let t = 1_700_000_000;
        assert_eq!(
            utc(t, "[%5d][%5Y][%5e][%-5d][%_d][%-_5d][%5H][%3j][%-z][%_z][%5z][%^B][%#B][%#Z][%6p][%06p][%-3d]"),
            "[00014][02023][   14][   14][14][   14][00022][318][+0][+   0][    +00000][NOVEMBER][NOVEMBER][gmt][    PM][0000PM][ 14]"
        );
        assert_eq!(
            utc(t, "%-d %_H %05Y %^a %#b %10A %-j %Ey %Od %q %J %5"),
            "14 22 02023 TUE NOV    Tuesday 318 23 14 %q %J    %5"
        );
        assert_eq!(utc(t, "%10c|%20D|%x|%10T"), "Tue Nov 14 22:13:20 2023|            11/14/23|11/14/23|  22:13:20");
        assert_eq!(
            utc(0, "%10s|%-s|%_5m|%010A|%_10A|%-10A|%3Y|%1Y|%8z|%^Z|%#p|%^p|%#A|%^#a|%E|%O"),
            "         0|0|    1|00Thursday|  Thursday|  Thursday|1970|1970|       +00000000|GMT|am|AM|THURSDAY|THU|%E|%O"
        );
        assert_eq!(
            utc(0, "%10q|%-5q|%Ez|%OY|%Ex|%EC|%Od|%%|%5%|%ip"),
            "      %10q| %-5q|+0000|%OY|01/01/70|19|01|%|    %|%ip"
        );
        assert_eq!(utc(0, "%e|%k|%l|%_e|%-e|%0e|%03e|%I|%-I|%_I"), " 1| 0|12| 1|1|01|001|12|12|12");
        assert_eq!(
            utc(0, "[%5C][%_y][%-y][%3G][%5g][%5U][%5u][%5w][%5V][%10D][%010D][%-10D][%OA][%Ek]"),
            "[00019][70][70][1970][00070][00000][00004][00004][00001][  01/01/70][0001/01/70][  01/01/70][%OA][%Ek]"
        );
        assert_eq!(utc(0, "%+4Y"), "%+4Y");
    }

    #[test]
    fn odd_years() {
        assert_eq!(utc(-62_000_000_000, "%Y|%C|%y|%G|%g|%F|%c"), "5|0|05|5|05|5-04-19|Tue Apr 19 09:46:40 5");
        assert_eq!(utc(-62_200_000_000, "%Y|%C|%y|%G|%g|%F"), "-2|-1|98|-2|98|-2-12-17");
        assert_eq!(utc(-70_000_000_000, "%Y|%C|%y|%G|%g|%F|%D"), "-249|-3|51|-249|51|-249-10-15|10/15/51");
        assert_eq!(utc(36_028_797_018_963_967, "%Y %C %y %G %F"), "1141709097 11417090 97 1141709097 1141709097-06-13");
        assert_eq!(utc(4_102_444_800_000, "%Y %C"), "131971 1319");
    }

    #[test]
    fn iso_weeks_and_week_numbers() {
        assert_eq!(utc(-259_200, "%G-%V-%g"), "1970-01-70");
        assert_eq!(utc(-3_000_000, "%U %W %V %j"), "47 47 48 331");
    }

    #[test]
    fn cut_specifications() {
        assert_eq!(utc(0, ""), "");
        assert_eq!(utc(0, "%"), "%");
        assert_eq!(utc(0, "abc%"), "abc%");
    }
}
