//! Each kind's words in every output of a run on it: a Kafka consumer group's and a share
//! group's console, summary.md, trace, charts and sizing.md say records, commits, the poll
//! deadline, the acquisition lock and ACCEPTs, never a queue's messages, deletes and
//! visibility; the same runs on SQS keep a queue's words.

use std::path::Path;

use crate::common::{ackbench, run_profile, stdout};

/// The text of every chart's SVG in `dir` (its `<text>` elements' contents), one line each.
fn chart_text(dir: &Path) -> String {
    let mut text = String::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("charts folder")
        .map(|e| e.expect("chart").path())
        .filter(|p| p.extension().is_some_and(|x| x == "svg"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no chart in {}", dir.display());
    for f in files {
        let svg = std::fs::read_to_string(&f).expect("chart svg");
        for piece in svg.split("<text").skip(1) {
            let inner = piece.split_once('>').map_or("", |(_, rest)| rest);
            let content = inner.split("</text>").next().unwrap_or("");
            text.push_str(content.trim());
            text.push('\n');
        }
    }
    text
}

/// `ackbench size PROFILE` into a temp folder: its sizing.md.
fn sizing_md(profile: &str) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("sizing");
    let o = ackbench(&["size", profile, "--out", out.to_str().expect("utf-8 path")]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    std::fs::read_to_string(out.join("sizing.md")).expect("sizing.md")
}

#[test]
fn a_kafka_run_says_records_commits_and_the_poll_deadline_not_leases() {
    // The Kafka Thursday's console and summary.md in Kafka's words: its 8 stale acks are
    // commits (the fenced ones of worker 1's batch), the one handler in hand at 443 s was past
    // its member's poll deadline, and nothing speaks of deleting or visibility.
    let r = run_profile(Path::new("profiles/brokers/kafka-thursday.yaml"), &[]);
    let console = r.stdout();
    let md = std::fs::read_to_string(r.dir.path().join("summary.md")).expect("summary.md");
    for page in [&console, &md] {
        assert!(
            page.contains(
                "1 of 28 handlers were still working on their record when their member's poll \
                 deadline passed (max.poll.interval.ms 300000.000 ms"
            ),
            "{page}"
        );
        assert!(
            page.contains("the coordinator removed the member from the group"),
            "{page}"
        );
        assert!(page.contains("the commit that passed the record"), "{page}");
        for sqs_words in [
            "lease held",
            "stale acks",
            "deleted",
            "visibility",
            "receive",
        ] {
            assert!(!page.contains(sqs_words), "{sqs_words}: {page}");
        }
    }
    assert!(
        console.contains(
            "\n  stale commits                        8  commits after the member lost the \
             record (fenced, or fetched again)\n"
        ),
        "{console}"
    );
    assert!(console.contains("\n  to poll deadline "), "{console}");
    assert!(md.contains("| stale commits | kills / crashes |"), "{md}");
    // Its trace and its charts say records too.
    let trace = run_profile(
        Path::new("profiles/brokers/kafka-thursday.yaml"),
        &["--trace", "msg-1"],
    )
    .stdout();
    assert!(trace.contains("trace of msg-1 (record 1)"), "{trace}");
    assert!(
        trace.contains("delivered #1      worker 1, poll deadline 303.000s"),
        "{trace}"
    );
    assert!(
        trace.contains("ack               worker 1, delivery 1: committed"),
        "{trace}"
    );
    for sqs_words in [
        "lease until",
        "visibility change",
        ": deleted",
        "(message 1)",
    ] {
        assert!(!trace.contains(sqs_words), "{sqs_words}: {trace}");
    }
    let charts = chart_text(&r.dir.path().join("charts"));
    assert!(
        charts.contains("28 effects for 20 records: 8 duplicate (0.4 per record)"),
        "{charts}"
    );
    assert!(
        charts.contains("records in flight and age of the oldest record"),
        "{charts}"
    );
    assert!(
        charts.contains("28 deliveries of 20 records on 2 workers"),
        "{charts}"
    );
    assert!(!charts.contains("message"), "{charts}");
    // The same run on the SQS model keeps a queue's words.
    let sqs = run_profile(Path::new("profiles/brokers/sqs.yaml"), &[]).stdout();
    assert!(sqs.contains("\n  stale acks "), "{sqs}");
    assert!(sqs.contains("\n  lease held "), "{sqs}");
}

#[test]
fn a_share_groups_charts_say_archived_records_cannot_be_replayed() {
    // The share-group Thursday: 108 records archived at the delivery count limit, each with its
    // effect (4 duplicates each, 540 effects): the DLQ chart counts archived records that are
    // never delivered again, not messages to replay.
    let r = run_profile(Path::new("profiles/brokers/kafka-share-thursday.yaml"), &[]);
    let charts = chart_text(&r.dir.path().join("charts"));
    assert!(
        charts.contains(
            "108 archived at the end: 108 with effect (never delivered again, so none can be \
             replayed), 0 without (work never done)"
        ),
        "{charts}"
    );
    assert!(
        charts.contains("540 effects for 108 records: 432 duplicate (4 per record)"),
        "{charts}"
    );
    for sqs_words in ["message", "in the DLQ", "replaying them", "lease"] {
        assert!(!charts.contains(sqs_words), "{sqs_words}: {charts}");
    }
}

#[test]
fn sizing_a_kafka_group_speaks_its_words() {
    // sizing.md of both Kafka Thursdays: the lease is the poll interval or the acquisition lock,
    // the probe's kill comes right after the fetch or acquisition and its record is committed,
    // accepted or archived, the alert watches the oldest record.
    let kafka = sizing_md("profiles/brokers/kafka-thursday.yaml");
    assert!(
        kafka.contains("A handler outlives the 5m max.poll.interval.ms with chance 0"),
        "{kafka}"
    );
    assert!(
        kafka.contains(
            "A kill right after the fetch on msg-1's first delivery: before, committed on \
             delivery 2, 1 effect"
        ),
        "{kafka}"
    );
    let share = sizing_md("profiles/brokers/kafka-share-thursday.yaml");
    assert!(share.contains("| acquisition lock | 30s | 1m |"), "{share}");
    assert!(
        share.contains("before, archived after delivery 5 of 5, 4 effects; after, accepted on"),
        "{share}"
    );
    for page in [&kafka, &share] {
        assert!(
            page.contains("## Alert on the age of the oldest record"),
            "{page}"
        );
        for sqs_words in [
            "5m lease",
            "30s lease",
            "per message",
            "right after the receive",
            "hold a message",
            "visibility timeout",
            "oldest message",
            "acked on delivery",
            "dead-lettered after delivery",
        ] {
            assert!(!page.contains(sqs_words), "{sqs_words}: {page}");
        }
    }
    // SQS keeps a queue's words.
    let sqs = sizing_md("profiles/brokers/sqs.yaml");
    assert!(sqs.contains("| visibility timeout |"), "{sqs}");
    assert!(sqs.contains("right after the receive"), "{sqs}");
    assert!(
        sqs.contains("## Alert on the age of the oldest message"),
        "{sqs}"
    );
}
