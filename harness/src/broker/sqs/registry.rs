//! All queues of one server, by name, and what crosses queues: dead-letter moves, queue URLs and
//! ARNs, the worker table.

use std::collections::{BTreeMap, HashMap};

use super::config::QueueSpec;
use super::error::{ErrorCode, SqsError};
use super::queue::SqsQueue;
use super::queue_attributes::{QueueSettings, RedrivePolicy};
use super::wire_time::WireTime;
use super::workers::Workers;
use crate::broker::BrokerConfig;
use crate::record::Nanos;

/// Most queue URLs one `ListQueues` page returns.
const LIST_PAGE: usize = 1000;

#[derive(Debug)]
pub struct Registry {
    queues: HashMap<String, SqsQueue>,
    next_id: u32,
    pub workers: Workers,
    /// `http://host:port`, the prefix of queue URLs.
    base_url: String,
    region: String,
    account: String,
    /// Broker configuration of queues created over the API.
    default_broker: BrokerConfig,
    /// False: events are dropped as they happen (see `SqsConfig::record_events`).
    pub record_events: bool,
    /// Queues created from now on forget settled messages (see `SqsConfig::forget_settled`).
    pub forget_settled: bool,
    /// What a wire second lasts in the queues (see `SqsConfig::wire_time`).
    pub wire_time: WireTime,
}

impl Registry {
    pub fn new(
        base_url: String,
        region: String,
        account: String,
        default_broker: BrokerConfig,
    ) -> Registry {
        Registry {
            queues: HashMap::new(),
            next_id: 1,
            workers: Workers::default(),
            base_url,
            region,
            account,
            default_broker,
            record_events: true,
            forget_settled: false,
            wire_time: WireTime::REAL,
        }
    }

    pub fn url(&self, name: &str) -> String {
        format!("{}/{}/{}", self.base_url, self.account, name)
    }

    pub fn arn(&self, name: &str) -> String {
        format!("arn:aws:sqs:{}:{}:{}", self.region, self.account, name)
    }

    pub fn get(&mut self, name: &str) -> Result<&mut SqsQueue, SqsError> {
        self.queues
            .get_mut(name)
            .ok_or_else(SqsError::queue_does_not_exist)
    }

    fn by_arn(&self, arn: &str) -> Option<&SqsQueue> {
        let name = arn.rsplit(':').next()?;
        self.queues.get(name).filter(|q| q.arn == arn)
    }

    /// A redrive policy must name an existing queue other than the queue itself.
    fn check_redrive(&self, name: &str, policy: Option<&RedrivePolicy>) -> Result<(), SqsError> {
        let Some(p) = policy else { return Ok(()) };
        match self.by_arn(&p.dead_letter_target_arn) {
            Some(q) if q.name != name && q.settings.fifo != name.ends_with(".fifo") => {
                Err(SqsError::new(
                    ErrorCode::InvalidAttributeValue,
                    "Invalid value for the parameter RedrivePolicy. Reason: the dead-letter queue of a FIFO queue must be a FIFO queue, and of a standard queue a standard queue.",
                ))
            }
            Some(q) if q.name != name => Ok(()),
            Some(_) => Err(SqsError::new(
                ErrorCode::InvalidAttributeValue,
                "Invalid value for the parameter RedrivePolicy. Reason: a queue cannot be its own dead-letter queue.",
            )),
            None => Err(SqsError::new(
                ErrorCode::InvalidAttributeValue,
                "Invalid value for the parameter RedrivePolicy. Reason: Dead letter target does not exist.",
            )),
        }
    }

