//! The protocol on top of messages: the rules every structured message obeys, and sending a
//! request and waiting for its answer.

pub(crate) mod exchange;
pub(crate) mod rules;
