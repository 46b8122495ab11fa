//! Plans started (checked first: their repository, base and programs), resumed, and a
//! variant picked by a person.

use super::*;

pub(super) async fn start(
    ctx: &Arc<Context>,
    name: String,
    sources: Sources,
    cwd: PathBuf,
    drop_losers: bool,
) -> Answer {
    let id = format!("p{}", ctx.nonces.nonce().as_str());
    let mut plan = run::lowered(&sources)?.plan(&name, id.clone(), cwd).map_err(run::lower_error)?;
    plan.drop_losers = drop_losers;
    let (git, readiness) = (ctx.git.clone(), ctx.readiness.clone());
    let (containers, exe) = (ctx.containers.clone(), ctx.exe.clone());
    let (plan, warnings) = tokio::task::spawn_blocking(move || {
        let warnings = run::preflight_plan(&*git, &*readiness, (&*containers, &exe), &plan)?;
        let repo = git.repo_root(&plan.cwd).map_err(adapter_error)?;
        git.resolve_commit(&repo, &plan.base).map_err(adapter_error)?;
        // The current branch, by name: what its first jobs start from, as the seed says.
        if plan.base == "HEAD" {
            if let Some(branch) = git.current_branch(&repo).map_err(adapter_error)? {
                plan.base = branch;
            }
        }
        Ok::<_, WireError>((plan, warnings))
    })
    .await
    .map_err(|e| WireError::new(ErrorKind::Failed, format!("internal task failed: {e}")))??;
    submit(ctx, Input::StartPlan(Box::new(plan))).await?;
    queries::plan(ctx, id, warnings).await
}

pub(super) async fn resume(ctx: &Arc<Context>, plan: String) -> Answer {
    submit(ctx, Input::ResumePlan { plan: plan.clone() }).await?;
    queries::plan(ctx, plan, vec![]).await
}

pub(super) async fn pick(ctx: &Arc<Context>, plan: String, job: String, variant: u32) -> Answer {
    submit(ctx, Input::PickVariant { plan: plan.clone(), job, variant }).await?;
    queries::plan(ctx, plan, vec![]).await
}
