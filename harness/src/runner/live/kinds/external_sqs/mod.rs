//! `broker.kind: sqs` with `broker.endpoint`: an external SQS-compatible server (moto,
//! ElasticMQ, LocalStack) instead of the embedded broker.
//!
//! The run creates its own queue `<run id>` (the profile's visibility timeout, in whole wall
//! seconds) and, with `max_receives`, its DLQ `<run id>-dlq` named in the queue's redrive
//! policy; it publishes the plan itself and deletes both queues at the end. Workers reach the
//! server through their own port of an observing proxy ([`observe`]), which sees every
//! delivery, ack and visibility change; ackbench reads the DLQ itself during the run (each entry
//! received once, kept invisible) to know which messages were dead-lettered and when.
//!
//! Limit: a request through the proxy is signed for the proxy's address, which a server that
//! checks signatures (AWS itself) refuses; such an endpoint is refused before the run.

mod answers;
mod dlq;
mod observe;
mod sample;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sqs::types::QueueAttributeName;

use super::{
    BoxFuture, BrokerSampler, Confirmation, Context, Counts, Finished, LiveBroker, LiveQueue,
    OpenError, QueueFactory, QueueLength,
};
use crate::provider::http::LiveClock;
use crate::record::{nanos, Seq, WorkerId};
use crate::workload::message::Outgoing;

/// How old the cached queue counts may be.
const COUNTS_EVERY: Duration = Duration::from_millis(100);

pub struct ExternalSqs {
    admin: aws_sdk_sqs::Client,
    queue: String,
    queue_url: String,
    dlq_url: Option<String>,
    credentials: (String, String),
    /// The server's endpoint and the region, for the sampler's own client.
    endpoint: (String, String),
    ports: Vec<String>,
    servers: Vec<tokio::task::AbortHandle>,
    dead_lettered: Arc<AtomicU64>,
    dlq: Option<dlq::Reader>,
    counts: Mutex<Option<(Instant, Counts)>>,
    clock: LiveClock,
}

/// The credentials and region a client of the server uses: the environment's AWS variables, or
/// placeholders a local server accepts.
fn credentials() -> (String, String, String) {
    let var = |names: &[&str], default: &str| {
        names
            .iter()
            .find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()))
            .unwrap_or_else(|| default.to_string())
    };
    (
        var(&["AWS_ACCESS_KEY_ID"], "ackbench"),
        var(&["AWS_SECRET_ACCESS_KEY"], "ackbench"),
        var(&["AWS_REGION", "AWS_DEFAULT_REGION"], "us-east-1"),
    )
}

pub fn client(endpoint: &str, akid: &str, secret: &str, region: &str) -> aws_sdk_sqs::Client {
    let conf = aws_sdk_sqs::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .region(Region::new(region.to_string()))
        .credentials_provider(Credentials::new(akid, secret, None, None, "ackbench"))
        .http_client(aws_smithy_http_client::Builder::new().build_http())
        .build();
    aws_sdk_sqs::Client::from_conf(conf)
}

/// The profile's lease in whole wall seconds, as SQS takes it.
fn wall_lease_secs(lease: Duration, scale: f64) -> Result<u64, OpenError> {
    let wall = lease.as_secs_f64() * scale;
    let whole = wall.round();
    if (wall - whole).abs() > 1e-6 || whole < 1.0 {
        return Err(OpenError::Settings(format!(
            "broker.visibility_timeout {} at run.time_scale {scale} is {wall} s of wall time, and \
             an SQS server takes whole seconds (at least 1): choose a visibility_timeout and a \
             time_scale whose product is a whole number of seconds",
            crate::profile::format_duration(lease)
        )));
    }
    Ok(whole as u64)
}

