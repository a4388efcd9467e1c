//! timeseries.csv: the run sampled over time (see [`mod@crate::metrics::timeseries`]), one row per
//! sample, times in seconds.

use std::io::{self, Write};

use super::summary::Summary;
use super::Exporter;
use crate::metrics::Sample;
use crate::record::Nanos;

/// The header row: the columns, in order.
pub const HEADER: &str = "t_s,published,effects,duplicate_effects,visible,in_flight,dlq,\
dlq_with_effect,oldest_age_s,worker_kills,worker_crashes";

/// Writes the header and one row per sample.
pub fn write_csv(samples: &[Sample], mut w: impl Write) -> io::Result<()> {
    writeln!(w, "{HEADER}")?;
    for s in samples {
        writeln!(
            w,
            "{},{},{},{},{},{},{},{},{},{},{}",
            secs(s.t),
            s.published,
            s.effects,
            s.duplicate_effects,
            s.visible,
            s.in_flight,
            s.dlq,
            s.dlq_with_effect,
            secs(s.oldest_age),
            s.worker_kills,
            s.worker_crashes,
        )?;
    }
    Ok(())
}

/// Seconds at microsecond resolution, exact decimal, without trailing zeros: `5`, `2.5`,
/// `0.000125`.
fn secs(n: Nanos) -> String {
    let us = n.saturating_add(500) / 1000;
    let (whole, frac) = (us / 1_000_000, us % 1_000_000);
    if frac == 0 {
        whole.to_string()
    } else {
        let frac = format!("{frac:06}");
        format!("{whole}.{}", frac.trim_end_matches('0'))
    }
}

/// Writes timeseries.csv.
pub struct TimeseriesCsv;

impl Exporter for TimeseriesCsv {
    fn file_name(&self) -> &'static str {
        "timeseries.csv"
    }

    fn export(&self, _summary: &Summary, samples: &[Sample], w: &mut dyn Write) -> io::Result<()> {
        write_csv(samples, w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::testkit::{s, slow_handler};
    use crate::metrics::timeseries;
    use crate::profile::StaleAck;

    #[test]
    fn the_slow_handler_every_thirty_seconds() {
        let samples = timeseries(&slow_handler(StaleAck::Reject), s(30.0));
        let mut out = Vec::new();
        write_csv(&samples, &mut out).unwrap_or_default();
        let want = "\
t_s,published,effects,duplicate_effects,visible,in_flight,dlq,dlq_with_effect,oldest_age_s,worker_kills,worker_crashes
0,1,1,0,0,1,0,0,0,0,0
30,1,2,1,0,1,0,0,30,0,0
60,1,3,2,0,1,0,0,60,0,0
90,1,3,2,0,0,1,1,0,0,0
94,1,3,2,0,0,1,1,0,0,0
";
        assert_eq!(String::from_utf8_lossy(&out), want);
    }

    #[test]
    fn seconds_are_exact_decimals() {
        assert_eq!(secs(0), "0");
        assert_eq!(secs(s(5.0)), "5");
        assert_eq!(secs(s(2.5)), "2.5");
        assert_eq!(secs(125_000), "0.000125");
        assert_eq!(secs(1_999_999_999), "2");
        assert_eq!(secs(1_000_000_499), "1");
    }
}
