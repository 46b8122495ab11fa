//! `bosun queue push QUEUE KEY=VALUE…`: an item added, with the retries its runbook gives it.

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::{Context, Result};
use bosun_runbook::lower::{lower, LowerError};
use clap::Args;

use crate::client::Client;
use crate::error::{usage, CliError, Kind};

/// Add an item: `bosun queue push bugs title="Login fails" url=…`
#[derive(Debug, Args)]
pub struct PushArgs {
    queue: String,
    /// The item's fields, as KEY=VALUE (a job sees them as ${item.KEY})
    #[arg(value_name = "KEY=VALUE")]
    fields: Vec<String>,
}

pub fn run(client: &Client, args: PushArgs) -> Result<ExitCode> {
    let PushArgs { queue, fields } = args;
    let (files, _, _) = crate::runbooks::sources()?;
    let retry = match lower(&files).and_then(|l| l.queue_retry(&queue)) {
        Ok(retry) => retry,
        Err(e @ LowerError::Missing { .. }) => {
            return Err(CliError::new(Kind::NotFound, e.to_string()).hint("`bosun runbook ls` lists the queues").into())
        }
        Err(e) => return Err(usage(e.to_string())),
    };
    let mut data = BTreeMap::new();
    for f in fields {
        let (k, v) = f.split_once('=').with_context(|| format!("{f:?} is not KEY=VALUE"))?;
        data.insert(k.to_owned(), v.to_owned());
    }
    client.queue_push(queue, data, retry)?;
    println!("pushed");
    Ok(ExitCode::SUCCESS)
}
