//! Timestamps as text: one formatter and one parser for what the stores keep and the API
//! writes, so the two stores and the REST and GraphQL answers agree to the character.

use chrono::{DateTime, Datelike, SecondsFormat, Timelike, Utc};

use super::Timestamp;

/// `YYYY-MM-DDTHH:MM:SS.ffffffZ`: how the stores keep a timestamp (text that sorts in time
/// order; the embedded store's SQL compares it) and how the API writes one. Exactly chrono's
/// `to_rfc3339_opts(Micros, true)`, written by hand because an ingested event formats about
/// sixty and chrono's formatter was 2.5 % of the ingest's instructions.
pub fn rfc3339_micros(t: &Timestamp) -> String {
    let mut s = String::with_capacity(27);
    if !push_datetime(&mut s, t) {
        return t.to_rfc3339_opts(SecondsFormat::Micros, true);
    }
    push_fraction(&mut s, t.nanosecond() / 1_000, 6);
    s.push('Z');
    s
}

/// As chrono's serde writes a timestamp (`SecondsFormat::AutoSi`: no fraction, or 3, 6 or 9
/// digits), the form of an edge's intervals in the embedded store.
pub fn push_rfc3339_auto(out: &mut String, t: &Timestamp) {
    if !push_datetime(out, t) {
        out.push_str(&t.to_rfc3339_opts(SecondsFormat::AutoSi, true));
        return;
    }
    match t.nanosecond() {
        0 => {}
        nano if nano % 1_000_000 == 0 => push_fraction(out, nano / 1_000_000, 3),
        nano if nano % 1_000 == 0 => push_fraction(out, nano / 1_000, 6),
        nano => push_fraction(out, nano, 9),
    }
    out.push('Z');
}

/// `YYYY-MM-DDTHH:MM:SS` onto `out`; false, writing nothing, where chrono's form differs from
/// that (a year outside 0-9999, a leap second), so the caller lets chrono write it.
fn push_datetime(out: &mut String, t: &Timestamp) -> bool {
    let naive = t.naive_utc();
    let (date, time) = (naive.date(), naive.time());
    let year = date.year();
    if !(0..=9999).contains(&year) || time.nanosecond() >= 1_000_000_000 {
        return false;
    }
    let secs = time.num_seconds_from_midnight();
    let mut text = *b"0000-00-00T00:00:00";
    put_digits(&mut text[0..4], year as u32);
    put_digits(&mut text[5..7], date.month());
    put_digits(&mut text[8..10], date.day());
    put_digits(&mut text[11..13], secs / 3_600);
    put_digits(&mut text[14..16], secs / 60 % 60);
    put_digits(&mut text[17..19], secs % 60);
    out.push_str(std::str::from_utf8(&text).unwrap_or_default());
    true
}

/// `.` and `n` in exactly `width` digits (at most 9).
fn push_fraction(out: &mut String, n: u32, width: usize) {
    let mut text = *b".000000000";
    put_digits(&mut text[1..=width], n);
    out.push_str(std::str::from_utf8(&text[..=width]).unwrap_or_default());
}

/// `n`'s last `slot.len()` decimal digits into `slot`, zero-padded.
fn put_digits(slot: &mut [u8], mut n: u32) {
    for c in slot.iter_mut().rev() {
        *c = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// An RFC 3339 timestamp in UTC: the shapes the stores write through a fast path, any other
/// through chrono.
pub fn parse_rfc3339(s: &str) -> Result<Timestamp, chrono::ParseError> {
    if let Some(t) = utc_ts(s) {
        return Ok(t);
    }
    DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc))
}

/// The timestamps the stores write (`rfc3339_micros`, and chrono's serde in JSON):
/// `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, read without chrono's general RFC 3339 parser (a few
/// timestamps per edge, thousands of edges per graph answer).
/// `None` for any other shape, which then goes through chrono.
fn utc_ts(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<u32> {
        b[range].iter().try_fold(0u32, |n, &c| c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0')))
    };
    let rest = &b[19..];
    let (fraction, zone) = match rest.first() {
        Some(b'.') => {
            let digits = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits == 0 || digits > 9 {
                return None;
            }
            let mut nanos = num(20..20 + digits)?;
            nanos *= 10u32.pow(9 - digits as u32);
            (nanos, &rest[1 + digits..])
        }
        _ => (0, rest),
    };
    if zone != b"Z" {
        return None;
    }
    let date = chrono::NaiveDate::from_ymd_opt(num(0..4)? as i32, num(5..7)?, num(8..10)?)?;
    let time = chrono::NaiveTime::from_hms_nano_opt(num(11..13)?, num(14..16)?, num(17..19)?, fraction)?;
    Some(date.and_time(time).and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_read_as_chrono_reads_them() {
        let now = Utc::now();
        let written = [
            rfc3339_micros(&now),
            serde_json::to_value(now).unwrap().as_str().unwrap().to_string(),
            "2026-12-03T10:00:00Z".into(),
            "2026-12-03T10:00:00.5Z".into(),
            "2026-12-03T23:59:59.123456789Z".into(),
            "1999-01-31T00:00:00.000Z".into(),
            // Not the shapes this store writes: read by chrono.
            "2026-12-03T10:00:00+02:00".into(),
            "2026-12-03t10:00:00.25z".into(),
        ];
        for s in written {
            let expected = DateTime::parse_from_rfc3339(&s).unwrap().with_timezone(&Utc);
            assert_eq!(parse_rfc3339(&s).unwrap(), expected, "{s}");
        }
        assert_eq!(utc_ts("2026-12-03T10:00:00+02:00"), None);
        for bad in ["2026-13-03T10:00:00Z", "2026-12-03T10:00:60.Z", "2026-12-03 10:00", "", "2026-12-03T10:00:0xZ"] {
            assert!(parse_rfc3339(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn timestamps_are_written_as_chrono_and_its_serde_write_them() {
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        let mut times = vec![
            Utc::now(),
            at("2026-12-03T10:00:00Z"),
            at("2026-12-03T10:00:00.5Z"),
            at("2026-12-03T10:00:00.000001Z"),
            at("2026-12-03T23:59:59.123456789Z"),
            at("2026-12-03T23:59:59.123456Z"),
            at("0001-01-01T00:00:00Z"),
            at("9999-12-31T23:59:59.999999999Z"),
            at("1970-01-01T00:00:00.010Z"),
            // Forms chrono writes differently, left to it: a leap second, a year past 9999.
            at("2016-12-31T23:59:60.5Z"),
            DateTime::from_timestamp(300_000_000_000, 7).unwrap(),
            DateTime::from_timestamp(-62_200_000_000, 0).unwrap(),
        ];
        // And a spread of instants with every fraction length.
        let mut x: i64 = 1;
        for _ in 0..2_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let secs = x.rem_euclid(253_402_300_799);
            let nanos = match x.rem_euclid(4) {
                0 => 0,
                1 => (x.rem_euclid(1_000) * 1_000_000) as u32,
                2 => (x.rem_euclid(1_000_000) * 1_000) as u32,
                _ => x.rem_euclid(1_000_000_000) as u32,
            };
            times.push(DateTime::from_timestamp(secs, nanos).unwrap());
        }
        for t in &times {
            assert_eq!(rfc3339_micros(t), t.to_rfc3339_opts(SecondsFormat::Micros, true));
        }
        for t in &times {
            let mut auto = String::new();
            push_rfc3339_auto(&mut auto, t);
            assert_eq!(serde_json::Value::String(auto), serde_json::to_value(t).unwrap());
        }
    }
}
