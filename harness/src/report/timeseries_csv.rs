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
pub(crate) fn secs(n: Nanos) -> String {
    let us = n.saturating_add(500) / 1000;
    let (whole, frac) = (us / 1_000_000, us % 1_000_000);
    if frac == 0 {
        whole.to_string()
    } else {
        let frac = format!("{frac:06}");
        format!("{whole}.{}", frac.trim_end_matches('0'))
    }
}

/// Reads timeseries.csv's text back into samples (times at the microsecond resolution it was
/// written with): writing them again gives the same bytes.
pub fn read_csv(text: &str) -> Result<Vec<Sample>, String> {
    read_rows(text, HEADER, read_row)
}

/// Reads a CSV file ackbench wrote: its first line must be `header`; each following line is
/// read by `row`, an error naming the row's line number.
pub(super) fn read_rows<T>(
    text: &str,
    header: &str,
    row: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    let mut lines = text.lines();
    match lines.next() {
        Some(h) if h == header => {}
        Some(h) => return Err(format!("its header is `{h}`, not `{header}`")),
        None => return Err("it is empty".into()),
    }
    lines
        .enumerate()
        .map(|(i, line)| row(line).map_err(|e| format!("row {}: {e}", i + 2)))
        .collect()
}

fn read_row(line: &str) -> Result<Sample, String> {
    let cells: Vec<&str> = line.split(',').collect();
    let [t, published, effects, dups, visible, in_flight, dlq, dlq_fx, age, kills, crashes] =
        cells[..]
    else {
        return Err(format!("{} cells, not 11", cells.len()));
    };
    let count = |c: &str| {
        c.parse::<u64>()
            .map_err(|_| format!("`{c}` is not a count"))
    };
    Ok(Sample {
        t: parse_secs(t)?,
        published: count(published)?,
        effects: count(effects)?,
        duplicate_effects: count(dups)?,
        visible: count(visible)?,
        in_flight: count(in_flight)?,
        dlq: count(dlq)?,
        dlq_with_effect: count(dlq_fx)?,
        oldest_age: parse_secs(age)?,
        worker_kills: count(kills)?,
        worker_crashes: count(crashes)?,
    })
}

/// Exact decimal seconds (as [`secs`] writes them) to nanoseconds.
pub(crate) fn parse_secs(text: &str) -> Result<Nanos, String> {
    let bad = || format!("`{text}` is not a time in seconds");
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty()
        || frac.len() > 9
        || !whole
            .bytes()
            .chain(frac.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    let whole: Nanos = whole.parse().map_err(|_| bad())?;
    let frac: Nanos = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<9}").parse().map_err(|_| bad())?
    };
    whole
        .checked_mul(1_000_000_000)
        .and_then(|n| n.checked_add(frac))
        .ok_or_else(bad)
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
    fn the_csv_reads_back_to_the_same_bytes() {
        let samples = timeseries(&slow_handler(StaleAck::Reject), s(7.5));
        let mut out = Vec::new();
        write_csv(&samples, &mut out).unwrap_or_default();
        let text = String::from_utf8_lossy(&out);
        let back = read_csv(&text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, samples);
        let mut again = Vec::new();
        write_csv(&back, &mut again).unwrap_or_default();
        assert_eq!(again, out);
        assert!(read_csv("t,x\n").is_err());
        assert!(read_csv(&format!("{HEADER}\n1,2\n"))
            .unwrap_err()
            .contains("row 2"));
        assert_eq!(parse_secs("0.000125"), Ok(125_000));
        assert_eq!(parse_secs("5"), Ok(s(5.0)));
        assert!(
            parse_secs("-1").is_err() && parse_secs(".5").is_err() && parse_secs("1e3").is_err()
        );
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
