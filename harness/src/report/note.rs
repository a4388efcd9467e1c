//! A note of a report: one sentence of ackbench's own (numbers and names only), and the lines
//! it quotes from elsewhere (a worker's stderr), which every renderer shows verbatim, escaped
//! for its format, under the sentence.

/// A note, as the console, report.html, summary.md and junit.xml show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Note {
    /// `HEAD: what happened, in words.`
    pub text: String,
    pub quotes: Vec<Quote>,
}

/// Lines quoted under a note, with where they come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Quote {
    /// Where the lines come from, as in `the last lines of worker-1.err`.
    pub source: String,
    pub lines: Vec<String>,
}

impl From<String> for Note {
    fn from(text: String) -> Note {
        Note {
            text,
            quotes: Vec::new(),
        }
    }
}

impl Note {
    /// The note's head and the rest of its sentence: `("CRASHES", "2 times ...")`.
    pub fn head_and_rest(&self) -> (&str, &str) {
        self.text.split_once(": ").unwrap_or(("", &self.text))
    }

    /// The note as plain text: the sentence, then each quote's source and its lines
    /// (`    | line`), one a line.
    pub fn plain(&self) -> String {
        let mut out = self.text.clone();
        for q in &self.quotes {
            out.push_str(&format!("\n  {}:", q.source));
            for line in &q.lines {
                out.push_str(&format!("\n    | {line}"));
            }
        }
        out
    }
}