impl ExternalSqs {
    pub async fn open(cx: Context<'_>) -> Result<ExternalSqs, OpenError> {
        let s = cx.scenario;
        let url = s.broker.url.clone().unwrap_or_default();
        if url::Url::parse(&url)
            .ok()
            .and_then(|u| u.host_str().map(|h| h.ends_with("amazonaws.com")))
            .unwrap_or(false)
        {
            return Err(OpenError::Settings(format!(
                "broker.endpoint {url} is AWS itself, which checks each request's signature, and \
                 a request through ackbench's observing proxy is signed for the proxy's address: \
                 run against an SQS-compatible server (moto, ElasticMQ, LocalStack) or the \
                 embedded broker"
            )));
        }
        let lease_s = wall_lease_secs(s.broker.lease, s.run.time_scale)?;
        let (akid, secret, region) = credentials();
        let admin = client(&url, &akid, &secret, &region);
        let unreachable = |e: String| OpenError::Unreachable {
            kind: crate::profile::kinds::sqs::KIND.name,
            url: url.clone(),
            reason: e,
        };
        if s.broker.queue.name.is_some() {
            let found = admin.get_queue_url().queue_name(&cx.queue).send().await;
            if found.is_ok() {
                return Err(OpenError::Settings(format!(
                    "broker.queue {}: the queue already exists at {url}, and a run uses a queue \
                     of its own (it deletes it at the end): name another, or delete it; \
                     broker.reuse is for {}",
                    cx.queue,
                    crate::profile::kinds::names_where(|k| k.can.reuse_queue)
                )));
            }
            if s.broker.queue.reuse {
                return Err(OpenError::Settings(
                    "broker.reuse: an external SQS endpoint's queue is the run's own (created \
                     with the profile's lease and delivery limit, deleted at the end)"
                        .to_string(),
                ));
            }
        }
        let mut dlq_url = None;
        let mut create = admin
            .create_queue()
            .queue_name(&cx.queue)
            .attributes(QueueAttributeName::VisibilityTimeout, lease_s.to_string());
        if s.broker.max_deliveries > 0 {
            let q = admin
                .create_queue()
                .queue_name(format!("{}-dlq", cx.run_id))
                .send()
                .await
                .map_err(|e| unreachable(aws_sdk_sqs::error::DisplayErrorContext(e).to_string()))?;
            let dlq = q.queue_url.unwrap_or_default();
            let arn = admin
                .get_queue_attributes()
                .queue_url(&dlq)
                .attribute_names(QueueAttributeName::QueueArn)
                .send()
                .await
                .ok()
                .and_then(|a| a.attributes)
                .and_then(|a| a.get(&QueueAttributeName::QueueArn).cloned())
                .unwrap_or_default();
            let policy = serde_json::json!({
                "deadLetterTargetArn": arn,
                "maxReceiveCount": s.broker.max_deliveries,
            });
            create = create.attributes(QueueAttributeName::RedrivePolicy, policy.to_string());
            dlq_url = Some(dlq);
        }
        let queue_url = match create.send().await {
            Ok(q) => q.queue_url.unwrap_or_default(),
            Err(e) => {
                if let Some(d) = &dlq_url {
                    let _ = admin.delete_queue().queue_url(d).send().await;
                }
                return Err(unreachable(
                    aws_sdk_sqs::error::DisplayErrorContext(e).to_string(),
                ));
            }
        };
        let observer = Arc::new(observe::Observer {
            state: cx.state.clone(),
            upstream: url.trim_end_matches('/').to_string(),
            http: reqwest::Client::new(),
            lease: nanos(s.broker.lease),
            queue: cx.queue.clone(),
            deliveries: Mutex::default(),
        });
        let mut ports = Vec::new();
        let mut servers = Vec::new();
        for worker in 1..=s.worker_slots() {
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
                .await
                .map_err(|e| OpenError::Failed(format!("cannot listen on 127.0.0.1: {e}")))?;
            let addr = listener
                .local_addr()
                .map_err(|e| OpenError::Failed(e.to_string()))?;
            ports.push(format!("http://{addr}"));
            let app = axum::Router::new()
                .fallback(observe::forward)
                .with_state(observe::Port {
                    observer: observer.clone(),
                    worker,
                });
            let task = tokio::spawn(async move {
                let _ = axum::serve(listener, app).await;
            });
            servers.push(task.abort_handle());
        }
        if s.broker.observe == crate::profile::Observe::Direct {
            // `observe: none`: every worker talks to the server itself.
            ports = vec![url.clone(); ports.len()];
        }
        let dead_lettered = Arc::new(AtomicU64::new(0));
        let dlq = dlq_url.as_ref().map(|d| {
            dlq::Reader::start(
                admin.clone(),
                d.clone(),
                cx.state.clone(),
                observer.clone(),
                dead_lettered.clone(),
            )
        });
        Ok(ExternalSqs {
            admin,
            queue: cx.queue.clone(),
            queue_url,
            dlq_url,
            credentials: (akid, secret),
            endpoint: (url.clone(), region),
            ports,
            servers,
            dead_lettered,
            dlq,
            counts: Mutex::new(None),
            clock: cx.state.clock,
        })
    }

