// BBC's sqs-consumer (npm `sqs-consumer`, with `@aws-sdk/client-sqs`) as an ackbench worker, in
// its production settings: a 30 s visibility timeout and, unless SQS_CONSUMER_HEARTBEAT=0, a
// heartbeat every 10 s that extends the lease while the handler runs. The handler is an email
// send: POST {provider}send, then sqs-consumer deletes the message when the handler resolves.
//
// Written as it would be for production: every duration is in seconds of its own clock. A live
// run starts it on the scaled clock (consumer.clock: scaled), so at time_scale 0.05 its 30 s
// lease and 10 s heartbeat are 1.5 s and 0.5 s of wall time without a line changed here.
//
// Environment (set by ackbench): AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID (names the worker),
// AWS_SECRET_ACCESS_KEY, AWS_REGION, ACKBENCH_QUEUE_URL, ACKBENCH_PROVIDER_URL, ACKBENCH_WORKER;
// SQS_CONSUMER_HEARTBEAT (seconds, default 10; 0: none). NODE_PATH must reach the packages.
"use strict";

const { Consumer } = require("sqs-consumer");
const { SQSClient } = require("@aws-sdk/client-sqs");

const queueUrl = process.env.ACKBENCH_QUEUE_URL;
const provider = process.env.ACKBENCH_PROVIDER_URL; // this worker's base URL, ends in "/"
const worker = process.env.ACKBENCH_WORKER || "?";
const heartbeat = Number(process.env.SQS_CONSUMER_HEARTBEAT ?? "10");

const log = (text) => process.stderr.write(`worker ${worker}: ${text}\n`);

async function handleMessage(message) {
  const { key, email } = JSON.parse(message.Body);
  const response = await fetch(`${provider}send`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ key, to: email }),
  });
  if (!response.ok) {
    // Not sent: sqs-consumer leaves the message, and the broker delivers it again.
    throw new Error(`${key}: provider answered ${response.status}`);
  }
  await response.json();
  return message;
}

const consumer = Consumer.create({
  queueUrl,
  sqs: new SQSClient({}),
  handleMessage,
  visibilityTimeout: 30,
  ...(heartbeat > 0 ? { heartbeatInterval: heartbeat } : {}),
});
consumer.on("error", (err) => log(`error: ${err.message}`));
consumer.on("processing_error", (err) => log(`processing error: ${err.message}`));
log(`consuming ${queueUrl}, provider ${provider}, heartbeat ${heartbeat || "none"}`);
consumer.start();
