//! A connection whose reader refuses what it read, or panics, ends alone: the worker gets the
//! broker's last words and a closed connection, the run is told why, and the worker's next
//! connection passes as before.

use super::*;

/// Passes everything on until the worker sends `!`: refused, with `-ERR bang` as last words;
/// panics at `?`.
#[derive(Default)]
struct Picky {
    refusal: Option<Refusal>,
}

impl Connection for Picky {
    fn from_worker(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        if bytes.contains(&b'?') {
            panic!("a question");
        }
        match bytes.iter().position(|&b| b == b'!') {
            Some(i) => {
                forward.extend_from_slice(&bytes[..i]);
                self.refusal = Some(Refusal {
                    why: "a bang".into(),
                    to_worker: b"-ERR bang\r\n".to_vec(),
                });
            }
            None => forward.extend_from_slice(bytes),
        }
        Flow::Go
    }
    fn from_server(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        forward.extend_from_slice(bytes);
        Flow::Go
    }
    fn refusal(&mut self) -> Option<Refusal> {
        self.refusal.take()
    }
}

struct Picking(Arc<Mutex<Vec<String>>>);
impl Protocol for Picking {
    fn connection(&self, _worker: WorkerId) -> Box<dyn Connection> {
        Box::new(Picky::default())
    }
    fn broke(&self, worker: WorkerId, why: String) {
        self.0
            .lock()
            .unwrap()
            .push(format!("worker {worker}: {why}"));
    }
}

/// An echo server standing for the broker, for any number of connections: its address.
async fn echoes() -> SocketAddr {
    let echo = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let upstream = echo.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = echo.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 1024];
                while let Ok(n) = s.read(&mut buf).await {
                    if n == 0 || s.write_all(&buf[..n]).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    upstream
}

/// Sends `bytes` on a new connection to `addr` and reads until it closes (or 5 s pass).
async fn exchange(addr: SocketAddr, first: &[u8], then: &[u8]) -> Vec<u8> {
    let mut c = TcpStream::connect(addr).await.unwrap();
    c.write_all(first).await.unwrap();
    let mut got = vec![0u8; first.len()];
    c.read_exact(&mut got).await.unwrap();
    let _ = c.write_all(then).await;
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), c.read_to_end(&mut rest)).await;
    assert!(read.is_ok(), "the connection was closed");
    got.extend(rest);
    got
}

use std::time::Duration;

#[tokio::test]
async fn a_refused_frame_gets_the_last_words_and_a_panic_a_closed_connection() {
    let broke = Arc::new(Mutex::new(Vec::new()));
    let proxy = Proxy::start(echoes().await, 2, Arc::new(Picking(broke.clone())), None)
        .await
        .unwrap();
    // "hi" echoes; "ab!cd": "ab" goes on to the broker (and echoes back, or not, depending on
    // which direction closes first), then `-ERR bang` and the end.
    let got = exchange(proxy.addr(2), b"hi", b"ab!cd").await;
    let text = String::from_utf8_lossy(&got);
    assert!(
        text.starts_with("hi") && text.ends_with("-ERR bang\r\n"),
        "{text}"
    );
    assert!(!text.contains("cd"), "{text}");
    // A panic closes the connection without a word.
    let got = exchange(proxy.addr(1), b"hi", b"?").await;
    assert_eq!(got, b"hi");
    // The worker's next connection passes as before.
    let mut c = TcpStream::connect(proxy.addr(1)).await.unwrap();
    c.write_all(b"again").await.unwrap();
    let mut again = [0u8; 5];
    c.read_exact(&mut again).await.unwrap();
    assert_eq!(&again, b"again");
    // Both breaks were told, the panic once its task ended.
    let told = |n| {
        let b = broke.clone();
        async move {
            for _ in 0..100 {
                if b.lock().unwrap().len() >= n {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            b.lock().unwrap().clone()
        }
    };
    assert_eq!(
        told(2).await,
        [
            "worker 2: a bang",
            "worker 1: the proxy's reader panicked: a question"
        ]
    );
    proxy.stop().await;
}
