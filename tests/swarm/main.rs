//! Integration tests: the real binary, real files, real processes (and real tmux servers).

mod claude_format;
mod concurrency;
mod docs;
mod harness;
mod interface;
mod launcher;
mod layers;
mod lifecycle;
mod messaging;
mod peers;
mod processes;
mod protocol_rules;
mod secrets;
mod teams;
mod terminal;
