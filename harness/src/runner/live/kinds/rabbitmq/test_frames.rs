//! AMQP frames written by hand for the unit tests, byte by byte as the protocol lays them out.

/// A frame: type, channel, payload size, payload, frame end.
pub fn frame(kind: u8, ch: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![kind];
    f.extend_from_slice(&ch.to_be_bytes());
    f.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    f.extend_from_slice(payload);
    f.push(0xCE);
    f
}

/// A short string: its length in one byte, then its bytes.
pub fn short(s: &str) -> Vec<u8> {
    let mut v = vec![s.len() as u8];
    v.extend_from_slice(s.as_bytes());
    v
}

/// connection.tune (10, 30) or tune-ok (10, 31): channel_max 2047, frame_max 131072.
pub fn tune(method: u8, heartbeat: u16) -> Vec<u8> {
    let mut m = vec![0, 10, 0, method];
    m.extend_from_slice(&2047u16.to_be_bytes());
    m.extend_from_slice(&131_072u32.to_be_bytes());
    m.extend_from_slice(&heartbeat.to_be_bytes());
    frame(1, 0, &m)
}

/// A proxy connection whose worker has sent the protocol header, as every AMQP client opens.
pub trait Greeted {
    fn greeted(self) -> Self;
}

impl Greeted for Box<dyn crate::runner::live::proxy::Connection> {
    fn greeted(mut self) -> Self {
        self.from_worker(b"AMQP\x00\x00\x09\x01", &mut Vec::new());
        self
    }
}
