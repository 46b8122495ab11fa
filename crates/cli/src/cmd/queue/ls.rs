//! `bosun queue ls [QUEUE]`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::calls::Dated;
use crate::client::Client;
use crate::out::print_json;
use crate::render;

/// List items, of one queue or all
#[derive(Debug, Args)]
pub struct LsArgs {
    queue: Option<String>,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: LsArgs) -> Result<ExitCode> {
    let Dated { now, all: items } = client.queue_list(args.queue)?;
    if args.json {
        print_json(&items)?;
    } else {
        let rows: Vec<Vec<String>> = items
            .iter()
            .map(|i| {
                vec![
                    i.id.to_string(),
                    i.queue.clone(),
                    format!("{:?}", i.state).to_lowercase(),
                    i.failures.to_string(),
                    i.job.as_ref().map_or("-".into(), ToString::to_string),
                    render::age(now, i.at.as_millis()),
                    i.data.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "),
                ]
            })
            .collect();
        println!("{}", render::table(&["ITEM", "QUEUE", "STATE", "FAILURES", "JOB", "AGE", "FIELDS"], &rows));
    }
    Ok(ExitCode::SUCCESS)
}
