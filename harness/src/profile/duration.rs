//! Durations as profiles write them: `250ms`, `30s`, `90m`, `1h30m`, `1.5s`.
//!
//! A duration is one or more `<number><unit>` parts, added up. Units: `h`, `m`, `s`, `ms`, `us`
//! (or `µs`), `ns`. A number may have a fraction (`1.5s`). A bare number is refused: `30` could be
//! seconds or milliseconds, and a profile should not make its reader guess.

use std::time::Duration;

/// What every duration error says a duration looks like.
pub const DURATION_FORMS: &str = "250ms, 30s, 90m, 1h30m";

const NANOS_PER: [(&str, u128); 7] = [
    ("h", 3_600_000_000_000),
    ("ms", 1_000_000),
    ("m", 60_000_000_000),
    ("s", 1_000_000_000),
    ("us", 1_000),
    ("µs", 1_000),
    ("ns", 1),
];

/// Parses a duration such as `1h30m` or `250ms`. The error is a sentence for the user.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let s = text.trim();
    if s.is_empty() {
        return Err(format!(
            "a duration cannot be empty: write one like {DURATION_FORMS}"
        ));
    }
    if s.starts_with('-') {
        return Err(format!("a duration cannot be negative, got {s}"));
    }
    let mut rest = s;
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_len);
        if number.is_empty() {
            return Err(not_a_duration(s));
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        if unit.is_empty() {
            return Err(format!(
                "a duration needs a unit: {DURATION_FORMS} (got {s})"
            ));
        }
        let Some(&(_, per)) = NANOS_PER.iter().find(|(name, _)| *name == unit) else {
            return Err(format!(
                "unknown duration unit `{unit}` in {s}: use h, m, s, ms, us or ns, as in {DURATION_FORMS}"
            ));
        };
        let nanos = part_nanos(number, per).map_err(|e| match e {
            PartError::Malformed => not_a_duration(s),
            PartError::TooLong => too_long(s),
        })?;
        total = total.checked_add(nanos).ok_or_else(|| too_long(s))?;
        rest = next;
    }
    let nanos = u64::try_from(total).map_err(|_| too_long(s))?;
    Ok(Duration::from_nanos(nanos))
}

/// Why one `<number><unit>` part did not make nanoseconds.
enum PartError {
    Malformed,
    TooLong,
}

/// `number` (digits with at most one `.`) times `per` nanoseconds, truncated to whole nanoseconds.
fn part_nanos(number: &str, per: u128) -> Result<u128, PartError> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
        return Err(PartError::Malformed);
    }
    let whole_value: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| PartError::TooLong)?
    };
    let mut nanos = whole_value.checked_mul(per).ok_or(PartError::TooLong)?;
    // Digits past the 18th cannot change the value by a whole nanosecond.
    let fraction = &fraction[..fraction.len().min(18)];
    if !fraction.is_empty() {
        let numerator: u128 = fraction.parse().map_err(|_| PartError::Malformed)?;
        let denominator = 10u128.pow(fraction.len() as u32);
        nanos = nanos
            .checked_add(numerator * per / denominator)
            .ok_or(PartError::TooLong)?;
    }
    Ok(nanos)
}

fn not_a_duration(s: &str) -> String {
    format!("`{s}` is not a duration: write one like {DURATION_FORMS}")
}

fn too_long(s: &str) -> String {
    format!("{s} is too long a duration (at most about 584 years)")
}

/// The canonical short form of a duration: `30s`, `1h30m`, `250ms`, `1s500ms`, `0s`.
pub fn format_duration(d: Duration) -> String {
    const PARTS: [(&str, u128); 6] = [
        ("h", 3_600_000_000_000),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
        ("ns", 1),
    ];
    let mut rest = d.as_nanos();
    if rest == 0 {
        return "0s".to_string();
    }
    let mut out = String::new();
    for (unit, per) in PARTS {
        let n = rest / per;
        if n > 0 {
            out.push_str(&n.to_string());
            out.push_str(unit);
            rest -= n * per;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn parses_every_unit_and_combinations() {
        assert_eq!(parse_duration("250ms"), Ok(ms(250)));
        assert_eq!(parse_duration("30s"), Ok(ms(30_000)));
        assert_eq!(parse_duration("90m"), Ok(ms(90 * 60_000)));
        assert_eq!(parse_duration("2h"), Ok(ms(2 * 3_600_000)));
        assert_eq!(parse_duration("1h30m"), Ok(ms(90 * 60_000)));
        assert_eq!(parse_duration("1m30s"), Ok(ms(90_000)));
        assert_eq!(parse_duration("1.5s"), Ok(ms(1_500)));
        assert_eq!(parse_duration("0.25s"), Ok(ms(250)));
        assert_eq!(parse_duration(".5s"), Ok(ms(500)));
        assert_eq!(parse_duration("500us"), Ok(Duration::from_micros(500)));
        assert_eq!(parse_duration("500µs"), Ok(Duration::from_micros(500)));
        assert_eq!(parse_duration("7ns"), Ok(Duration::from_nanos(7)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        assert_eq!(parse_duration(" 5s "), Ok(ms(5_000)));
    }

    #[test]
    fn a_bare_number_needs_a_unit() {
        let e = parse_duration("30").unwrap_err();
        assert_eq!(
            e,
            "a duration needs a unit: 250ms, 30s, 90m, 1h30m (got 30)"
        );
        assert!(parse_duration("1m30").unwrap_err().contains("needs a unit"));
    }

    #[test]
    fn refuses_negatives_garbage_and_overflow() {
        assert_eq!(
            parse_duration("-5s").unwrap_err(),
            "a duration cannot be negative, got -5s"
        );
        assert!(parse_duration("").unwrap_err().contains("cannot be empty"));
        assert!(parse_duration("s")
            .unwrap_err()
            .contains("is not a duration"));
        assert!(parse_duration("1.2.3s")
            .unwrap_err()
            .contains("is not a duration"));
        assert!(parse_duration(".s")
            .unwrap_err()
            .contains("is not a duration"));
        assert!(parse_duration("5 s")
            .unwrap_err()
            .contains("unknown duration unit"));
        assert!(parse_duration("3d")
            .unwrap_err()
            .contains("unknown duration unit `d`"));
        assert!(parse_duration("99999999999999999999h")
            .unwrap_err()
            .contains("too long"));
        assert!(parse_duration("10000000h")
            .unwrap_err()
            .contains("too long"));
    }

    #[test]
    fn formats_in_canonical_short_form() {
        assert_eq!(format_duration(ms(30_000)), "30s");
        assert_eq!(format_duration(ms(90 * 60_000)), "1h30m");
        assert_eq!(format_duration(ms(250)), "250ms");
        assert_eq!(format_duration(ms(1_500)), "1s500ms");
        assert_eq!(format_duration(Duration::ZERO), "0s");
        assert_eq!(format_duration(Duration::from_secs(13 * 3600)), "13h");
    }

    proptest! {
        #[test]
        fn format_then_parse_is_identity(nanos in 0u64..u64::MAX) {
            let d = Duration::from_nanos(nanos);
            prop_assert_eq!(parse_duration(&format_duration(d)), Ok(d));
        }
    }
}
