//! Handler latency against the visibility timeout: the HDR percentile curve (x on a "nines"
//! scale: 0, 90, 99, 99.9 %...), the lease as a line (and the longest lease a handler held, when
//! handlers extended theirs), p50 / p99 / p99.9 / max marked, and in words what the handlers did
//! with the lease they held: acked in time, extended it, or outlived it (and then had their
//! message redelivered or dead-lettered). A curve that crosses the visibility timeout is a
//! duplicate effect waiting to happen only for a handler that neither acks first nor extends.

use hdrhistogram::Histogram;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::axis::{duration, short, LatencyUnit, Ticks};
use super::frame::{frame, Header, LegendItem};
use super::style::{
    draw_line, draw_markers, text, Line, Marker, AXIS_SIZE, BLUE, GREY, INK, LABEL_SIZE, SKY,
    VERMILLION,
};
use super::{Chart, DrawResult};
use crate::report::data::ReportData;
use crate::report::Summary;

/// The latency chart (`charts/latency.*`).
pub struct Latency;

const CURVE: Line = Line::solid(BLUE, 3, Marker::None);
const LEASE: Line = Line::dashed(VERMILLION, 3, Marker::None);
const HELD: Line = Line::dashed(SKY, 3, Marker::None);

/// The percentiles marked on the curve: (label, quantile, marker); the max is marked at the
/// right end.
const MARKS: [(&str, f64, Marker); 3] = [
    ("p50", 0.5, Marker::Circle),
    ("p99", 0.99, Marker::Triangle),
    ("p99.9", 0.999, Marker::Square),
];

/// Axes of a percentile curve: x on the "nines" scale up to `end` (p50 and every nine ticked),
/// y from 0 to `y_top`; shared by the latency and time-to-done charts.
pub fn percentile_axes<'a, DB: DrawingBackend>(
    body: &'a DrawingArea<DB, Shift>,
    end: f64,
    y_top: f64,
    x_desc: &str,
    y_desc: String,
) -> DrawResult<ChartContext<'a, DB, Cartesian2d<Ticks, plotters::coord::types::RangedCoordf64>>, DB>
{
    let ticks: Vec<f64> = std::iter::once(nines(0.5))
        .chain((0..=end as u32).map(f64::from))
        .collect();
    let mut chart = ChartBuilder::on(body)
        .margin(14)
        .margin_right(48)
        .x_label_area_size(52)
        .y_label_area_size(84)
        .build_cartesian_2d(Ticks::new(0.0..end, ticks), 0.0..y_top)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .axis_desc_style(text(LABEL_SIZE, &INK))
        .label_style(text(AXIS_SIZE, &INK))
        .x_label_formatter(&|x| tick_label(*x))
        .y_label_formatter(&|y| short(*y))
        .bold_line_style(GREY.mix(0.25))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    Ok(chart)
}

/// A quantile on the "nines" scale: 0 -> 0, 0.9 -> 1, 0.99 -> 2, 0.999 -> 3.
pub fn nines(q: f64) -> f64 {
    if q >= 1.0 {
        f64::INFINITY
    } else {
        -(1.0 - q.max(0.0)).log10()
    }
}

/// The x axis' end: enough nines for the count of handlers (at least 99.9 %, at most
/// 99.9999 %), and one more for the max.
pub fn x_end(count: u64) -> f64 {
    let needed = (count.max(1) as f64).log10().ceil().clamp(3.0, 6.0);
    needed + 1.0
}

/// The label of a tick on the nines scale: `0%`, `50%`, `90%`, `99.9%`.
pub fn tick_label(x: f64) -> String {
    if x <= 0.0 {
        return "0%".into();
    }
    let pct = (1.0 - 10f64.powf(-x)) * 100.0;
    let digits = (x - 2.0).round().max(0.0) as usize;
    format!("{pct:.digits$}%")
}

/// Handlers whose latency is above `timeout_us` (at the histogram's resolution), and all.
pub fn outlived(h: &Histogram<u64>, timeout_us: u64) -> (u64, u64) {
    let total = h.len();
    if total == 0 {
        return (0, 0);
    }
    let within = h.count_between(0, timeout_us);
    (total.saturating_sub(within), total)
}

/// The chart's sentence: what the `total` handlers did with the lease they held.
pub fn caption(s: &Summary, total: u64) -> String {
    let l = &s.handler_leases;
    let (w, t) = (s.words(), &s.words().timeout);
    if total == 0 || l.handlers == 0 {
        return "No handler finished: no latency to show".to_string();
    }
    if l.outlived > 0 {
        let mut what = vec![format!(
            "{} {} while still working",
            l.outlived_redelivered, t.redelivered
        )];
        if l.outlived_dead_lettered > 0 {
            what.push(format!("{} {}", l.outlived_dead_lettered, w.given_up.what));
        }
        return format!(
            "{} of {} handlers ({}%) {}: {}",
            l.outlived,
            l.handlers,
            short(l.outlived as f64 * 100.0 / l.handlers as f64),
            t.outlived_short,
            what.join(", ")
        );
    }
    let mut what = vec![format!(
        "{} of {} acked in time",
        l.acked_in_time, l.handlers
    )];
    if l.extended > 0 {
        what.push(format!(
            "{} after extending it (up to {})",
            l.extended,
            duration(s.effective_lease_ms.max / 1000.0)
        ));
    }
    if l.released > 0 {
        what.push(format!("{} handed back", l.released));
    }
    let kept: String = t.kept[..1].to_uppercase() + &t.kept[1..];
    format!("{kept}: {}; none {}", what.join(", "), t.redelivered)
}

