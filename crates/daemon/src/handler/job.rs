//! A job cancelled or resumed, answered with the job as it is then.

use super::*;

pub(super) async fn cancel(ctx: &Arc<Context>, job: String) -> Answer {
    job_input(ctx, job, |job| Input::CancelJob { job }).await
}

pub(super) async fn resume(ctx: &Arc<Context>, job: String) -> Answer {
    job_input(ctx, job, |job| Input::ResumeJob { job }).await
}

/// Submits what `input` makes of the job `job` names, and answers with the job as it is then.
async fn job_input(ctx: &Arc<Context>, job: String, input: impl FnOnce(bosun_core::JobId) -> Input) -> Answer {
    let id = query(ctx, move |s| Ok(s.find_job(&job)?.spec.id.clone())).await?;
    submit(ctx, input(id.clone())).await?;
    queries::job(ctx, id.as_str().to_owned()).await
}
