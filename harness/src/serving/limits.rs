//! The connection limits of a server, with their defaults.

use std::time::Duration;

/// How long a server waits for a client, and how many it serves at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServeLimits {
    /// A request head must arrive within this of its first byte, and its body within this of
    /// the head. Default 10 s: on loopback a head takes microseconds, so only a client that
    /// trickles its request (slowloris) gets near it.
    pub header_read_timeout: Duration,
    /// A keep-alive connection with no request in progress for this long is closed. Default
    /// 120 s: longer than the 90 s after which common HTTP clients (reqwest, Go's net/http, the
    /// AWS SDKs' clients) drop an idle pooled connection themselves, so a client is never caught
    /// sending on a connection the server is closing.
    pub idle_timeout: Duration,
    /// Connections served at once; one more waits in the listen backlog until one closes.
    /// Default 10,000 (also bounded by the process's open-file limit, `ulimit -n`).
    pub max_connections: usize,
}

impl Default for ServeLimits {
    fn default() -> ServeLimits {
        ServeLimits {
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            max_connections: 10_000,
        }
    }
}

/// Limits that cannot serve anyone.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitsError {
    #[error("--header-read-timeout must be above 0")]
    HeaderReadTimeout,
    #[error("--idle-timeout must be above 0")]
    IdleTimeout,
    #[error("--max-connections must be from 1 to {max}", max = MAX_CONNECTIONS)]
    MaxConnections,
}

/// The largest connection limit accepted (the semaphore's bound is far above any file limit).
pub const MAX_CONNECTIONS: usize = 1_000_000;

impl ServeLimits {
    /// Checks that every limit can serve a client.
    pub fn validate(self) -> Result<ServeLimits, LimitsError> {
        if self.header_read_timeout.is_zero() {
            return Err(LimitsError::HeaderReadTimeout);
        }
        if self.idle_timeout.is_zero() {
            return Err(LimitsError::IdleTimeout);
        }
        if !(1..=MAX_CONNECTIONS).contains(&self.max_connections) {
            return Err(LimitsError::MaxConnections);
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_zeros_are_refused() {
        let d = ServeLimits::default();
        assert_eq!(d.validate(), Ok(d));
        let zero = |f: fn(&mut ServeLimits)| {
            let mut l = d;
            f(&mut l);
            l.validate()
        };
        assert_eq!(
            zero(|l| l.header_read_timeout = Duration::ZERO),
            Err(LimitsError::HeaderReadTimeout)
        );
        assert_eq!(
            zero(|l| l.idle_timeout = Duration::ZERO),
            Err(LimitsError::IdleTimeout)
        );
        assert_eq!(
            zero(|l| l.max_connections = 0),
            Err(LimitsError::MaxConnections)
        );
        assert_eq!(
            zero(|l| l.max_connections = MAX_CONNECTIONS + 1),
            Err(LimitsError::MaxConnections)
        );
    }
}
