//! Test support: fakes for the adapter traits, and helpers that install (when missing) and drive
//! the real things tests use — git repositories in temp dirs, tmux on a private socket, the
//! claudeless Claude Code simulator, the real Claude Code and Codex (`tools`) talking to bosun's
//! model server (`fake_model`) in private configurations (`clients`), both from
//! `bosun-model-server`, and a private Docker engine with small images made without a registry
//! (`docker`); and the house checks that read the crates' own code (`house`).

pub mod bosun;
pub mod clients;
pub mod docker;
pub mod fake_model;
pub mod fakes;
pub mod faults;
pub mod git_daemon;
pub mod history;
pub mod house;
pub mod kube;
pub mod npm;
pub mod poll;
pub mod repo;
pub mod screen;
pub mod tools;
