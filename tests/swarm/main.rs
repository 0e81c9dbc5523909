//! Integration tests: the real binary, real files, real processes (and real tmux servers).

mod claude_format;
mod cleanup;
mod concurrency;
mod docs;
mod file_safety;
mod harness;
mod identity;
mod interface;
mod launcher;
mod layers;
mod lifecycle;
mod limits;
mod logs;
mod messaging;
mod navigation;
mod other_tools;
mod paste;
mod peers;
mod person;
mod private_files;
mod processes;
mod protocol_rules;
mod scripted;
mod signatures;
mod tasks;
mod teams;
