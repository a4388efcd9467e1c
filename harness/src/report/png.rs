//! charts/*.png: every chart as an image.

use std::path::{Path, PathBuf};

use super::{charts, Format, Renderer, ReportData, ReportError};

/// Writes charts/*.png.
pub struct Png;

impl Renderer for Png {
    fn format(&self) -> Format {
        Format::Png
    }

    fn render(&self, data: &ReportData, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
        charts::write_pngs(data, dir)
    }
}
