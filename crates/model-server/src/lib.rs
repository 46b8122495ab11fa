//! A scripted model server and the private client configurations that point the real agent
//! clients at it: what `bosun doctor --clients` runs the user's installed Claude Code and Codex
//! against, and what bosun's own tests run the pinned versions against.
//!
//! - `ModelServer` (`server`): a model API on 127.0.0.1 — the Anthropic Messages API for Claude
//!   Code, the OpenAI Responses API for Codex, the Gemini API for Gemini CLI — that answers from a script of `Reply`s and logs
//!   every request it heard (`Logged`).
//! - `clients`: a config directory and a home of the client's own (`ClaudeConfig`,
//!   `CodexConfig`) holding a fake key only, and the environment to run the client with
//!   (`ClientEnv`), with the variables that would point it at a real account removed.
//!
//! Nothing here panics: a server that cannot listen, or a config that cannot be written, is an
//! error the caller reports. Every read of a request is bounded (`http_lines`, `http`).

mod anthropic;
pub mod clients;
mod gemini;
mod http;
pub mod http_lines;
mod openai;
mod opencode_client;
pub mod pi_config;
mod pieces;
mod script;
mod server;
mod usage;

pub use opencode_client::{OpencodeConfig, OPENCODE_MODEL};
pub use script::{Logged, Reply, DEFAULT_TEXT, SIDE_TEXT};
pub use server::{Api, ModelServer, ServerError};
pub use usage::{Limit, Usage};
