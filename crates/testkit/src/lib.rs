//! Test support: fakes for the adapter traits, and helpers that install (when missing) and drive
//! the real things tests use — git repositories in temp dirs, tmux on a private socket, and the
//! claudeless Claude Code simulator.

pub mod bosun;
pub mod fakes;
pub mod faults;
pub mod history;
pub mod poll;
pub mod repo;
pub mod tools;
