//! Scalars of the raw profile that plain serde types read too strictly or too loosely:
//! durations written with a unit, and names or keys that may look like numbers.

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;
use std::time::Duration;

use super::duration::{parse_duration, DURATION_FORMS};

/// A duration as written in a profile (`30s`, `1h30m`); a bare number is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DurationText(pub Duration);

impl<'de> Deserialize<'de> for DurationText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DurationVisitor)
    }
}

struct DurationVisitor;

impl DurationVisitor {
    fn bare<E: de::Error>(n: impl fmt::Display) -> Result<DurationText, E> {
        Err(E::custom(format!(
            "a duration needs a unit: {DURATION_FORMS} (got {n})"
        )))
    }
}

impl Visitor<'_> for DurationVisitor {
    type Value = DurationText;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a duration such as {DURATION_FORMS}")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<DurationText, E> {
        parse_duration(v).map(DurationText).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<DurationText, E> {
        Self::bare(v)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<DurationText, E> {
        if v < 0 {
            return Err(E::custom(format!("a duration cannot be negative, got {v}")));
        }
        Self::bare(v)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<DurationText, E> {
        if v < 0.0 {
            return Err(E::custom(format!("a duration cannot be negative, got {v}")));
        }
        Self::bare(v)
    }
}

/// Free text (a name, a message key): a string, or a number or boolean read as its text, so
/// that `keys: [1001, 1002]` means the keys "1001" and "1002".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text(pub String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextVisitor)
    }
}

struct TextVisitor;

impl Visitor<'_> for TextVisitor {
    type Value = Text;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
        Ok(Text(v.to_string()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text, E> {
        Ok(Text(v.to_string()))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text, E> {
        Ok(Text(v.to_string()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Text, E> {
        Ok(Text(v.to_string()))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Text, E> {
        Ok(Text(v.to_string()))
    }
}

/// A number as a person writes it: `0.5`, `2`, and `1e-300` rather than 300 zeros.
pub fn number_text(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-6..1e9).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        x.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn duration(yaml: &str) -> Result<Duration, String> {
        yaml_serde::from_str::<DurationText>(yaml)
            .map(|d| d.0)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_duration_is_text_with_a_unit() {
        assert_eq!(duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert!(duration("30")
            .unwrap_err()
            .starts_with("a duration needs a unit: 250ms, 30s"));
        assert!(duration("1.5").unwrap_err().contains("needs a unit"));
        assert!(duration("-3").unwrap_err().contains("cannot be negative"));
        assert!(duration("[1s]")
            .unwrap_err()
            .contains("expected a duration such as 250ms"));
    }

    #[test]
    fn numbers_read_as_written() {
        assert_eq!(number_text(0.05), "0.05");
        assert_eq!(number_text(2.0), "2");
        assert_eq!(number_text(1e-300), "1e-300");
        assert_eq!(number_text(f64::NAN), "NaN");
    }

    #[test]
    fn text_takes_numbers_as_their_digits() {
        let keys: Vec<Text> = yaml_serde::from_str("[1001, order-7, true]").unwrap();
        assert_eq!(
            keys,
            vec![
                Text("1001".into()),
                Text("order-7".into()),
                Text("true".into())
            ]
        );
    }
}
