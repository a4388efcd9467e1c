//! Framing of the NATS text protocol, both directions: a control line ending in CRLF, and for
//! `MSG`/`HMSG` (server to client) and `PUB`/`HPUB` (client to server) a payload whose size the
//! line gives (`HMSG`/`HPUB`: header bytes, then total bytes), then CRLF. Everything else
//! (`INFO`, `CONNECT`, `SUB`, `UNSUB`, `PING`, `PONG`, `+OK`, `-ERR`) is one line.
//!
//! [`frame`] reads the first whole frame of a buffer, or says the buffer holds only part of one
//! (reads may split a frame anywhere).

use std::ops::Range;

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

/// The first whole frame of `buf`; `None` while it holds only part of one.
pub fn frame(buf: &[u8]) -> Option<Frame> {
    let eol = buf.windows(2).position(|w| w == b"\r\n")?;
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
    let Some((subject, reply, hdr, total)) = parsed else {
        return Some(Frame {
            len: line_len,
            message: None,
        });
    };
    let (Ok(hdr), Ok(total)) = (hdr.parse::<usize>(), total.parse::<usize>()) else {
        // Not a size the server would take: passed on as a line, the server answers it.
        return Some(Frame {
            len: line_len,
            message: None,
        });
    };
    let len = line_len + total + 2;
    if buf.len() < len {
        return None;
    }
    Some(Frame {
        len,
        message: Some(Message {
            subject: subject.to_string(),
            reply: reply.map(str::to_string),
            payload: line_len + hdr.min(total)..line_len + total,
        }),
    })
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
        while let Some(f) = frame(buf) {
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
            let m = frame(old).unwrap().message.unwrap();
            let new = with_payload(old, &m, payload);
            assert_eq!(
                String::from_utf8_lossy(&new),
                String::from_utf8_lossy(expected)
            );
            // The rewritten frame reads back whole, with the new payload.
            let f = frame(&new).unwrap();
            assert_eq!(f.len, new.len());
            assert_eq!(&new[f.message.unwrap().payload], payload);
        }
    }

    #[test]
    fn a_frame_split_anywhere_is_whole_only_with_its_last_byte() {
        let bytes = b"MSG a 1 r 12\r\nhello\r\nworld\r\n";
        for cut in 0..bytes.len() {
            assert_eq!(frame(&bytes[..cut]), None, "cut at {cut}");
        }
        let f = frame(bytes).unwrap();
        assert_eq!(f.len, bytes.len());
        // The payload may hold CRLF: its size, not a line end, ends it.
        assert_eq!(f.message.unwrap().payload, 14..26);
    }
}