    async fn fresh_counts(&self) -> Result<Counts, String> {
        if let Some((at, c)) = *self.counts.lock().unwrap_or_else(PoisonError::into_inner) {
            if at.elapsed() < COUNTS_EVERY {
                return Ok(c);
            }
        }
        let names = [
            QueueAttributeName::ApproximateNumberOfMessages,
            QueueAttributeName::ApproximateNumberOfMessagesNotVisible,
            QueueAttributeName::ApproximateNumberOfMessagesDelayed,
        ];
        let a = self
            .admin
            .get_queue_attributes()
            .queue_url(&self.queue_url)
            .set_attribute_names(Some(names.to_vec()))
            .send()
            .await
            .map_err(|e| {
                format!(
                    "cannot read the queue's counts: {}",
                    aws_sdk_sqs::error::DisplayErrorContext(e)
                )
            })?;
        let attrs = a.attributes.unwrap_or_default();
        let unsettled = names
            .iter()
            .filter_map(|n| attrs.get(n).and_then(|v| v.parse::<u64>().ok()))
            .sum();
        let c = Counts {
            unsettled,
            dead_lettered: self.dead_lettered.load(Ordering::Relaxed),
        };
        *self.counts.lock().unwrap_or_else(PoisonError::into_inner) = Some((Instant::now(), c));
        Ok(c)
    }
}

