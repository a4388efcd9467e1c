//! Helpers of the long-running server tests: the real `ackbench broker` / `ackbench provider`
//! process on a free loopback port, its resident memory, and a small blocking HTTP/1.1 client
//! that keeps its connection alive (cheap enough, even in a debug build, to push a million
//! messages through the broker).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A server process started by a test, killed when dropped.
pub struct Server {
    pub child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

impl Server {
    /// Starts `ackbench ARGS... --listen 127.0.0.1:0` and reads the address it printed first
    /// (`... http://127.0.0.1:PORT...`).
    pub fn start(args: &[&str]) -> Server {
        Server::start_on(args, "127.0.0.1:0")
    }

    /// Starts `ackbench ARGS... --listen LISTEN`.
    pub fn start_on(args: &[&str], listen: &str) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ackbench"))
            .args(args)
            .args(["--listen", listen])
            .current_dir(super::common::root())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the ackbench binary starts");
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut first = String::new();
        out.read_line(&mut first)
            .expect("the server prints its address");
        // The rest is read and dropped, so that the server never writes into a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        let addr = first
            .split("http://")
            .nth(1)
            .and_then(|r| r.split(['/', ' ', '\n']).next())
            .unwrap_or_else(|| panic!("no address in {first:?}"))
            .to_string();
        Server { child, addr }
    }

    /// Resident memory of the server process, in KiB (VmRSS of /proc/PID/status).
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the server process is alive");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS in /proc/PID/status")
    }

    /// Open file descriptors of the server process.
    pub fn open_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id()))
            .map(|d| d.count())
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One keep-alive HTTP/1.1 connection.
pub struct Conn {
    reader: BufReader<TcpStream>,
    host: String,
}

/// An answer: status and body.
pub struct Answer {
    pub status: u16,
    pub body: String,
}

impl Conn {
    pub fn open(addr: &str) -> Conn {
        let tcp = TcpStream::connect(addr).expect("connect to the server");
        tcp.set_nodelay(true).expect("nodelay");
        tcp.set_read_timeout(Some(Duration::from_secs(30)))
            .expect("read timeout");
        Conn {
            reader: BufReader::new(tcp),
            host: addr.to_string(),
        }
    }

    /// POSTs `body` to `path` with extra `headers`, and reads the answer.
    pub fn post(&mut self, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
        let mut head = format!(
            "POST {path} HTTP/1.1\r\nhost: {}\r\ncontent-length: {}\r\n",
            self.host,
            body.len()
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        let tcp = self.reader.get_mut();
        tcp.write_all(head.as_bytes()).expect("write the head");
        tcp.write_all(body).expect("write the body");
        self.read_answer()
    }

    fn read_answer(&mut self) -> Answer {
        let mut status_line = String::new();
        self.reader
            .read_line(&mut status_line)
            .expect("read the status line");
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status in {status_line:?}"));
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).expect("read a header");
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().expect("a content length");
                }
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).expect("read the body");
        Answer {
            status,
            body: String::from_utf8(body).expect("a UTF-8 body"),
        }
    }

    /// An SQS JSON-protocol call signed as worker 1.
    pub fn sqs(&mut self, action: &str, body: &str) -> Answer {
        let target = format!("AmazonSQS.{action}");
        let a = self.post(
            "/",
            &[
                ("x-amz-target", &target),
                ("content-type", "application/x-amz-json-1.0"),
                (
                    "authorization",
                    "AWS4-HMAC-SHA256 Credential=worker-1/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=00",
                ),
            ],
            body.as_bytes(),
        );
        assert_eq!(a.status, 200, "{action}: {}", a.body);
        a
    }
}

/// Every value of `"name":"..."` in a JSON text (values without escapes, as receipt handles and
/// ids are).
pub fn json_strings<'a>(json: &'a str, name: &str) -> Vec<&'a str> {
    let pat = format!("\"{name}\":\"");
    json.match_indices(&pat)
        .filter_map(|(i, _)| {
            let rest = &json[i + pat.len()..];
            rest.find('"').map(|end| &rest[..end])
        })
        .collect()
}
