//! `bosun usage`: the tokens agents' model calls used, summed by agent, model or job, from the
//! ledger the daemon keeps of what each client records in its session.

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::Result;
use bosun_core::usage::Tokens;
use clap::{Args, ValueEnum};
use serde::Serialize;

use crate::client::Client;
use crate::cmd::flags::JsonFlag;
use crate::out::print_json;
use crate::render;

/// The tokens agents' model calls used: input, output, cache write and cache read, as each
/// client records them in its session (Claude Code's transcript, Codex's rollout, Gemini CLI's
/// and pi's session files, opencode's assistant messages as bosun's plugin keeps them), each
/// response counted once.
///
/// Not counted: what a client spends without recording it in its session: Codex's title
/// requests (about a third of a one-turn session's input tokens), Gemini CLI's model-router
/// requests, opencode's title request for each new session (about 4 % of the tokens of a
/// session of two model calls); Claude Code sends none with its non-essential traffic off.
/// Agents of other programs show no tokens. No cost is shown: bosun has no price table yet.
#[derive(Debug, Args)]
pub struct UsageArgs {
    /// What to sum by
    #[arg(long, value_enum, default_value = "agent")]
    by: By,
    #[command(flatten)]
    flag: JsonFlag,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum By {
    Agent,
    Model,
    Job,
}

/// One line of the sum: what it is of, and its tokens.
#[derive(Debug, Serialize)]
struct Line {
    of: String,
    #[serde(flatten)]
    tokens: Tokens,
    total: u64,
}

pub fn run(client: &Client, args: UsageArgs) -> Result<ExitCode> {
    let list = client.list()?;
    let mut sums: BTreeMap<String, Tokens> = BTreeMap::new();
    for agent in &list.agents {
        for (model, tokens) in &agent.tokens {
            let of = match args.by {
                By::Agent => agent.id.to_string(),
                By::Model if model.is_empty() => "(not named)".to_owned(),
                By::Model => model.clone(),
                By::Job => agent.job.as_ref().map_or_else(|| "(no job)".to_owned(), ToString::to_string),
            };
            sums.entry(of).or_default().add(tokens);
        }
    }
    let mut total = Tokens::default();
    for tokens in sums.values() {
        total.add(tokens);
    }
    let lines: Vec<Line> = sums.into_iter().map(|(of, tokens)| Line { of, total: tokens.total(), tokens }).collect();
    if args.flag.json {
        print_json(&serde_json::json!({"by": format!("{:?}", args.by).to_lowercase(), "lines": lines,
                                        "total": Line { of: "total".into(), total: total.total(), tokens: total }}))?;
        return Ok(ExitCode::SUCCESS);
    }
    if lines.is_empty() {
        println!("no tokens recorded yet (bosun reads them from Claude Code's and Codex's sessions)");
        return Ok(ExitCode::SUCCESS);
    }
    let row = |l: &Line| {
        let t = &l.tokens;
        vec![l.of.clone(), render::count(t.input), render::count(t.output), render::count(t.cache_write)]
            .into_iter()
            .chain([render::count(t.cache_read), render::count(l.total)])
            .collect::<Vec<_>>()
    };
    let mut rows: Vec<Vec<String>> = lines.iter().map(row).collect();
    rows.push(row(&Line { of: "total".into(), total: total.total(), tokens: total }));
    let by = format!("{:?}", args.by).to_uppercase();
    println!("{}", render::table(&[&by, "INPUT", "OUTPUT", "CACHE WRITE", "CACHE READ", "TOTAL"], &rows));
    Ok(ExitCode::SUCCESS)
}
