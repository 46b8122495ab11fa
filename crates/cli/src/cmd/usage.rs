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
/// Cost: each response at the prices of its time (dollars per million tokens of each kind).
/// bosun's own prices were taken on 2026-11-28 from Claude Code 2.1.332's model catalog
/// (Anthropic's models) and pi-ai 1.6.0's model table (OpenAI's and Google's); a file of yours
/// goes over them, model by model: `$BOSUN_PRICES`, else `prices.toml` in the state directory,
/// read as the daemon starts (`[models."<id>"]` with `input`, `output`, `cache_write`,
/// `cache_read`, in dollars per million). A model with no price shows its tokens and "unknown"
/// for its cost, never a guess.
///
/// Not counted: what a client spends without recording it in its session: Codex's title
/// requests (about a third of a one-turn session's input tokens), Gemini CLI's model-router
/// requests, opencode's title request for each new session (about 4 % of the tokens of a
/// session of two model calls); Claude Code sends none with its non-essential traffic off.
/// Agents of other programs show no tokens.
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

/// One line of the sum: what it is of, its tokens and their cost.
#[derive(Debug, Default, Serialize)]
struct Line {
    of: String,
    #[serde(flatten)]
    tokens: Tokens,
    total: u64,
    /// Dollars, of the responses whose model has a price.
    cost_usd: f64,
    /// Some responses' cost is unknown (their model has no price).
    cost_unknown: bool,
}

impl Line {
    fn add(&mut self, tokens: &Tokens, cost: Option<u64>, nanos: &mut u64) {
        self.tokens.add(tokens);
        self.total = self.tokens.total();
        match cost {
            Some(c) => *nanos = nanos.saturating_add(c),
            None => self.cost_unknown = true,
        }
        self.cost_usd = *nanos as f64 / 1e9;
    }

    fn cost(&self, nanos: u64) -> String {
        let known = (nanos > 0 || !self.cost_unknown).then_some(Some(nanos));
        render::cost(known.into_iter().chain(self.cost_unknown.then_some(None)))
    }
}

pub fn run(client: &Client, args: UsageArgs) -> Result<ExitCode> {
    let list = client.list()?;
    let mut sums: BTreeMap<String, (Line, u64)> = BTreeMap::new();
    let mut total = (Line { of: "total".into(), ..Line::default() }, 0u64);
    for agent in &list.agents {
        for (model, tokens) in &agent.tokens {
            let of = match args.by {
                By::Agent => agent.id.to_string(),
                By::Model if model.is_empty() => "(not named)".to_owned(),
                By::Model => model.clone(),
                By::Job => agent.job.as_ref().map_or_else(|| "(no job)".to_owned(), ToString::to_string),
            };
            let cost = agent.cost.get(model).copied().flatten();
            let (line, nanos) = sums.entry(of.clone()).or_insert_with(|| (Line { of, ..Line::default() }, 0));
            line.add(tokens, cost, nanos);
            total.0.add(tokens, cost, &mut total.1);
        }
    }
    let lines: Vec<(Line, u64)> = sums.into_values().collect();
    if args.flag.json {
        let only: Vec<&Line> = lines.iter().map(|(l, _)| l).collect();
        print_json(
            &serde_json::json!({"by": format!("{:?}", args.by).to_lowercase(), "lines": only, "total": total.0}),
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    if lines.is_empty() {
        println!("no tokens recorded yet (bosun reads them from Claude Code's and Codex's sessions)");
        return Ok(ExitCode::SUCCESS);
    }
    let row = |(l, nanos): &(Line, u64)| {
        let t = &l.tokens;
        vec![l.of.clone(), render::count(t.input), render::count(t.output), render::count(t.cache_write)]
            .into_iter()
            .chain([render::count(t.cache_read), render::count(l.total), l.cost(*nanos)])
            .collect::<Vec<_>>()
    };
    let mut rows: Vec<Vec<String>> = lines.iter().map(row).collect();
    rows.push(row(&total));
    let by = format!("{:?}", args.by).to_uppercase();
    println!("{}", render::table(&[&by, "INPUT", "OUTPUT", "CACHE WRITE", "CACHE READ", "TOTAL", "COST"], &rows));
    Ok(ExitCode::SUCCESS)
}
