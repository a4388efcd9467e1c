//! What the live benches share (`proxy_cost`, `live_drain`, `publish_rate`): their arguments,
//! the drain window read from a run's record ([`window`]), a median, and whether a broker
//! answers. Each bench binary uses a part of it.
#![allow(dead_code)]

pub mod window;

use std::net::TcpStream;
use std::time::Duration;

/// A live bench's arguments: `-- 4000` the messages per run, `rounds=5` the pairs per broker,
/// `hold=12` the provider's hold in seconds, and broker kinds by name to run only those.
pub struct BenchArgs {
    pub n: u64,
    pub rounds: usize,
    pub hold: u64,
    /// The kinds named on the command line, of those the bench knows (empty: all of them).
    pub only: Vec<&'static str>,
}

impl BenchArgs {
    /// The arguments after `--`, with the bench's defaults for the message count and the hold;
    /// `kinds` are the broker kinds the bench knows.
    pub fn parse(default_n: u64, default_hold: u64, kinds: &[&'static str]) -> BenchArgs {
        let args: Vec<String> = std::env::args()
            .skip(1)
            .filter(|a| a != "--bench")
            .collect();
        let named = |prefix: &str| {
            args.iter()
                .find_map(|a| a.strip_prefix(prefix)?.parse::<u64>().ok())
        };
        BenchArgs {
            n: args
                .iter()
                .find_map(|a| a.parse().ok())
                .unwrap_or(default_n),
            rounds: named("rounds=").map_or(3, |r| r as usize),
            hold: named("hold=").unwrap_or(default_hold),
            only: kinds
                .iter()
                .copied()
                .filter(|k| args.iter().any(|a| a == k))
                .collect(),
        }
    }

    /// Whether this run measures `kind`.
    pub fn runs(&self, kind: &str) -> bool {
        self.only.is_empty() || self.only.contains(&kind)
    }
}

/// The median of `v` (the upper one of an even count); `None` for no figure.
pub fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

/// Where this machine's server of a real broker kind listens (`None`: a kind without a
/// local server, SQS).
pub fn server_address(kind: &str) -> Option<&'static str> {
    match kind {
        "rabbitmq" => Some("127.0.0.1:5672"),
        "nats" => Some("127.0.0.1:4222"),
        "redis-streams" => Some("127.0.0.1:6379"),
        _ => None,
    }
}

/// Whether something answers on `addr` (`host:port`): `Err` says why not.
pub fn answers(addr: &str) -> Result<(), String> {
    let parsed = addr.parse().map_err(|e| format!("{addr}: {e}"))?;
    TcpStream::connect_timeout(&parsed, Duration::from_secs(1))
        .map(|_| ())
        .map_err(|e| format!("nothing answers on {addr} ({e})"))
}
