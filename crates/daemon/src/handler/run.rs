//! `bosun run COMMAND ARGS…`: the command's job, read from the runbook text sent with the
//! request (the job is pinned to it by hash), its arguments checked against the command's args
//! spec, its locals evaluated once, its workspace prepared — all before anything is recorded.

use std::collections::BTreeMap;

use bosun_core::{JobId, Nonce};
use bosun_runbook::load::{load, SourceFile};
use bosun_runbook::model::{ArgsSpec, Command, Run};
use bosun_wire::RunCommand;

use super::*;

pub(super) async fn run(ctx: &Arc<Context>, req: RunCommand) -> Answer {
    let sources: Vec<SourceFile> =
        req.sources.iter().map(|(path, text)| SourceFile { path: path.clone(), text: text.clone() }).collect();
    let runbook = load(&sources).map_err(|errors| {
        let all: Vec<String> = errors.iter().map(ToString::to_string).collect();
        bad(format!("the runbooks have errors (see `bosun runbook check`): {}", all.join("; ")))
    })?;
    let command = runbook.commands.get(&req.command).ok_or_else(|| {
        let known: Vec<&str> = runbook.commands.keys().map(String::as_str).collect();
        bad(format!("no command {:?} in the runbooks (commands: {})", req.command, known.join(", ")))
    })?;
    let vars = args(&req.command, command, &req.args).map_err(bad)?;
    // The loader gives a command that runs a shell command or an agent a job of one step.
    let Run::Job(job_name) = command.run.clone() else {
        return Err(bad(format!("command {:?} runs no job", req.command)));
    };
    start_job(ctx, runbook, job_name, vars, req.cwd, &sources).await
}

/// Makes the job `name` of `runbook` (run from `cwd`, pinned to `sources`), starts it, and
/// answers with its id, workspace and branch.
pub(super) async fn start_job(
    ctx: &Arc<Context>,
    runbook: bosun_runbook::model::Runbook,
    name: String,
    vars: BTreeMap<String, String>,
    cwd: std::path::PathBuf,
    sources: &[SourceFile],
) -> Answer {
    let nonce = Nonce::from_bits(fastrand::u64(..));
    let id = JobId::new(&nonce);
    let (workspaces, dirs) = (ctx.workspaces.clone(), ctx.dirs.clone());
    let hash = crate::jobs::runbook_hash(sources);
    let hook = ctx.hook_command.clone();
    let spec = tokio::task::spawn_blocking(move || {
        let ctx = crate::jobs::Making { workspaces: &*workspaces, dirs: &dirs, hook_command: &hook, branch: None };
        ctx.job(&runbook, &name, vars, &cwd, id, nonce, hash, None).map_err(bad)
    })
    .await
    .map_err(|e| WireError::new(ErrorKind::Failed, e.to_string()))??;
    let events = submit(ctx, Input::StartJob(Box::new(spec))).await?;
    let (mut job, mut workspace, mut branch) = (None, None, None);
    for e in events {
        match e {
            Event::JobCreated { job: j } => job = Some(j.spec.id.clone()),
            Event::WorkspaceCreating { workspace: w } => {
                branch = w.branch().map(str::to_owned);
                workspace = Some(w.path);
            }
            _ => {}
        }
    }
    let job = job.ok_or_else(|| WireError::new(ErrorKind::Failed, "the run recorded no job"))?;
    Ok(Response::JobStarted { job, workspace, branch })
}

/// The command's arguments by name: positionals in order, `--option value`, `--flag`, and the
/// command's defaults for what is not given.
fn args(name: &str, command: &Command, given: &[String]) -> Result<BTreeMap<String, String>, String> {
    let usage = usage(name, &command.args);
    let mut vars = command.defaults.clone();
    let mut positional = command.args.positional.iter();
    let mut i = 0;
    while i < given.len() {
        let a = &given[i];
        if let Some(opt) = a.strip_prefix("--") {
            match command.args.options.iter().find(|(o, _)| o == opt) {
                Some((o, Some(_))) => {
                    let v = given.get(i + 1).ok_or_else(|| format!("--{o} needs a value: {usage}"))?;
                    vars.insert(o.clone(), v.clone());
                    i += 1;
                }
                Some((o, None)) => {
                    vars.insert(o.clone(), "true".into());
                }
                None => return Err(format!("unknown option --{opt}: {usage}")),
            }
        } else {
            let p = positional.next().ok_or_else(|| format!("too many arguments ({a:?}): {usage}"))?;
            vars.insert(p.clone(), a.clone());
        }
        i += 1;
    }
    if let Some(missing) = positional.next() {
        return Err(format!("missing <{missing}>: {usage}"));
    }
    Ok(vars)
}

fn usage(name: &str, spec: &ArgsSpec) -> String {
    let mut u = format!("usage: bosun run {name}");
    for p in &spec.positional {
        u.push_str(&format!(" <{p}>"));
    }
    for (o, v) in &spec.options {
        match v {
            Some(v) => u.push_str(&format!(" [--{o} <{v}>]")),
            None => u.push_str(&format!(" [--{o}]")),
        }
    }
    u
}
