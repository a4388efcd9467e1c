//! `broker.observe`: `proxy` by default; `none` (workers straight to the broker) only in live
//! mode, on a real broker, without chaos.

use super::testutil::{error, scenario, BASE};
use super::Observe;

fn live(broker: &str, more: &str) -> String {
    format!("{BASE}mode: live\nbroker: {broker}\n{more}")
}

#[test]
fn observe_is_the_proxy_unless_the_profile_says_none() {
    assert_eq!(scenario(BASE).broker.observe, Observe::Proxy);
    let s = scenario(&live("{ kind: nats, observe: none }", ""));
    assert_eq!(s.broker.observe, Observe::Direct);
    let s = scenario(&live(
        "{ kind: sqs, endpoint: \"http://127.0.0.1:5000\", visibility_timeout: 20s, observe: none }",
        "",
    ));
    assert_eq!(s.broker.observe, Observe::Direct);
    let s = scenario(&live("{ kind: rabbitmq, observe: proxy }", ""));
    assert_eq!(s.broker.observe, Observe::Proxy);
}

#[test]
fn observe_none_needs_live_mode_a_real_broker_and_no_chaos() {
    let sim = live("{ kind: redis-streams, observe: none }", "").replace("mode: live\n", "");
    assert!(
        error(&sim).contains("broker.observe: observe: none is for live runs"),
        "{}",
        error(&sim)
    );
    let embedded = live("{ kind: sqs, observe: none }", "");
    assert!(
        error(&embedded).contains("observe: none needs a real broker"),
        "{}",
        error(&embedded)
    );
    let chaos = live(
        "{ kind: nats, observe: none }",
        "chaos:\n  - kill_worker: { point: call_answered }\n",
    );
    assert!(
        error(&chaos).contains("observe: none runs without chaos rules"),
        "{}",
        error(&chaos)
    );
    assert!(error(&live("{ kind: nats, observe: maybe }", "")).contains("observe"));
}