/// The curve: (nines, latency in ms) at every quantile tick of the histogram, capped at the exact
/// max; O(buckets).
pub fn curve(h: &Histogram<u64>, max_ms: f64, end: f64) -> Vec<(f64, f64)> {
    let mut points = Vec::new();
    if h.is_empty() {
        return points;
    }
    points.push((0.0, (h.min() as f64 / 1000.0).min(max_ms)));
    let mut top = 0.0f64;
    for v in h.iter_quantiles(4) {
        let x = nines(v.quantile_iterated_to()).min(end);
        // Never down: a later quantile's bucket is never below an earlier one's.
        top = top.max((h.highest_equivalent(v.value_iterated_to()) as f64 / 1000.0).min(max_ms));
        points.push((x, top));
    }
    points.push((end, max_ms));
    points
}

impl Chart for Latency {
    fn name(&self) -> &'static str {
        "latency"
    }

    fn title(&self, data: &ReportData) -> String {
        format!(
            "{}: handler latency against the {}",
            data.run.profile,
            data.run.lease_words()
        )
    }

    fn draw<DB: DrawingBackend>(
        &self,
        data: &ReportData,
        root: &DrawingArea<DB, Shift>,
    ) -> DrawResult<(), DB> {
        let h = &data.handler_latency;
        let l = &data.summary.handler_latency_ms;
        let lease_ms = data.run.visibility_timeout_s * 1000.0;
        let unit = LatencyUnit::for_max(l.max.max(lease_ms));
        let (_, total) = outlived(h, (lease_ms * 1000.0).round() as u64);
        let subtitle = caption(&data.summary, total);
        let held_ms = data.summary.effective_lease_ms.max;
        let extended = data.summary.handler_leases.extended > 0 && held_ms > lease_ms;
        let mut legend = vec![
            LegendItem::line("handler latency", CURVE),
            LegendItem::line(
                format!("{} {}", data.run.lease_words(), unit.show(lease_ms)),
                LEASE,
            ),
        ];
        if extended {
            legend.push(LegendItem::line(
                format!(
                    "longest {} {}",
                    data.run.words().held.label,
                    unit.show(held_ms)
                ),
                HELD,
            ));
        }
        let values = [l.p50, l.p99, l.p999];
        for ((label, _, m), v) in MARKS.iter().zip(values) {
            let line = Line::solid(INK, 0, *m);
            legend.push(LegendItem::line(format!("{label} {}", unit.show(v)), line));
        }
        legend.push(LegendItem::line(
            format!("max {}", unit.show(l.max)),
            Line::solid(INK, 0, Marker::Cross),
        ));
        let header = Header {
            title: self.title(data),
            subtitle,
            legend,
        };
        let body = frame(root, &header)?;

        let end = x_end(total);
        let top_ms = if extended { held_ms } else { lease_ms };
        let y_top = unit.of_ms(l.max.max(top_ms) * 1.15).max(unit.of_ms(1.0));
        let mut chart = percentile_axes(
            &body,
            end,
            y_top,
            "percentile of handlers (log scale of nines)",
            format!("handler latency ({})", unit.unit),
        )?;

        let lease_y = unit.of_ms(lease_ms);
        draw_line(&mut chart, &[(0.0, lease_y), (end, lease_y)], &LEASE, 0.0)?;
        if extended {
            let held_y = unit.of_ms(held_ms);
            draw_line(&mut chart, &[(0.0, held_y), (end, held_y)], &HELD, 0.0)?;
        }
        let points: Vec<(f64, f64)> = curve(h, l.max, end)
            .into_iter()
            .map(|(x, ms)| (x, unit.of_ms(ms)))
            .collect();
        draw_line(&mut chart, &points, &CURVE, 0.0)?;
        if total > 0 {
            let marks = MARKS
                .iter()
                .zip(values)
                .map(|((_, q, m), v)| ((nines(*q), unit.of_ms(v)), *m))
                .chain(std::iter::once(((end, unit.of_ms(l.max)), Marker::Cross)));
            for (at, m) in marks {
                draw_markers(&mut chart, &[at], (0, 0), m, INK)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nines_scale() {
        assert_eq!(nines(0.0), 0.0);
        assert!((nines(0.99) - 2.0).abs() < 1e-9);
        assert!((nines(0.999) - 3.0).abs() < 1e-9);
        assert_eq!(nines(1.0), f64::INFINITY);
        assert_eq!(tick_label(0.0), "0%");
        assert_eq!(tick_label(1.0), "90%");
        assert_eq!(tick_label(2.0), "99%");
        assert_eq!(tick_label(3.0), "99.9%");
        assert_eq!(tick_label(5.0), "99.999%");
        assert_eq!(tick_label(nines(0.5)), "50%");
        assert_eq!(x_end(0), 4.0);
        assert_eq!(x_end(324), 4.0);
        assert_eq!(x_end(1_000_000), 7.0);
    }

    #[test]
    fn handlers_over_the_lease_come_from_the_histogram() {
        let mut h = Histogram::<u64>::new(3).unwrap_or_else(|e| panic!("{e:?}"));
        for us in [240_000, 900_000, 31_000_000, 40_000_000] {
            h.record(us).unwrap_or_else(|e| panic!("{e:?}"));
        }
        assert_eq!(outlived(&h, 30_000_000), (2, 4));
        assert_eq!(outlived(&h, 50_000_000), (0, 4));
        let empty = Histogram::<u64>::new(3).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(outlived(&empty, 1), (0, 0));
        assert!(curve(&empty, 0.0, 4.0).is_empty());
        let c = curve(&h, 40_000.0, 4.0);
        assert!(
            c.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1),
            "{c:?}"
        );
        assert_eq!(c.last(), Some(&(4.0, 40_000.0)));
    }
}
