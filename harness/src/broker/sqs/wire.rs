//! The request members SQS operations take, as the JSON protocol spells them. The query
//! protocol's form is translated to the same shape (see [`super::parse_query`]), so both
//! protocols share one decoder and one validation.
//!
//! Every member is optional here: which are required depends on the operation, and a missing one
//! is a `MissingParameter`, not a decoding error. Unknown members are ignored, as AWS does.

use std::collections::BTreeMap;

use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Wire {
    pub queue_url: Option<String>,
    pub queue_name: Option<String>,
    pub queue_name_prefix: Option<String>,
    pub next_token: Option<String>,
    pub max_results: Option<i64>,
    pub attributes: Option<BTreeMap<String, String>>,
    pub attribute_names: Option<Vec<String>>,
    pub message_system_attribute_names: Option<Vec<String>>,
    pub message_attribute_names: Option<Vec<String>>,
    pub max_number_of_messages: Option<i64>,
    pub wait_time_seconds: Option<i64>,
    pub visibility_timeout: Option<i64>,
    pub receipt_handle: Option<String>,
    pub message_body: Option<String>,
    pub delay_seconds: Option<i64>,
    pub message_attributes: Option<BTreeMap<String, WireAttribute>>,
    pub message_group_id: Option<String>,
    pub message_deduplication_id: Option<String>,
    pub entries: Option<Vec<WireEntry>>,
    /// `TagQueue` `Tags`; `CreateQueue` spells it `tags`.
    #[serde(alias = "tags")]
    pub tags: Option<BTreeMap<String, String>>,
    pub tag_keys: Option<Vec<String>>,
}

/// The members of a message to send (`SendMessage` and each `SendMessageBatch` entry).
#[derive(Debug, Default)]
pub struct WireMessage {
    pub message_body: Option<String>,
    pub delay_seconds: Option<i64>,
    pub message_attributes: Option<BTreeMap<String, WireAttribute>>,
    pub message_group_id: Option<String>,
    pub message_deduplication_id: Option<String>,
}

/// One batch entry: an `Id` and the members of its operation.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct WireEntry {
    pub id: Option<String>,
    pub receipt_handle: Option<String>,
    pub visibility_timeout: Option<i64>,
    pub message_body: Option<String>,
    pub delay_seconds: Option<i64>,
    pub message_attributes: Option<BTreeMap<String, WireAttribute>>,
    pub message_group_id: Option<String>,
    pub message_deduplication_id: Option<String>,
}

impl Wire {
    /// The message members (`SendMessage`).
    pub fn take_message(&mut self) -> WireMessage {
        WireMessage {
            message_body: self.message_body.take(),
            delay_seconds: self.delay_seconds.take(),
            message_attributes: self.message_attributes.take(),
            message_group_id: self.message_group_id.take(),
            message_deduplication_id: self.message_deduplication_id.take(),
        }
    }
}

impl WireEntry {
    /// The message members (a `SendMessageBatch` entry).
    pub fn take_message(&mut self) -> WireMessage {
        WireMessage {
            message_body: self.message_body.take(),
            delay_seconds: self.delay_seconds.take(),
            message_attributes: self.message_attributes.take(),
            message_group_id: self.message_group_id.take(),
            message_deduplication_id: self.message_deduplication_id.take(),
        }
    }
}

/// A message attribute value; `BinaryValue` is base64.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct WireAttribute {
    pub data_type: Option<String>,
    pub string_value: Option<String>,
    pub binary_value: Option<String>,
    pub string_list_values: Option<Vec<String>>,
    pub binary_list_values: Option<Vec<String>>,
}
