//! Framing of the NATS text protocol, both directions: a control line ending in CRLF, and for
//! `MSG`/`HMSG` (server to client) and `PUB`/`HPUB` (client to server) a payload whose size the
//! line gives (`HMSG`/`HPUB`: header bytes, then total bytes), then CRLF. Everything else
//! (`INFO`, `CONNECT`, `SUB`, `UNSUB`, `PING`, `PONG`, `+OK`, `-ERR`) is one line.
//!
//! [`frame`] reads the first whole frame of a buffer, or says the buffer holds only part of one
//! (reads may split a frame anywhere), or that it is over the server's limits, as the server
//! checks them before it reads on: a payload over `max_payload` (announced in its `INFO`,
//! 1 MB by default) at the control line, a control line over 4096 bytes (`max_control_line`).
//! [`client_line`] holds a client's other lines to what the server reads from a client: an
//! operation it knows, and a `CONNECT` whose options are a JSON object.

use std::ops::Range;

use crate::runner::live::proxy::Refusal;

/// The server's `max_payload` until its `INFO` says otherwise (nats-server's default, 1 MB).
pub const DEFAULT_MAX_PAYLOAD: usize = 1024 * 1024;

/// nats-server's `max_control_line` default: the longest control line it reads.
pub const MAX_CONTROL_LINE: usize = 4096;

/// A frame the server closes the connection on, and what it answers before it closes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// A message frame whose declared size is over `max_payload`.
    Payload { op: String, size: usize, max: usize },
    /// A control line longer than [`MAX_CONTROL_LINE`] (or no line end within it).
    ControlLine { len: usize },
    /// A line that starts with no operation of the protocol (its first bytes, escaped).
    UnknownOp { start: String },
    /// A `CONNECT` whose options are no JSON object (serde_json's words for why; it reads
    /// nesting no deeper than 128 levels, and without recursing past them).
    Connect { why: String },
}

impl Violation {
    /// The server's `-ERR` line for it.
    pub fn answer(&self) -> &'static [u8] {
        match self {
            Violation::Payload { .. } => b"-ERR 'Maximum Payload Violation'\r\n",
            Violation::ControlLine { .. } => b"-ERR 'Maximum Control Line Exceeded'\r\n",
            Violation::UnknownOp { .. } => b"-ERR 'Unknown Protocol Operation'\r\n",
            // nats-server closes without a word on options it cannot read.
            Violation::Connect { .. } => b"",
        }
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Violation::Payload { op, size, max } => write!(
                f,
                "{op} of {size} bytes over the server's max_payload ({max}): 'Maximum Payload Violation'"
            ),
            Violation::ControlLine { len } => write!(
                f,
                "a control line of {len}+ bytes over the server's max_control_line ({MAX_CONTROL_LINE})"
            ),
            Violation::UnknownOp { start } => write!(
                f,
                "a line starting \"{start}\", no operation of the NATS protocol: 'Unknown Protocol Operation'"
            ),
            Violation::Connect { why } => write!(
                f,
                "a CONNECT whose options are no JSON object ({why}); the server closes the connection"
            ),
        }
    }
}

/// A message frame: `MSG`/`HMSG` from the server, `PUB`/`HPUB` from a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub subject: String,
    pub reply: Option<String>,
    /// Where the payload (after any headers) is, in the frame's bytes.
    pub payload: Range<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The frame's length in bytes, CRLFs included.
    pub len: usize,
    /// A message frame, or `None` for any other line.
    pub message: Option<Message>,
}

