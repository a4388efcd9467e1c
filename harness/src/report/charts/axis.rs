//! Axis units: time since the start of the run in s, min or h by the run's length; latency in ms
//! or s by its largest value; counts as whole numbers.

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;

/// A numeric axis whose ticks are exactly the given values (e.g. 0, 50, 90, 99, 99.9 % on the
/// nines scale, or one tick per worker row).
#[derive(Clone)]
pub struct Ticks {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ticks {
    pub fn new(range: Range<f64>, ticks: Vec<f64>) -> Self {
        Ticks {
            inner: range.into(),
            ticks,
        }
    }
}

impl Ranged for Ticks {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, _hint: Hint) -> Vec<f64> {
        self.ticks.clone()
    }

    fn range(&self) -> Range<f64> {
        self.inner.range()
    }
}

/// The unit of a time axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeAxis {
    pub unit: &'static str,
    per_second: f64,
}

impl TimeAxis {
    /// Seconds up to 10 minutes, minutes up to 10 hours, hours beyond.
    pub fn for_end(end_s: f64) -> Self {
        let (unit, per_second) = if end_s <= 600.0 {
            ("s", 1.0)
        } else if end_s <= 36_000.0 {
            ("min", 1.0 / 60.0)
        } else {
            ("h", 1.0 / 3600.0)
        };
        TimeAxis { unit, per_second }
    }

    /// Seconds in this axis' unit.
    pub fn x(&self, seconds: f64) -> f64 {
        seconds * self.per_second
    }

    /// From 0 to the run's end (never an empty range).
    pub fn range(&self, end_s: f64) -> Range<f64> {
        let end = self.x(end_s);
        0.0..if end > 0.0 { end } else { 1.0 }
    }

    pub fn desc(&self) -> String {
        format!("time since the start of the run ({})", self.unit)
    }
}

/// The unit of a latency axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyUnit {
    pub unit: &'static str,
    per_ms: f64,
}

impl LatencyUnit {
    /// Milliseconds below 10 s, seconds from there.
    pub fn for_max(max_ms: f64) -> Self {
        if max_ms < 10_000.0 {
            LatencyUnit {
                unit: "ms",
                per_ms: 1.0,
            }
        } else {
            LatencyUnit {
                unit: "s",
                per_ms: 1e-3,
            }
        }
    }

    /// Milliseconds in this unit.
    pub fn of_ms(&self, ms: f64) -> f64 {
        ms * self.per_ms
    }

    /// `34.2 s`, `240 ms`: three significant digits at most.
    pub fn show(&self, ms: f64) -> String {
        format!("{} {}", short(self.of_ms(ms)), self.unit)
    }
}

/// A count axis' top: a little room above the largest value, at least 5.
pub fn count_top(max: f64) -> f64 {
    (max * 1.12).max(5.0)
}

/// A count tick: whole numbers only (others are left blank).
pub fn count_label(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{:.0}", v.round())
    } else {
        String::new()
    }
}

/// A number with up to three significant digits, no trailing zeros: `34.2`, `240`, `0.5`.
pub fn short(x: f64) -> String {
    if !x.is_finite() {
        return "0".into();
    }
    let a = x.abs();
    let decimals = if a >= 100.0 || a == 0.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A duration in seconds for people: `30 s`, `2.5 min`, `1.5 h`.
pub fn duration(seconds: f64) -> String {
    if seconds < 120.0 {
        format!("{} s", short(seconds))
    } else if seconds < 7200.0 {
        format!("{} min", short(seconds / 60.0))
    } else {
        format!("{} h", short(seconds / 3600.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_follow_the_size() {
        assert_eq!(TimeAxis::for_end(94.0).unit, "s");
        assert_eq!(TimeAxis::for_end(7200.0).unit, "min");
        assert_eq!(TimeAxis::for_end(7200.0).x(5400.0), 90.0);
        assert_eq!(TimeAxis::for_end(360_000.0).unit, "h");
        assert_eq!(TimeAxis::for_end(0.0).range(0.0), 0.0..1.0);
        assert_eq!(LatencyUnit::for_max(900.0).show(240.0), "240 ms");
        assert_eq!(LatencyUnit::for_max(40_000.0).show(34_210.0), "34.2 s");
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(short(34.21), "34.2");
        assert_eq!(short(0.5), "0.5");
        assert_eq!(short(1.0), "1");
        assert_eq!(short(0.0), "0");
        assert_eq!(short(f64::NAN), "0");
        assert_eq!(duration(30.0), "30 s");
        assert_eq!(duration(150.0), "2.5 min");
        assert_eq!(count_label(&3.0), "3");
        assert_eq!(count_label(&2.5), "");
        assert_eq!(count_top(0.0), 5.0);
    }
}
