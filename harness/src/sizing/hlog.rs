//! Reading handler latency from an HDR histogram interval log (`.hlog`: values in
//! microseconds, V2 or V2-deflate encoded intervals, as a report's `handler-latency.hlog`).
//! Every interval of the log is added into one histogram: the latency of the whole recording.

use std::path::Path;

use base64::Engine;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;

use super::error::SizingError;
use crate::metrics::latency::SIGNIFICANT_DIGITS;

/// The latency histogram recorded in the `.hlog` at `path`.
pub fn read(path: &Path) -> Result<Histogram<u64>, SizingError> {
    let bytes = std::fs::read(path).map_err(|source| SizingError::LatencyUnreadable {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&bytes).map_err(|message| SizingError::NotHdrLog {
        path: path.to_path_buf(),
        message,
    })
}

/// The histogram of every interval in `log`, added up; the error is a sentence for the user.
pub fn parse(log: &[u8]) -> Result<Histogram<u64>, String> {
    let mut total = Histogram::<u64>::new(SIGNIFICANT_DIGITS)
        .map_err(|e| format!("cannot make a histogram: {e}"))?;
    let mut intervals = 0;
    for entry in IntervalLogIterator::new(log) {
        let interval = match entry {
            Ok(LogEntry::Interval(i)) => i,
            Ok(LogEntry::StartTime(_) | LogEntry::BaseTime(_)) => continue,
            Err(e) => {
                return Err(format!(
                    "not an HDR histogram interval log ({e:?}); expected lines such as \
                     `0.000,5400.000,40.000,HISTFAAA...` as written by HdrHistogram's log writers"
                ))
            }
        };
        intervals += 1;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(interval.encoded_histogram())
            .map_err(|e| format!("interval {intervals} is not base64: {e}"))?;
        let h: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("interval {intervals} is not an HDR histogram: {e:?}"))?;
        total
            .add(&h)
            .map_err(|e| format!("interval {intervals} cannot be added: {e:?}"))?;
    }
    if intervals == 0 {
        return Err("not an HDR histogram interval log: it holds no histogram interval".into());
    }
    if total.is_empty() {
        return Err("the log's histograms hold no latency value".into());
    }
    Ok(total)
}

#[cfg(test)]
pub(crate) mod tests {
    use std::time::Duration;

    use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
    use hdrhistogram::serialization::V2DeflateSerializer;

    use super::*;

    /// `h` as an interval log of one interval, as a report writes it.
    pub(crate) fn write_log(h: &Histogram<u64>) -> Vec<u8> {
        let mut out = Vec::new();
        let mut serializer = V2DeflateSerializer::new();
        let mut log = IntervalLogWriterBuilder::new()
            .add_comment("handler latency, microseconds")
            .begin_log_with(&mut out, &mut serializer)
            .expect("header written");
        log.write_histogram(
            h,
            Duration::ZERO,
            Duration::from_secs(5400),
            Tag::new("handler"),
        )
        .expect("interval written");
        drop(log);
        out
    }

    #[test]
    fn a_written_log_reads_back_as_the_same_histogram() {
        let mut h = Histogram::<u64>::new(3).expect("histogram");
        for us in [240_000u64, 31_000_000, 35_500_000, 40_000_000] {
            h.record(us).expect("recorded");
        }
        let back = parse(&write_log(&h)).expect("reads");
        assert_eq!(back.len(), 4);
        assert_eq!(back.max(), h.max());
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
        let twice = [write_log(&h), write_log(&h)].concat();
        assert_eq!(parse(&twice).expect("reads").len(), 8);
    }

    #[test]
    fn other_files_are_not_hdr_logs() {
        let yaml = b"name: marlow-thursday\nseed: 1\n";
        assert!(parse(yaml)
            .err()
            .unwrap_or_default()
            .contains("not an HDR histogram interval log"));
        assert!(parse(b"")
            .err()
            .unwrap_or_default()
            .contains("no histogram interval"));
        assert!(parse(b"#only a comment\n")
            .err()
            .unwrap_or_default()
            .contains("no histogram"));
        let bad = b"0.000,1.000,1.000,HISTFAAAnotreally\n";
        assert!(parse(bad).is_err());
    }
}