/// The first whole frame of `buf`; `None` while it holds only part of one; an error for a
/// frame over the server's limits (a payload over `max_payload` is refused at its control
/// line, before any of it is buffered).
/// The server holds a client to [`MAX_CONTROL_LINE`]; what the server sends is not held to it
/// (`max_line`: `usize::MAX`).
pub fn frame(buf: &[u8], max_payload: usize, max_line: usize) -> Result<Option<Frame>, Violation> {
    let Some(eol) = buf.windows(2).position(|w| w == b"\r\n") else {
        return match buf.len() > max_line {
            true => Err(Violation::ControlLine { len: buf.len() }),
            false => Ok(None),
        };
    };
    if eol > max_line {
        return Err(Violation::ControlLine { len: eol });
    }
    let line_len = eol + 2;
    let line = std::str::from_utf8(&buf[..eol]).unwrap_or("");
    let t: Vec<&str> = line.split_ascii_whitespace().collect();
    let op = t
        .first()
        .map(|s| s.to_ascii_uppercase())
        .unwrap_or_default();
    // (subject, reply, header bytes, total bytes) by the op's layout.
    let parsed = match (op.as_str(), t.len()) {
        ("MSG", 4) => Some((t[1], None, "0", t[3])),
        ("MSG", 5) => Some((t[1], Some(t[3]), "0", t[4])),
        ("HMSG", 5) => Some((t[1], None, t[3], t[4])),
        ("HMSG", 6) => Some((t[1], Some(t[3]), t[4], t[5])),
        ("PUB", 3) => Some((t[1], None, "0", t[2])),
        ("PUB", 4) => Some((t[1], Some(t[2]), "0", t[3])),
        ("HPUB", 4) => Some((t[1], None, t[2], t[3])),
        ("HPUB", 5) => Some((t[1], Some(t[2]), t[3], t[4])),
        _ => None,
    };
    let line = Frame {
        len: line_len,
        message: None,
    };
    let Some((subject, reply, hdr, total)) = parsed else {
        return Ok(Some(line));
    };
    let (Ok(hdr), Ok(total)) = (hdr.parse::<usize>(), total.parse::<usize>()) else {
        // Not a size the server would take: passed on as a line, the server answers it.
        return Ok(Some(line));
    };
    if total > max_payload {
        return Err(Violation::Payload {
            op,
            size: total,
            max: max_payload,
        });
    }
    // Within max_payload, a usize's worth: the sum cannot wrap (checked all the same).
    let Some(len) = line_len.checked_add(total).and_then(|n| n.checked_add(2)) else {
        return Err(Violation::Payload {
            op,
            size: total,
            max: max_payload,
        });
    };
    if buf.len() < len {
        return Ok(None);
    }
    Ok(Some(Frame {
        len,
        message: Some(Message {
            subject: subject.to_string(),
            reply: reply.map(str::to_string),
            payload: line_len + hdr.min(total)..line_len + total,
        }),
    }))
}

/// The operations nats-server reads from a client, besides `PUB`/`HPUB` (message frames).
const CLIENT_OPS: [&str; 8] = [
    "CONNECT", "SUB", "UNSUB", "PING", "PONG", "INFO", "+OK", "-ERR",
];

/// A whole line from a client that is not a message frame, as the server reads it: an
/// operation it knows (any case; an empty line passes, the server's to judge), and a `CONNECT`
/// whose options are a JSON object. Neither check recurses or buffers beyond the line.
pub fn client_line(line: &[u8]) -> Result<(), Violation> {
    let line = line.strip_suffix(b"\r\n").unwrap_or(line);
    let end = (line.iter())
        .position(|b| *b == b' ' || *b == b'\t')
        .unwrap_or(line.len());
    let op = &line[..end];
    if op.is_empty() {
        return Ok(());
    }
    if !CLIENT_OPS
        .iter()
        .any(|k| k.as_bytes().eq_ignore_ascii_case(op))
    {
        let start = Refusal::quote(line, 16);
        return Err(Violation::UnknownOp { start });
    }
    if !op.eq_ignore_ascii_case(b"CONNECT") {
        return Ok(());
    }
    let options = &line[end..];
    let why = match serde_json::from_slice::<serde_json::Value>(options) {
        Ok(v) if v.is_object() => return Ok(()),
        Ok(_) => "not an object".to_string(),
        Err(e) => e.to_string(),
    };
    Err(Violation::Connect { why })
}

