//! Redis's own limits on what it reads, checked on the proxy's buffer before a frame is decoded
//! (the decoder recurses once per level of nesting, and waits for a bulk string's last byte):
//! a command is an array of at most 1048576 bulk strings (`invalid multibulk length`, and
//! `expected '$'` for anything else inside it) of at most `proto-max-bulk-len`, 512 MB
//! (`invalid bulk length`), its header lines at most 64 KB (`too big mbulk count string`); a
//! reply nests at most [`MAX_REPLY_DEPTH`] deep. Each is read here without recursion: a stack
//! of the elements still due at each level, and a jump over each bulk string's bytes.

/// Redis's `proto-max-bulk-len` default: 512 MB.
pub const MAX_BULK: i64 = 512 * 1024 * 1024;
/// The most elements a command's array may have (Redis's multibulk limit, 1024 * 1024).
pub const MAX_MULTIBULK: i64 = 1024 * 1024;
/// Redis's `PROTO_INLINE_MAX_SIZE`: the longest header line of a command it reads.
pub const MAX_LINE: usize = 64 * 1024;
/// How deep a reply may nest: no stream command's reply nests past 4 levels; a reply deeper
/// than this (a script's nested table) is not read, its connection closed.
pub const MAX_REPLY_DEPTH: usize = 128;

/// What is checked of one direction's frames.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Aggregates open at once.
    pub depth: usize,
    /// Only bulk strings inside the top array (a command).
    pub bulk_only: bool,
    /// The longest line without its end.
    pub line: Option<usize>,
}

/// A worker's commands.
pub const COMMANDS: Limits = Limits {
    depth: 1,
    bulk_only: true,
    line: Some(MAX_LINE),
};

/// The server's replies.
pub const REPLIES: Limits = Limits {
    depth: MAX_REPLY_DEPTH,
    bulk_only: false,
    line: None,
};

/// A frame over a limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverLimit {
    Bulk(i64),
    Multibulk(i64),
    Depth(usize),
    NotBulk(u8),
    Line(usize),
    /// A command's array or bulk string header whose length is no length (`*` or `$`, then the
    /// header's first bytes, escaped): an overflowing number, a negative bulk length, garbage.
    NotALength(u8, String),
}

impl OverLimit {
    /// What Redis answers a command over the limit with, before it closes the connection.
    pub fn answer(&self) -> Vec<u8> {
        let what = match self {
            OverLimit::Bulk(_) => "invalid bulk length".to_string(),
            OverLimit::Multibulk(_) | OverLimit::Depth(_) => "invalid multibulk length".into(),
            OverLimit::NotBulk(got) => format!("expected '$', got '{}'", *got as char),
            OverLimit::Line(_) => "too big mbulk count string".into(),
            OverLimit::NotALength(b'*', _) => "invalid multibulk length".into(),
            OverLimit::NotALength(..) => "invalid bulk length".into(),
        };
        format!("-ERR Protocol error: {what}\r\n").into_bytes()
    }
}

impl std::fmt::Display for OverLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OverLimit::Bulk(n) => write!(
                f,
                "a bulk string of {n} bytes, over proto-max-bulk-len ({MAX_BULK})"
            ),
            OverLimit::Multibulk(n) => {
                write!(f, "an array of {n} elements, over {MAX_MULTIBULK}")
            }
            OverLimit::Depth(d) => write!(f, "a frame nested deeper than {d}"),
            OverLimit::NotBulk(got) => write!(
                f,
                "a command with '{}' where a bulk string goes",
                (*got as char).escape_default()
            ),
            OverLimit::Line(n) => write!(f, "a line of {n}+ bytes without its end"),
            OverLimit::NotALength(t, text) => {
                let what = if *t == b'*' {
                    "an array"
                } else {
                    "a bulk string"
                };
                write!(f, "{what} whose length \"{text}\" is no length Redis reads")
            }
        }
    }
}

