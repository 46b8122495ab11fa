//! Queue items pushed, retried and dropped, and the workers that take them.

use std::collections::BTreeMap;

use super::*;

pub(super) async fn push(ctx: &Arc<Context>, queue: String, data: BTreeMap<String, String>, retry: u32) -> Answer {
    submit(ctx, Input::QueuePush { queue, data, retry }).await?;
    Ok(Response::Ok)
}

pub(super) async fn retry(ctx: &Arc<Context>, item: String) -> Answer {
    let item = item_id(&item)?;
    submit(ctx, Input::QueueRetry { item }).await?;
    Ok(Response::Ok)
}

pub(super) async fn drop(ctx: &Arc<Context>, item: String) -> Answer {
    let item = item_id(&item)?;
    submit(ctx, Input::QueueDrop { item }).await?;
    Ok(Response::Ok)
}

pub(super) async fn start_worker(ctx: &Arc<Context>, name: String, sources: Sources, cwd: PathBuf) -> Answer {
    let worker = run::lowered(&sources)?.worker(&name, cwd).map_err(run::lower_error)?;
    submit(ctx, Input::StartWorker(Box::new(worker))).await?;
    Ok(Response::Ok)
}

pub(super) async fn stop_worker(ctx: &Arc<Context>, name: String) -> Answer {
    submit(ctx, Input::StopWorker { name }).await?;
    Ok(Response::Ok)
}

fn item_id(text: &str) -> Result<bosun_core::ItemId, WireError> {
    text.trim_start_matches('i')
        .parse()
        .map(bosun_core::ItemId)
        .map_err(|_| bad(format!("{text:?} is not a queue item id (such as i3): see `bosun queue ls`")))
}
