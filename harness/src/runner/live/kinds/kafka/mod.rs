//! `broker.kind: kafka` in live mode: a Kafka-protocol broker at `broker.url` (Tansu on this
//! machine; docs/kafka-live.md says how it differs from Apache Kafka), over librdkafka
//! (rdkafka) for ackbench's own requests and the built-in targets' consumer.
//!
//! Per run, ackbench creates the topic `<run id>` with the profile's partitions ([`admin`]);
//! its consumer group is named after it. It publishes each message itself, one record per
//! produce batch, message `seq` to partition `(seq - 1) % partitions` as the sim model places
//! it, keyed with the message's key ([`produce`]). Each worker reaches the broker through its
//! own proxy port ([`proxy`]), which sees deliveries (fetched records), acks (commits, accepted
//! or fenced) and the group's rebalances ([`group`], [`timeline`]). The counts come from the
//! broker: log end offsets less the group's committed offsets ([`counts`]). When the run ends
//! the topic and the group are deleted, whatever happened.

mod admin;
mod commit_clock;
mod copies;
mod counts;
pub(crate) mod frames;
mod group;
mod killed;
mod produce;
mod proxy;
mod queue;
mod records;
mod rewrite;
mod settings;
mod timeline;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::{
    BoxFuture, Confirmation, Context, Counts, Finished, LiveBroker, LiveQueue, OpenError,
    QueueFactory,
};
use crate::profile::{run_variables, BrokerKind, KafkaSpec};
use crate::record::{nanos, Seq, WorkerId};
use crate::runner::live::proxy::Proxy;
use crate::workload::message::Outgoing;
use settings::ConsumerSettings;

const KIND: &str = crate::profile::kinds::kafka::KIND.name;
/// How long ackbench waits for the broker's port to answer before it calls it unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

pub struct KafkaBroker {
    topic: String,
    group: String,
    admin: admin::Admin,
    producer: produce::Producer,
    lag: counts::GroupLag,
    proxy: Proxy,
    observed: Arc<proxy::Observed>,
    settings: ConsumerSettings,
    workers: u32,
}

/// `broker.url` as librdkafka's `bootstrap.servers`: `host:port`, without a `kafka://`.
pub fn bootstrap(url: &str) -> String {
    url.strip_prefix("kafka://")
        .unwrap_or(url)
        .trim_end_matches('/')
        .to_string()
}

/// The broker's address, for the workers' proxy: it must answer on it.
async fn upstream(bootstrap: &str) -> Result<SocketAddr, String> {
    let mut addrs = tokio::net::lookup_host(bootstrap)
        .await
        .map_err(|e| e.to_string())?;
    let addr = addrs
        .next()
        .ok_or_else(|| format!("{bootstrap} has no address"))?;
    tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(addr))
        .await
        .map_err(|_| "no answer in 3 s".to_string())?
        .map_err(|e| e.to_string())?;
    Ok(addr)
}

/// The profile's consumer settings with their durations in wall time.
fn wall_settings(cx: &Context<'_>, spec: &KafkaSpec) -> ConsumerSettings {
    let clock = cx.state.clock;
    let wall = |d: Duration| clock.wall(nanos(d));
    ConsumerSettings {
        max_poll_interval: wall(cx.scenario.broker.lease),
        spec: KafkaSpec {
            session_timeout: wall(spec.session_timeout),
            heartbeat_interval: wall(spec.heartbeat_interval),
            auto_commit_interval: wall(spec.auto_commit_interval),
            ..spec.clone()
        },
    }
}

impl KafkaBroker {
    pub async fn open(cx: Context<'_>) -> Result<KafkaBroker, OpenError> {
        let s = cx.scenario;
        let BrokerKind::Kafka(spec) = &s.broker.kind else {
            return Err(OpenError::Failed("not a kafka profile".into()));
        };
        let url = s.broker.url.clone().unwrap_or_default();
        let bootstrap = bootstrap(&url);
        let upstream = upstream(&bootstrap)
            .await
            .map_err(|reason| OpenError::Unreachable {
                kind: KIND,
                url: url.clone(),
                reason,
            })?;
        let admin = admin::Admin::connect(&bootstrap).map_err(OpenError::Failed)?;
        let topic = cx.queue.clone();
        let group = topic.clone();
        match admin.create_topic(&topic, spec.partitions).await {
            Ok(()) => {}
            Err((true, why)) => {
                return Err(OpenError::Settings(format!(
                    "broker.queue {topic}: {why} on the Kafka broker at {url}; a run creates its \
                     topic and deletes it at the end: name another, or delete it"
                )))
            }
            Err((false, why)) => return Err(OpenError::Failed(why)),
        }
        let records = Arc::new(records::Records::default());
        let observed = Arc::new(proxy::Observed {
            state: cx.state.clone(),
            records: records.clone(),
            group: Arc::new(group::GroupLog::default()),
            topic: topic.clone(),
            topic_id: Mutex::new(None),
            listeners: OnceLock::new(),
            max_poll_interval: nanos(s.broker.lease),
            handlers: Default::default(),
        });
        let set_up = async {
            let proxy = Proxy::start(
                upstream,
                s.consumer.workers,
                Arc::new(proxy::KafkaProtocol(observed.clone())),
                cx.state.links(),
            )
            .await
            .map_err(|e| format!("cannot listen for workers on 127.0.0.1: {e}"))?;
            let addrs = (1..=s.consumer.workers).map(|w| proxy.addr(w)).collect();
            let _ = observed.listeners.set(addrs);
            let producer =
                produce::Producer::create(&bootstrap, &topic, spec.partitions, records.clone())?;
            let lag = counts::GroupLag::open(&bootstrap, &topic, &group, spec.partitions)?;
            Ok::<_, String>((proxy, producer, lag))
        };
        let (proxy, producer, lag) = match set_up.await {
            Ok(parts) => parts,
            Err(e) => {
                admin.delete(&topic, &group).await;
                return Err(OpenError::Failed(e));
            }
        };
        Ok(KafkaBroker {
            settings: wall_settings(&cx, spec),
            topic,
            group,
            admin,
            producer,
            lag,
            proxy,
            observed,
            workers: s.consumer.workers,
        })
    }

