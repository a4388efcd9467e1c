//! The request parser: headers and body in, a validated [`Request`] or an AWS-shaped error out.
//! A pure function of its input (no queue state, no clock), so that it can be fuzzed.

use http::HeaderMap;

use super::error::{ErrorCode, SqsError};
use super::parse_query;
use super::request::{Action, Protocol, Receive, Request, VisibilityEntry};
use super::validate::{self as v, required};
use super::wire::Wire;

/// The `X-Amz-Target` prefix of SQS operations.
const TARGET_PREFIX: &str = "AmazonSQS.";

/// Operations SQS has that this broker answers with `UnsupportedOperation`.
const UNSUPPORTED: &[&str] = &[
    "AddPermission",
    "RemovePermission",
    "StartMessageMoveTask",
    "CancelMessageMoveTask",
    "ListMessageMoveTasks",
];

/// The protocol a request speaks, judged from its headers alone (so that even a request that
/// fails to parse is answered in its client's format): JSON when it has `X-Amz-Target`.
pub fn protocol_of(headers: &HeaderMap) -> Protocol {
    if headers.contains_key("x-amz-target") {
        Protocol::Json
    } else {
        Protocol::Query
    }
}

/// The access key id of the request's SigV4 credentials: `Authorization: AWS4-HMAC-SHA256
/// Credential=<AKID>/<date>/<region>/sqs/aws4_request, ...`. Signatures are not verified.
pub fn access_key(headers: &HeaderMap) -> Option<String> {
    let auth = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let rest = &auth[auth.find("Credential=")? + "Credential=".len()..];
    let akid = rest.split(['/', ',', ' ']).next()?;
    (!akid.is_empty()).then(|| akid.to_string())
}

/// Parses one request. `path` is the request path (the query protocol may name the queue there
/// instead of in `QueueUrl`); for a query-protocol GET, pass the URL's query string as `body`.
pub fn parse_request(path: &str, headers: &HeaderMap, body: &[u8]) -> Result<Request, SqsError> {
    let protocol = protocol_of(headers);
    let (name, wire) = match protocol {
        Protocol::Json => json(headers, body)?,
        Protocol::Query => parse_query::parse(path, headers, body)?,
    };
    let action = action(protocol, &name, wire)?;
    let mut access_key = access_key(headers);
    if access_key.is_none() && protocol == Protocol::Query {
        access_key = parse_query::access_key(body);
    }
    Ok(Request {
        protocol,
        access_key,
        action,
    })
}

/// `X-Amz-Target` and a JSON object body.
fn json(headers: &HeaderMap, body: &[u8]) -> Result<(String, Wire), SqsError> {
    let target = headers
        .get("x-amz-target")
        .and_then(|t| t.to_str().ok())
        .unwrap_or_default();
    let Some(name) = target.strip_prefix(TARGET_PREFIX) else {
        return Err(SqsError::new(
            ErrorCode::UnknownOperation,
            format!("X-Amz-Target '{target}' names no SQS operation"),
        ));
    };
    let content_type = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|t| t.to_str().ok())
        .unwrap_or_default();
    let media = content_type.split(';').next().unwrap_or_default().trim();
    if !media.eq_ignore_ascii_case("application/x-amz-json-1.0")
        && !media.eq_ignore_ascii_case("application/x-amz-json-1.1")
    {
        return Err(SqsError::new(
            ErrorCode::MalformedRequest,
            format!("Content-Type must be application/x-amz-json-1.0, got '{content_type}'"),
        ));
    }
    let body = if body.iter().all(u8::is_ascii_whitespace) {
        &b"{}"[..]
    } else {
        body
    };
    let wire: Wire = serde_json::from_slice(body).map_err(|e| {
        SqsError::new(
            ErrorCode::SerializationException,
            format!("The request body is not a valid {name} request: {e}"),
        )
    })?;
    Ok((name.to_string(), wire))
}

