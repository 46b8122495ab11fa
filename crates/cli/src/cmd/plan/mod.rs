//! `bosun plan run | pick | ls | resume | show` (`shown.rs` prints plans).

pub mod ls;
pub mod pick;
pub mod resume;
pub mod run;
pub mod show;
pub mod shown;

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;

use crate::client::Client;

/// Plans: jobs run in order, each from the branch the one before produced
#[derive(Debug, Subcommand)]
pub enum PlanCommand {
    Run(run::RunArgs),
    Pick(pick::PickArgs),
    Ls(ls::LsArgs),
    Resume(resume::ResumeArgs),
    Show(show::ShowArgs),
}

pub fn run(client: &Client, cmd: PlanCommand) -> Result<ExitCode> {
    match cmd {
        PlanCommand::Run(args) => run::run(client, args),
        PlanCommand::Pick(args) => pick::run(client, args),
        PlanCommand::Ls(args) => ls::run(client, args),
        PlanCommand::Resume(args) => resume::run(client, args),
        PlanCommand::Show(args) => show::run(client, args),
    }
}
