//! What an SQS server answered, read from its response body: the messages of a
//! `ReceiveMessage` and the entries of a `DeleteMessageBatch`, in either protocol (AWS JSON 1.0,
//! or the query protocol's XML).

/// One message of a `ReceiveMessage` answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    pub receipt: String,
    pub body: String,
}

/// The messages of a `ReceiveMessage` answer (none for an answer that is not one).
pub fn received(json: bool, body: &[u8]) -> Vec<Received> {
    if json {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) else {
            return Vec::new();
        };
        v["Messages"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| Received {
                receipt: m["ReceiptHandle"].as_str().unwrap_or_default().to_string(),
                body: m["Body"].as_str().unwrap_or_default().to_string(),
            })
            .collect()
    } else {
        xml_messages(body)
    }
}

/// The ids of the entries a `DeleteMessageBatch` answer reports as done.
pub fn batch_successes(json: bool, body: &[u8]) -> Vec<String> {
    if json {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) else {
            return Vec::new();
        };
        v["Successful"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["Id"].as_str().map(str::to_string))
            .collect()
    } else {
        xml_texts_in(body, "DeleteMessageBatchResultEntry", "Id")
    }
}

/// `<Message>` elements: each one's `ReceiptHandle` and `Body`.
fn xml_messages(body: &[u8]) -> Vec<Received> {
    let text = String::from_utf8_lossy(body);
    elements(&text, "Message")
        .map(|m| Received {
            receipt: first_text(m, "ReceiptHandle"),
            body: first_text(m, "Body"),
        })
        .collect()
}

/// The text of every `field` inside an `element`.
fn xml_texts_in(body: &[u8], element: &str, field: &str) -> Vec<String> {
    let text = String::from_utf8_lossy(body);
    elements(&text, element)
        .map(|e| first_text(e, field))
        .collect()
}

/// The inner text of each `<name>...</name>` of `xml`, in order (SQS answers have neither
/// attributes on these elements nor nesting of the same name).
fn elements<'a>(xml: &'a str, name: &str) -> impl Iterator<Item = &'a str> {
    let (open, close) = (format!("<{name}>"), format!("</{name}>"));
    let mut rest = xml;
    std::iter::from_fn(move || {
        let start = rest.find(&open)? + open.len();
        let len = rest[start..].find(&close)?;
        let inner = &rest[start..start + len];
        rest = &rest[start + len + close.len()..];
        Some(inner)
    })
}

/// The unescaped text of the first `<name>` in `xml`, or empty.
fn first_text(xml: &str, name: &str) -> String {
    elements(xml, name).next().map_or_else(String::new, |t| {
        quick_xml::escape::unescape(t).map_or_else(|_| t.to_string(), |u| u.into_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_read_from_either_protocol() {
        let json = br#"{"Messages":[{"MessageId":"m1","ReceiptHandle":"r1","Body":"{\"key\":\"order-1\"}"},
            {"MessageId":"m2","ReceiptHandle":"r2","Body":"b2"}]}"#;
        assert_eq!(
            received(true, json),
            [
                Received {
                    receipt: "r1".into(),
                    body: r#"{"key":"order-1"}"#.into()
                },
                Received {
                    receipt: "r2".into(),
                    body: "b2".into()
                }
            ]
        );
        let xml =
            b"<ReceiveMessageResponse><ReceiveMessageResult><Message><MessageId>m1</MessageId>\
            <ReceiptHandle>r1</ReceiptHandle><Body>{&quot;key&quot;:&quot;order-1&quot;}</Body>\
            <Attribute><Name>ApproximateReceiveCount</Name><Value>2</Value></Attribute></Message>\
            </ReceiveMessageResult></ReceiveMessageResponse>";
        assert_eq!(
            received(false, xml),
            [Received {
                receipt: "r1".into(),
                body: r#"{"key":"order-1"}"#.into()
            }]
        );
        assert_eq!(received(true, b"{}"), []);
        assert_eq!(received(false, b"<ReceiveMessageResponse/>"), []);
    }

    #[test]
    fn batch_deletes_report_their_successful_ids() {
        let json = br#"{"Successful":[{"Id":"a"},{"Id":"c"}],"Failed":[{"Id":"b","Code":"ReceiptHandleIsInvalid"}]}"#;
        assert_eq!(batch_successes(true, json), ["a", "c"]);
        let xml = b"<DeleteMessageBatchResponse><DeleteMessageBatchResult>\
            <DeleteMessageBatchResultEntry><Id>a</Id></DeleteMessageBatchResultEntry>\
            <BatchResultErrorEntry><Id>b</Id><Code>ReceiptHandleIsInvalid</Code></BatchResultErrorEntry>\
            </DeleteMessageBatchResult></DeleteMessageBatchResponse>";
        assert_eq!(batch_successes(false, xml), ["a"]);
    }
}
