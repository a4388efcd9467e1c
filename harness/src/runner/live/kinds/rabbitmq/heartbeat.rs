//! The heartbeat a built-in target asks the server for in a run with `connection` faults: the
//! profile's `broker.heartbeat` in wall time, so a partition longer than the profile allows
//! closes the connection live as in sim mode. AMQP negotiates it in whole seconds (the lower of
//! the server's and the client's), and lapin takes it from the URL's `heartbeat` query.
//!
//! lapin gives a connection up after more than two heartbeat timeouts without a byte from the
//! server, and RabbitMQ closes it at its second check in a row (one a timeout) that found
//! nothing from the client: with each side's last byte at most half a timeout before a
//! partition opens, the server closes 1.5 to 3 `heartbeat`s after it, where the sim model
//! closes it after two (docs/chaos.md derives both).

use std::time::Duration;

/// Whole seconds of wall time for `heartbeat` of profile time at `time_scale`: rounded up, at
/// least 1 (0 would turn heartbeats off).
pub fn wall_seconds(heartbeat: Duration, time_scale: f64) -> u64 {
    ((heartbeat.as_secs_f64() * time_scale).ceil() as u64).max(1)
}

/// `url` asking for a heartbeat of `seconds`.
pub fn asking(url: &str, seconds: u64) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            u.query_pairs_mut()
                .append_pair("heartbeat", &seconds.to_string());
            u.to_string()
        }
        Err(_) => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profiles_heartbeat_is_asked_for_in_whole_wall_seconds() {
        let s = Duration::from_secs;
        // 60 s at 0.1: 6 s of wall time; at 1: 60 s.
        assert_eq!(wall_seconds(s(60), 0.1), 6);
        assert_eq!(wall_seconds(s(60), 1.0), 60);
        // 5 s at 0.1 is 0.5 s: rounded up to 1; 25 s at 0.1 is 2.5 s: 3.
        assert_eq!(wall_seconds(s(5), 0.1), 1);
        assert_eq!(wall_seconds(s(25), 0.1), 3);
        assert_eq!(
            asking("amqp://guest:guest@127.0.0.1:41234/%2f", 6),
            "amqp://guest:guest@127.0.0.1:41234/%2f?heartbeat=6"
        );
    }
}
