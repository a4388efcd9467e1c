//! `workload.message` on RabbitMQ: a JSON value as an AMQP field value, for message headers
//! and queue arguments (tables, arrays, integers, floats, booleans, strings, void).

use lapin::types::{AMQPValue, FieldArray, FieldTable, LongString, ShortString};
use serde_json::Value;

/// `v` as AMQP carries it: integers as signed 64-bit (`l`), other numbers as doubles.
pub fn amqp_value(v: &Value) -> AMQPValue {
    match v {
        Value::Null => AMQPValue::Void,
        Value::Bool(b) => AMQPValue::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => AMQPValue::LongLongInt(i),
            None => AMQPValue::Double(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => AMQPValue::LongString(LongString::from(s.as_bytes().to_vec())),
        Value::Array(items) => AMQPValue::FieldArray(FieldArray::from(
            items.iter().map(amqp_value).collect::<Vec<_>>(),
        )),
        Value::Object(map) => AMQPValue::FieldTable(table(map.iter())),
    }
}

/// A field table of `pairs`.
pub fn table<'a>(pairs: impl IntoIterator<Item = (&'a String, &'a Value)>) -> FieldTable {
    let mut t = FieldTable::default();
    for (k, v) in pairs {
        t.insert(ShortString::from(k.clone()), amqp_value(v));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn celery_headers_keep_their_types() {
        let v = serde_json::json!({"retries": 0, "eta": null, "timelimit": [null, null],
            "ignore_result": false, "task": "tasks.send", "stamps": {}, "ratio": 0.5});
        let Value::Object(map) = &v else {
            unreachable!()
        };
        let t = table(map.iter());
        let get = |k: &str| t.inner().get(&ShortString::from(k.to_string())).cloned();
        assert_eq!(get("retries"), Some(AMQPValue::LongLongInt(0)));
        assert_eq!(get("eta"), Some(AMQPValue::Void));
        assert_eq!(
            get("timelimit"),
            Some(AMQPValue::FieldArray(FieldArray::from(vec![
                AMQPValue::Void,
                AMQPValue::Void
            ])))
        );
        assert_eq!(get("ignore_result"), Some(AMQPValue::Boolean(false)));
        assert_eq!(get("ratio"), Some(AMQPValue::Double(0.5)));
        assert!(matches!(get("stamps"), Some(AMQPValue::FieldTable(_))));
        assert!(matches!(get("task"), Some(AMQPValue::LongString(_))));
    }
}
