//! Test support: fakes for the adapter traits, and helpers that install (when missing) and drive
//! the real things tests use — git repositories in temp dirs, tmux on a private socket, the
//! claudeless Claude Code simulator, and the real Claude Code and Codex (`tools`) talking to a
//! fake model server (`fake_model`) in private configurations (`clients`), and a private Docker
//! engine with small images made without a registry (`docker`); and the house checks that read
//! the crates' own code (`house`).

pub mod bosun;
pub mod clients;
pub mod docker;
pub mod fake_model;
pub mod fakes;
pub mod faults;
pub mod git_daemon;
pub mod history;
pub mod house;
mod http_lines;
pub mod kube;
pub mod poll;
pub mod repo;
pub mod screen;
pub mod tools;
