//! `ackbench check` on broken profiles: exit code 2, and a message on stderr that names the place
//! (`file:line:column`, or the `--set` argument), the field and what is allowed.

use crate::common::{ackbench, stderr, stdout, temp_profile};

/// A valid profile of five lines; cases append sections after it, from line 6.
pub const BASE: &str = "\
name: e2e
run: { duration: 10m }
workload:
  arrival: { every: 50s }
consumer: { target: ack-after-work }
";

/// Runs `ackbench check` on `text` with `sets`; asserts exit code 2 and that stderr has
/// `expected`, where `{path}` stands for the profile's path.
pub fn expect_error(text: &str, sets: &[&str], expected: &str) {
    let (_dir, path) = temp_profile(text);
    let path = path.display().to_string();
    let mut args = vec!["check", path.as_str()];
    for s in sets {
        args.extend(["--set", s]);
    }
    let out = ackbench(&args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    let expected = expected.replace("{path}", &path);
    assert!(
        err.contains(&expected),
        "stderr lacks\n  {expected}\nit is\n  {err}"
    );
}

pub fn with(more: &str) -> String {
    format!("{BASE}{more}")
}

#[test]
fn a_valid_profile_checks_ok() {
    let (_dir, path) = temp_profile(BASE);
    let out = ackbench(&["check", &path.display().to_string()]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert!(stdout(&out).starts_with("ok: e2e"), "{}", stdout(&out));
}

#[test]
fn a_missing_file_names_the_path_and_the_os_error() {
    let out = ackbench(&["check", "/nonexistent/ackbench/profile.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(
            "/nonexistent/ackbench/profile.yaml: cannot read the profile: No such file or directory"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn text_that_is_not_yaml_is_placed() {
    expect_error(
        "run:\n  duration: 10m\n   drain: 5m\n",
        &[],
        "{path}:3:9: not valid YAML: mapping values are not allowed",
    );
}

#[test]
fn an_unknown_key_lists_the_allowed_keys() {
    expect_error(
        &with("broker:\n  visibilty_timeout: 30s\n"),
        &[],
        "{path}:7:3: broker.visibilty_timeout: unknown key `visibilty_timeout` for broker kind \
         sqs; the keys of sqs are: kind, endpoint, visibility_timeout, max_receives, stale_ack, \
         fifo, dedup_window, observe, queue\n",
    );
    // The kind the profile names: its keys only, all of them (a key of another kind is named
    // as such).
    expect_error(
        &with("broker:\n  kind: kafka\n  max_poll_record: 5\n"),
        &[],
        "{path}:8:3: broker.max_poll_record: unknown key `max_poll_record` for broker kind kafka; \
         the keys of kafka are: kind, url, partitions, max_poll_interval, session_timeout, \
         heartbeat_interval, max_poll_records, enable_auto_commit, auto_commit_interval, \
         assignment, static_membership, observe, queue\n",
    );
    expect_error(
        &with("broker:\n  kind: rabbitmq\n  reuse_queue: true\n"),
        &[],
        "the keys of rabbitmq are: kind, url, queue_type, consumer_timeout, timeout_check_every, \
         delivery_limit, prefetch, dead_letter, heartbeat, arguments, observe, queue, reuse\n",
    );
}

#[test]
fn an_unknown_budget_lists_the_valid_budget_names() {
    expect_error(
        &with("budgets:\n  duplicate_rat: 0\n"),
        &[],
        "{path}:7:3: budgets.duplicate_rat: unknown field `duplicate_rat`, expected one of \
         `duplicate_rate`, `duplicate_effects`, `lost`, `late`, `dlq`, `dlq_with_effect`, \
         `p99_over_visibility`, `p999_handler_latency`, `max_oldest_age`, \
         `worker_busy_fraction`, `overlapping_executions`, `rejected`, `ingress_lost`, \
         `unfinished`",
    );
}

#[test]
fn a_wrong_type_is_placed_at_the_value() {
    expect_error(
        &with("broker:\n  max_receives: three\n"),
        &[],
        "{path}:7:17: broker.max_receives: invalid type: string \"three\", expected a whole number from 0 to 4294967295",
    );
}

#[test]
fn a_duration_needs_a_unit() {
    expect_error(
        &with("broker:\n  visibility_timeout: 30\n"),
        &[],
        "{path}:7:23: broker.visibility_timeout: a duration needs a unit: 250ms, 30s, 90m, 1h30m",
    );
}

#[test]
fn run_duration_is_required_and_positive() {
    expect_error(
        "run: { drain: 1m }\nworkload: { arrival: { every: 1s } }\nconsumer: { target: ack-after-work }\n",
        &[],
        "{path}:1:1: run.duration: required: how long the workload publishes",
    );
    expect_error(
        &BASE.replace("duration: 10m", "duration: 0s"),
        &[],
        "{path}:2:18: run.duration: must be more than 0s, got 0s",
    );
}

#[test]
fn a_visibility_timeout_over_12h_is_refused() {
    expect_error(
        &with("broker:\n  visibility_timeout: 13h\n"),
        &[],
        "{path}:7:23: broker.visibility_timeout: must be at most 12h (SQS's maximum), got 13h",
    );
}

#[test]
fn zero_workers_is_refused() {
    expect_error(
        &BASE.replace(
            "target: ack-after-work",
            "target: ack-after-work, workers: 0",
        ),
        &[],
        "{path}:5:46: consumer.workers: must be at least 1, got 0",
    );
}

#[test]
fn an_unknown_target_lists_the_built_in_targets() {
    expect_error(
        &BASE.replace("ack-after-work", "ack-sometimes"),
        &[],
        "{path}:5:21: consumer.target: unknown target `ack-sometimes`; built-in targets: \
         ack-after-work, ack-before-work",
    );
}

#[test]
fn an_option_the_target_does_not_take_lists_the_ones_it_does() {
    expect_error(
        &BASE.replace(
            "target: ack-after-work",
            "target: ack-after-work, options: { windw: 2m }",
        ),
        &[],
        "{path}:5:48: consumer.options.windw: target ack-after-work has no option `windw`; it \
         accepts on_poison, http_timeout, retry",
    );
}

#[test]
fn a_phase_must_end_after_it_starts() {
    expect_error(
        &with("provider:\n  phases:\n    - from: 30m\n      to: 10m\n      errors: { status: 503, rate: 1 }\n"),
        &[],
        "{path}:9:11: provider.phases.0.to: must be after from (30m), got 10m",
    );
}

#[test]
fn lognormal_p99_must_be_at_least_the_median() {
    expect_error(
        &with("provider:\n  latency: { dist: lognormal, median: 1s, p99: 100ms }\n"),
        &[],
        "{path}:7:48: provider.latency.p99: must be at least median (1s), got 100ms",
    );
}

#[test]
fn mix_weights_must_add_up_to_more_than_zero() {
    expect_error(
        &with("provider:\n  latency:\n    dist: mix\n    parts:\n      - { weight: 0, dist: fixed, value: 1s }\n"),
        &[],
        "{path}:9:5: provider.latency.parts: the weights must add up to a positive finite number, got 0",
    );
}

#[test]
fn per_message_values_must_not_be_empty() {
    expect_error(
        &with("provider:\n  latency: { dist: per_message, values: [] }\n"),
        &[],
        "{path}:7:33: provider.latency.values: must not be empty",
    );
}

#[test]
fn a_probability_is_between_0_and_1() {
    expect_error(
        &with("chaos:\n  - kill_worker: { point: call_started, probability: 5 }\n"),
        &[],
        "{path}:7:54: chaos.0.kill_worker.probability: must be between 0 and 1, got 5",
    );
}

#[test]
fn an_error_status_is_400_to_599() {
    expect_error(
        &with("provider:\n  phases:\n    - { from: 0s, to: 1m, errors: { status: 200, rate: 0.5 } }\n"),
        &[],
        "{path}:8:45: provider.phases.0.errors.status: must be an HTTP error status, 400 to 599, got 200",
    );
}

#[test]
fn workload_keys_must_be_unique() {
    expect_error(
        &BASE.replace(
            "  arrival: { every: 50s }\n",
            "  arrival: { every: 50s }\n  keys: [a, b, a]\n",
        ),
        &[],
        "{path}:5:16: workload.keys.2: duplicate key `a` (also workload.keys.0)",
    );
}

#[test]
fn poison_keys_must_be_among_the_keys() {
    expect_error(
        &BASE.replace(
            "  arrival: { every: 50s }\n",
            "  arrival: { every: 50s }\n  keys: [a, b]\n  poison: { keys: [c] }\n",
        ),
        &[],
        "{path}:6:20: workload.poison.keys.0: `c` is not one of workload.keys (a, b)",
    );
}

#[test]
fn an_override_error_names_the_override() {
    expect_error(
        BASE,
        &["broker.visibility_timeout=13h"],
        "error: --set broker.visibility_timeout=13h: broker.visibility_timeout: must be at most 12h \
         (SQS's maximum), got 13h",
    );
}

#[test]
fn an_override_of_a_field_the_schema_lacks_is_named() {
    expect_error(
        BASE,
        &["budgets.dlqq=1"],
        "error: --set budgets.dlqq=1: budgets.dlqq: unknown field `dlqq`, expected one of \
         `duplicate_rate`",
    );
}

#[test]
fn an_override_without_equals_sign_is_refused() {
    expect_error(
        BASE,
        &["broker.visibility_timeout"],
        "error: --set broker.visibility_timeout: expected PATH=VALUE, e.g. --set \
         broker.visibility_timeout=90s",
    );
}

#[test]
fn an_override_can_fix_a_profile() {
    let (_dir, path) = temp_profile(&with("broker:\n  visibility_timeout: 13h\n"));
    let path = path.display().to_string();
    let out = ackbench(&["check", &path, "--set", "broker.visibility_timeout=1h"]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
}

#[test]
fn sim_mode_refuses_a_consumer_command() {
    let command = BASE.replace(
        "consumer: { target: ack-after-work }",
        "consumer: { command: [python3, consumer.py] }",
    );
    expect_error(
        &command,
        &[],
        "consumer.command: a consumer command runs only in live mode (mode: live)",
    );
    expect_error(
        &command.replace("name: e2e", "name: e2e\nmode: live"),
        &["consumer.target=ack-after-work"],
        "consumer.command: give either target (a built-in consumer) or command (your own program), not both",
    );
}

#[test]
fn live_settings_are_checked() {
    expect_error(
        BASE,
        &["run.time_scale=0"],
        "--set run.time_scale=0: run.time_scale: wall seconds per profile second: from 0.001 to 1",
    );
    expect_error(
        &with("provider: { key: body }\n"),
        &[],
        "provider.key: body: expected pointer:/json/pointer, header:Header-Name, segment:N or \
         form:field, optionally followed by |steps",
    );
    expect_error(
        &with(""),
        &["consumer.env={A: b}"],
        "consumer.env: env is the environment of a consumer command: give consumer.command too",
    );
}

#[test]
fn consumer_clock_is_scaled_or_real_and_only_for_a_command() {
    let live = BASE.replace(
        "consumer: { target: ack-after-work }",
        "mode: live\nconsumer: { command: [python3, consumer.py] }",
    );
    expect_error(
        &live,
        &["consumer.clock=fast"],
        "--set consumer.clock=fast: consumer.clock: unknown variant `fast`, expected `scaled` or `real`",
    );
    expect_error(
        &live,
        &["consumer.clock=[scaled]"],
        "consumer.clock: invalid type: sequence, expected",
    );
    expect_error(
        &with(""),
        &["consumer.clock=scaled"],
        "consumer.clock: clock is the clock of a consumer command's processes (a built-in target \
         runs on the run's own clock): give consumer.command too",
    );
    // Only a broker side that reads a scaled consumer's wire durations in profile time takes one.
    expect_error(
        &live,
        &[
            "consumer.clock=scaled",
            "broker.endpoint=http://127.0.0.1:5000",
        ],
        "consumer.clock: a scaled consumer clock is not available here: an external SQS endpoint \
         takes its durations in whole seconds, which ackbench cannot convert between profile and \
         wall time exactly; set consumer.clock: real",
    );
    // Redis Streams converts them in ackbench's RESP proxy, so not without it.
    let redis = live.replace(
        "mode: live\n",
        "mode: live\nbroker: { kind: redis-streams, min_idle: 30s, observe: none }\n",
    );
    expect_error(
        &redis,
        &["consumer.clock=scaled"],
        "consumer.clock: a scaled consumer clock is not available here: with broker.observe: none \
         the workers reach the Redis server directly, and only ackbench's RESP proxy converts the \
         durations a consumer sends; set consumer.clock: real",
    );
    let (_dir, path) = temp_profile(&redis.replace(", observe: none", ""));
    let out = ackbench(&[
        "check",
        &path.display().to_string(),
        "--set",
        "consumer.clock=scaled",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "through the proxy: {}",
        stderr(&out)
    );
}

#[test]
fn a_scaled_consumer_clock_on_rabbitmq_needs_the_amqp_proxy() {
    let live = BASE.replace(
        "consumer: { target: ack-after-work }",
        "mode: live\nconsumer: { command: [python3, consumer.py] }",
    );
    // Through ackbench's AMQP proxy (the default) the profile checks; straight to the server
    // (observe: none) the consumer's durations cannot be converted.
    let (_dir, path) = temp_profile(&live);
    let out = ackbench(&[
        "check",
        &path.display().to_string(),
        "--set",
        "broker.kind=rabbitmq",
        "--set",
        "consumer.clock=scaled",
    ]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    expect_error(
        &live,
        &[
            "broker.kind=rabbitmq",
            "broker.observe=none",
            "consumer.clock=scaled",
        ],
        "consumer.clock: a scaled consumer clock is not available here: with broker.observe: \
         none the workers reach RabbitMQ directly, and only ackbench's AMQP proxy converts the \
         durations a consumer sends (its heartbeat, TTLs); set consumer.clock: real",
    );
}

#[test]
fn a_scaled_consumer_clock_on_nats_needs_the_proxy() {
    let live = BASE.replace(
        "consumer: { target: ack-after-work }",
        "mode: live\nconsumer: { command: [python3, consumer.py], clock: scaled }",
    );
    // Through the proxy (the default) the profile is accepted; straight to the server it is not.
    let (_dir, path) = temp_profile(&format!("{live}broker: {{ kind: nats }}\n"));
    let out = ackbench(&["check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    expect_error(
        &format!("{live}broker: {{ kind: nats, observe: none }}\n"),
        &[],
        "consumer.clock: a scaled consumer clock is not available here: with broker.observe: \
         none the workers reach the NATS server directly, and only ackbench's proxy converts the \
         durations a consumer sends (pull expiries, NAK delays, AckWait) between profile and \
         wall time; set consumer.clock: real",
    );
}

/// A live profile with an ingress section `ingress` (from line 6).
fn with_ingress(ingress: &str) -> String {
    format!(
        "name: e2e\nmode: live\nrun: {{ duration: 10m }}\nworkload:\n  count: 5\n  ingress:\n{ingress}\
         consumer: {{ target: ack-after-work }}\n"
    )
}

#[test]
fn ingress_mistakes_are_placed_and_explained() {
    let ok = "    command: [python3, ingress.py]\n    url: \"http://127.0.0.1:{port}/orders\"\n    rate_per_s: 1\n";
    let cases = [
        (
            with_ingress(ok).replace("mode: live", "mode: sim"),
            "{path}:6:3: workload.ingress: an ingress load drives a real HTTP service, so it runs \
             only in live mode (mode: live)",
        ),
        (
            with_ingress(&ok.replace("127.0.0.1", "example.com")),
            "{path}:8:10: workload.ingress.url: must point at this machine (127.0.0.1, ::1 or \
             localhost): ackbench sends load only over loopback",
        ),
        (
            with_ingress(&format!(
                "{ok}    body: \"{{\\\"id\\\": \\\"{{kye}}\\\"}}\"\n"
            )),
            "workload.ingress.body: unknown placeholder {kye}: the placeholders are {key}, {seq}, \
             {body}",
        ),
        (
            with_ingress(&ok.replace("    command: [python3, ingress.py]\n", "")),
            "workload.ingress.command: required: the ingress service ackbench starts",
        ),
        (
            with_ingress(&format!("{ok}    users: -2\n")),
            "workload.ingress.users: invalid value: integer `-2`, expected a whole number from 0 to 4294967295",
        ),
    ];
    for (text, expected) in cases {
        expect_error(&text, &[], expected);
    }
    // The same through --set.
    expect_error(
        &with_ingress(ok),
        &["workload.ingress.rate_per_s=0"],
        "--set workload.ingress.rate_per_s=0: workload.ingress.rate_per_s: must be a positive \
         number of requests per second, got 0",
    );
}

#[test]
fn a_sample_interval_past_the_cap_is_refused_with_the_count_and_the_cap() {
    // 10m + the default 30m drain at 1ns: 2.4e12 intervals, 2400000000001 samples.
    expect_error(
        &BASE.replace("duration: 10m", "duration: 10m, sample_every: 1ns"),
        &[],
        "{path}:2:37: run.sample_every: 1ns gives 2400000000001 samples over run.duration + \
         run.drain (40m), more than the 100000 a run keeps: sample every 24ms or more",
    );
}

#[test]
fn a_time_scale_below_a_thousandth_is_refused() {
    expect_error(
        BASE,
        &["run.time_scale=1e-300"],
        "--set run.time_scale=1e-300: run.time_scale: wall seconds per profile second: from \
         0.001 to 1",
    );
}

#[test]
fn a_run_too_big_to_hold_is_refused_with_the_estimate_and_the_limit() {
    // One message per 10 ns for 10 minutes: 6e10 messages (the count of 1e11 is never
    // reached), plus 1e8 workers, in a sim run that streams its accounting (16 B a message):
    // 6e10 x 16 B + 1e8 x 1536 B + 1000 x 400 B = 1,113,600,400,000 B = 1037.1 GiB, 1.0 TiB.
    expect_error(
        BASE,
        &[
            "workload.count=100000000000",
            "workload.arrival={every: 10ns}",
            "consumer.workers=100000000",
        ],
        "--set workload.arrival={every: 10ns}: workload.arrival: a run of this profile would \
         hold about 1.0 TiB in memory (60000000000 planned messages x 16 B + 100000000 \
         workers x 1536 B + 1000 samples x 400 B), more than the 16.0 GiB a run may hold",
    );
    expect_error(
        BASE,
        &["consumer.workers=100000000"],
        "--set consumer.workers=100000000: consumer.workers: a run of this profile would hold \
         about 143.1 GiB in memory",
    );
}

#[test]
fn deep_nesting_is_refused_at_once() {
    let deep = format!(
        "{BASE}budgets: {}{}\n",
        "[".repeat(20_000),
        "]".repeat(20_000)
    );
    let started = std::time::Instant::now();
    // `budgets:` (line 6) is level 1; the 64th `[`, at column 10 + 63, is level 65.
    expect_error(
        &deep,
        &[],
        "{path}:6:73: not valid YAML: nested more than 64 levels deep",
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_repeated_key_is_placed_at_its_own_line() {
    expect_error(
        &with("run: { duration: 5m }\n"),
        &[],
        "{path}:6:1: not valid YAML: duplicate entry with key \"run\"",
    );
}

#[test]
fn a_long_key_list_is_checked_quickly() {
    // 80,000 keys, the last repeating the first: found in one pass.
    let mut keys: String = (0..80_000).map(|i| format!("k{i},")).collect();
    keys.push_str("k0");
    let text = BASE.replace(
        "  arrival: { every: 50s }\n",
        &format!("  arrival: {{ every: 50s }}\n  keys: [{keys}]\n"),
    );
    let started = std::time::Instant::now();
    expect_error(
        &text,
        &[],
        "workload.keys.80000: duplicate key `k0` (also workload.keys.0)",
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_name_from_a_file_name_that_cannot_name_a_folder_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("...yaml");
    std::fs::write(&path, BASE.replace("name: e2e\n", "")).expect("write profile");
    let path = path.display().to_string();
    let out = ackbench(&["check", &path]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "{path}:1:1: name: the profile has no name, so it is named after its file, and the \
             file's name gives \"..\", which cannot name the report folder"
        )),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_deeply_nested_override_value_is_refused() {
    let value = format!("{}{}", "[".repeat(5_000), "]".repeat(5_000));
    let out = ackbench(&[
        "check",
        "profiles/healthy.yaml",
        "--set",
        &format!("run.drain={value}"),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the value is nested more than 64 levels deep"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_name_too_long_for_a_folder_is_refused() {
    expect_error(
        &BASE.replace("name: e2e", &format!("name: {}", "n".repeat(101))),
        &[],
        "{path}:1:7: name: must be one plain folder name: no /, \\ or control characters, not \
         empty, . or .., at most 100 bytes (it names the report folder)",
    );
}

/// A profile whose workload has `producer: <producer>` on line 6.
fn with_producer(producer: &str) -> String {
    format!(
        "name: e2e\nrun: {{ duration: 10m }}\nworkload:\n  arrival: {{ every: 50s }}\n  count: 3\n  \
         producer: {producer}\nconsumer: {{ target: ack-after-work }}\n"
    )
}

#[test]
fn a_dedup_window_needs_a_fifo_queue() {
    expect_error(
        &with("broker: { kind: sqs, dedup_window: 5m }\n"),
        &[],
        "{path}:6:22: broker.dedup_window: a deduplication window belongs to a FIFO queue: set \
         fifo: true (a standard queue deduplicates nothing)",
    );
    expect_error(
        &with("broker: { kind: sqs, fifo: false, dedup_window: 5m }\n"),
        &[],
        "broker.dedup_window: a deduplication window belongs to a FIFO queue",
    );
}

#[test]
fn fifo_and_dedup_window_are_sqs_keys_only() {
    expect_error(
        &with("broker: { kind: nats, dedup_window: 2m }\n"),
        &[],
        "{path}:6:23: broker.dedup_window: `dedup_window` is a key of broker kind sqs, not of \
         nats; the keys of nats are: kind, url, ack_wait, max_deliver, backoff, max_ack_pending",
    );
    expect_error(
        &with("broker: { kind: rabbitmq, fifo: true }\n"),
        &[],
        "broker.fifo: `fifo` is a key of broker kind sqs, not of rabbitmq",
    );
}

#[test]
fn a_dedup_window_must_be_positive() {
    expect_error(
        &with("broker: { fifo: true, dedup_window: 0s }\n"),
        &[],
        "{path}:6:37: broker.dedup_window: must be more than 0s, got 0s",
    );
    expect_error(
        &with("broker: { fifo: true, dedup_window: -5m }\n"),
        &[],
        "broker.dedup_window",
    );
}

#[test]
fn a_fifo_queue_runs_live_on_the_embedded_broker_only() {
    // The embedded SQS broker takes it, with a retrying producer and message groups.
    let (_dir, path) = temp_profile(&with(
        "mode: live\nbroker: { fifo: true, dedup_window: 5m }\n",
    ));
    let out = ackbench(&["check", &path.display().to_string()]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let (_dir, path) = temp_profile(&format!(
        "mode: live\nbroker: {{ fifo: true }}\n{}",
        with_producer("{ first_attempts: 3, backoff: [1m, 2m, 4m] }")
    ));
    let out = ackbench(&["check", &path.display().to_string()]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    // An external endpoint deduplicates for its own 5 minutes of wall time.
    expect_error(
        &with("mode: live\nbroker: { endpoint: \"http://127.0.0.1:5000\", fifo: true }\n"),
        &[],
        "{path}:7:52: broker.fifo: a FIFO queue runs live on the embedded SQS broker only (leave \
         broker.endpoint out): an external SQS endpoint deduplicates for its own fixed 5 minutes \
         of wall time, which neither broker.dedup_window nor run.time_scale changes",
    );
    // In sim mode an endpoint is only named: the model deduplicates.
    let (_dir, path) = temp_profile(&with(
        "broker: { endpoint: \"http://127.0.0.1:5000\", fifo: true }\n",
    ));
    let out = ackbench(&["check", &path.display().to_string()]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    // An ingress service's sends are its own.
    let ok = "    command: [python3, ingress.py]\n    url: \"http://127.0.0.1:{port}/orders\"\n    rate_per_s: 1\n";
    expect_error(
        &format!("{}broker: {{ fifo: true }}\n", with_ingress(ok)),
        &[],
        "broker.fifo: a FIFO queue runs live with ackbench's own producer only (leave \
         workload.ingress out): an ingress service's sends carry its own message groups and \
         deduplication ids",
    );
}

#[test]
fn a_producer_probability_is_between_0_and_1() {
    expect_error(
        &with_producer("{ probability: 1.5, backoff: [1m] }"),
        &[],
        "{path}:6:28: workload.producer.probability: must be between 0 and 1, got 1.5",
    );
    expect_error(
        &with_producer("{ probability: -0.1, backoff: [1m] }"),
        &[],
        "workload.producer.probability: must be between 0 and 1, got -0.1",
    );
}

#[test]
fn a_producer_says_which_sends_go_unacknowledged_once() {
    expect_error(
        &with_producer("{ backoff: [1m] }"),
        &[],
        "{path}:6:3: workload.producer: give one of probability, first_attempts, as in \
         { first_attempts: 3 } or { probability: 0.05 } (which sends get no answer)",
    );
    expect_error(
        &with_producer("{ probability: 0.5, first_attempts: 2, backoff: [1m] }"),
        &[],
        "workload.producer: give only one of probability, first_attempts, got probability and \
         first_attempts",
    );
    expect_error(
        &with_producer("{ first_attempts: 0, backoff: [1m] }"),
        &[],
        "workload.producer.first_attempts: must be at least 1, got 0 (leave workload.producer out \
         for a producer whose every send is acknowledged)",
    );
}

#[test]
fn a_producer_backoff_is_a_list_of_positive_delays_or_a_retry() {
    expect_error(
        &with_producer("{ first_attempts: 3 }"),
        &[],
        "workload.producer: give one of backoff, retry, as in { backoff: [1m, 2m, 4m] }",
    );
    expect_error(
        &with_producer("{ first_attempts: 3, backoff: [] }"),
        &[],
        "workload.producer.backoff: must not be empty: the delay before each retry",
    );
    expect_error(
        &with_producer("{ first_attempts: 3, backoff: [1m, 0s] }"),
        &[],
        "{path}:6:48: workload.producer.backoff.1: must be more than 0s, got 0s",
    );
    expect_error(
        &with_producer("{ first_attempts: 3, backoff: [-1m] }"),
        &[],
        "workload.producer.backoff.0",
    );
    expect_error(
        &with_producer("{ first_attempts: 3, backoff: [1m], retry: { base: 1m } }"),
        &[],
        "workload.producer: give only one of backoff, retry, got backoff and retry",
    );
    expect_error(
        &with_producer("{ first_attempts: 3, retry: { base: 2m, cap: 1m } }"),
        &[],
        "workload.producer.retry.cap: must be at least base (2m), got 1m",
    );
}

#[test]
fn a_producer_names_keys_the_workload_publishes() {
    expect_error(
        &with_producer("{ first_attempts: 1, keys: [msg-9], backoff: [1m] }"),
        &[],
        "{path}:6:41: workload.producer.keys.0: `msg-9` is never published: the workload \
         publishes at most 3 messages (msg-1 to msg-3)",
    );
}

#[test]
fn message_groups_need_a_fifo_queue_and_at_least_one_group() {
    let text = |broker: &str, groups: &str| {
        format!(
            "name: e2e\nrun: {{ duration: 10m }}\nbroker: {broker}\nworkload:\n  arrival: {{ every: \
             50s }}\n  groups: {groups}\nconsumer: {{ target: ack-after-work }}\n"
        )
    };
    expect_error(
        &text("{ kind: sqs }", "4"),
        &[],
        "{path}:6:3: workload.groups: message groups belong to a FIFO queue: set broker.fifo: \
         true (a standard queue has no message groups)",
    );
    expect_error(
        &text("{ kind: sqs, fifo: true }", "0"),
        &[],
        "{path}:6:11: workload.groups: must be at least 1, got 0 (leave groups out for one group \
         per message key)",
    );
    expect_error(
        &text("{ kind: nats }", "2"),
        &[],
        "workload.groups: message groups belong to a FIFO queue",
    );
}

/// `workload.message` and `broker.queue` refused before a run: exit 2, the place and the reason.
#[test]
fn a_message_that_cannot_reach_its_consumer_is_refused() {
    let live = |broker: &str, message: &str| {
        format!(
            "name: e2e\nmode: live\nrun: {{ duration: 10m }}\nbroker: {broker}\nworkload:\n  \
             arrival: {{ every: 50s }}\n  message: {message}\nconsumer: {{ command: [\"true\"] }}\n"
        )
    };
    // A template that does not place the key: the consumer could not name its message.
    expect_error(
        &live("{ kind: sqs }", "{ body: \"order {seq}\" }"),
        &[],
        "{path}:7:3: workload.message: the message places its key nowhere: put {key}",
    );
    // A preset for a kind the framework does not run on.
    expect_error(
        &live("{ kind: nats }", "{ format: celery, task: tasks.send }"),
        &[],
        "workload.message.format: celery does not run on broker.kind nats: it runs on rabbitmq \
         and sqs",
    );
    expect_error(
        &live(
            "{ kind: redis-streams }",
            "{ format: dramatiq, task: send }",
        ),
        &[],
        "workload.message.format: dramatiq does not run on broker.kind redis-streams",
    );
    // A part the kind does not carry, and a preset's part written by hand.
    expect_error(
        &live("{ kind: sqs }", "{ headers: { k: \"{key}\" } }"),
        &[],
        "workload.message.headers: broker.kind sqs carries no headers",
    );
    expect_error(
        &live("{ kind: rabbitmq }", "{ format: celery, task: t, body: x }"),
        &[],
        "workload.message.body: format celery does not read body here",
    );
    // reuse on a kind whose queue is always the run's own, and a queue name no broker takes.
    expect_error(
        &live(
            "{ kind: nats, queue: orders, reuse: true }",
            "{ format: faststream }",
        ),
        &[],
        "broker.reuse: reuse is for the queues of rabbitmq (a framework that declares its queue itself); on nats",
    );
    expect_error(
        &live(
            "{ kind: rabbitmq, queue: \"a b\" }",
            "{ format: faststream }",
        ),
        &[],
        "broker.queue: a queue name is 1 to 80 characters",
    );
}

#[test]
fn a_republish_option_is_checked_and_refused_live() {
    let republish = |options: &str| {
        BASE.replace(
            "target: ack-after-work",
            &format!("target: ack-after-work, options: {{ republish: {options} }}"),
        )
    };
    expect_error(
        &republish("{ exhausted: requeue }"),
        &[],
        "consumer.options.republish.exhausted",
    );
    expect_error(
        &republish("{ max_retries: -1 }"),
        &[],
        "consumer.options.republish.max_retries",
    );
    expect_error(
        &republish("{}"),
        &["mode=live"],
        "consumer.options.republish: a built-in target republishes only in sim mode",
    );
}
