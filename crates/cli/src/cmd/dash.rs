//! `bosun dash`: the dashboard (its loop, view and drawing are `crate::dash`).

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;

/// The dashboard: every agent and job as it changes, and an agent's workspace with its live
/// terminal (`?` inside lists the keys)
#[derive(Debug, Args)]
pub struct DashArgs {}

pub fn run(client: &Client, _: DashArgs) -> Result<ExitCode> {
    crate::dash::run(client)
}
