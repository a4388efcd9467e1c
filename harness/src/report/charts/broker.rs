//! The broker's own counts over time (broker-samples.csv: what a real broker answered every
//! sample) beside the same counts replayed from the run's events (timeseries.csv): DLQ depth,
//! backlog (waiting) and in flight, solid from the broker, dashed from the events. Where they
//! part, the broker did something the run did not see. Only for live runs on a real broker.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::axis::{count_label, count_top};
use super::frame::{frame, Header, LegendItem};
use super::style::{draw_line, Line, Marker, BLUE, ORANGE, VERMILLION};
use super::{time, Chart, DrawResult};
use crate::record::BrokerSample;
use crate::report::data::ReportData;

/// The broker-counts chart (`charts/broker.*`).
pub struct Broker;

/// Each figure: its name, its words, the broker's line and the events' line, and the events'
/// value of a time-series sample.
struct Figure {
    name: &'static str,
    words: &'static str,
    broker: Line,
    events: Line,
    replayed: fn(&crate::metrics::Sample) -> u64,
}

const FIGURES: [Figure; 3] = [
    Figure {
        name: "dlq",
        words: "DLQ depth",
        broker: Line::solid(VERMILLION, 3, Marker::Square),
        events: Line::dashed(VERMILLION, 2, Marker::None),
        replayed: |s| s.dlq,
    },
    Figure {
        name: "backlog",
        words: "backlog (waiting)",
        broker: Line::solid(ORANGE, 3, Marker::Triangle),
        events: Line::dashed(ORANGE, 2, Marker::None),
        replayed: |s| s.visible,
    },
    Figure {
        name: "in_flight",
        words: "in flight",
        broker: Line::solid(BLUE, 3, Marker::Circle),
        events: Line::dashed(BLUE, 2, Marker::None),
        replayed: |s| s.in_flight,
    },
];

fn samples(data: &ReportData) -> &[BrokerSample] {
    data.broker_samples.as_deref().unwrap_or(&[])
}

impl Chart for Broker {
    fn name(&self) -> &'static str {
        "broker"
    }

    fn title(&self, data: &ReportData) -> String {
        format!(
            "{}: the broker's own counts beside the run's events",
            data.run.profile
        )
    }

    fn applies(&self, data: &ReportData) -> bool {
        data.broker_samples.is_some()
    }

    fn draw<DB: DrawingBackend>(
        &self,
        data: &ReportData,
        root: &DrawingArea<DB, Shift>,
    ) -> DrawResult<(), DB> {
        let from_broker = samples(data);
        let counts = data.summary.broker_counts.as_ref();
        let mut legend = Vec::new();
        let mut missing = Vec::new();
        let mut top = 0;
        for f in &FIGURES {
            let given = counts.and_then(|c| c.figure(f.name)).is_some();
            if given {
                legend.push(LegendItem::line(
                    format!("{} from the broker", f.words),
                    f.broker,
                ));
                top = top.max(
                    from_broker
                        .iter()
                        .filter_map(|s| s.figure(f.name))
                        .max()
                        .unwrap_or(0),
                );
            } else {
                missing.push(f.words);
            }
            legend.push(LegendItem::line(
                format!("{} from the events", f.words),
                f.events,
            ));
            top = top.max(data.samples.iter().map(f.replayed).max().unwrap_or(0));
        }
        let subtitle = {
            let n = counts.map_or(0, |c| c.samples);
            let failed = counts.map_or(0, |c| c.failed_samples);
            let mut t = format!("{n} samples from the broker ({failed} failed)");
            if !missing.is_empty() {
                t.push_str(&format!(
                    "; not given by this broker: {} (see the report)",
                    missing.join(", ")
                ));
            }
            t
        };
        let header = Header {
            title: self.title(data),
            subtitle,
            legend,
        };
        let body = frame(root, &header)?;
        let axis = time::axis(data);
        let mut chart = time::chart(
            &body,
            data,
            &axis,
            count_top(top as f64),
            "messages",
            &count_label,
        )?;
        for (i, f) in FIGURES.iter().enumerate() {
            let phase = 0.2 + 0.3 * i as f64;
            let replayed = time::series(data, &axis, |s| (f.replayed)(s) as f64);
            draw_line(&mut chart, &replayed, &f.events, phase)?;
            if counts.and_then(|c| c.figure(f.name)).is_some() {
                let points: Vec<(f64, f64)> = from_broker
                    .iter()
                    .filter_map(|s| Some((axis.x(s.at as f64 / 1e9), s.figure(f.name)? as f64)))
                    .collect();
                draw_line(&mut chart, &points, &f.broker, phase)?;
            }
        }
        Ok(())
    }
}
