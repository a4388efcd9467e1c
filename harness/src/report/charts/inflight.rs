//! Messages in flight (leased to a worker) and waiting (visible), and the age of the oldest
//! message in the main queue, over time: two panels on one time axis. A queue that looks busy
//! but never old, while every lease runs out, is the incident an age alert does not catch.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::axis::{count_label, count_top, duration};
use super::frame::{frame, Header, LegendItem};
use super::style::{draw_line, Line, Marker, BLUE, INK, ORANGE, VERMILLION};
use super::{time, Chart, DrawResult};
use crate::report::data::ReportData;

/// The in-flight chart (`charts/inflight.*`).
pub struct InFlight;

const IN_FLIGHT: Line = Line::solid(BLUE, 3, Marker::Circle);
const VISIBLE: Line = Line::dashed(ORANGE, 3, Marker::Triangle);
const OLDEST: Line = Line::solid(INK, 2, Marker::Square);
const LEASE: Line = Line::dashed(VERMILLION, 2, Marker::None);

impl Chart for InFlight {
    fn name(&self) -> &'static str {
        "inflight"
    }

    fn title(&self, data: &ReportData) -> String {
        let (one, many) = data.run.words().message;
        format!(
            "{}: {many} in flight and age of the oldest {one}",
            data.run.profile
        )
    }

    fn size(&self, _data: &ReportData) -> (u32, u32) {
        (1000, 760)
    }

    fn draw<DB: DrawingBackend>(
        &self,
        data: &ReportData,
        root: &DrawingArea<DB, Shift>,
    ) -> DrawResult<(), DB> {
        let max_in_flight = data.samples.iter().map(|x| x.in_flight).max().unwrap_or(0);
        let max_visible = data.samples.iter().map(|x| x.visible).max().unwrap_or(0);
        let max_age_s = data.summary.max_oldest_age_s;
        let lease_s = data.run.visibility_timeout_s;
        let (one, many) = data.run.words().message;
        let mut legend = vec![
            LegendItem::line(data.run.words().in_flight.0, IN_FLIGHT),
            LegendItem::line(data.run.words().in_flight.1, VISIBLE),
            LegendItem::line(format!("age of the oldest {one}"), OLDEST),
            LegendItem::line(
                format!("{} ({})", data.run.lease_words(), duration(lease_s)),
                LEASE,
            ),
        ];
        legend.extend(time::phase_legend(data));
        let header = Header {
            title: self.title(data),
            subtitle: format!(
                "At most {max_in_flight} in flight and {max_visible} waiting on {} workers; the oldest {one} reached {}",
                data.run.workers,
                duration(max_age_s)
            ),
            legend,
        };
        let body = frame(root, &header)?;
        let (top, bottom) = body.split_vertically(body.dim_in_pixel().1 / 2);
        let axis = time::axis(data);

        let mut counts = time::chart(
            &top,
            data,
            &axis,
            count_top(max_in_flight.max(max_visible) as f64),
            many,
            &count_label,
        )?;
        let in_flight = time::series(data, &axis, |x| x.in_flight as f64);
        let visible = time::series(data, &axis, |x| x.visible as f64);
        draw_line(&mut counts, &in_flight, &IN_FLIGHT, 0.2)?;
        draw_line(&mut counts, &visible, &VISIBLE, 0.6)?;

        let (mut ages, age_axis) =
            time::age_chart(&bottom, data, &axis, max_age_s.max(lease_s), one)?;
        let x_end = axis.range(data.run.end_s).end;
        draw_line(
            &mut ages,
            &[(0.0, age_axis.x(lease_s)), (x_end, age_axis.x(lease_s))],
            &LEASE,
            0.0,
        )?;
        let oldest = time::series(data, &axis, |x| age_axis.x(x.oldest_age as f64 / 1e9));
        draw_line(&mut ages, &oldest, &OLDEST, 0.4)?;
        Ok(())
    }
}
