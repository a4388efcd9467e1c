//! The shipped `profiles/chaos/work-done-then-5xx.yaml` live on a real RabbitMQ with the
//! built-in `ack-after-work` target counts as in sim mode: the provider served over HTTP sends
//! msg-2's email and then answers 503, closes the connection unanswered, or never answers until
//! the client's timeout; each time the handler's retry sends it again, exactly one duplicate.

use crate::common::{counts, service_up, stderr, summary_of};
use crate::live_rabbitmq::{left_on_server, run_ackbench};
use crate::provider_faults::{profile, KEYS, VARIANTS};

/// RabbitMQ in both modes; the server's consumer_timeout (30 wall minutes) is 600m at the
/// profile's time_scale of 0.05.
const RABBITMQ: [&str; 4] = [
    "--set",
    "broker.kind=rabbitmq",
    "--set",
    "broker.consumer_timeout=600m",
];

/// The profile with `variant` on RabbitMQ, live (checked to leave nothing on the server) and
/// in sim mode: both runs' counts.
fn live_and_sim(variant: &[&str]) -> (Vec<u64>, Vec<u64>) {
    let out = tempfile::tempdir().unwrap();
    let path = profile();
    let path = path.to_str().unwrap();
    let run = |dir: &str, mode: &str| {
        let out = out.path().join(dir);
        let mut args = vec!["run", path, "--out", out.to_str().unwrap(), "--quiet"];
        args.extend_from_slice(&["--set", mode]);
        args.extend_from_slice(&RABBITMQ);
        args.extend_from_slice(variant);
        let (pid, o) = run_ackbench(&args);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{dir} {variant:?}: {}",
            stderr(&o)
        );
        (pid, counts(&summary_of(&out), &KEYS))
    };
    let (pid, live) = run("live", "mode=live");
    assert_eq!(
        left_on_server(pid),
        Vec::<String>::new(),
        "left on the server"
    );
    let (_, sim) = run("sim", "mode=sim");
    (live, sim)
}

#[test]
fn work_done_then_a_5xx_a_reset_or_a_hang_on_real_rabbitmq_counts_like_the_sim_model() {
    if !service_up("RabbitMQ", 5672) {
        return;
    }
    // As the profile's header derives each variant: 4 messages, 4 deliveries, 5 effects,
    // exactly 1 duplicate (msg-2's), nothing lost or dead-lettered, 1 retry in a handler.
    let expected = vec![4, 4, 5, 1, 0, 0, 1];
    for variant in VARIANTS {
        let (live, sim) = live_and_sim(variant);
        assert_eq!(
            (&sim, &live),
            (&expected, &expected),
            "{variant:?}: sim, live"
        );
    }
}
