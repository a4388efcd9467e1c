//! Unit tests of the SQS endpoint: receipt handles and the request parser.

mod fifo_spec;
mod memory;
mod parse;
mod receipts;
mod wire_time;
