//! The protocol on top of messages: the rules every structured message obeys, and sending a
//! request and waiting for its answer.

pub mod exchange;
pub mod rules;
