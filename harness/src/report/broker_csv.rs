//! broker-samples.csv: what a live run read from the broker itself ([`BrokerSample`]), one
//! row per successful sample, times in seconds; an empty cell is a figure the kind cannot give
//! (summary.json's `broker_counts.unavailable` says why). Written only for runs that sampled
//! a real broker; recorded data, so a report folder renders again from it.

use std::io::{self, Write};

use super::timeseries_csv::{parse_secs, read_rows, secs};
use crate::record::BrokerSample;

/// The file's name in the report folder.
pub const FILE: &str = "broker-samples.csv";

/// The header row.
pub const HEADER: &str = "t_s,dlq,backlog,in_flight";

/// Writes the header and one row per sample.
pub fn write_csv(samples: &[BrokerSample], w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "{HEADER}")?;
    let cell = |v: Option<u64>| v.map(|n| n.to_string()).unwrap_or_default();
    for s in samples {
        writeln!(
            w,
            "{},{},{},{}",
            secs(s.at),
            cell(s.dlq),
            cell(s.backlog),
            cell(s.in_flight)
        )?;
    }
    Ok(())
}

/// Reads broker-samples.csv's text back (times at the microsecond it was written with).
pub fn read_csv(text: &str) -> Result<Vec<BrokerSample>, String> {
    read_rows(text, HEADER, read_row)
}

fn read_row(line: &str) -> Result<BrokerSample, String> {
    let cells: Vec<&str> = line.split(',').collect();
    let [t, dlq, backlog, in_flight] = cells[..] else {
        return Err(format!("{} cells, not 4", cells.len()));
    };
    let count = |c: &str| match c {
        "" => Ok(None),
        c => c
            .parse::<u64>()
            .map(Some)
            .map_err(|_| format!("`{c}` is not a count")),
    };
    Ok(BrokerSample {
        at: parse_secs(t)?,
        dlq: count(dlq)?,
        backlog: count(backlog)?,
        in_flight: count(in_flight)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_with_a_figure_the_kind_cannot_give_read_back_to_the_same_bytes() {
        // Two RabbitMQ samples: in-flight is not given (an empty cell).
        let samples = [
            BrokerSample {
                at: 0,
                dlq: Some(0),
                backlog: Some(3),
                in_flight: None,
            },
            BrokerSample {
                at: 2_500_000_000,
                dlq: Some(2),
                backlog: Some(0),
                in_flight: None,
            },
        ];
        let mut out = Vec::new();
        write_csv(&samples, &mut out).unwrap_or_default();
        let text = String::from_utf8_lossy(&out).into_owned();
        assert_eq!(text, "t_s,dlq,backlog,in_flight\n0,0,3,\n2.5,2,0,\n");
        let back = read_csv(&text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, samples);
        assert!(read_csv("t_s,dlq\n").is_err());
        assert!(read_csv(&format!("{HEADER}\n1,x,2,3\n"))
            .unwrap_err()
            .contains("row 2"));
    }
}
