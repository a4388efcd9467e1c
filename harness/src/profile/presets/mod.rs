//! Framework presets of `workload.message.format`: the message each framework's own producer
//! would send, written once as a [`MessageSpec`], for the broker kinds the framework runs on.
//! One framework per file; each takes the same [`PresetInput`] and answers for a [`Carrier`].

mod celery;
mod dramatiq;
mod faststream;

use super::message::{Carrier, Format, MessageSpec, Node};

/// What a profile gives a preset besides `format`.
#[derive(Debug, Clone, Default)]
pub struct PresetInput {
    /// `task`: Celery's task name, Dramatiq's actor name.
    pub task: Option<String>,
    /// `args` (a list), `kwargs` (a mapping): the task's arguments; default `["{key}", "{email}"]`
    /// and `{}`.
    pub args: Option<Node>,
    pub kwargs: Option<Node>,
    /// `body`: the payload inside the framework's envelope, where the framework has one
    /// (FastStream); default the order's JSON (`{body}`).
    pub body: Option<Node>,
}

/// Why a preset cannot be made: the field at fault (below `workload.message`) and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresetError {
    pub field: &'static str,
    pub message: String,
}

impl PresetError {
    fn new(field: &'static str, message: impl Into<String>) -> PresetError {
        PresetError {
            field,
            message: message.into(),
        }
    }
}

/// The message of `format` on a broker that carries messages as `carrier` (`kind` names it).
pub fn expand(
    format: Format,
    input: PresetInput,
    carrier: Carrier,
    kind: &str,
) -> Result<MessageSpec, PresetError> {
    match format {
        Format::Celery => celery::spec(input, carrier, kind),
        Format::Dramatiq => dramatiq::spec(input, carrier, kind),
        Format::FastStream => faststream::spec(input, carrier, kind),
        Format::Custom => unreachable!("a custom message is no preset"),
    }
}

/// The task name, required by the task frameworks.
fn task(input: &PresetInput, framework: &str, example: &str) -> Result<String, PresetError> {
    match &input.task {
        Some(t) if !t.trim().is_empty() => Ok(t.clone()),
        _ => Err(PresetError::new(
            "task",
            format!("required with format {framework}: the name the worker knows the task by, e.g. task: {example}"),
        )),
    }
}

/// The task's positional arguments: the profile's list, or the order's key and address.
fn args(input: &PresetInput) -> Node {
    input
        .args
        .clone()
        .unwrap_or_else(|| Node::List(vec![Node::text("{key}"), Node::text("{email}")]))
}

fn kwargs(input: &PresetInput) -> Node {
    input.kwargs.clone().unwrap_or(Node::Map(Vec::new()))
}

/// A preset's refusal of a kind it has no transport for.
fn unsupported(framework: &str, kind: &str, kinds: &str) -> PresetError {
    PresetError::new(
        "format",
        format!("{framework} does not run on broker.kind {kind}: it runs on {kinds}"),
    )
}

/// Refuses the keys a preset does not read.
fn refuse(
    input: &PresetInput,
    framework: &str,
    keys: &[(&'static str, bool)],
) -> Result<(), PresetError> {
    let given = [
        ("task", input.task.is_some()),
        ("args", input.args.is_some()),
        ("kwargs", input.kwargs.is_some()),
        ("body", input.body.is_some()),
    ];
    for (name, set) in given {
        let allowed = keys.iter().any(|(k, ok)| *k == name && *ok);
        if set && !allowed {
            return Err(PresetError::new(
                match name {
                    "task" => "task",
                    "args" => "args",
                    "kwargs" => "kwargs",
                    _ => "body",
                },
                format!("format {framework} does not read {name} here"),
            ));
        }
    }
    Ok(())
}

/// An empty shape of `format`, for a preset to fill.
fn blank(format: Format, body: Node) -> MessageSpec {
    MessageSpec {
        format,
        body,
        headers: Vec::new(),
        content_type: None,
        content_encoding: None,
        correlation_id: None,
        fields: Vec::new(),
        attributes: Vec::new(),
        declares: None,
        leaves: Vec::new(),
        delay_queues: Vec::new(),
        dead_letter_queues: Vec::new(),
    }
}
