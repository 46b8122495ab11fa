//! Group commit: the inputs found waiting together are decided and applied in order (each sees
//! the state the ones before it left), their events appended in one transaction, and only then
//! answered, broadcast and their effects handed on. If the append fails none of them is
//! acknowledged, and the state is reloaded from the store so that it is never ahead of the disk.

use std::sync::Arc;

use bosun_core::{apply, decide, Effect, Event, Input, Rejection, State};
use tokio::sync::broadcast;

use super::{now, EngineError, Reply};
use crate::store::Store;

/// The most inputs recorded in one transaction.
pub(super) const MAX_INPUTS: usize = 256;

pub(super) type Pending = (Box<Input>, Option<Reply>);

/// An input's decision, its events already applied.
type Decided = Result<(Vec<Event>, Vec<Effect>), Rejection>;

/// Records the batch; returns the effects to carry out, or `None` when the store failed and the
/// state could not be reloaded (the engine must then stop).
pub(super) fn commit(
    store: &mut Store,
    state: &mut State,
    batch: Vec<Pending>,
    events: &broadcast::Sender<Arc<Event>>,
) -> Option<Vec<Effect>> {
    let at = now();
    let decided: Vec<(Pending, Decided)> = batch
        .into_iter()
        .map(|pending| {
            let decision = decide(state, &pending.0, at).map(|d| {
                for event in &d.events {
                    apply(state, event);
                }
                (d.events, d.effects)
            });
            (pending, decision)
        })
        .collect();
    let recorded = decided.iter().filter_map(|(_, d)| d.as_ref().ok()).flat_map(|(events, _)| events);
    if let Err(e) = store.append(at, recorded) {
        tracing::error!(inputs = decided.len(), "cannot record a batch of inputs, none is acknowledged: {e}");
        for ((input, reply), _) in decided {
            tracing::error!(input = %describe(&input), "input not recorded");
            if let Some(r) = reply {
                let _ = r.send(Err(EngineError::Store(e.to_string())));
            }
        }
        return match store.load() {
            Ok(recorded) => {
                *state = recorded;
                Some(Vec::new())
            }
            Err(e) => {
                tracing::error!("cannot reload the state from the store: {e}");
                None
            }
        };
    }
    let mut effects = Vec::new();
    for ((_, reply), decision) in decided {
        let answer = match decision {
            Ok((recorded, more)) => {
                for event in &recorded {
                    tracing::debug!(?event, "applied");
                    let _ = events.send(Arc::new(event.clone()));
                }
                effects.extend(more);
                Ok(recorded)
            }
            Err(rejection) => Err(rejection.into()),
        };
        if let Some(r) = reply {
            let _ = r.send(answer);
        }
    }
    Some(effects)
}

/// What an input is, for the log: its kind and the request it came with, never its values (a
/// start's environment, a message's text).
fn describe(input: &Input) -> String {
    let kind = |input: &Input| {
        let value = serde_json::to_value(input).ok();
        value.and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_owned)).unwrap_or_default()
    };
    match input {
        Input::Requested { id, input } => format!("{} (request {})", kind(input), id.0),
        other => kind(other),
    }
}
