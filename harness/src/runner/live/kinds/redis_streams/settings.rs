//! The server-wide settings a run on Redis Streams depends on, read when the run opens: an
//! eviction policy that may delete any key (`allkeys-*` with a `maxmemory`) may delete the run's
//! stream under memory pressure, which the profile's broker never does.

use redis::aio::MultiplexedConnection;

use crate::runner::live::kinds::OpenError;

/// Reads `maxmemory` and `maxmemory-policy` (CONFIG GET) and refuses a server that may evict
/// the run's stream. A server that does not answer CONFIG GET (a managed service) is taken as
/// it is.
pub async fn check(conn: &mut MultiplexedConnection) -> Result<(), OpenError> {
    let get = |name: &'static str| {
        let mut conn = conn.clone();
        async move {
            redis::cmd("CONFIG")
                .arg("GET")
                .arg(name)
                .query_async::<Vec<String>>(&mut conn)
                .await
                .ok()
                .and_then(|kv| kv.get(1).cloned())
        }
    };
    let (Some(maxmemory), Some(policy)) = (get("maxmemory").await, get("maxmemory-policy").await)
    else {
        return Ok(());
    };
    eviction(&maxmemory, &policy).map_err(OpenError::Settings)
}

/// The check itself: `allkeys-*` evicts keys without a TTL, the run's stream among them.
pub fn eviction(maxmemory: &str, policy: &str) -> Result<(), String> {
    if maxmemory != "0" && policy.starts_with("allkeys-") {
        return Err(format!(
            "the Redis server runs with maxmemory-policy {policy} (maxmemory {maxmemory}): it may \
             evict the run's stream, which the profile's broker never loses; set \
             maxmemory-policy noeviction (or a volatile-* policy) in redis.conf, or maxmemory 0"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_that_evicts_any_key_is_refused_only_with_a_memory_limit() {
        assert!(eviction("0", "allkeys-lru").is_ok());
        assert!(eviction("104857600", "noeviction").is_ok());
        assert!(eviction("104857600", "volatile-lru").is_ok());
        let e = eviction("104857600", "allkeys-lru").unwrap_err();
        assert!(e.contains("allkeys-lru") && e.contains("noeviction"), "{e}");
    }
}
