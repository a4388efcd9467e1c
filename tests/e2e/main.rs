//! End-to-end tests: run the real `ackbench` binary on profiles and check what it prints,
//! writes (summary.json) and its exit code.

mod autoscale_profiles;
mod broker_kafka_share;
mod broker_kinds;
mod broker_kinds_words;
mod broker_memory;
mod capacity;
mod chaos;
mod chaos_errors;
mod common;
mod connection_errors;
mod consumer_env;
#[cfg(feature = "live")]
mod consumer_program;
#[cfg(feature = "live")]
mod crashes;
mod deploy_profiles;
mod engine;
#[cfg(feature = "live")]
mod frameworks;
#[cfg(feature = "live")]
mod frameworks_deploy;
#[cfg(feature = "live")]
mod frameworks_kafka;
#[cfg(feature = "live")]
mod frameworks_retries;
#[cfg(feature = "live")]
mod frameworks_retries_streams;
mod frameworks_sim;
#[cfg(feature = "live")]
mod interrupt;
#[cfg(feature = "live")]
mod live;
#[cfg(feature = "live")]
mod live_attribution;
#[cfg(feature = "live")]
mod live_autoscale;
#[cfg(feature = "live")]
mod live_broker_counts;
#[cfg(feature = "live")]
mod live_capacity;
#[cfg(feature = "live")]
mod live_clock;
#[cfg(feature = "live")]
mod live_connection;
#[cfg(feature = "live")]
mod live_consumer_env;
#[cfg(feature = "live")]
mod live_deploy;
#[cfg(feature = "live")]
mod live_deploy_kafka;
#[cfg(feature = "live")]
mod live_fifo;
#[cfg(feature = "live")]
mod live_hostile;
#[cfg(feature = "live")]
mod live_ingress;
#[cfg(feature = "live")]
mod live_kafka;
#[cfg(feature = "live")]
mod live_kafka_handlers;
#[cfg(feature = "live")]
mod live_message;
#[cfg(feature = "live")]
mod live_nats;
#[cfg(feature = "live")]
mod live_nats_clock;
#[cfg(feature = "live")]
mod live_provider_faults;
#[cfg(feature = "live")]
mod live_rabbitmq;
#[cfg(feature = "live")]
mod live_rabbitmq_returns;
#[cfg(feature = "live")]
mod live_redis_streams;
#[cfg(feature = "live")]
mod live_sqs_endpoint;
#[cfg(feature = "live")]
mod live_worker_logs;
mod long_values;
mod message_errors;
mod pipes;
mod producer_retries;
mod profile_enum_errors;
mod profile_errors;
mod provider_faults;
mod record_modes;
mod report_folder;
mod report_html;
mod report_links;
mod report_rerender;
mod report_run;
mod servers_connections;
mod servers_flags;
mod servers_support;
mod signals;
mod sizing_autoscale;
mod sizing_size;
mod sizing_sweep;
mod sqs_boto3;
mod sqs_sdk;
mod sqs_support;
mod sqs_wire;
mod verdict;
