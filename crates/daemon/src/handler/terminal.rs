//! Requests that act on an agent's terminal directly: keys pressed, the window resized.

use super::*;

pub(super) async fn press(ctx: &Arc<Context>, agent: String, keys: Vec<TermKey>) -> Answer {
    TermKey::check(&keys).map_err(|e| bad(e.to_string()))?;
    let session = queries::session_of(ctx, agent).await?;
    let sessions = ctx.sessions.clone();
    blocking(move || sessions.press(&session, &keys)).await?;
    Ok(Response::Ok)
}

/// Resizes the agent's window; answered with its size before.
pub(super) async fn resize(ctx: &Arc<Context>, agent: String, cols: u16, rows: u16) -> Answer {
    bosun_core::check_size(cols, rows).map_err(|e| bad(e.to_string()))?;
    let session = queries::session_of(ctx, agent).await?;
    let sessions = ctx.sessions.clone();
    let before = blocking(move || {
        let before = sessions.size(&session)?;
        sessions.resize(&session, cols, rows).map(|()| before)
    })
    .await?;
    Ok(Response::Resized { before })
}
