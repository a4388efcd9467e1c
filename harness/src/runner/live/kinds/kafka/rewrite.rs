//! A Kafka client connects to the brokers the cluster names, not to the address it was given:
//! Metadata answers list the brokers, FindCoordinator names the group's coordinator, and Fetch
//! answers (v16 on) may name a partition's new leader. The proxy writes its own listener's
//! address into each, so every connection of a worker comes back through its proxy port.
//! The run's broker is a single node (Tansu): every node it names is that node, behind the
//! worker's one upstream.

use std::net::SocketAddr;

use kafka_protocol::messages::ResponseKind;
use kafka_protocol::protocol::StrBytes;

/// Writes `addr` over every broker address in `body`: true when anything changed.
pub fn to_proxy(body: &mut ResponseKind, addr: SocketAddr) -> bool {
    let host = addr.ip().to_string();
    let port = i32::from(addr.port());
    let mut changed = false;
    let mut set = |h: &mut StrBytes, p: &mut i32| {
        if h.as_str() != host || *p != port {
            *h = StrBytes::from_string(host.clone());
            *p = port;
            changed = true;
        }
    };
    match body {
        ResponseKind::Metadata(m) => {
            for b in &mut m.brokers {
                set(&mut b.host, &mut b.port);
            }
        }
        ResponseKind::FindCoordinator(f) => {
            // Up to v3 one coordinator in the answer itself; from v4 one per group asked.
            if !f.host.is_empty() {
                set(&mut f.host, &mut f.port);
            }
            for c in &mut f.coordinators {
                if !c.host.is_empty() {
                    set(&mut c.host, &mut c.port);
                }
            }
        }
        ResponseKind::Fetch(f) => {
            for n in &mut f.node_endpoints {
                set(&mut n.host, &mut n.port);
            }
        }
        _ => {}
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::find_coordinator_response::Coordinator;
    use kafka_protocol::messages::metadata_response::MetadataResponseBroker;
    use kafka_protocol::messages::{BrokerId, FindCoordinatorResponse, MetadataResponse};

    fn proxy() -> SocketAddr {
        "127.0.0.1:41234".parse().unwrap()
    }

    #[test]
    fn metadata_names_the_proxy_for_every_broker() {
        let broker = |id: i32| {
            MetadataResponseBroker::default()
                .with_node_id(BrokerId(id))
                .with_host(StrBytes::from_static_str("localhost"))
                .with_port(9092)
        };
        let mut body = ResponseKind::Metadata(
            MetadataResponse::default().with_brokers(vec![broker(111), broker(112)]),
        );
        assert!(to_proxy(&mut body, proxy()));
        let ResponseKind::Metadata(m) = &body else {
            unreachable!()
        };
        for b in &m.brokers {
            assert_eq!((b.host.as_str(), b.port), ("127.0.0.1", 41234));
        }
        // Written once, it is already the proxy's: nothing changes the second time.
        assert!(!to_proxy(&mut body, proxy()));
    }

    #[test]
    fn find_coordinator_names_the_proxy_in_either_version_s_place() {
        let mut old = ResponseKind::FindCoordinator(
            FindCoordinatorResponse::default()
                .with_host(StrBytes::from_static_str("127.0.0.1"))
                .with_port(9092),
        );
        assert!(to_proxy(&mut old, proxy()));
        let mut new = ResponseKind::FindCoordinator(
            FindCoordinatorResponse::default().with_coordinators(vec![Coordinator::default()
                .with_key(StrBytes::from_static_str("g"))
                .with_host(StrBytes::from_static_str("127.0.0.1"))
                .with_port(9092)]),
        );
        assert!(to_proxy(&mut new, proxy()));
        let (ResponseKind::FindCoordinator(o), ResponseKind::FindCoordinator(n)) = (&old, &new)
        else {
            unreachable!()
        };
        assert_eq!((o.host.as_str(), o.port), ("127.0.0.1", 41234));
        let c = &n.coordinators[0];
        assert_eq!((c.host.as_str(), c.port), ("127.0.0.1", 41234));
        // v4's answer leaves the top-level host empty: it stays empty.
        assert!(n.host.is_empty());
    }
}
