//! ISO-8601 timestamps as JavaScript's `Date.prototype.toISOString` writes them.
//!
//! Session lines carry `2026-11-30T07:13:25.984Z` (UTC, milliseconds) and file names derive
//! from the header's timestamp. Only this one shape is written and only a small family is read
//! back (for listing and for summary-message timestamps), so a few lines of calendar arithmetic
//! (Howard Hinnant's days-from-civil) replace a date-time dependency.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Now as an ISO-8601 UTC timestamp with milliseconds.
pub fn iso_now() -> String {
    format_iso(millis_of(SystemTime::now()))
}

/// Milliseconds since the Unix epoch of `time` (negative before 1970).
pub fn millis_of(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i64,
        Err(e) => -(e.duration().as_millis() as i64),
    }
}

/// The `SystemTime` `millis` milliseconds after the Unix epoch.
pub fn time_of(millis: i64) -> SystemTime {
    if millis >= 0 {
        UNIX_EPOCH + Duration::from_millis(millis as u64)
    } else {
        UNIX_EPOCH - Duration::from_millis(millis.unsigned_abs())
    }
}

/// `millis` since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn format_iso(millis: i64) -> String {
    let days = millis.div_euclid(86_400_000);
    let ms_of_day = millis.rem_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    let secs = ms_of_day / 1000;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        ms_of_day % 1000
    )
}

/// Parses `YYYY-MM-DDTHH:MM[:SS[.fff…]]` followed by `Z` or `±HH:MM` into milliseconds since
/// the epoch; `None` for anything else (as JavaScript's `Date` would give `NaN`).
pub fn parse_iso(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(range)?;
        if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') || b.get(10) != Some(&b'T') {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b.get(13) != Some(&b':') {
        return None;
    }
    let (hour, minute) = (num(11..13)?, num(14..16)?);
    let mut i = 16;
    let mut second = 0;
    let mut millis = 0;
    if b.get(i) == Some(&b':') {
        second = num(17..19)?;
        i = 19;
        if b.get(i) == Some(&b'.') {
            let start = i + 1;
            let mut end = start;
            while b.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
            let frac = std::str::from_utf8(b.get(start..end)?).ok()?;
            if frac.is_empty() {
                return None;
            }
            let padded = format!("{frac:0<3}");
            millis = padded[..3].parse().ok()?;
            i = end;
        }
    }
    let offset_minutes = match b.get(i..)? {
        b"Z" => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let digits = [*h1, *h2, *m1, *m2];
            if !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let value = |d: &[u8]| i64::from(d[0] - b'0') * 10 + i64::from(d[1] - b'0');
            let minutes = value(&digits[..2]) * 60 + value(&digits[2..]);
            if *sign == b'-' {
                -minutes
            } else {
                minutes
            }
        }
        _ => return None,
    };
    let valid = (1..=12).contains(&month)
        && (1..=days_in_month(year, month)).contains(&day)
        && hour < 24
        && minute < 60
        && second < 60;
    if !valid {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(secs * 1000 + millis)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date `days` after 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_to_iso_string() {
        assert_eq!(format_iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_iso(1_796_022_805_998), "2026-11-30T07:13:25.998Z");
        assert_eq!(format_iso(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(format_iso(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn parses_what_it_formats_and_offsets() {
        for ms in [0, 1_796_022_805_998, 951_782_400_000, 4_102_444_800_123] {
            assert_eq!(parse_iso(&format_iso(ms)), Some(ms));
        }
        assert_eq!(
            parse_iso("2026-11-30T08:13:25.998+01:00"),
            Some(1_796_022_805_998)
        );
        assert_eq!(parse_iso("2026-11-30T07:13:25Z"), Some(1_796_022_805_000));
        assert_eq!(parse_iso("2026-11-30T07:13:25.9Z"), Some(1_796_022_805_900));
        assert_eq!(parse_iso("2026-11-30T07:13Z"), Some(1_796_022_780_000));
    }

    #[test]
    fn rejects_other_shapes() {
        for text in [
            "",
            "yesterday",
            "2026-13-01T00:00:00Z",
            "2026-02-30T00:00:00Z",
            "2026-11-30 07:13:25Z",
            "2026-11-30T07:13:25.Z",
            "2026-11-30T07:13:25",
        ] {
            assert_eq!(parse_iso(text), None, "{text}");
        }
    }

    #[test]
    fn system_time_round_trip() {
        assert_eq!(millis_of(time_of(1_796_022_805_998)), 1_796_022_805_998);
        assert_eq!(millis_of(time_of(-5)), -5);
        assert!(iso_now().ends_with('Z'));
    }
}
