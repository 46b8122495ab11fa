//! `bosun job ls`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::calls::Dated;
use crate::client::Client;
use crate::cmd::flags::JsonFlag;
use crate::out::print_json;
use crate::render;

/// List jobs with their state, step and age
#[derive(Debug, Args)]
pub struct LsArgs {
    #[command(flatten)]
    flag: JsonFlag,
}

pub fn run(client: &Client, args: LsArgs) -> Result<ExitCode> {
    let Dated { now, all: jobs } = client.job_list()?;
    if args.flag.json {
        print_json(&jobs)?;
    } else if jobs.is_empty() {
        println!("no jobs yet: start one with `bosun run COMMAND`");
    } else {
        let rows: Vec<Vec<String>> = jobs
            .iter()
            .map(|j| {
                vec![
                    j.spec.id.to_string(),
                    j.spec.name.clone(),
                    j.state.label().to_owned(),
                    j.step.clone().unwrap_or_else(|| "-".into()),
                    render::age(now, j.created_at.as_millis()),
                ]
            })
            .collect();
        println!("{}", render::table(&["JOB", "NAME", "STATE", "STEP", "AGE"], &rows));
    }
    Ok(ExitCode::SUCCESS)
}
