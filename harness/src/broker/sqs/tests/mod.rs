//! Unit tests of the SQS endpoint: receipt handles and the request parser.

mod parse;
mod receipts;
