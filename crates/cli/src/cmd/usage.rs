//! `bosun usage`: the tokens agents' model calls used, summed by agent, model, job, plan or day
//! (UTC), all of them or since a time, from the ledger the daemon keeps of what each client
//! records in its session.

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::Result;
use bosun_core::usage::{Spend, Tokens};
use bosun_wire::AgentSummary;
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
///
/// Days are UTC days, as every time bosun prints is UTC. The ledger keeps spend by the hour: a
/// response counts in the hour its client recorded it (its first count, for one written in
/// parts), and `--since` counts from the start of its time's hour.
#[derive(Debug, Args)]
pub struct UsageArgs {
    /// What to sum by (`day`: UTC days)
    #[arg(long, value_enum, default_value = "agent")]
    by: By,
    /// Only what was spent since T: a date (`2026-11-28`, from its start in UTC), an RFC 3339
    /// time (`2026-11-28T09:00:00Z`) or a span back from now (`90m`, `24h`, `7d`)
    #[arg(long, value_name = "T")]
    since: Option<String>,
    #[command(flatten)]
    flag: JsonFlag,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum By {
    Agent,
    Model,
    Job,
    Plan,
    Day,
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
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let now = bosun_core::Timestamp::from_millis(u64::try_from(now.as_millis()).unwrap_or(u64::MAX));
    let since = args.since.as_deref().map(|t| bosun_core::usage::since(t, now)).transpose();
    let since = since.map_err(|e| crate::error::usage(format!("--since: {e}")))?;
    let list = client.list()?;
    let mut sums: BTreeMap<String, (Line, u64)> = BTreeMap::new();
    let mut total = (Line { of: "total".into(), ..Line::default() }, 0u64);
    for agent in &list.agents {
        for (hour, model, spend) in spends(agent, since, matches!(args.by, By::Day)) {
            let of = match args.by {
                By::Agent => agent.id.to_string(),
                By::Model if model.is_empty() => "(not named)".to_owned(),
                By::Model => model.to_owned(),
                By::Job => agent.job.as_ref().map_or_else(|| "(no job)".to_owned(), ToString::to_string),
                By::Plan => agent.plan.clone().unwrap_or_else(|| "(no plan)".to_owned()),
                By::Day => hour.map_or_else(|| "?".to_owned(), bosun_core::usage::day_of),
            };
            let (line, nanos) = sums.entry(of.clone()).or_insert_with(|| (Line { of, ..Line::default() }, 0));
            line.add(&spend.tokens, spend.known_cost(), nanos);
            total.0.add(&spend.tokens, spend.known_cost(), &mut total.1);
        }
    }
    let lines: Vec<(Line, u64)> = sums.into_values().collect();
    if args.flag.json {
        let only: Vec<&Line> = lines.iter().map(|(l, _)| l).collect();
        print_json(
            &serde_json::json!({"by": format!("{:?}", args.by).to_lowercase(), "since": since, "lines": only, "total": total.0}),
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

/// What the agent spent, by model: all of it as its ledger sums it, or by the hour (each with its
/// hour) when counted since a time or by day.
fn spends(
    agent: &AgentSummary,
    since: Option<bosun_core::Timestamp>,
    by_hour: bool,
) -> Vec<(Option<u64>, &str, Spend)> {
    if since.is_none() && !by_hour {
        return agent
            .tokens
            .iter()
            .map(|(model, tokens)| {
                let cost = agent.cost.get(model).copied().flatten();
                (None, model.as_str(), Spend { tokens: *tokens, cost: cost.unwrap_or(0), unpriced: cost.is_none() })
            })
            .collect();
    }
    let from = since.map_or(0, |t| t.as_millis() / bosun_core::usage::HOUR_MS);
    agent
        .hours
        .0
        .range(from..)
        .flat_map(|(hour, models)| models.iter().map(|(model, spend)| (Some(*hour), model.as_str(), *spend)))
        .collect()
}
