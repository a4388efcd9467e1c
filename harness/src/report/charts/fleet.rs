//! An autoscaled run's fleet: the replica count over time as the autoscaler set it, each
//! scale-in that cut a handler marked, above the age of the oldest message on the same time
//! axis, so a scale-out's lag shows as the age climbing until the new replicas start. Only for
//! a run with an `autoscale` rule that scaled; drawn from summary.json's `autoscaling` and the
//! time series.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::axis::{count_label, count_top, duration, short};
use super::frame::{frame, Header, LegendItem};
use super::style::{draw_line, draw_markers, Line, Marker, BLUE, INK, VERMILLION};
use super::{time, Chart, DrawResult};
use crate::metrics::autoscale::ScaleEvent;
use crate::report::data::ReportData;

/// The fleet chart (`charts/fleet.*`).
pub struct Fleet;

const REPLICAS: Line = Line::solid(BLUE, 3, Marker::None);
const CUT: Line = Line::solid(VERMILLION, 0, Marker::Cross);
const OLDEST: Line = Line::solid(INK, 2, Marker::Square);

/// The replica count as a step line from the run's start (`initial`) to `end_s`: (seconds,
/// replicas), one vertical step per scale event.
pub fn steps(initial: u32, events: &[ScaleEvent], end_s: f64) -> Vec<(f64, f64)> {
    let mut points = vec![(0.0, f64::from(initial))];
    let mut now = initial;
    for e in events {
        points.push((e.at_s, f64::from(now)));
        points.push((e.at_s, f64::from(e.to)));
        now = e.to;
    }
    points.push((
        end_s.max(points.last().map_or(0.0, |p| p.0)),
        f64::from(now),
    ));
    points
}

/// The scale-ins that cut at least one handler: (seconds, replicas after).
fn cuts(events: &[ScaleEvent]) -> Vec<(f64, f64)> {
    (events.iter())
        .filter(|e| e.cost.as_ref().is_some_and(|c| c.interrupted > 0))
        .map(|e| (e.at_s, f64::from(e.to)))
        .collect()
}

impl Chart for Fleet {
    fn name(&self) -> &'static str {
        "fleet"
    }

    fn title(&self, data: &ReportData) -> String {
        format!(
            "{}: replicas and age of the oldest {}",
            data.run.profile,
            data.run.words().message.0
        )
    }

    fn size(&self, _data: &ReportData) -> (u32, u32) {
        (1000, 760)
    }

    fn applies(&self, data: &ReportData) -> bool {
        data.summary.autoscaling.is_some()
    }

    fn draw<DB: DrawingBackend>(
        &self,
        data: &ReportData,
        root: &DrawingArea<DB, Shift>,
    ) -> DrawResult<(), DB> {
        let Some(a) = &data.summary.autoscaling else {
            return Ok(());
        };
        let events = &a.scale_events;
        let cut_events = cuts(events);
        let handlers_cut: u64 = (events.iter())
            .filter_map(|e| e.cost.as_ref().map(|c| c.interrupted))
            .sum();
        let max_age_s = data.summary.max_oldest_age_s;
        let one = data.run.words().message.0;
        let header = Header {
            title: self.title(data),
            subtitle: format!(
                "{} scale events, {} handlers cut by scale-ins; at most {} workers, {} \
                 worker-seconds; the oldest {one} reached {}",
                events.len(),
                handlers_cut,
                a.workers_max,
                short(a.worker_seconds.round()),
                duration(max_age_s)
            ),
            legend: vec![
                LegendItem::line("replicas (the autoscaler's count)", REPLICAS),
                LegendItem::line("scale-in that cut a handler", CUT),
                LegendItem::line(format!("age of the oldest {one}"), OLDEST),
            ],
        };
        let body = frame(root, &header)?;
        let (top, bottom) = body.split_vertically(body.dim_in_pixel().1 / 2);
        let axis = time::axis(data);

        let line = steps(data.run.workers, events, data.run.end_s);
        let most = line.iter().map(|p| p.1).fold(0.0, f64::max);
        let mut replicas =
            time::chart(&top, data, &axis, count_top(most), "replicas", &count_label)?;
        let x = |points: Vec<(f64, f64)>| -> Vec<(f64, f64)> {
            points.into_iter().map(|(t, y)| (axis.x(t), y)).collect()
        };
        draw_line(&mut replicas, &x(line), &REPLICAS, 0.0)?;
        draw_markers(&mut replicas, &x(cut_events), (0, 0), CUT.marker, CUT.color)?;

        let (mut ages, age_axis) = time::age_chart(&bottom, data, &axis, max_age_s, one)?;
        let oldest = time::series(data, &axis, |s| age_axis.x(s.oldest_age as f64 / 1e9));
        draw_line(&mut ages, &oldest, &OLDEST, 0.4)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::deploys::StopCost;
    use crate::record::ScaledBy;

    fn event(at_s: f64, from: u32, to: u32, interrupted: u64) -> ScaleEvent {
        ScaleEvent {
            at_s,
            by: ScaledBy::Hpa,
            metric: 0,
            from,
            to,
            cost: (to < from).then(|| StopCost {
                told: u64::from(from - to),
                stopped: 0,
                killed: interrupted,
                interrupted,
                duplicates: 0,
                lost: 0,
                late: 0,
            }),
            lag: None,
        }
    }

    #[test]
    fn the_evening_steps_down_up_and_down_with_its_two_cutting_scale_ins() {
        // autoscale-evening-sqs: 4 replicas, 315 s 4 -> 1 (3 cut), 915 s 1 -> 2, 1215 s 2 -> 1
        // (1 cut), the run ending at 2701 s.
        let events = [
            event(315.0, 4, 1, 3),
            event(915.0, 1, 2, 0),
            event(1215.0, 2, 1, 1),
        ];
        assert_eq!(
            steps(4, &events, 2701.0),
            [
                (0.0, 4.0),
                (315.0, 4.0),
                (315.0, 1.0),
                (915.0, 1.0),
                (915.0, 2.0),
                (1215.0, 2.0),
                (1215.0, 1.0),
                (2701.0, 1.0)
            ]
        );
        assert_eq!(cuts(&events), [(315.0, 1.0), (1215.0, 1.0)]);
        // No event: a flat line.
        assert_eq!(steps(2, &[], 10.0), [(0.0, 2.0), (10.0, 2.0)]);
    }
}
