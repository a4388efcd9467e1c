//! End-to-end tests: run the real `ackbench` binary on profiles and check what it prints,
//! writes (summary.json) and its exit code.

mod broker_memory;
mod chaos;
mod common;
mod engine;
#[cfg(feature = "live")]
mod live;
#[cfg(feature = "live")]
mod live_ingress;
mod profile_errors;
mod report_html;
mod report_rerender;
mod report_run;
mod servers_connections;
mod servers_flags;
mod servers_support;
mod sizing_size;
mod sizing_sweep;
mod sqs_boto3;
mod sqs_sdk;
mod sqs_support;
mod sqs_wire;