impl LiveBroker for ExternalSqs {
    /// Starts message `seq`'s SendMessage at once (a standard queue keeps no order, and the
    /// run knows a message by the key in its body); the confirmation is the server's answer.
    fn publish(&self, seq: Seq, message: Outgoing) -> BoxFuture<'_, Result<Confirmation, String>> {
        Box::pin(async move {
            let mut attributes = std::collections::HashMap::new();
            for (k, v) in &message.attributes {
                let value = aws_sdk_sqs::types::MessageAttributeValue::builder()
                    .data_type("String")
                    .string_value(v)
                    .build()
                    .map_err(|e| format!("message attribute {k}: {e}"))?;
                attributes.insert(k.clone(), value);
            }
            // Counts read before this message was sent must not answer for after it: a cached
            // "nothing unsettled" would end the run before the message is received.
            *self.counts.lock().unwrap_or_else(PoisonError::into_inner) = None;
            let sent = self
                .admin
                .send_message()
                .queue_url(&self.queue_url)
                .message_body(message.body)
                .set_message_attributes((!attributes.is_empty()).then_some(attributes))
                .send();
            let sending = tokio::spawn(sent);
            let confirmation: Confirmation = Box::pin(async move {
                match sending.await {
                    Ok(answer) => answer.map(|_| ()).map_err(|e| {
                        format!(
                            "cannot publish message {seq}: {}",
                            aws_sdk_sqs::error::DisplayErrorContext(e)
                        )
                    }),
                    Err(e) => Err(format!("cannot publish message {seq}: {e}")),
                }
            });
            Ok(confirmation)
        })
    }

    fn queue_name(&self) -> &str {
        &self.queue
    }

    fn counts(&self) -> BoxFuture<'_, Result<Counts, String>> {
        Box::pin(self.fresh_counts())
    }

    /// `ApproximateNumberOfMessages` and `ApproximateNumberOfMessagesNotVisible`, as KEDA's
    /// `aws-sqs-queue` scaler reads them.
    fn queue_length(&self) -> BoxFuture<'_, Option<Result<QueueLength, String>>> {
        Box::pin(async {
            let read = sample::visible_and_not(&self.admin, &self.queue_url).await;
            Some(read.map(|(ready, in_flight)| QueueLength { ready, in_flight }))
        })
    }

    fn worker_env(&self, worker: WorkerId) -> Vec<(String, String)> {
        let mut env = super::client_env(
            &self.ports[(worker - 1) as usize],
            &self.credentials.0,
            &self.queue_url,
        );
        for (k, v) in &mut env {
            if k == "AWS_SECRET_ACCESS_KEY" {
                *v = self.credentials.1.clone();
            }
        }
        env
    }

    fn queues(&self) -> Arc<dyn QueueFactory> {
        Arc::new(Queues {
            ports: self.ports.clone(),
            akid: self.credentials.0.clone(),
            queue_url: self.queue_url.clone(),
            clock: self.clock,
        })
    }

    fn sampler(&self) -> BoxFuture<'_, Option<Result<Box<dyn BrokerSampler>, String>>> {
        let (endpoint, region) = &self.endpoint;
        let sampler = sample::Sampler {
            sqs: client(endpoint, &self.credentials.0, &self.credentials.1, region),
            queue_url: self.queue_url.clone(),
            dlq_url: self.dlq_url.clone(),
        };
        Box::pin(async move { Some(Ok(Box::new(sampler) as Box<dyn BrokerSampler>)) })
    }

    fn finish(self: Box<Self>) -> BoxFuture<'static, Finished> {
        Box::pin(async move {
            if let Some(r) = self.dlq {
                r.finish().await;
            }
            for s in &self.servers {
                s.abort();
            }
            let mut left_behind = Vec::new();
            for q in std::iter::once(&self.queue_url).chain(&self.dlq_url) {
                if let Err(e) = self.admin.delete_queue().queue_url(q).send().await {
                    left_behind.push(format!(
                        "queue {q} ({})",
                        aws_sdk_sqs::error::DisplayErrorContext(e)
                    ));
                }
            }
            Finished {
                left_behind,
                ..Finished::default()
            }
        })
    }
}

/// Each built-in worker's SQS client, through its own port of the proxy.
struct Queues {
    ports: Vec<String>,
    akid: String,
    queue_url: String,
    clock: LiveClock,
}

impl QueueFactory for Queues {
    fn connect(&self, worker: WorkerId) -> BoxFuture<'_, Result<Box<dyn LiveQueue>, String>> {
        let q = super::sqs_queue::SqsQueue::new(
            &self.ports[(worker - 1) as usize],
            &self.akid,
            &self.queue_url,
            self.clock,
        );
        Box::pin(std::future::ready(Ok(Box::new(q) as Box<dyn LiveQueue>)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lease_must_be_whole_wall_seconds() {
        // 40 s at 0.05 is 2 s; 30 s at 0.05 is 1.5 s, which SQS cannot take; 10 s at 0.05 is
        // 0.5 s, under SQS's 1 s minimum for a lease that must outlast a receive.
        assert_eq!(wall_lease_secs(Duration::from_secs(40), 0.05).unwrap(), 2);
        assert_eq!(wall_lease_secs(Duration::from_secs(30), 1.0).unwrap(), 30);
        for (lease, scale) in [(30, 0.05), (10, 0.05)] {
            let e = wall_lease_secs(Duration::from_secs(lease), scale).unwrap_err();
            assert!(e.to_string().contains("whole seconds"), "{e}");
        }
    }
}
