//! RabbitMQ 3.x's `consumer_timeout` is a server-wide setting (no per-queue argument before
//! 3.12): the run reads it from the server and refuses to start when it contradicts the
//! profile's `consumer_timeout` (scaled by `run.time_scale` to wall time), saying which value
//! the server has and how to change it.
//!
//! The value is read with `rabbitmqctl eval 'application:get_env(rabbit, consumer_timeout).'`
//! (the AMQP handshake and the management API do not expose it), which reaches the node named
//! by `RABBITMQ_NODENAME` (default: the local node).

use std::time::Duration;

/// What `application:get_env(rabbit, consumer_timeout)` answered, in wall milliseconds
/// (`None`: the server has no consumer timeout).
pub fn parse_get_env(output: &str) -> Result<Option<u64>, String> {
    let text: String = output.split_whitespace().collect();
    if text.ends_with("undefined") || text.contains("{ok,false}") {
        return Ok(None);
    }
    let inner = text
        .rsplit("{ok,")
        .next()
        .filter(|_| text.contains("{ok,"))
        .and_then(|rest| rest.strip_suffix('}'))
        .ok_or_else(|| format!("unexpected answer `{}`", output.trim()))?;
    inner
        .parse()
        .map(Some)
        .map_err(|_| format!("unexpected answer `{}`", output.trim()))
}

/// Reads the server's `consumer_timeout` with rabbitmqctl.
pub async fn server_consumer_timeout() -> Result<Option<u64>, String> {
    let out = tokio::process::Command::new("rabbitmqctl")
        .args(["eval", "application:get_env(rabbit, consumer_timeout)."])
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(30), out)
        .await
        .map_err(|_| "rabbitmqctl did not answer within 30 s".to_string())?
        .map_err(|e| format!("cannot run rabbitmqctl: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "rabbitmqctl failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    parse_get_env(&String::from_utf8_lossy(&out.stdout))
}

/// The server's consumer timeout against the profile's (in profile time, run at `scale` wall
/// seconds per profile second): `Err` is the exit-2 message.
pub fn check(
    server_ms: Option<u64>,
    profile: Duration,
    scale: f64,
    url: &str,
) -> Result<(), String> {
    let wanted = (profile.as_secs_f64() * scale * 1000.0).round() as u64;
    if server_ms == Some(wanted) {
        return Ok(());
    }
    let has = match server_ms {
        Some(ms) => format!(
            "consumer_timeout = {ms} ms of wall time ({} in profile time at time_scale {scale})",
            profile_time(ms, scale)
        ),
        None => "no consumer_timeout".to_string(),
    };
    let fit = server_ms.map_or(String::new(), |ms| {
        format!(
            "set broker.consumer_timeout: {} in the profile, or ",
            profile_time(ms, scale)
        )
    });
    Err(format!(
        "broker.consumer_timeout is {} ({wanted} ms of wall time at time_scale {scale}), but the \
         RabbitMQ server at {url} runs with {has}; RabbitMQ 3.x sets it for the whole server, not \
         per queue: {fit}change the server's (`consumer_timeout = {wanted}` in rabbitmq.conf, or \
         at run time `rabbitmqctl eval 'application:set_env(rabbit, consumer_timeout, {wanted}).'`)",
        millis_text(profile.as_millis() as u64),
    ))
}

/// `ms` wall milliseconds as profile time at `scale`.
fn profile_time(ms: u64, scale: f64) -> String {
    millis_text((ms as f64 / scale).round() as u64)
}

fn millis_text(ms: u64) -> String {
    if ms.is_multiple_of(60_000) {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_get_env_answer_is_read() {
        assert_eq!(parse_get_env("{ok,1800000}\n"), Ok(Some(1_800_000)));
        assert_eq!(parse_get_env("undefined\n"), Ok(None));
        assert!(parse_get_env("Error: nodedown").is_err());
    }

    #[test]
    fn a_matching_timeout_passes_and_another_names_both_values() {
        // 600 profile minutes at 0.05 wall s per profile s = 30 wall minutes = 1 800 000 ms.
        assert!(check(
            Some(1_800_000),
            Duration::from_secs(36_000),
            0.05,
            "amqp://x"
        )
        .is_ok());
        // 30 profile minutes at 0.05 = 90 000 ms; the server's 1 800 000 ms is 600m of profile.
        let e = check(Some(1_800_000), Duration::from_secs(1800), 0.05, "amqp://x").unwrap_err();
        assert!(e.contains("consumer_timeout = 1800000 ms"), "{e}");
        assert!(e.contains("broker.consumer_timeout: 600m"), "{e}");
        assert!(e.contains("consumer_timeout = 90000"), "{e}");
        assert!(
            e.contains("application:set_env(rabbit, consumer_timeout, 90000)"),
            "{e}"
        );
        let e = check(None, Duration::from_secs(1800), 1.0, "amqp://x").unwrap_err();
        assert!(e.contains("no consumer_timeout"), "{e}");
    }
}