    /// Worker `w`'s `bootstrap.servers`: its own proxy port.
    fn worker_bootstrap(&self, w: WorkerId) -> String {
        self.proxy.addr(w).to_string()
    }
}

impl LiveBroker for KafkaBroker {
    fn queue_name(&self) -> &str {
        &self.topic
    }

    fn publish(&self, seq: Seq, message: Outgoing) -> BoxFuture<'_, Result<Confirmation, String>> {
        let key = message.key.clone();
        Box::pin(std::future::ready(self.producer.send(seq, &key, &message)))
    }

    fn counts(&self) -> BoxFuture<'_, Result<Counts, String>> {
        Box::pin(async move {
            let published = self.observed.records.published_count();
            Ok(Counts {
                unsettled: self.lag.read(published).await?,
                dead_lettered: 0,
            })
        })
    }

    fn worker_env(&self, worker: WorkerId) -> Vec<(String, String)> {
        let mut env = vec![
            (
                run_variables::BOOTSTRAP_SERVERS.to_string(),
                self.worker_bootstrap(worker),
            ),
            (run_variables::TOPIC.to_string(), self.topic.clone()),
            (run_variables::GROUP.to_string(), self.group.clone()),
        ];
        env.extend(
            self.settings
                .of(worker)
                .into_iter()
                .map(|(var, _, value)| (var.to_string(), value)),
        );
        env
    }

    fn queues(&self) -> Arc<dyn QueueFactory> {
        Arc::new(KafkaQueues {
            bootstraps: (1..=self.workers)
                .map(|w| self.worker_bootstrap(w))
                .collect(),
            topic: self.topic.clone(),
            group: self.group.clone(),
            settings: self.settings.clone(),
            records: self.observed.records.clone(),
            state: self.observed.state.clone(),
        })
    }

    fn finish(self: Box<Self>) -> BoxFuture<'static, Finished> {
        Box::pin(async move {
            let KafkaBroker {
                topic,
                group,
                admin,
                proxy,
                observed,
                producer,
                lag,
                settings,
                ..
            } = *self;
            proxy.stop().await;
            drop((producer, lag));
            let left_behind = admin.delete(&topic, &group).await;
            let log = observed.group.entries();
            Finished {
                events: timeline::rebalances(&log),
                notes: observed.group.notes(),
                left_behind,
                commit_handlers: Some(observed.handlers.take(settings.spec.enable_auto_commit)),
                ..Finished::default()
            }
        })
    }
}

/// Each worker's consumer, through its own proxy port.
struct KafkaQueues {
    bootstraps: Vec<String>,
    topic: String,
    group: String,
    settings: ConsumerSettings,
    records: Arc<records::Records>,
    state: Arc<crate::runner::live::state::LiveState>,
}

impl QueueFactory for KafkaQueues {
    fn connect(&self, worker: WorkerId) -> BoxFuture<'_, Result<Box<dyn LiveQueue>, String>> {
        Box::pin(async move {
            let bootstrap = self
                .bootstraps
                .get((worker as usize).wrapping_sub(1))
                .ok_or_else(|| format!("no worker {worker}"))?;
            // The incarnation this consumer starts (the run counts it once it runs).
            let incarnation = self.state.worker(worker).incarnation + 1;
            let q = queue::KafkaQueue::connect(
                bootstrap,
                &self.topic,
                &self.group,
                &self.settings,
                (worker, &killed::client_id(worker, incarnation)),
                self.records.clone(),
            )?;
            Ok(Box::new(q) as Box<dyn LiveQueue>)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bootstrap_server_is_host_and_port() {
        assert_eq!(bootstrap("kafka://127.0.0.1:9092"), "127.0.0.1:9092");
        assert_eq!(bootstrap("127.0.0.1:9092"), "127.0.0.1:9092");
        assert_eq!(bootstrap("kafka://broker:9093/"), "broker:9093");
    }
}
