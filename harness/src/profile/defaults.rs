//! What a profile gets for a key it leaves out. `docs/profile-reference.md` lists the same.

use std::time::Duration;

pub const SEED: u64 = 1;
/// `run.drain`: the longest a run settles after publishing ends.
pub const DRAIN: Duration = Duration::from_secs(30 * 60);
/// `broker.visibility_timeout`: SQS's default.
pub const VISIBILITY_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest visibility timeout a profile may ask for: SQS's maximum.
pub const MAX_VISIBILITY_TIMEOUT: Duration = Duration::from_secs(12 * 3600);
/// `broker.consumer_timeout` (rabbitmq): RabbitMQ's default, 30 minutes.
pub const RABBITMQ_CONSUMER_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// `broker.timeout_check_every` (rabbitmq): the channel tick that checks the consumer timeout.
pub const RABBITMQ_TIMEOUT_CHECK_EVERY: Duration = Duration::from_secs(60);
/// `broker.delivery_limit` (rabbitmq quorum queues): RabbitMQ 4's default.
pub const RABBITMQ_DELIVERY_LIMIT: u32 = 20;
/// RabbitMQ's server default heartbeat timeout (`heartbeat` in rabbitmq.conf): 60 s.
pub const RABBITMQ_HEARTBEAT: Duration = Duration::from_secs(60);
/// `broker.ack_wait` (nats): JetStream's default.
pub const NATS_ACK_WAIT: Duration = Duration::from_secs(30);
/// `broker.max_ack_pending` (nats): JetStream's default.
pub const NATS_MAX_ACK_PENDING: u32 = 1000;
/// `broker.min_idle` (redis-streams): how long an entry is idle before it may be claimed.
pub const REDIS_MIN_IDLE: Duration = Duration::from_secs(30);
/// `broker.max_poll_interval` (kafka): `max.poll.interval.ms`, 5 minutes.
pub const KAFKA_MAX_POLL_INTERVAL: Duration = Duration::from_secs(5 * 60);
/// `broker.session_timeout` (kafka): `session.timeout.ms`, 45 s since Kafka 3.0.
pub const KAFKA_SESSION_TIMEOUT: Duration = Duration::from_secs(45);
/// `broker.heartbeat_interval` (kafka): `heartbeat.interval.ms`, 3 s.
pub const KAFKA_HEARTBEAT_INTERVAL: Duration = Duration::from_secs(3);
/// `broker.max_poll_records` (kafka): `max.poll.records`, 500.
pub const KAFKA_MAX_POLL_RECORDS: u32 = 500;
/// `broker.auto_commit_interval` (kafka): `auto.commit.interval.ms`, 5 s.
pub const KAFKA_AUTO_COMMIT_INTERVAL: Duration = Duration::from_secs(5);
/// `broker.dedup_window` (sqs, `fifo: true`): SQS FIFO's deduplication interval, 5 minutes.
pub const DEDUP_WINDOW: Duration = Duration::from_secs(5 * 60);
pub const WORKERS: u32 = 1;
/// The smallest `run.time_scale`: one millisecond of wall time per profile second.
pub const MIN_TIME_SCALE: f64 = 0.001;
/// `run.publish_window`: publishes a live run leaves unconfirmed at once, enough for a broker on
/// the same machine to confirm more than 10,000 a second (a confirmation within 100 ms).
pub const PUBLISH_WINDOW: u32 = 1024;
/// The largest `run.publish_window`: NATS's client holds at most 5,000 unanswered publishes.
pub const MAX_PUBLISH_WINDOW: u32 = 4096;
pub const RESTART_AFTER: Duration = Duration::from_secs(1);
/// `provider.latency` when left out: lognormal, median 240ms, p99 900ms (a healthy email API).
pub const LATENCY_MEDIAN: Duration = Duration::from_millis(240);
pub const LATENCY_P99: Duration = Duration::from_millis(900);
/// `consumer.options.claim_window` for a target that takes it.
pub const CLAIM_WINDOW: Duration = Duration::from_secs(120);
/// `consumer.options.extend_every` for a target that takes it: this share of the lease.
pub const EXTEND_EVERY_DIVISOR: u32 = 3;
/// `consumer.options.retry` keys left out.
pub const RETRY_MAX_ATTEMPTS: u32 = 3;
pub const RETRY_BASE: Duration = Duration::from_secs(1);
pub const RETRY_CAP: Duration = Duration::from_secs(30);
pub const RETRY_JITTER: f64 = 0.5;
/// `consumer.options.republish.max_retries`: Celery's default `max_retries`.
pub const REPUBLISH_MAX_RETRIES: u32 = 3;
/// `chaos[].kill_worker.probability`.
pub const KILL_PROBABILITY: f64 = 1.0;
/// `chaos[].deploy.grace`: Kubernetes' `terminationGracePeriodSeconds`.
pub const DEPLOY_GRACE: Duration = Duration::from_secs(30);
pub const DEPLOY_MAX_UNAVAILABLE: u32 = 1;
/// The name of a profile read from text without a file name.
pub const NAME: &str = "profile";

/// The servers a live run of each kind uses when the profile names none (`broker.url`).
pub const RABBITMQ_URL: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
pub const NATS_URL: &str = "nats://127.0.0.1:4222";
pub const REDIS_URL: &str = "redis://127.0.0.1:6379";
pub const KAFKA_URL: &str = "127.0.0.1:9092";