/// Checks the first frame of `buf` against `limits`, as far as it is there. `Ok` says nothing
/// of whether it is whole, or RESP at all: the decoder decides that, within the limits.
pub fn check(buf: &[u8], limits: &Limits) -> Result<(), OverLimit> {
    // The elements still due in each aggregate open, innermost last.
    let mut open: Vec<i64> = Vec::new();
    let mut pos = 0usize;
    while pos < buf.len() {
        let t = buf[pos];
        if limits.bulk_only && !open.is_empty() && t != b'$' {
            return Err(OverLimit::NotBulk(t));
        }
        let Some(eol) = buf[pos..].windows(2).position(|w| w == b"\r\n") else {
            return match limits.line {
                Some(max) if buf.len() - pos > max => Err(OverLimit::Line(buf.len() - pos)),
                _ => Ok(()),
            };
        };
        // An empty line (`\r\n` where a type byte belongs) has no length to read.
        let line = buf.get(pos + 1..pos + eol).unwrap_or_default();
        let next = pos + eol + 2;
        let n = std::str::from_utf8(line)
            .ok()
            .and_then(|s| s.parse::<i64>().ok());
        let done = match (t, n) {
            (b'$' | b'!' | b'=', Some(n)) if n > MAX_BULK => return Err(OverLimit::Bulk(n)),
            (b'$' | b'!' | b'=', Some(n)) if n >= 0 => {
                // n is at most 512 MB: the sum cannot wrap (saturating all the same).
                pos = next.saturating_add(n as usize).saturating_add(2);
                true
            }
            (b'*' | b'~' | b'>' | b'%' | b'|', Some(n)) if n > MAX_MULTIBULK => {
                return Err(OverLimit::Multibulk(n))
            }
            (b'*' | b'~' | b'>' | b'%' | b'|', Some(n)) if n > 0 || t == b'|' => {
                // A map's pairs count twice; an attribute is followed by the value it annotates.
                let due = match t {
                    b'%' => n * 2,
                    b'|' => n * 2 + 1,
                    _ => n,
                };
                if open.len() >= limits.depth {
                    return Err(OverLimit::Depth(limits.depth));
                }
                open.push(due);
                pos = next;
                false
            }
            // In a command, a length that is no number (or a bulk's below 0) is Redis's
            // `invalid (multi)bulk length`; in a reply, the decoder's to judge (a streamed
            // RESP3 string).
            (b'$' | b'*', None) | (b'$', Some(..0)) if limits.bulk_only => {
                let text = crate::runner::live::proxy::Refusal::quote(line, 24);
                return Err(OverLimit::NotALength(t, text));
            }
            (b'$' | b'!' | b'=' | b'*' | b'~' | b'>' | b'%' | b'|', None) => return Ok(()),
            // A null, an empty aggregate, any one-line value.
            _ => {
                pos = next;
                true
            }
        };
        if done {
            while let Some(due) = open.last_mut() {
                *due -= 1;
                if *due > 0 {
                    break;
                }
                open.pop();
            }
            if open.is_empty() {
                return Ok(());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_nested_10000_deep_is_refused_and_one_within_the_depth_read() {
        // EVAL "local t = {1} for i=1,10000 do t = {t} end return t" 0: 10000 `*1` then `:1`.
        let mut bomb = b"*1\r\n".repeat(10_000);
        bomb.extend_from_slice(b":1\r\n");
        assert_eq!(check(&bomb, &REPLIES), Err(OverLimit::Depth(128)));
        // Incomplete, it is refused all the same (at its 129th level).
        assert_eq!(
            check(&bomb[..129 * 4], &REPLIES),
            Err(OverLimit::Depth(128))
        );
        assert_eq!(check(&bomb[..128 * 4], &REPLIES), Ok(()));
        // 128 deep is read.
        let mut deep = b"*1\r\n".repeat(128);
        deep.extend_from_slice(b":1\r\n");
        assert_eq!(check(&deep, &REPLIES), Ok(()));
        // A stream reply: a map, arrays, bulk strings holding CRLF, a null.
        let r3 =
            b"%1\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n0-1\r\n*2\r\n$4\r\nbo\r\n\r\n$1\r\nx\r\n_\r\n";
        assert_eq!(check(r3, &REPLIES), Ok(()));
    }

    #[test]
    fn a_command_of_nested_arrays_is_refused_as_redis_refuses_it() {
        // `*1\r\n` sent 200,000 times: the second is where a bulk string goes.
        let bomb = b"*1\r\n".repeat(200_000);
        let e = check(&bomb, &COMMANDS).unwrap_err();
        assert_eq!(e, OverLimit::NotBulk(b'*'));
        assert_eq!(
            e.answer(),
            b"-ERR Protocol error: expected '$', got '*'\r\n"
        );
        // A command as every client sends it passes, and so does inline text (the decoder's).
        assert_eq!(check(b"*2\r\n$4\r\nXACK\r\n$1\r\ns\r\n", &COMMANDS), Ok(()));
        assert_eq!(check(b"PING\r\n", &COMMANDS), Ok(()));
    }

    #[test]
    fn a_bulk_or_array_over_redis_limits_is_refused_at_its_header() {
        // A 600 MB bulk string, its header only: over 512 MB.
        let e = check(b"*2\r\n$3\r\nSET\r\n$629145600\r\n", &COMMANDS).unwrap_err();
        assert_eq!(e, OverLimit::Bulk(629_145_600));
        assert_eq!(e.answer(), b"-ERR Protocol error: invalid bulk length\r\n");
        // Exactly 512 MB is within.
        assert_eq!(check(b"*1\r\n$536870912\r\n", &COMMANDS), Ok(()));
        let e = check(b"*1048577\r\n", &COMMANDS).unwrap_err();
        assert_eq!(
            e.answer(),
            b"-ERR Protocol error: invalid multibulk length\r\n"
        );
        assert_eq!(
            check(b"$9223372036854775807\r\n", &REPLIES),
            Err(OverLimit::Bulk(i64::MAX))
        );
        // A length past i64 (the overflowing size), garbage, a negative bulk: each Redis's
        // `invalid (multi)bulk length`, whatever the line holds.
        let e = check(b"*1\r\n$99999999999999999999999\r\n", &COMMANDS).unwrap_err();
        assert_eq!(e.answer(), b"-ERR Protocol error: invalid bulk length\r\n");
        assert!(
            e.to_string().contains(r#""99999999999999999999999""#),
            "{e}"
        );
        let e = check(b"*\xff\xfegarbage\r\n", &COMMANDS).unwrap_err();
        assert_eq!(e, OverLimit::NotALength(b'*', r"\xff\xfegarbage".into()));
        assert_eq!(
            e.answer(),
            b"-ERR Protocol error: invalid multibulk length\r\n"
        );
        let e = check(b"*1\r\n$-1\r\n", &COMMANDS).unwrap_err();
        assert_eq!(e, OverLimit::NotALength(b'$', "-1".into()));
        // A reply's null bulk, and a streamed RESP3 string's `$?`, are not refused.
        assert_eq!(check(b"$-1\r\n", &REPLIES), Ok(()));
        assert_eq!(check(b"$?\r\n;4\r\nabcd\r\n;0\r\n", &REPLIES), Ok(()));
        // 64 KB of garbage without a line end.
        let e = check(&[b'*'; 65 * 1024], &COMMANDS).unwrap_err();
        assert_eq!(e, OverLimit::Line(65 * 1024));
    }
}
