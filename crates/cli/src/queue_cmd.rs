//! `bosun queue push | ls | retry | drop` and `bosun worker start | stop | ls`.

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::{Context, Result};
use bosun_runbook::lower::{lower, LowerError};

use crate::args::{QueueCommand, WorkerCommand};
use crate::calls::Dated;
use crate::client::Client;
use crate::commands::print_json;
use crate::error::{usage, CliError, Kind};
use crate::render;

pub fn queue(client: &Client, cmd: QueueCommand) -> Result<ExitCode> {
    match cmd {
        QueueCommand::Push { queue, fields } => {
            let (files, _, _) = crate::runbook_cmd::sources()?;
            let retry = match lower(&files).and_then(|l| l.queue_retry(&queue)) {
                Ok(retry) => retry,
                Err(e @ LowerError::Missing { .. }) => {
                    return Err(CliError::new(Kind::NotFound, e.to_string())
                        .hint("`bosun runbook ls` lists the queues")
                        .into())
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
        }
        QueueCommand::Ls { queue, json } => {
            let Dated { now, all: items } = client.queue_list(queue)?;
            if json {
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
        }
        QueueCommand::Retry { item } => {
            client.queue_retry(item.clone())?;
            println!("{item} is pending again");
        }
        QueueCommand::Drop { item } => {
            client.queue_drop(item.clone())?;
            println!("{item} dropped");
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn worker(client: &Client, cmd: WorkerCommand) -> Result<ExitCode> {
    match cmd {
        WorkerCommand::Start { name } => {
            let (sources, cwd) = crate::runbook_cmd::pairs()?;
            client.worker_start(name.clone(), sources, cwd)?;
            println!("worker {name} started");
        }
        WorkerCommand::Stop { name } => {
            client.worker_stop(name.clone())?;
            println!("worker {name} stopped");
        }
        WorkerCommand::Ls(flag) => {
            let workers = client.worker_list()?;
            if flag.json {
                print_json(&workers)?;
            } else {
                let rows: Vec<Vec<String>> = workers
                    .iter()
                    .map(|w| {
                        let state = if w.running { "running" } else { "stopped" };
                        let error = w.error.clone().unwrap_or_else(|| "-".into());
                        vec![
                            w.name.clone(),
                            state.into(),
                            w.queue.clone(),
                            w.job.clone(),
                            w.concurrency.to_string(),
                            error,
                        ]
                    })
                    .collect();
                println!("{}", render::table(&["WORKER", "STATE", "QUEUE", "JOB", "CONCURRENCY", "ERROR"], &rows));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
