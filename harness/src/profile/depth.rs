//! How deeply a profile's collections nest, measured on the text before the YAML parser sees it:
//! the parser takes time that grows faster than the text with the depth (20,000 levels of
//! `[[[...]]]` take seconds before its own recursion limit stops them), so a profile nested
//! deeper than [`MAX_DEPTH`] is refused at once.
//!
//! The scan is one pass over the characters, with no recursion. It counts flow collections
//! (`[`, `{`) outside quoted scalars and comments, plus the block collections open at the line
//! (one per indentation level, and one per `- ` that starts a sequence item on the line); the
//! content of a block scalar (`|`, `>`) is skipped. It errs on the high side only for brackets
//! inside plain scalars (`url: http://x/{port}` opens and closes one), far below the cap.

/// The deepest nesting a profile may have; the profile schema itself needs fewer than 10.
pub const MAX_DEPTH: usize = 64;

/// A place where the nesting went past [`MAX_DEPTH`] (1-based line and column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooDeep {
    pub line: usize,
    pub column: usize,
}

/// `Err` at the first place `text` nests deeper than `max` levels.
pub fn check_depth(text: &str, max: usize) -> Result<(), TooDeep> {
    let mut scan = Scan::default();
    for (i, line) in text.split('\n').enumerate() {
        scan.line(line.strip_suffix('\r').unwrap_or(line), i + 1, max)?;
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quote {
    Single,
    Double,
}

#[derive(Default)]
struct Scan {
    /// Columns of the block collections and nodes open at this line.
    blocks: Vec<usize>,
    flow: usize,
    quote: Option<Quote>,
    /// Inside a block scalar whose header line was indented this much.
    block_scalar: Option<usize>,
}

impl Scan {
    fn line(&mut self, line: &str, number: usize, max: usize) -> Result<(), TooDeep> {
        let chars: Vec<char> = line.chars().collect();
        let indent = chars.iter().take_while(|c| **c == ' ').count();
        let blank = chars[indent..].iter().all(|c| c.is_whitespace());
        if let Some(header) = self.block_scalar {
            if blank || indent > header {
                return Ok(());
            }
            self.block_scalar = None;
        }
        let mut at = 0;
        if self.quote.is_none() && self.flow == 0 && !blank && chars[indent] != '#' {
            while self.blocks.last().is_some_and(|&c| c >= indent) {
                self.blocks.pop();
            }
            self.blocks.push(indent);
            at = indent;
            // `- - x`: each sequence indicator opens one more level on the same line.
            while chars.get(at) == Some(&'-') && chars.get(at + 1).is_none_or(|c| *c == ' ') {
                at += 1;
                while chars.get(at) == Some(&' ') {
                    at += 1;
                }
                self.blocks.push(at);
            }
            if self.blocks.len() > max {
                return Err(TooDeep {
                    line: number,
                    column: at + 1,
                });
            }
        }
        let mut previous = ' ';
        let mut i = at;
        while i < chars.len() {
            let c = chars[i];
            match self.quote {
                Some(Quote::Single) => {
                    if c == '\'' {
                        if chars.get(i + 1) == Some(&'\'') {
                            i += 1;
                        } else {
                            self.quote = None;
                        }
                    }
                }
                Some(Quote::Double) => {
                    if c == '\\' {
                        i += 1;
                    } else if c == '"' {
                        self.quote = None;
                    }
                }
                None => {
                    let token_start = previous.is_whitespace() || "[{,:-?".contains(previous);
                    match c {
                        '#' if previous.is_whitespace() => break,
                        '\'' if token_start => self.quote = Some(Quote::Single),
                        '"' if token_start => self.quote = Some(Quote::Double),
                        '[' | '{' => {
                            self.flow += 1;
                            if self.blocks.len() + self.flow > max {
                                return Err(TooDeep {
                                    line: number,
                                    column: i + 1,
                                });
                            }
                        }
                        ']' | '}' => self.flow = self.flow.saturating_sub(1),
                        _ => {}
                    }
                }
            }
            previous = c;
            i += 1;
        }
        if self.quote.is_none() && self.flow == 0 && block_scalar_header(&chars) {
            self.block_scalar = Some(indent);
        }
        Ok(())
    }
}

/// Whether the line ends (before any comment) with a block scalar indicator such as `|`, `>-`
/// or `|2`, after `key:` or `-`.
fn block_scalar_header(chars: &[char]) -> bool {
    let text: String = chars.iter().collect();
    let content = match text.find(" #") {
        Some(at) => &text[..at],
        None => &text,
    };
    let Some(last) = content.split_whitespace().last() else {
        return false;
    };
    let mut cs = last.chars();
    let indicator = matches!(cs.next(), Some('|' | '>'));
    let rest_ok = cs.all(|c| c.is_ascii_digit() || c == '+' || c == '-');
    let before = content.trim_end()[..content.trim_end().len() - last.len()].trim_end();
    indicator && rest_ok && (before.ends_with(':') || before.ends_with('-') || before.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_ok(text: &str, max: usize) -> Result<(), (usize, usize)> {
        check_depth(text, max).map_err(|e| (e.line, e.column))
    }

    #[test]
    fn flow_nesting_is_counted_and_placed() {
        // `a:` opens one block level; the fourth `[` is level 5.
        assert_eq!(depth_ok("a: [[[[1]]]]\n", 4), Err((1, 7)));
        assert_eq!(depth_ok("a: [[[1]]]\n", 4), Ok(()));
        let deep = format!("run: {}{}\n", "[".repeat(20_000), "]".repeat(20_000));
        // run: is level 1, so the 64th `[` (column 6 + 63) is level 65.
        assert_eq!(depth_ok(&deep, MAX_DEPTH), Err((1, 69)));
    }

    #[test]
    fn block_nesting_is_counted_by_indentation_and_dashes() {
        let text = "a:\n  b:\n    c:\n      d: 1\n";
        assert_eq!(depth_ok(text, 4), Ok(()));
        assert_eq!(depth_ok(text, 3), Err((4, 7)));
        // a sequence of sequences of sequences: `- - - x` is four levels on one line.
        assert_eq!(depth_ok("- - - x\n", 4), Ok(()));
        assert_eq!(depth_ok("- - - x\n", 3), Err((1, 7)));
        // siblings close what they follow.
        assert_eq!(depth_ok("a:\n  b: 1\nc:\n  d: 1\n", 2), Ok(()));
    }

    #[test]
    fn quotes_comments_and_block_scalars_do_not_count() {
        let text = "a: \"[[[[\"\nb: '{{{{ it''s'\nc: 1 # [[[[\nd: it's [fine]\ne: |\n  [[[[\n      {{{{\nf: 1\n";
        assert_eq!(depth_ok(text, 2), Ok(()));
        // A multi-line quoted scalar hides its brackets too.
        assert_eq!(depth_ok("a: \"x\n  [[[[ y\"\nb: 1\n", 2), Ok(()));
    }

    #[test]
    fn every_shipped_profile_is_far_below_the_cap() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles");
        for entry in std::fs::read_dir(&dir).expect("profiles/ is readable") {
            let path = entry.expect("an entry").path();
            if path.extension().is_some_and(|e| e == "yaml") {
                let text = std::fs::read_to_string(&path).expect("a profile");
                assert_eq!(depth_ok(&text, 10), Ok(()), "{}", path.display());
            }
        }
    }
}
