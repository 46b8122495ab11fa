//! `bosun run COMMAND ARGS…` and a cron's turn run by hand: the runbook text sent with the
//! request lowered (the job is pinned to it by hash), the command's arguments checked against its
//! args spec, the job's locals evaluated once, its workspace prepared — all before anything is
//! recorded.

use std::collections::BTreeMap;
use std::path::PathBuf;

use bosun_core::{JobBook, JobId};
use bosun_runbook::load::SourceFile;
use bosun_runbook::lower::{lower, LowerError, Lowered};
use bosun_wire::RunCommand;

use super::*;
use crate::jobs::{Asked, Making};

pub(super) async fn run(ctx: &Arc<Context>, req: RunCommand) -> Answer {
    let (book, job, vars) = lowered(&req.sources)?.command(&req.command, &req.args).map_err(lower_error)?;
    start_job(ctx, book, job, vars, req.cwd).await
}

/// Refuses, saying every problem (one a line), when the jobs `names` of `book` cannot start from
/// `cwd` (see `crate::preflight`).
pub(super) fn preflight(
    git: &dyn bosun_adapters::Git,
    book: &JobBook,
    names: &[&str],
    cwd: &std::path::Path,
    plan_base: Option<&str>,
) -> Result<(), WireError> {
    let problems = crate::preflight::problems(git, book, names, cwd, plan_base);
    if problems.is_empty() {
        return Ok(());
    }
    Err(bad(problems.join("\n")))
}

/// The same for every job of `plan`, each with its agents as its `engine` says; the warnings of
/// programs not ready (not logged in) when nothing is wrong.
pub(super) fn preflight_plan(
    git: &dyn bosun_adapters::Git,
    readiness: &dyn bosun_adapters::readiness::Readiness,
    images: (&dyn bosun_adapters::Containers, &std::path::Path),
    plan: &bosun_core::Plan,
) -> Result<Vec<String>, WireError> {
    let (mut problems, mut warnings): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    let add = |all: &mut Vec<String>, found: Vec<String>| {
        for f in found {
            if !all.contains(&f) {
                all.push(f);
            }
        }
    };
    add(&mut problems, crate::preflight::plan_branches(git, plan));
    for (index, j) in plan.jobs.iter().enumerate() {
        let (book, names) = (plan.job_book(index), [j.job.as_str()]);
        add(&mut problems, crate::preflight::problems(git, &book, &names, &plan.cwd, Some(&plan.base)));
        add(&mut warnings, crate::preflight::not_ready(readiness, &book, &names));
        let (refused, warned) = crate::preflight::clients(readiness, &book, &names);
        add(&mut problems, refused);
        add(&mut warnings, warned);
        add(&mut problems, crate::preflight::images(images.0, images.1, &book, &names));
    }
    if problems.is_empty() {
        return Ok(warnings);
    }
    Err(bad(problems.join("\n")))
}

/// The runbook the CLI sent, as (path, text) pairs, lowered.
pub(super) fn lowered(sources: &[(PathBuf, String)]) -> Result<Lowered, WireError> {
    let files: Vec<SourceFile> =
        sources.iter().map(|(path, text)| SourceFile { path: path.clone(), text: text.clone() }).collect();
    lower(&files).map_err(lower_error)
}

pub(super) fn lower_error(e: LowerError) -> WireError {
    bad(e.to_string())
}

/// Makes the job `name` of `book` (run from `cwd`), starts it, and answers with its id,
/// workspace and branch.
pub(super) async fn start_job(
    ctx: &Arc<Context>,
    book: JobBook,
    name: String,
    vars: BTreeMap<String, String>,
    cwd: PathBuf,
) -> Answer {
    let nonce = ctx.nonces.nonce();
    let asked = Asked { id: JobId::new(&nonce), nonce, vars, cwd, item: None };
    let (git, pools) = (ctx.git.clone(), ctx.pools.clone());
    let (dirs, hook, readiness) = (ctx.dirs.clone(), ctx.hook_command.clone(), ctx.readiness.clone());
    let (containers, exe) = (ctx.containers.clone(), ctx.exe.clone());
    let config = query(ctx, |s| Ok(s.config.clone())).await?;
    let (spec, warnings) = tokio::task::spawn_blocking(move || {
        preflight(&*git, &book, &[name.as_str()], &asked.cwd, None)?;
        let (mut refused, mut warnings) = crate::preflight::clients(&*readiness, &book, &[name.as_str()]);
        refused.extend(crate::preflight::accounts(&config, &book, &[name.as_str()]));
        refused.extend(crate::preflight::images(&*containers, &exe, &book, &[name.as_str()]));
        if !refused.is_empty() {
            return Err(bad(refused.join("\n")));
        }
        warnings.extend(crate::preflight::not_ready(&*readiness, &book, &[name.as_str()]));
        let making = Making { git: &*git, pools: &*pools, dirs: &dirs, hook_command: &hook, branch: None };
        making.job(&book, &name, asked).map_err(bad).map(|spec| (spec, warnings))
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
    Ok(Response::JobStarted { job, workspace, branch, warnings })
}