/// `frame` (a whole message frame, read as `m`) with `payload` in place of its payload: the
/// control line's last field, the total byte count (headers included), is rewritten to match;
/// the headers are kept as they are.
pub fn with_payload(frame: &[u8], m: &Message, payload: &[u8]) -> Vec<u8> {
    let eol = frame
        .windows(2)
        .position(|w| w == b"\r\n")
        .unwrap_or(frame.len());
    let line = String::from_utf8_lossy(&frame[..eol]);
    let mut fields: Vec<&str> = line.split_ascii_whitespace().collect();
    fields.pop();
    let headers = &frame[(eol + 2).min(m.payload.start)..m.payload.start];
    let total = (headers.len() + payload.len()).to_string();
    fields.push(&total);
    let mut out = fields.join(" ").into_bytes();
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(headers);
    out.extend_from_slice(payload);
    out.extend_from_slice(b"\r\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(mut buf: &[u8]) -> Vec<Frame> {
        let mut out = Vec::new();
        while let Some(f) = frame(buf, DEFAULT_MAX_PAYLOAD, MAX_CONTROL_LINE).unwrap() {
            buf = &buf[f.len..];
            out.push(f);
        }
        out
    }

    #[test]
    fn lines_and_messages_with_and_without_reply_and_headers() {
        let bytes = b"INFO {\"host\":\"127.0.0.1\",\"port\":4222}\r\nPING\r\n\
MSG _INBOX.a 1 $JS.ACK.s.c.1.1.1.1.0 5\r\nhello\r\n\
HMSG _INBOX.a 1 12 14\r\nNATS/1.0\r\n\r\nhi\r\n\
PUB $JS.ACK.s.c.1.1.1.1.0 _INBOX.b 4\r\n+ACK\r\nHPUB x 12 12\r\nNATS/1.0\r\n\r\n\r\n";
        let f = all(bytes);
        assert_eq!(f.len(), 6);
        assert_eq!(f.iter().map(|f| f.len).sum::<usize>(), bytes.len());
        assert_eq!((f[0].message.clone(), f[1].message.clone()), (None, None));
        let m = f[2].message.clone().unwrap();
        assert_eq!(m.subject, "_INBOX.a");
        assert_eq!(m.reply.as_deref(), Some("$JS.ACK.s.c.1.1.1.1.0"));
        let at = f[0].len + f[1].len;
        assert_eq!(&bytes[at + m.payload.start..at + m.payload.end], b"hello");
        let h = f[3].message.clone().unwrap();
        assert_eq!((h.reply, h.payload.len()), (None, 2));
        let p = f[4].message.clone().unwrap();
        assert_eq!(
            (p.subject.as_str(), p.reply.as_deref()),
            ("$JS.ACK.s.c.1.1.1.1.0", Some("_INBOX.b"))
        );
        assert_eq!(p.payload.len(), 4);
        assert_eq!(f[5].message.clone().unwrap().payload.len(), 0);
    }

    #[test]
    fn a_new_payload_rewrites_the_byte_count_of_each_message_op() {
        // (frame, new payload, expected): the count is the last field; HPUB/HMSG count their
        // 12 header bytes (`NATS/1.0` CRLF CRLF) in it: 12 + 3 = 15.
        let cases: [(&[u8], &[u8], &[u8]); 4] = [
            (
                b"PUB a.b _INBOX.x 4\r\nabcd\r\n",
                b"xyz123",
                b"PUB a.b _INBOX.x 6\r\nxyz123\r\n",
            ),
            (
                b"MSG _INBOX.x 7 2\r\nab\r\n",
                b"",
                b"MSG _INBOX.x 7 0\r\n\r\n",
            ),
            (
                b"HPUB a r 12 14\r\nNATS/1.0\r\n\r\nhi\r\n",
                b"hey",
                b"HPUB a r 12 15\r\nNATS/1.0\r\n\r\nhey\r\n",
            ),
            (
                b"HMSG  a 1 12 12\r\nNATS/1.0\r\n\r\n\r\n",
                b"{}",
                b"HMSG a 1 12 14\r\nNATS/1.0\r\n\r\n{}\r\n",
            ),
        ];
        for (old, payload, expected) in cases {
            let m = frame(old, 64, MAX_CONTROL_LINE)
                .unwrap()
                .unwrap()
                .message
                .unwrap();
            let new = with_payload(old, &m, payload);
            assert_eq!(
                String::from_utf8_lossy(&new),
                String::from_utf8_lossy(expected)
            );
            // The rewritten frame reads back whole, with the new payload.
            let f = frame(&new, 64, MAX_CONTROL_LINE).unwrap().unwrap();
            assert_eq!(f.len, new.len());
            assert_eq!(&new[f.message.unwrap().payload], payload);
        }
    }

    #[test]
    fn a_frame_split_anywhere_is_whole_only_with_its_last_byte() {
        let bytes = b"MSG a 1 r 12\r\nhello\r\nworld\r\n";
        for cut in 0..bytes.len() {
            assert_eq!(
                frame(&bytes[..cut], 12, MAX_CONTROL_LINE),
                Ok(None),
                "cut at {cut}"
            );
        }
        let f = frame(bytes, 12, MAX_CONTROL_LINE).unwrap().unwrap();
        assert_eq!(f.len, bytes.len());
        // The payload may hold CRLF: its size, not a line end, ends it.
        assert_eq!(f.message.unwrap().payload, 14..26);
    }

    #[test]
    fn a_size_over_max_payload_is_refused_at_its_line_whatever_the_size() {
        // `PUB foo 18446744073709551584` (usize::MAX - 31: line + size + 2 would wrap to 0)
        // and a 2 GB PUB are refused at the line, before any payload is read; so is an HPUB
        // and a MSG over the limit. Exactly max_payload is a frame (`PUB a 4` + 4 bytes).
        let max = DEFAULT_MAX_PAYLOAD;
        let wraps = b"PUB foo 18446744073709551584\r\nX";
        let e = frame(wraps, max, MAX_CONTROL_LINE).unwrap_err();
        assert_eq!(
            e,
            Violation::Payload {
                op: "PUB".into(),
                size: 18446744073709551584,
                max
            }
        );
        assert_eq!(e.answer(), b"-ERR 'Maximum Payload Violation'\r\n");
        assert_eq!(
            e.to_string(),
            "PUB of 18446744073709551584 bytes over the server's max_payload (1048576): \
             'Maximum Payload Violation'"
        );
        let gb2 = b"PUB foo 2147483648\r\n";
        assert!(matches!(
            frame(gb2, max, MAX_CONTROL_LINE),
            Err(Violation::Payload {
                size: 2147483648,
                ..
            })
        ));
        let h = b"HPUB foo 12 1048577\r\nNATS/1.0\r\n\r\n";
        assert!(matches!(
            frame(h, max, MAX_CONTROL_LINE),
            Err(Violation::Payload { size: 1048577, .. })
        ));
        let m = b"MSG foo 1 5\r\nhello\r\n";
        assert!(matches!(
            frame(m, 4, MAX_CONTROL_LINE),
            Err(Violation::Payload { size: 5, .. })
        ));
        assert_eq!(
            frame(b"PUB a 4\r\nabcd\r\n", 4, MAX_CONTROL_LINE)
                .unwrap()
                .unwrap()
                .len,
            15
        );
    }

    #[test]
    fn a_client_line_is_an_operation_the_server_knows_and_connect_takes_an_object() {
        // Every operation a client sends besides PUB/HPUB, in any case, with its CRLF.
        for ok in [
            &b"CONNECT {\"verbose\":false}\r\n"[..],
            b"connect {}",
            b"SUB foo 1\r\n",
            b"unsub 1",
            b"PING\r\n",
            b"PONG",
            b"+OK",
            b"\r\n",
        ] {
            assert_eq!(client_line(ok), Ok(()), "{}", ok.escape_ascii());
        }
        // A TLS ClientHello's first bytes: the server's 'Unknown Protocol Operation'.
        let e = client_line(b"\x16\x03\x01\x00\xa5garbage\r\n").unwrap_err();
        assert_eq!(e.answer(), b"-ERR 'Unknown Protocol Operation'\r\n");
        assert!(
            e.to_string()
                .contains(r#"starting "\x16\x03\x01\x00\xa5garbage""#),
            "{e}"
        );
        assert!(client_line(b"CONNECTX {}").is_err());
        // Options nested 2,000 deep (a 4,008-byte line, within max_control_line): refused past
        // serde_json's 128 levels, closed without a word as nats-server closes it.
        let bomb = [&b"CONNECT "[..], &[b'['; 2000], &[b']'; 2000]].concat();
        let e = client_line(&bomb).unwrap_err();
        assert!(e.to_string().contains("recursion limit exceeded"), "{e}");
        assert_eq!(e.answer(), b"");
        // An array, a string, nothing: no object either.
        for bad in [&b"CONNECT []"[..], b"CONNECT \"x\"", b"CONNECT"] {
            assert!(matches!(client_line(bad), Err(Violation::Connect { .. })));
        }
    }

    #[test]
    fn a_control_line_over_4096_bytes_is_refused_with_or_without_its_end() {
        // 4097 bytes of garbage and no CRLF: over; 4096 and no CRLF yet: wait for more.
        assert_eq!(
            frame(&[b'x'; 4097], DEFAULT_MAX_PAYLOAD, MAX_CONTROL_LINE),
            Err(Violation::ControlLine { len: 4097 })
        );
        assert_eq!(
            frame(&[b'x'; 4096], DEFAULT_MAX_PAYLOAD, MAX_CONTROL_LINE),
            Ok(None)
        );
        let mut long = vec![b'x'; 5000];
        long.extend_from_slice(b"\r\n");
        // From the server (an INFO naming many cluster URLs) a long line is a line.
        let info = frame(&long, DEFAULT_MAX_PAYLOAD, usize::MAX)
            .unwrap()
            .unwrap();
        assert_eq!((info.len, info.message), (5002, None));
        let e = frame(&long, DEFAULT_MAX_PAYLOAD, MAX_CONTROL_LINE).unwrap_err();
        assert_eq!(e.answer(), b"-ERR 'Maximum Control Line Exceeded'\r\n");
    }
}