    /// `CreateQueue`: creates the queue, or returns the URL of an existing one whose attributes
    /// match those given (different ones: `QueueNameExists`).
    pub fn create(
        &mut self,
        name: &str,
        attributes: &BTreeMap<String, String>,
        tags: &BTreeMap<String, String>,
        epoch_s: u64,
    ) -> Result<String, SqsError> {
        if let Some(q) = self.queues.get(name) {
            let (config, settings) = SqsQueue::with_attributes(
                *q.broker.config(),
                &q.settings,
                attributes,
                q.wire_time,
            )?;
            if config != *q.broker.config() || settings != q.settings {
                return Err(SqsError::new(
                    ErrorCode::QueueNameExists,
                    format!("A queue already exists with the same name and a different value for attribute(s) of {name}"),
                ));
            }
            return Ok(self.url(name));
        }
        let (config, settings) = SqsQueue::with_attributes(
            self.default_broker,
            &QueueSettings::default(),
            attributes,
            self.wire_time,
        )?;
        if settings.fifo != name.ends_with(".fifo") {
            return Err(SqsError::invalid(
                "QueueName",
                "The name of a FIFO queue can only include alphanumeric characters, hyphens, or \
                 underscores, must end with .fifo suffix and be 1 to 80 in length; a queue named \
                 with .fifo needs the attribute FifoQueue=true, and only such a queue takes it",
            ));
        }
        self.check_redrive(name, settings.redrive.as_ref())?;
        let mut queue_tags = BTreeMap::new();
        super::tags::add(name, &mut queue_tags, tags)?;
        self.insert(name, config, settings, epoch_s);
        self.get(name)?.tags = queue_tags;
        Ok(self.url(name))
    }

    /// Creates (or re-configures) a queue from ackbench's own settings, and its dead-letter
    /// queue if it names one that does not exist yet.
    pub fn create_with_spec(
        &mut self,
        name: &str,
        spec: &QueueSpec,
        epoch_s: u64,
    ) -> Result<String, SqsError> {
        super::validate::queue_name(Some(name.to_string()))?;
        let fifo = spec.fifo.is_some();
        for n in std::iter::once(name).chain(spec.dead_letter_queue.as_deref()) {
            if n.ends_with(".fifo") != fifo {
                return Err(SqsError::invalid(
                    "QueueName",
                    format!(
                        "{n}: a FIFO queue's name (and its dead-letter queue's) ends in .fifo, \
                         and only a FIFO queue's does"
                    ),
                ));
            }
        }
        let mut settings = QueueSettings {
            fifo,
            ..QueueSettings::default()
        };
        if let Some(dlq) = &spec.dead_letter_queue {
            super::validate::queue_name(Some(dlq.clone()))?;
            if dlq == name {
                return Err(SqsError::invalid(
                    "dead_letter_queue",
                    "a queue cannot be its own dead-letter queue",
                ));
            }
            if !self.queues.contains_key(dlq) {
                let dlq_config = BrokerConfig {
                    max_receives: 0,
                    ..spec.broker
                };
                let dlq_settings = QueueSettings {
                    fifo,
                    ..QueueSettings::default()
                };
                self.insert(dlq, dlq_config, dlq_settings, epoch_s);
                self.set_dedup_interval(dlq, spec.fifo);
            }
            if spec.broker.max_receives > 0 {
                settings.redrive = Some(RedrivePolicy {
                    dead_letter_target_arn: self.arn(dlq),
                    max_receive_count: spec.broker.max_receives,
                });
            }
        }
        match self.queues.get_mut(name) {
            Some(q) => {
                q.broker.set_config(spec.broker);
                q.settings = settings;
                q.modified_s = epoch_s;
            }
            None => self.insert(name, spec.broker, settings, epoch_s),
        }
        self.set_dedup_interval(name, spec.fifo);
        Ok(self.url(name))
    }

    /// A FIFO queue ackbench created drops repeats for `interval` (not SQS's 5 minutes).
    fn set_dedup_interval(&mut self, name: &str, interval: Option<Nanos>) {
        if let (Some(q), Some(interval)) = (self.queues.get_mut(name), interval) {
            q.broker.set_deduplication(interval);
        }
    }

    fn insert(&mut self, name: &str, config: BrokerConfig, settings: QueueSettings, epoch_s: u64) {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        let mut q = SqsQueue::new(
            name,
            self.arn(name),
            id,
            config,
            settings,
            epoch_s,
            self.forget_settled,
        );
        q.wire_time = self.wire_time;
        self.queues.insert(name.to_string(), q);
    }

    /// `SetQueueAttributes`: all or nothing.
    pub fn set_attributes(
        &mut self,
        name: &str,
        attributes: &BTreeMap<String, String>,
        epoch_s: u64,
    ) -> Result<(), SqsError> {
        let q = self.get(name)?;
        let (config, settings) =
            SqsQueue::with_attributes(*q.broker.config(), &q.settings, attributes, q.wire_time)?;
        if settings.fifo != q.settings.fifo {
            return Err(SqsError::new(
                ErrorCode::InvalidAttributeName,
                "FifoQueue can be set only when the queue is created.",
            ));
        }
        self.check_redrive(name, settings.redrive.as_ref())?;
        let q = self.get(name)?;
        q.broker.set_config(config);
        q.settings = settings;
        q.modified_s = epoch_s;
        Ok(())
    }

