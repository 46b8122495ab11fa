//! Crons started and stopped, and a cron's turn run by hand.

use super::*;

pub(super) async fn start(ctx: &Arc<Context>, name: String, sources: Sources, cwd: PathBuf) -> Answer {
    let cron = run::lowered(&sources)?.cron(&name, cwd).map_err(run::lower_error)?;
    submit(ctx, Input::StartCron(Box::new(cron))).await?;
    queries::crons(ctx).await
}

pub(super) async fn stop(ctx: &Arc<Context>, name: String) -> Answer {
    submit(ctx, Input::StopCron { name }).await?;
    Ok(Response::Ok)
}

pub(super) async fn once(ctx: &Arc<Context>, name: String, sources: Sources, cwd: PathBuf) -> Answer {
    let cron = run::lowered(&sources)?.cron(&name, cwd).map_err(run::lower_error)?;
    run::start_job(ctx, cron.book, cron.job, Default::default(), cron.cwd).await
}
