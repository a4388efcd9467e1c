//! Reading handler latency from an HDR histogram interval log (`.hlog`: values in
//! microseconds, V2 or V2-deflate encoded intervals, as a report's `handler-latency.hlog`).
//! Every interval of the log is added into one histogram: the latency of the whole recording.

use std::path::Path;

use hdrhistogram::Histogram;

use super::error::SizingError;

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
/// Decoding is the report's own ([`crate::report::hlog::parse_latency_log`]); sizing also needs
/// at least one latency value.
pub fn parse(log: &[u8]) -> Result<Histogram<u64>, String> {
    let total = crate::report::hlog::parse_latency_log(log).map_err(|e| {
        format!(
            "not an HDR histogram interval log ({e}); expected lines such as \
             `0.000,5400.000,40.000,HISTFAAA...` as written by HdrHistogram's log writers"
        )
    })?;
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
