//! `bosun worker ls`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::cmd::flags::JsonFlag;
use crate::out::print_json;
use crate::render;

/// List workers
#[derive(Debug, Args)]
pub struct LsArgs {
    #[command(flatten)]
    flag: JsonFlag,
}

pub fn run(client: &Client, args: LsArgs) -> Result<ExitCode> {
    let workers = client.worker_list()?;
    if args.flag.json {
        print_json(&workers)?;
    } else {
        let rows: Vec<Vec<String>> = workers
            .iter()
            .map(|w| {
                let state = if w.running { "running" } else { "stopped" };
                let error = w.error.clone().unwrap_or_else(|| "-".into());
                vec![w.name.clone(), state.into(), w.queue.clone(), w.job.clone(), w.concurrency.to_string(), error]
            })
            .collect();
        println!("{}", render::table(&["WORKER", "STATE", "QUEUE", "JOB", "CONCURRENCY", "ERROR"], &rows));
    }
    Ok(ExitCode::SUCCESS)
}
