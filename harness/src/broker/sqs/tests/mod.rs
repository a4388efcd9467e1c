//! Unit tests of the SQS endpoint.
