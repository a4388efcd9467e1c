//! Latency logs: the raw HDR histograms of a run as HdrHistogram interval logs
//! (`handler-latency.hlog`, `end-to-end.hlog`, `time-to-done.hlog`), V2 compressed, values in
//! microseconds.
//!
//! Each log holds one interval covering the whole run, so the standard HdrHistogram tools read it
//! and `ackbench` can chart or size from it later without rerunning.

use std::io::{self, Write};
use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, IntervalLogWriterError, LogEntry,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

use super::ReportError;
use crate::record::Nanos;

/// Handler latency (delivery to the end of its handler), microseconds.
pub const HANDLER_LATENCY_LOG: &str = "handler-latency.hlog";
/// End-to-end latency (publish to first effect), microseconds.
pub const END_TO_END_LOG: &str = "end-to-end.hlog";
/// Time to done (publish to the moment the message had its effect and an ack had deleted it),
/// microseconds.
pub const TIME_TO_DONE_LOG: &str = "time-to-done.hlog";

/// Writes `histogram` (microseconds) as an interval log with one interval, from 0 to the run's
/// `end`. `what` goes in a comment. No wall-clock start time is written: the same run gives the
/// same bytes.
pub fn write_latency_log(
    w: &mut dyn Write,
    histogram: &Histogram<u64>,
    what: &str,
    end: Nanos,
) -> io::Result<()> {
    let mut w = w;
    let mut serializer = V2DeflateSerializer::new();
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment(&format!("ackbench {what}; values in microseconds"))
        .with_max_value_divisor(1000.0)
        .begin_log_with(&mut w, &mut serializer)?;
    log.write_histogram(histogram, Duration::ZERO, Duration::from_nanos(end), None)
        .map_err(|e| match e {
            IntervalLogWriterError::IoError(e) => e,
            IntervalLogWriterError::SerializeError(e) => {
                io::Error::new(io::ErrorKind::InvalidData, format!("{e:?}"))
            }
        })
}

/// Reads a latency log ([`HANDLER_LATENCY_LOG`] or [`END_TO_END_LOG`]) back: the sum of all
/// its intervals, values in microseconds.
pub fn read_latency_log(path: &Path) -> Result<Histogram<u64>, ReportError> {
    let bytes = std::fs::read(path).map_err(|e| ReportError::read(path.to_path_buf(), e))?;
    parse_latency_log(&bytes)
        .map_err(|m| ReportError::invalid(path.to_path_buf(), "HdrHistogram interval log", m))
}

/// The sum of every interval of an interval log's text.
pub fn parse_latency_log(bytes: &[u8]) -> Result<Histogram<u64>, String> {
    let mut total: Option<Histogram<u64>> = None;
    let mut deserializer = Deserializer::new();
    for entry in IntervalLogIterator::new(bytes) {
        let entry = entry.map_err(|e| format!("{e:?}"))?;
        let LogEntry::Interval(interval) = entry else {
            continue;
        };
        let raw = base64::engine::general_purpose::STANDARD
            .decode(interval.encoded_histogram())
            .map_err(|e| format!("an interval's histogram is not base64: {e}"))?;
        let h: Histogram<u64> = deserializer
            .deserialize(&mut raw.as_slice())
            .map_err(|e| format!("an interval's histogram does not decode: {e:?}"))?;
        match &mut total {
            None => {
                let mut h = h;
                h.auto(true);
                total = Some(h);
            }
            Some(t) => t
                .add(&h)
                .map_err(|e| format!("cannot add intervals: {e:?}"))?,
        }
    }
    total.ok_or_else(|| "it holds no histogram interval".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(values_us: &[u64]) -> Histogram<u64> {
        let mut h = Histogram::new(3).unwrap_or_else(|e| panic!("{e:?}"));
        for &v in values_us {
            h.record(v).unwrap_or_else(|e| panic!("{e:?}"));
        }
        h
    }

    #[test]
    fn a_log_reads_back_to_the_same_counts() {
        let h = histogram(&[240_000, 900_000, 31_000_000, 34_000_000, 40_000_000]);
        let mut out = Vec::new();
        write_latency_log(&mut out, &h, "handler latency", 7_200_000_000_000)
            .unwrap_or_else(|e| panic!("{e}"));
        let text = String::from_utf8_lossy(&out);
        assert!(text.starts_with("#ackbench handler latency; values in microseconds\n"));
        assert!(text.contains("#[MaxValueDivisor: 1000.000]\n"));
        // One interval: start 0, the run's 7200 s, the max in milliseconds.
        assert!(text.contains("\n0.000,7200.000,40009.727,HIST"), "{text}");
        let back = parse_latency_log(&out).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.len(), 5);
        assert_eq!(back, h);
    }

    #[test]
    fn an_empty_histogram_round_trips() {
        let h = histogram(&[]);
        let mut out = Vec::new();
        write_latency_log(&mut out, &h, "end-to-end latency", 0).unwrap_or_else(|e| panic!("{e}"));
        let back = parse_latency_log(&out).unwrap_or_else(|e| panic!("{e}"));
        assert!(back.is_empty());
    }

    #[test]
    fn intervals_add_up_and_garbage_is_refused() {
        let log = |values: &[u64]| {
            let mut out = Vec::new();
            write_latency_log(&mut out, &histogram(values), "x", 1)
                .unwrap_or_else(|e| panic!("{e}"));
            out
        };
        let mut two = log(&[1, 2]);
        let second = log(&[3]);
        let line = second.split(|&b| b == b'\n').rfind(|l| !l.is_empty());
        two.extend_from_slice(line.unwrap_or_default());
        two.push(b'\n');
        assert_eq!(parse_latency_log(&two).map(|h| h.len()), Ok(3));
        assert!(parse_latency_log(b"#only a comment\n").is_err());
        assert!(parse_latency_log(b"0.0,1.0,2.0,not-base64!\n").is_err());
    }
}
