//! Every chart's frame: a white page, the title, a sentence saying what the chart shows for this
//! run, and the legend in rows under them, so no legend ever covers a series.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{
    draw_line_glyph, draw_marker_px, draw_swatch, text, Line, Marker, GREY, INK, LABEL_SIZE,
    SUBTITLE_SIZE, TITLE_SIZE,
};
use super::DrawResult;

/// How a legend entry is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Glyph {
    /// A series drawn as a line.
    Line(Line),
    /// A filled area or bar, with an optional marker on it.
    Swatch {
        fill: RGBColor,
        border: RGBColor,
        marker: Marker,
        marker_color: RGBColor,
    },
}

/// One legend entry.
#[derive(Debug, Clone, PartialEq)]
pub struct LegendItem {
    pub label: String,
    pub glyph: Glyph,
}

impl LegendItem {
    pub fn line(label: impl Into<String>, line: Line) -> Self {
        LegendItem {
            label: label.into(),
            glyph: Glyph::Line(line),
        }
    }

    pub fn swatch(label: impl Into<String>, fill: RGBColor, border: RGBColor) -> Self {
        LegendItem {
            label: label.into(),
            glyph: Glyph::Swatch {
                fill,
                border,
                marker: Marker::None,
                marker_color: INK,
            },
        }
    }
}

/// What the frame shows above the chart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Header {
    pub title: String,
    /// One sentence about this run (e.g. how many handlers outlived their lease).
    pub subtitle: String,
    pub legend: Vec<LegendItem>,
}

const GLYPH_WIDTH: i32 = 34;
const GLYPH_GAP: i32 = 8;
const ITEM_GAP: i32 = 26;
const ROW_HEIGHT: i32 = 24;
const MARGIN: i32 = 16;

/// Paints the page white, draws the header and returns the area left for the chart.
pub fn frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    header: &Header,
) -> DrawResult<DrawingArea<DB, Shift>, DB> {
    root.fill(&WHITE)?;
    let (width, _) = root.dim_in_pixel();
    let width = width as i32;
    let centre = Pos::new(HPos::Center, VPos::Top);
    let mut y = 12;
    root.draw_text(
        &header.title,
        &text(TITLE_SIZE, &INK).pos(centre),
        (width / 2, y),
    )?;
    y += TITLE_SIZE as i32 + 10;
    if !header.subtitle.is_empty() {
        root.draw_text(
            &header.subtitle,
            &text(SUBTITLE_SIZE, &INK).pos(centre),
            (width / 2, y),
        )?;
        y += SUBTITLE_SIZE as i32 + 10;
    }
    let label_style = text(LABEL_SIZE, &INK).pos(Pos::new(HPos::Left, VPos::Center));
    let mut widths = Vec::with_capacity(header.legend.len());
    for item in &header.legend {
        let (w, _) = root.estimate_text_size(&item.label, &label_style)?;
        widths.push(GLYPH_WIDTH + GLYPH_GAP + w as i32);
    }
    for row in rows(&widths, width - 2 * MARGIN) {
        let row_width: i32 =
            row.iter().map(|&i| widths[i]).sum::<i32>() + ITEM_GAP * (row.len() as i32 - 1);
        let mut x = ((width - row_width) / 2).max(MARGIN);
        let mid = y + ROW_HEIGHT / 2;
        for i in row {
            let item = &header.legend[i];
            match item.glyph {
                Glyph::Line(line) => draw_line_glyph(root, (x, mid), GLYPH_WIDTH, &line)?,
                Glyph::Swatch {
                    fill,
                    border,
                    marker: m,
                    marker_color,
                } => {
                    draw_swatch(root, (x, mid), GLYPH_WIDTH, &fill, &border)?;
                    draw_marker_px(root, (x + GLYPH_WIDTH / 2, mid), m, marker_color)?;
                }
            }
            root.draw_text(
                &item.label,
                &label_style,
                (x + GLYPH_WIDTH + GLYPH_GAP, mid),
            )?;
            x += widths[i] + ITEM_GAP;
        }
        y += ROW_HEIGHT;
    }
    y += 6;
    root.draw(&PathElement::new(
        vec![(MARGIN, y), (width - MARGIN, y)],
        GREY.mix(0.4).stroke_width(1),
    ))?;
    let (_, body) = root.split_vertically(y + 4);
    Ok(body)
}

/// Legend items (by index) laid out in rows no wider than `max_width`.
fn rows(widths: &[i32], max_width: i32) -> Vec<Vec<usize>> {
    let mut rows: Vec<Vec<usize>> = Vec::new();
    let mut used = 0;
    for (i, &w) in widths.iter().enumerate() {
        match rows.last_mut() {
            Some(row) if used + ITEM_GAP + w <= max_width => {
                row.push(i);
                used += ITEM_GAP + w;
            }
            _ => {
                rows.push(vec![i]);
                used = w;
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legend_items_wrap_into_rows() {
        assert_eq!(rows(&[100, 100, 100], 250), vec![vec![0, 1], vec![2]]);
        assert_eq!(rows(&[300], 250), vec![vec![0]]);
        assert!(rows(&[], 250).is_empty());
    }
}
