//! The report's output formats, as `--format` names them.

use serde::{Deserialize, Serialize};

/// One output format of the report folder.
///
/// `json` (summary.json) and `csv` (timeseries.csv) are also the recorded data the other formats
/// are rendered from, so [`super::write_all`] always writes them; [`super::rerender`] rewrites
/// them only when asked.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// summary.json: the summary CI scripts read.
    Json,
    /// timeseries.csv: the run sampled over time.
    Csv,
    /// charts/*.png: the charts as images.
    Png,
    /// charts/*.svg: the charts as vector drawings.
    Svg,
    /// report.html: one self-contained page with the verdict, budgets, summary and charts.
    Html,
    /// junit.xml: one test case per budget, for CI test reporters.
    Junit,
    /// summary.md: GitHub-flavoured Markdown for a PR comment or `$GITHUB_STEP_SUMMARY`.
    Md,
}

impl Format {
    /// Every format, in the order they are written.
    pub const ALL: &'static [Format] = &[
        Format::Json,
        Format::Csv,
        Format::Png,
        Format::Svg,
        Format::Html,
        Format::Junit,
        Format::Md,
    ];

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Png => "png",
            Format::Svg => "svg",
            Format::Html => "html",
            Format::Junit => "junit",
            Format::Md => "md",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use clap::ValueEnum;

    use super::*;

    #[test]
    fn every_format_parses_from_its_name() {
        for f in Format::ALL {
            assert_eq!(Format::from_str(f.name(), false), Ok(*f));
        }
        assert_eq!(Format::value_variants(), Format::ALL);
    }
}
