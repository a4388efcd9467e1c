//! What the proxy refuses of an AMQP connection, and the broker's last words for each: a frame
//! over `frame_max` ([`FrameTooLarge`], RabbitMQ's `connection.close` 501 FRAME_ERROR), field
//! tables nested past [`MAX_TABLE_DEPTH`] (`connection.close` 502 SYNTAX_ERROR: the proxy
//! does not parse them), and a connection that opens with anything but `AMQP` (RabbitMQ
//! answers the protocol header it speaks and closes).

use super::frame_max::FrameTooLarge;
use super::nesting::MAX_TABLE_DEPTH;
use crate::runner::live::proxy::Refusal;

/// The protocol header RabbitMQ answers a greeting it does not take with: AMQP 0-9-1.
pub const PROTOCOL_HEADER: &[u8] = b"AMQP\x00\x00\x09\x01";

/// A frame or greeting the proxy does not pass on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameRefused {
    TooLarge(FrameTooLarge),
    /// A method or content header frame whose tables nest past [`MAX_TABLE_DEPTH`].
    TooDeep,
    /// The first bytes of a connection, escaped, where `AMQP` belongs.
    NotAmqp(String),
}

impl FrameRefused {
    /// What the broker sends the worker before it closes the connection.
    pub fn close(&self) -> Vec<u8> {
        match self {
            FrameRefused::TooLarge(e) => e.close(),
            FrameRefused::TooDeep => connection_close(
                502,
                &format!("SYNTAX_ERROR - field tables nested deeper than {MAX_TABLE_DEPTH}"),
            ),
            FrameRefused::NotAmqp(_) => PROTOCOL_HEADER.to_vec(),
        }
    }
}

impl std::fmt::Display for FrameRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameRefused::TooLarge(e) => e.fmt(f),
            FrameRefused::TooDeep => write!(
                f,
                "a frame whose field tables nest deeper than {MAX_TABLE_DEPTH}: SYNTAX_ERROR"
            ),
            FrameRefused::NotAmqp(start) => write!(
                f,
                "\"{start}\" where the AMQP protocol header goes: the broker answers its own and closes"
            ),
        }
    }
}

/// A connection's first bytes from the worker: `Ok(true)` once they are seen to open with
/// `AMQP`, `Ok(false)` while too few have come to tell.
pub fn greeting(buf: &[u8]) -> Result<bool, FrameRefused> {
    let n = buf.len().min(4);
    if buf[..n] != b"AMQP"[..n] {
        let start = Refusal::quote(buf, 16);
        return Err(FrameRefused::NotAmqp(start));
    }
    Ok(n == 4)
}

/// A `connection.close` on channel 0 (class and method 0): `code`, then `text` (at most 255
/// bytes, as a short string holds).
pub fn connection_close(code: u16, text: &str) -> Vec<u8> {
    let text = &text.as_bytes()[..text.len().min(255)];
    let mut m = vec![0, 10, 0, 50];
    m.extend_from_slice(&code.to_be_bytes());
    m.push(text.len() as u8);
    m.extend_from_slice(text);
    m.extend_from_slice(&[0, 0, 0, 0]);
    let mut f = vec![1, 0, 0];
    f.extend_from_slice(&(m.len() as u32).to_be_bytes());
    f.extend_from_slice(&m);
    f.push(0xCE);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_greeting_is_judged_by_its_first_four_bytes() {
        assert_eq!(greeting(b"AM"), Ok(false));
        assert_eq!(greeting(b"AMQP\x00\x00\x09\x01"), Ok(true));
        let e = greeting(b"GET / HTTP/1.1\r\n\r\n").unwrap_err();
        assert_eq!(e, FrameRefused::NotAmqp(r"GET / HTTP/1.1\r\n".into()));
        assert_eq!(e.close(), PROTOCOL_HEADER);
        assert!(greeting(b"\x16").is_err());
    }

    #[test]
    fn the_close_for_tables_too_deep_is_a_502_the_parser_reads() {
        let close = FrameRefused::TooDeep.close();
        let (_, frame) = amq_protocol::frame::parse_frame(close.as_slice()).unwrap();
        let text = format!("{frame:?}");
        assert!(
            text.contains("502") || text.contains("SYNTAX_ERROR"),
            "{text}"
        );
        assert!(text.contains("nested deeper than 128"), "{text}");
    }
}
