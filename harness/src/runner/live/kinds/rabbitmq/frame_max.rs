//! AMQP's `frame_max` as the broker enforces it: negotiated in `connection.tune` (the broker's
//! offer) and `connection.tune-ok` (the client's choice), RabbitMQ's default 131072 until then.
//! A frame whose payload is larger than `frame_max - 8` (its 7 header bytes and frame end
//! counted in) is refused at its header, before any of it is buffered, as RabbitMQ refuses it:
//! `connection.close` 501 FRAME_ERROR, then the connection ends.

/// RabbitMQ's `frame_max` default, until a tune says otherwise.
pub const DEFAULT_FRAME_MAX: u32 = 131_072;

/// The `frame_max` of one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameMax(pub u32);

impl Default for FrameMax {
    fn default() -> FrameMax {
        FrameMax(DEFAULT_FRAME_MAX)
    }
}

/// A frame over `frame_max`: its payload size and the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameTooLarge {
    pub size: u32,
    pub frame_max: u32,
}

impl std::fmt::Display for FrameTooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a frame of {} payload bytes over the negotiated frame_max ({}): FRAME_ERROR",
            self.size, self.frame_max
        )
    }
}

impl FrameTooLarge {
    /// The broker's `connection.close` (channel 0): 501 FRAME_ERROR, class and method 0.
    pub fn close(&self) -> Vec<u8> {
        let text = format!(
            "FRAME_ERROR - frame size {} exceeds max frame size {}",
            u64::from(self.size) + 8,
            self.frame_max
        );
        super::refused::connection_close(501, &text)
    }
}

impl FrameMax {
    /// A whole frame went by: a `connection.tune` (the broker's offer) sets the limit, a
    /// `tune-ok` (the client's choice) lowers it (0: no limit). RabbitMQ closes a connection
    /// whose choice is over its offer, so a choice never raises the limit.
    pub fn saw(&mut self, frame: &[u8]) {
        if frame.len() < 17 || frame[0] != 1 || frame[7..10] != [0, 10, 0] {
            return;
        }
        let max = u32::from_be_bytes([frame[13], frame[14], frame[15], frame[16]]);
        let max = if max == 0 { u32::MAX } else { max };
        match frame[10] {
            30 => self.0 = max,
            31 => self.0 = self.0.min(max),
            _ => {}
        }
    }

    /// The frame at the start of `buf`, by its header (the protocol header passes).
    pub fn check(&self, buf: &[u8]) -> Result<(), FrameTooLarge> {
        if buf.len() < 7 || buf.starts_with(b"AMQP") {
            return Ok(());
        }
        let size = u32::from_be_bytes([buf[3], buf[4], buf[5], buf[6]]);
        match u64::from(size) + 8 > u64::from(self.0) {
            true => Err(FrameTooLarge {
                size,
                frame_max: self.0,
            }),
            false => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::test_frames::{frame, tune};
    use super::*;

    #[test]
    fn a_frame_over_the_negotiated_frame_max_is_refused_at_its_header() {
        let mut max = FrameMax::default();
        // 131072 - 8 = 131064 payload bytes is the most before any tune.
        let at = |size: u32| {
            let mut h = vec![3, 0, 1];
            h.extend_from_slice(&size.to_be_bytes());
            h
        };
        assert_eq!(max.check(&at(131_064)), Ok(()));
        assert!(max.check(&at(131_065)).is_err());
        // The worker's tune-ok says 4096: 4089 bytes is over.
        let mut ok = tune(31, 60);
        ok[13..17].copy_from_slice(&4096u32.to_be_bytes());
        max.saw(&ok);
        let e = max.check(&at(4089)).unwrap_err();
        assert_eq!(
            e,
            FrameTooLarge {
                size: 4089,
                frame_max: 4096
            }
        );
        // A tune-ok above the limit, or of 0 (none), does not raise it.
        for choice in [1_000_000u32, 0] {
            let mut up = tune(31, 60);
            up[13..17].copy_from_slice(&choice.to_be_bytes());
            max.saw(&up);
            assert_eq!(max, FrameMax(4096));
        }
        // A 4 GB frame (u32::MAX): refused, no sum wraps.
        assert!(max.check(&at(u32::MAX)).is_err());
        // The broker's close: channel 0, connection.close, 501.
        let close = e.close();
        assert_eq!(&close[..3], &[1, 0, 0]);
        assert_eq!(&close[7..13], &[0, 10, 0, 50, 1, 245]);
        assert_eq!(close.last(), Some(&0xCE));
        let parsed = amq_protocol::frame::parse_frame(close.as_slice())
            .unwrap()
            .1;
        assert!(format!("{parsed:?}").contains("FRAME_ERROR - frame size 4097 exceeds"));
        // Other frames and the protocol header change nothing.
        max.saw(&frame(1, 1, &[0, 60, 0, 80]));
        assert_eq!(
            (max, max.check(b"AMQP\x00\x00\x09\x01")),
            (FrameMax(4096), Ok(()))
        );
    }
}