    /// `DeleteQueue`: its long pollers are woken (and find it gone).
    pub fn delete(&mut self, name: &str) -> Result<(), SqsError> {
        let q = self
            .queues
            .remove(name)
            .ok_or_else(SqsError::queue_does_not_exist)?;
        q.waiters.notify_waiters();
        Ok(())
    }

    /// `ListQueues`: URLs in name order, paged by `max_results` with the last name as token.
    pub fn list(
        &self,
        prefix: Option<&str>,
        max_results: Option<u32>,
        next_token: Option<&str>,
    ) -> (Vec<String>, Option<String>) {
        let mut names: Vec<&String> = self
            .queues
            .keys()
            .filter(|n| prefix.is_none_or(|p| n.starts_with(p)))
            .filter(|n| next_token.is_none_or(|t| n.as_str() > t))
            .collect();
        names.sort();
        let page = max_results.map_or(LIST_PAGE, |m| m as usize);
        let more = max_results.is_some() && names.len() > page;
        names.truncate(page);
        let token = if more {
            names.last().map(|n| n.to_string())
        } else {
            None
        };
        (names.into_iter().map(|n| self.url(n)).collect(), token)
    }

    /// `ListDeadLetterSourceQueues`: the queues whose redrive policy names queue `name` as their
    /// dead-letter queue, by name, paged as [`Registry::list`] pages.
    pub fn dead_letter_sources(
        &mut self,
        name: &str,
        max_results: Option<u32>,
        next_token: Option<&str>,
    ) -> Result<(Vec<String>, Option<String>), SqsError> {
        let arn = self.get(name)?.arn.clone();
        let mut names: Vec<&String> = self
            .queues
            .iter()
            .filter(|(_, q)| {
                q.settings
                    .redrive
                    .as_ref()
                    .is_some_and(|p| p.dead_letter_target_arn == arn)
            })
            .map(|(n, _)| n)
            .filter(|n| next_token.is_none_or(|t| n.as_str() > t))
            .collect();
        names.sort();
        let page = max_results.map_or(LIST_PAGE, |m| m as usize);
        let more = max_results.is_some() && names.len() > page;
        names.truncate(page);
        let token = if more {
            names.last().map(|n| n.to_string())
        } else {
            None
        };
        Ok((names.into_iter().map(|n| self.url(n)).collect(), token))
    }

    /// Ends due delays and leases of every queue, then moves new dead letters.
    pub fn advance_all(&mut self, now: Nanos) {
        for q in self.queues.values_mut() {
            q.advance(now);
        }
        self.move_dead_letters(now);
    }

    /// Publishes every message a queue's broker dead-lettered into the queue its redrive policy
    /// names. Entries of a queue whose dead-letter queue does not exist stay where they are
    /// (counted in the broker's DLQ) until it does.
    pub fn move_dead_letters(&mut self, now: Nanos) {
        let mut moves = Vec::new();
        for q in self.queues.values() {
            if q.broker.dlq().is_empty() {
                continue;
            }
            if let Some(p) = &q.settings.redrive {
                if let Some(target) = self.by_arn(&p.dead_letter_target_arn) {
                    moves.push((q.name.clone(), target.name.clone()));
                }
            }
        }
        for (from, to) in moves {
            let letters = match self.queues.get_mut(&from) {
                Some(q) => q.take_dead_letters(),
                None => continue,
            };
            if let Some(target) = self.queues.get_mut(&to) {
                for m in letters {
                    target.publish(now, Some(0), m);
                }
            }
        }
    }

    /// Drops the events of every queue when events are not recorded.
    pub fn forget_events(&mut self) {
        if !self.record_events {
            for q in self.queues.values_mut() {
                q.events.clear();
            }
        }
    }

    /// The earliest instant any queue has a delay or lease ending.
    pub fn next_due(&self) -> Option<Nanos> {
        self.queues
            .values()
            .filter_map(|q| q.broker.next_due())
            .min()
    }
}