/// Builds the action named `name` from its members.
pub(crate) fn action(protocol: Protocol, name: &str, mut w: Wire) -> Result<Action, SqsError> {
    Ok(match name {
        "CreateQueue" => Action::CreateQueue {
            name: v::queue_name(w.queue_name)?,
            attributes: w.attributes.unwrap_or_default(),
            tags: w.tags.unwrap_or_default(),
        },
        "TagQueue" => Action::TagQueue {
            queue: v::queue_of_url(w.queue_url)?,
            tags: required(w.tags, "Tags")?,
        },
        "UntagQueue" => Action::UntagQueue {
            queue: v::queue_of_url(w.queue_url)?,
            keys: required(w.tag_keys, "TagKeys")?,
        },
        "ListQueueTags" => Action::ListQueueTags {
            queue: v::queue_of_url(w.queue_url)?,
        },
        "ListDeadLetterSourceQueues" => Action::ListDeadLetterSourceQueues {
            queue: v::queue_of_url(w.queue_url)?,
            max_results: v::opt_in_range(w.max_results, 1, 1000, "MaxResults")?,
            next_token: w.next_token,
        },
        "GetQueueUrl" => Action::GetQueueUrl {
            name: required(w.queue_name, "QueueName")?,
        },
        "ListQueues" => Action::ListQueues {
            prefix: w.queue_name_prefix,
            max_results: v::opt_in_range(w.max_results, 1, 1000, "MaxResults")?,
            next_token: w.next_token,
        },
        "DeleteQueue" => Action::DeleteQueue {
            queue: v::queue_of_url(w.queue_url)?,
        },
        "PurgeQueue" => Action::PurgeQueue {
            queue: v::queue_of_url(w.queue_url)?,
        },
        "GetQueueAttributes" => Action::GetQueueAttributes {
            queue: v::queue_of_url(w.queue_url)?,
            names: w.attribute_names.unwrap_or_default(),
        },
        "SetQueueAttributes" => Action::SetQueueAttributes {
            queue: v::queue_of_url(w.queue_url)?,
            attributes: required(w.attributes, "Attributes")?,
        },
        "SendMessage" => {
            let message = w.take_message();
            let queue = v::queue_of_url(w.queue_url)?;
            Action::SendMessage {
                queue,
                message: v::message(message)?,
            }
        }
        "SendMessageBatch" => {
            let queue = v::queue_of_url(w.queue_url)?;
            let entries = entries(w.entries)?;
            let entries = entries
                .into_iter()
                .map(|(id, mut e)| (id, v::message(e.take_message())))
                .collect();
            Action::SendMessageBatch { queue, entries }
        }
        "ReceiveMessage" => {
            let mut system = w.attribute_names.unwrap_or_default();
            system.extend(w.message_system_attribute_names.unwrap_or_default());
            Action::ReceiveMessage(Receive {
                queue: v::queue_of_url(w.queue_url)?,
                max_messages: v::opt_in_range(
                    w.max_number_of_messages,
                    1,
                    v::MAX_BATCH as i64,
                    "MaxNumberOfMessages",
                )?
                .unwrap_or(1),
                wait_s: v::opt_in_range(w.wait_time_seconds, 0, v::MAX_WAIT_S, "WaitTimeSeconds")?,
                visibility_timeout_s: v::opt_in_range(
                    w.visibility_timeout,
                    0,
                    v::MAX_VISIBILITY_S,
                    "VisibilityTimeout",
                )?,
                system_attributes: v::system_attribute_names(system)?,
                message_attributes: w.message_attribute_names.unwrap_or_default(),
            })
        }
        "DeleteMessage" => Action::DeleteMessage {
            queue: v::queue_of_url(w.queue_url)?,
            receipt: required(w.receipt_handle, "ReceiptHandle")?,
        },
        "DeleteMessageBatch" => {
            let queue = v::queue_of_url(w.queue_url)?;
            let entries = entries(w.entries)?
                .into_iter()
                .map(|(id, e)| Ok((id, required(e.receipt_handle, "ReceiptHandle")?)))
                .collect::<Result<_, SqsError>>()?;
            Action::DeleteMessageBatch { queue, entries }
        }
        "ChangeMessageVisibility" => Action::ChangeMessageVisibility {
            queue: v::queue_of_url(w.queue_url)?,
            receipt: required(w.receipt_handle, "ReceiptHandle")?,
            timeout_s: v::in_range(
                required(w.visibility_timeout, "VisibilityTimeout")?,
                0,
                v::MAX_VISIBILITY_S,
                "VisibilityTimeout",
            )?,
        },
        "ChangeMessageVisibilityBatch" => {
            let queue = v::queue_of_url(w.queue_url)?;
            let entries = entries(w.entries)?
                .into_iter()
                .map(|(id, e)| {
                    Ok(VisibilityEntry {
                        id,
                        receipt: required(e.receipt_handle, "ReceiptHandle")?,
                        timeout_s: v::in_range(
                            required(e.visibility_timeout, "VisibilityTimeout")?,
                            0,
                            v::MAX_VISIBILITY_S,
                            "VisibilityTimeout",
                        )?,
                    })
                })
                .collect::<Result<_, SqsError>>()?;
            Action::ChangeMessageVisibilityBatch { queue, entries }
        }
        other if UNSUPPORTED.contains(&other) => {
            return Err(SqsError::new(
                ErrorCode::UnsupportedOperation,
                format!("{other} is not supported by ackbench's embedded broker"),
            ))
        }
        other => {
            let code = match protocol {
                Protocol::Json => ErrorCode::UnknownOperation,
                Protocol::Query => ErrorCode::InvalidAction,
            };
            return Err(SqsError::new(
                code,
                format!("The action {other} is not valid for this endpoint."),
            ));
        }
    })
}

/// A batch's entries with their ids checked (count, form, distinctness).
fn entries(
    entries: Option<Vec<super::wire::WireEntry>>,
) -> Result<Vec<(String, super::wire::WireEntry)>, SqsError> {
    let entries = entries.unwrap_or_default();
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        let mut e = e;
        let id = required(e.id.take(), "Id")?;
        out.push((id, e));
    }
    v::batch_ids(out.iter().map(|(id, _)| id.as_str()))?;
    Ok(out)
}
