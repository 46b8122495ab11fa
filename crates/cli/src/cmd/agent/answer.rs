//! `bosun answer ID ANSWER`: the dialog an agent waits at, answered.

use std::process::ExitCode;

use anyhow::Result;
use bosun_core::driver::dialog::DialogAnswer;
use clap::Args;

use crate::calls::Answered;
use crate::client::Client;
use crate::out::print_json;

/// Answer the dialog an agent waits at (permission, plan, question, setup)
///
/// `allow` picks its first option that starts with "Yes", `deny` the first that starts with
/// "No", a number that option. The options are read from the agent's screen; with
/// --message, the text is typed once the agent waits for input again (after a deny, it is
/// what the agent should do instead).
#[derive(Debug, Args)]
pub struct AnswerArgs {
    /// Agent id (any unique prefix) or name
    id: String,
    /// allow, deny, or the number of an option (1-9)
    answer: DialogAnswer,
    #[arg(long)]
    message: Option<String>,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: AnswerArgs) -> Result<ExitCode> {
    let answer = args.answer;
    let answered = client.answer(args.id, answer, args.message)?;
    if args.json {
        print_json(&answered)?;
        return Ok(ExitCode::SUCCESS);
    }
    let Answered { agent, option, picked, message, .. } = answered;
    match picked {
        true => println!("answered {agent}'s dialog with {answer}: {option:?}"),
        false => println!("answering {agent}'s dialog with {answer}: moving to {option:?}, then picking it"),
    }
    if let Some(m) = message {
        println!("message {m} goes to the agent when it waits for input");
    }
    Ok(ExitCode::SUCCESS)
}
