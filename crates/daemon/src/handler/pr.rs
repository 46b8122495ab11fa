//! `bosun pr`: pushes an agent's or job's branch to the repository's `origin` and opens a pull
//! request for it into the branch its workspace started from (or `--into`), with the forge's own
//! CLI; its URL is recorded (`PullRequestOpened`) and shown by `bosun show`. Sent again after
//! the daemon died before it was recorded, the push is a no-op and the branch's open pull
//! request is found, not made again (`Forge::open_pr`).

use bosun_core::PullRequest;
use bosun_wire::PrAsk as Ask;

use super::merge::{branch_of, default_into};
use super::*;

pub(super) async fn pr(ctx: &Arc<Context>, ask: Ask) -> Answer {
    // Sent again after the daemon died, once recorded: what it recorded is the answer.
    let recorded = done_already().and_then(|events| {
        events.into_iter().find_map(|e| match e {
            Event::PullRequestOpened { pr, .. } => Some(pr),
            _ => None,
        })
    });
    if let Some(pr) = recorded {
        return Ok(Response::PullRequest { pr, warnings: Vec::new() });
    }
    let target = ask.target.clone();
    let (ws, said) = query(ctx, move |s| {
        let ws = s.find_work(&target)?.clone();
        let said = s.last_words(&ws.id);
        Ok((ws, said))
    })
    .await?;
    let (repo, branch, base_ref) = branch_of(&ws)?;
    let (git, forge, workspaces, w) = (ctx.git.clone(), ctx.forge.clone(), ctx.workspaces.clone(), ws.clone());
    let at = now();
    let (pr, warnings) = tokio::task::spawn_blocking(move || -> Result<(PullRequest, Vec<String>), WireError> {
        // Looking at a volume brings its commits to its branch here, before it is pushed.
        let dirty = workspaces.is_dirty(&w.path, &w.kind, &w.owned_files()).map_err(adapter_error)?;
        let warnings: Vec<String> = dirty
            .then(|| {
                format!("{} holds work not committed, which the pull request leaves out: commit it to add it", w.id)
            })
            .into_iter()
            .collect();
        let into = match ask.into {
            Some(into) => into,
            None => default_into(&*git, &repo, base_ref)?,
        };
        let title = ask.title.unwrap_or_else(|| format!("Work of {branch}"));
        let body = said.unwrap_or_else(|| format!("Opened by bosun for {branch}."));
        let asked =
            bosun_adapters::forge::PrAsk { branch: &branch, into: &into, title: &title, body: &body, draft: ask.draft };
        let pr = crate::pull_request::open(&*git, &*forge, &repo, &asked, at).map_err(adapter_error)?;
        Ok((pr, warnings))
    })
    .await
    .map_err(|e| WireError::new(ErrorKind::Failed, format!("internal task failed: {e}")))??;
    crate::faults::step("pr:opened");
    submit(ctx, Input::PullRequestOpened { workspace: ws.id.clone(), pr: pr.clone() }).await?;
    Ok(Response::PullRequest { pr, warnings })
}
