//! Values echoed in an error line, cut to a readable length: a megabyte of bad value is shown as
//! its first 80 characters and its size, `xxxx... (1048576 bytes)`, wherever the error comes from
//! (a profile field, a `--set` argument, a flag clap refused).
//!
//! An error line echoes a value between double quotes (serde's `string "..."`), between
//! backticks (`` `value` ``) or as a word of its own (`--set key=value:`, a path); each longer
//! than [`QUOTED_MAX`] (quoted) or [`WORD_MAX`] (a bare word) characters is cut.

/// Characters of a long value that are shown.
const SHOWN: usize = 80;

/// Longest quoted value shown whole.
const QUOTED_MAX: usize = 100;

/// Longest bare word shown whole (a long path is still shown whole).
const WORD_MAX: usize = 240;

/// `value` cut to its first [`SHOWN`] characters and its length in bytes when it is longer than
/// `max` characters; else as it is.
pub fn cut(value: &str, max: usize) -> String {
    if value.chars().nth(max).is_none() {
        return value.to_string();
    }
    let shown: String = value.chars().take(SHOWN).collect();
    format!("{shown}... ({} bytes)", value.len())
}

/// `line` with every long echoed value in it cut (see the module documentation).
pub fn cut_echoes(line: &str) -> String {
    cut_words(&cut_quoted(line))
}

/// Cuts the long spans between double quotes (a `\"` inside does not end one) and backticks.
fn cut_quoted(line: &str) -> String {
    let mut out = String::with_capacity(line.len().min(4096));
    let mut rest = line;
    while let Some(open) = rest.find(['"', '`']) {
        let quote = rest.as_bytes()[open];
        out.push_str(&rest[..=open]);
        let inner = &rest[open + 1..];
        let Some(close) = closing(inner, quote) else {
            rest = inner;
            continue;
        };
        out.push_str(&cut(&inner[..close], QUOTED_MAX));
        out.push(quote as char);
        rest = &inner[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Where `quote` closes the span `inner` starts; a backslash escapes a double quote.
fn closing(inner: &str, quote: u8) -> Option<usize> {
    let bytes = inner.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b if b == quote => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// `word` cut, the quote it starts with and the punctuation it ends with (`'value'`,
/// `key=value:`) kept around the cut.
fn cut_word(word: &str) -> String {
    let body = word.trim_start_matches(['\'', '(']);
    let lead = &word[..word.len() - body.len()];
    let body = body.trim_end_matches([':', ',', ';', '\'', ')']);
    let tail = &word[lead.len() + body.len()..];
    format!("{lead}{}{tail}", cut(body, WORD_MAX))
}

/// Cuts the long words (runs without whitespace).
fn cut_words(line: &str) -> String {
    let mut out = String::with_capacity(line.len().min(4096));
    let mut word_start = None;
    for (i, c) in line.char_indices() {
        match (c.is_whitespace(), word_start) {
            (false, None) => word_start = Some(i),
            (true, Some(start)) => {
                out.push_str(&cut_word(&line[start..i]));
                out.push(c);
                word_start = None;
            }
            (true, None) => out.push(c),
            (false, Some(_)) => {}
        }
    }
    if let Some(start) = word_start {
        out.push_str(&cut_word(&line[start..]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_quoted_value_shows_its_start_and_its_size() {
        let big = "x".repeat(1_048_576);
        let line = format!("seed: invalid type: string \"{big}\", expected a whole number");
        let want = format!(
            "seed: invalid type: string \"{}... (1048576 bytes)\", expected a whole number",
            "x".repeat(80)
        );
        assert_eq!(cut_echoes(&line), want);
        let line = format!("mode: unknown variant `{big} {big}`, expected `sim` or `live`");
        // 2 x 1048576 + the space between.
        let want = format!(
            "mode: unknown variant `{}... (2097153 bytes)`, expected `sim` or `live`",
            "x".repeat(80)
        );
        assert_eq!(cut_echoes(&line), want);
    }

    #[test]
    fn a_long_bare_word_is_cut_too() {
        let big = "y".repeat(5000);
        let line = format!("--set mode={big}: mode: ...");
        // `mode=` + 5000 = 5005 bytes; the `:` after the value stays.
        let want = format!("--set mode={}... (5005 bytes): mode: ...", "y".repeat(75));
        assert_eq!(cut_echoes(&line), want);
        // Clap quotes a value it refuses with single quotes: they stay around the cut.
        let line = format!("invalid value '{big}' for '--format <FORMATS>'");
        let want = format!(
            "invalid value '{}... (5000 bytes)' for '--format <FORMATS>'",
            "y".repeat(80)
        );
        assert_eq!(cut_echoes(&line), want);
    }

    #[test]
    fn short_values_escapes_and_unpaired_quotes_stay_as_they_are() {
        for line in [
            "mode: unknown variant `bogus`, expected `sim` or `live`",
            "a: invalid type: string \"say \\\"hi\\\"\", expected a number",
            "the file's name gives \"..\"",
            "an unpaired \" quote and ` tick",
            "/a/path/of/some/length/profile.yaml:6:1: name: ...",
        ] {
            assert_eq!(cut_echoes(line), line);
        }
        // An escaped quote does not end the span: the whole value is cut as one.
        let big = format!("{}\\\"{}", "a".repeat(100), "b".repeat(100));
        let cut_line = cut_echoes(&format!("v \"{big}\" end"));
        assert_eq!(
            cut_line,
            format!("v \"{}... (202 bytes)\" end", "a".repeat(80))
        );
    }
}
