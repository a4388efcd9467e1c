//! The proxy's byte path with a [`Connection`] that cuts, or holds bytes back until due.

use super::*;

/// Passes everything on, but cuts the connection at the broker's first `!` (as a proxy cuts
/// at a delivery a `received` kill was decided for), holding that byte and what follows.
struct CutAtBang;

impl Connection for CutAtBang {
    fn from_worker(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        forward.extend_from_slice(bytes);
        Flow::Go
    }
    fn from_server(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        match bytes.iter().position(|&b| b == b'!') {
            Some(i) => {
                forward.extend_from_slice(&bytes[..i]);
                Flow::Cut
            }
            None => {
                forward.extend_from_slice(bytes);
                Flow::Go
            }
        }
    }
}

struct Cutting;
impl Protocol for Cutting {
    fn connection(&self, _worker: WorkerId) -> Box<dyn Connection> {
        Box::new(CutAtBang)
    }
    fn broke(&self, _worker: WorkerId, why: String) {
        panic!("no connection breaks here: {why}")
    }
}

/// Holds the worker's first chunk back 300 ms, then passes it on; the rest as it comes.
#[derive(Default)]
struct HoldFirst {
    seen: bool,
    held: Option<(Instant, Vec<u8>)>,
}

impl Connection for HoldFirst {
    fn from_worker(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        match self.seen {
            false => {
                let due = Instant::now() + std::time::Duration::from_millis(300);
                self.held = Some((due, bytes.to_vec()));
                self.seen = true;
            }
            true => forward.extend_from_slice(bytes),
        }
        Flow::Go
    }
    fn from_server(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        forward.extend_from_slice(bytes);
        Flow::Go
    }
    fn next_due(&self, dir: Direction) -> Option<Instant> {
        let to_broker = dir == Direction::ToBroker;
        self.held.as_ref().filter(|_| to_broker).map(|(at, _)| *at)
    }
    fn due(&mut self, _dir: Direction, now: Instant, forward: &mut Vec<u8>) -> Flow {
        if self.held.as_ref().is_some_and(|(at, _)| *at <= now) {
            forward.extend(self.held.take().map(|(_, b)| b).unwrap_or_default());
        }
        Flow::Go
    }
}

struct Holding;
impl Protocol for Holding {
    fn connection(&self, _worker: WorkerId) -> Box<dyn Connection> {
        Box::new(HoldFirst::default())
    }
    fn broke(&self, _worker: WorkerId, why: String) {
        panic!("no connection breaks here: {why}")
    }
}

/// An echo server standing for the broker: its address.
async fn echo() -> SocketAddr {
    let echo = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let upstream = echo.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut s, _) = echo.accept().await.unwrap();
        let mut buf = [0u8; 1024];
        while let Ok(n) = s.read(&mut buf).await {
            if n == 0 || s.write_all(&buf[..n]).await.is_err() {
                return;
            }
        }
    });
    upstream
}

#[tokio::test]
async fn bytes_a_connection_holds_back_go_on_when_they_come_due() {
    let proxy = Proxy::start(echo().await, 1, Arc::new(Holding), None)
        .await
        .unwrap();
    let mut c = TcpStream::connect(proxy.addr(1)).await.unwrap();
    // "abc" is held 300 ms; "def", sent 50 ms after it, passes at once and comes back
    // first; "abc" follows when due, though nothing more is read from either side.
    c.write_all(b"abc").await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    c.write_all(b"def").await.unwrap();
    let mut got = [0u8; 6];
    c.read_exact(&mut got).await.unwrap();
    assert_eq!(&got, b"defabc");
    proxy.stop().await;
}

#[tokio::test]
async fn bytes_pass_both_ways_until_the_connection_is_cut_before_the_held_bytes() {
    // An echo server stands for the broker.
    let echo = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let upstream = echo.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut s, _) = echo.accept().await.unwrap();
        let mut buf = [0u8; 1024];
        while let Ok(n) = s.read(&mut buf).await {
            if n == 0 || s.write_all(&buf[..n]).await.is_err() {
                return;
            }
        }
    });
    let proxy = Proxy::start(upstream, 2, Arc::new(Cutting), None)
        .await
        .unwrap();
    assert_ne!(proxy.addr(1), proxy.addr(2));
    let mut c = TcpStream::connect(proxy.addr(2)).await.unwrap();
    c.write_all(b"hello").await.unwrap();
    let mut got = [0u8; 5];
    c.read_exact(&mut got).await.unwrap();
    assert_eq!(&got, b"hello");
    // "ab!cd" comes back as "ab", then the connection closes: "!cd" never reaches us.
    c.write_all(b"ab!cd").await.unwrap();
    let mut rest = Vec::new();
    c.read_to_end(&mut rest).await.unwrap();
    assert_eq!(rest, b"ab");
    proxy.stop().await;
}
