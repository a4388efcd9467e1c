//! `broker.kind: kafka` in live mode: a Kafka-protocol broker (Tansu on this machine; see
//! docs/kafka-live.md for how it differs from Apache Kafka), observed through a proxy between
//! each worker and the broker that reads Kafka's frames ([`proxy`]).

mod frames;
mod group;
mod proxy;
mod records;
mod rewrite;
