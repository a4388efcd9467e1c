//! The `--listen` address of `ackbench broker` and `ackbench provider`: an address
//! (`127.0.0.1:9324`, `[::1]:9324`, `0.0.0.0:9324`), or a host name with a port
//! (`localhost:9324`), which must resolve to a loopback address: a name never opens a server to
//! the network, only an address given explicitly does.

use std::net::{SocketAddr, ToSocketAddrs};

/// Parses `--listen`: an address as given, or a name resolved to its loopback address (IPv4
/// first).
pub fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = s.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let Some((host, port)) = s.rsplit_once(':') else {
        return Err("expected HOST:PORT or ADDRESS:PORT, e.g. localhost:9324".to_string());
    };
    let port: u16 = port
        .parse()
        .map_err(|_| format!("port `{port}` is not a number from 0 to 65535"))?;
    if host.is_empty() {
        return Err("expected HOST:PORT or ADDRESS:PORT, e.g. localhost:9324".to_string());
    }
    let resolved: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve `{host}`: {e}"))?
        .collect();
    let loopback = |v4: bool| {
        resolved
            .iter()
            .find(|a| a.ip().is_loopback() && a.is_ipv4() == v4)
            .copied()
    };
    match loopback(true).or_else(|| loopback(false)) {
        Some(addr) => Ok(addr),
        None => Err(format!(
            "`{host}` resolves to {}, not a loopback address; give the address itself (e.g. {}) to listen on it",
            resolved
                .iter()
                .map(|a| a.ip().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            resolved.first().map_or("0.0.0.0:PORT".to_string(), |a| a.to_string()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_taken_as_given_and_localhost_resolves_to_loopback() {
        assert_eq!(
            parse_listen("127.0.0.1:9324"),
            Ok("127.0.0.1:9324".parse().unwrap())
        );
        assert_eq!(
            parse_listen("0.0.0.0:80"),
            Ok("0.0.0.0:80".parse().unwrap())
        );
        assert_eq!(parse_listen("[::1]:80"), Ok("[::1]:80".parse().unwrap()));
        let local = parse_listen("localhost:9324").expect("localhost resolves");
        assert!(local.ip().is_loopback() && local.port() == 9324, "{local}");
    }

    #[test]
    fn malformed_listen_values_say_what_is_expected() {
        assert!(parse_listen("localhost").unwrap_err().contains("HOST:PORT"));
        assert!(parse_listen(":80").unwrap_err().contains("HOST:PORT"));
        assert!(parse_listen("localhost:http")
            .unwrap_err()
            .contains("port `http`"));
        assert!(parse_listen("localhost:70000")
            .unwrap_err()
            .contains("0 to 65535"));
        let e = parse_listen("no-such-host.invalid:80").unwrap_err();
        assert!(e.contains("cannot resolve `no-such-host.invalid`"), "{e}");
    }
}
