//! charts/*.svg: every chart as a vector drawing (the same drawings report.html inlines).

use std::path::{Path, PathBuf};

use super::{charts, no_follow, write_file, Format, Renderer, ReportData, ReportError};

/// Writes charts/*.svg.
pub struct Svg;

impl Renderer for Svg {
    fn format(&self) -> Format {
        Format::Svg
    }

    fn render(&self, data: &ReportData, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
        let folder = dir.join(charts::DIR);
        no_follow::create_dir(&folder).map_err(|e| ReportError::folder(folder.clone(), e))?;
        data.svg_charts()?
            .iter()
            .map(|c| {
                write_file(&folder, &format!("{}.svg", c.name), |w| {
                    w.write_all(c.svg.as_bytes())
                })
            })
            .collect()
    }
}
