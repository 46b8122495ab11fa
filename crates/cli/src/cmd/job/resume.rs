//! `bosun job resume ID`: a failed or cancelled job run again from where it stopped.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::cmd::job::show::changed;

/// Run a failed or cancelled job again from where it stopped, in its workspace as it is now
/// (fix what made it fail first); its steps' visits count from zero
///
/// When the step's agent died without finishing its work (it crashed, was lost or was
/// killed, its policy having said neither done nor fail), the job goes on mid-step: that
/// same agent is restarted with its conversation resumed, so it continues where it stopped.
/// Otherwise (a shell step, or an agent that ended with an outcome) the step starts again.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  bosun job resume j3kq9 && bosun send <agent> \"Carry on\"")]
pub struct ResumeArgs {
    id: String,
}

pub fn run(client: &Client, args: ResumeArgs) -> Result<ExitCode> {
    let job = client.job_resume(args.id)?;
    changed(&job);
    if let Some(agent) = &job.resumed_with {
        println!("resumed mid-step: agent {agent} restarted with its conversation");
    }
    Ok(ExitCode::SUCCESS)
}
