//! Time to done: for every message that was done (its effect happened and an ack deleted it), how
//! long after its publish, as an HDR percentile curve on the "nines" scale like the handler
//! latency chart, with end to end (publish to first effect) beside it for comparison. Drawn from
//! `time-to-done.hlog` and `end-to-end.hlog`.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::axis::LatencyUnit;
use super::frame::{frame, Header, LegendItem};
use super::latency::{curve, percentile_axes, x_end};
use super::style::{draw_line, Line, Marker, BLUE, ORANGE};
use super::{Chart, DrawResult};
use crate::report::data::ReportData;

/// The time-to-done chart (`charts/done.*`).
pub struct Done;

const DONE: Line = Line::solid(BLUE, 3, Marker::None);
const FIRST_EFFECT: Line = Line::dashed(ORANGE, 3, Marker::None);

/// The chart's sentence: how many messages were done and how long it took.
pub fn caption(data: &ReportData) -> String {
    let s = &data.summary;
    let w = s.words();
    if s.messages_done == 0 {
        return format!(
            "No {} of {} was done: none had its effect and {}",
            w.message.0, s.messages, w.done.any
        );
    }
    let d = &s.time_to_done_ms;
    let unit = LatencyUnit::for_max(d.max);
    format!(
        "{} of {} {} done; time to done p50 {}, p99 {}, max {} (end to end p99 {})",
        s.messages_done,
        s.messages,
        w.message.1,
        unit.show(d.p50),
        unit.show(d.p99),
        unit.show(d.max),
        unit.show(s.end_to_end_ms.p99)
    )
}

impl Chart for Done {
    fn name(&self) -> &'static str {
        "done"
    }

    fn title(&self, data: &ReportData) -> String {
        format!(
            "{}: time to done (publish to the effect and {})",
            data.run.profile,
            data.run.words().done.by_it
        )
    }

    fn draw<DB: DrawingBackend>(
        &self,
        data: &ReportData,
        root: &DrawingArea<DB, Shift>,
    ) -> DrawResult<(), DB> {
        let done = &data.time_to_done;
        let first = &data.end_to_end;
        let d = &data.summary.time_to_done_ms;
        let e = &data.summary.end_to_end_ms;
        let top_ms = d.max.max(e.max);
        let unit = LatencyUnit::for_max(top_ms);
        let header = Header {
            title: self.title(data),
            subtitle: caption(data),
            legend: vec![
                LegendItem::line("time to done", DONE),
                LegendItem::line("end to end (first effect)", FIRST_EFFECT),
            ],
        };
        let body = frame(root, &header)?;
        let end = x_end(done.len().max(first.len()));
        let y_top = unit.of_ms(top_ms * 1.15).max(unit.of_ms(1.0));
        let mut chart = percentile_axes(
            &body,
            end,
            y_top,
            &format!(
                "percentile of {} (log scale of nines)",
                data.run.words().message.1
            ),
            format!("since publish ({})", unit.unit),
        )?;
        for (h, max_ms, line) in [(first, e.max, FIRST_EFFECT), (done, d.max, DONE)] {
            let points: Vec<(f64, f64)> = curve(h, max_ms, end)
                .into_iter()
                .map(|(x, ms)| (x, unit.of_ms(ms)))
                .collect();
            draw_line(&mut chart, &points, &line, 0.0)?;
        }
        Ok(())
    }
}
