//! The engine loop, on a thread of its own: takes the inputs waiting, asks the core to `decide`
//! each, appends their events to the store in one transaction (durable before anyone hears of
//! them), answers, hands the effects to the executor without waiting for them, and has the store
//! take a snapshot when one is due.

mod batch;

use std::future::Future;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use bosun_core::{Effect, Event, Input, Rejection, State, Timestamp};
use tokio::sync::{broadcast, mpsc, oneshot};

use crate::store::Store;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Rejected(#[from] Rejection),
    #[error("{0}")]
    Store(String),
    #[error("the engine has stopped")]
    Stopped,
}

type Reply = oneshot::Sender<Result<Vec<Event>, EngineError>>;
type Query = Box<dyn FnOnce(&State, u64) + Send>;

enum Msg {
    Input(Box<Input>, Option<Reply>),
    Query(Query),
    Stop,
}

/// Carries out effects; the engine only hands them over.
pub trait EffectSink: Send + 'static {
    fn dispatch(&self, effect: Effect, engine: &EngineHandle);
}

/// A cheap, cloneable way to talk to the engine thread.
#[derive(Clone)]
pub struct EngineHandle {
    tx: mpsc::UnboundedSender<Msg>,
    events: broadcast::Sender<Arc<Event>>,
}

impl EngineHandle {
    /// Submits an input at once (inputs are taken in the order of these calls); the answer
    /// comes once its events are durable and applied.
    pub fn submit(&self, input: Input) -> impl Future<Output = Result<Vec<Event>, EngineError>> + Send + 'static {
        let (tx, rx) = oneshot::channel();
        let sent = self.tx.send(Msg::Input(Box::new(input), Some(tx)));
        async move {
            sent.map_err(|_| EngineError::Stopped)?;
            rx.await.map_err(|_| EngineError::Stopped)?
        }
    }

    /// Submits an input without waiting (the outcome of an effect, an observation).
    pub fn submit_nowait(&self, input: Input) {
        if self.tx.send(Msg::Input(Box::new(input), None)).is_err() {
            tracing::warn!("engine stopped; an input was dropped (reconciliation at the next start covers it)");
        }
    }

    /// Runs `f` against the current state (and the number of recorded events) on the engine thread.
    pub async fn query<R: Send + 'static>(
        &self,
        f: impl FnOnce(&State, u64) -> R + Send + 'static,
    ) -> Result<R, EngineError> {
        let (tx, rx) = oneshot::channel();
        let q: Query = Box::new(move |s, n| {
            let _ = tx.send(f(s, n));
        });
        self.tx.send(Msg::Query(q)).map_err(|_| EngineError::Stopped)?;
        rx.await.map_err(|_| EngineError::Stopped)
    }

    /// Stops the engine after the inputs already submitted; later ones are refused.
    pub fn stop(&self) {
        let _ = self.tx.send(Msg::Stop);
    }

    /// Every event applied from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.events.subscribe()
    }
}

pub fn now() -> Timestamp {
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    Timestamp::from_millis(ms)
}

/// Starts the engine thread. It stops on `EngineHandle::stop` or when every handle is dropped,
/// and then, however it ends (a panic included), calls `on_exit`.
pub fn start(
    mut store: Store,
    mut state: State,
    sink: impl EffectSink,
    on_exit: impl FnOnce() + Send + 'static,
) -> (EngineHandle, JoinHandle<()>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (events, _) = broadcast::channel(65536);
    let handle = EngineHandle { tx, events: events.clone() };
    // The loop holds only a weak sender, so dropping every outside handle stops it.
    let weak = handle.tx.downgrade();
    let thread = std::thread::spawn(move || {
        let _exit = OnExit(Some(on_exit));
        // A query or a stop found while gathering a batch, to be handled after it.
        let mut held = None;
        while let Some(msg) = held.take().or_else(|| rx.blocking_recv()) {
            let mut inputs = match msg {
                Msg::Stop => break,
                Msg::Query(q) => {
                    q(&state, store.count());
                    continue;
                }
                Msg::Input(input, reply) => vec![(input, reply)],
            };
            while inputs.len() < batch::MAX_INPUTS {
                match rx.try_recv() {
                    Ok(Msg::Input(input, reply)) => inputs.push((input, reply)),
                    Ok(other) => {
                        held = Some(other);
                        break;
                    }
                    Err(_) => break,
                }
            }
            let Some(tx) = weak.upgrade() else { break };
            let engine = EngineHandle { tx, events: events.clone() };
            let Some(effects) = batch::commit(&mut store, &mut state, inputs, &events) else { break };
            for effect in effects {
                sink.dispatch(effect, &engine);
            }
            if let Err(e) = store.snapshot_if_due(&state) {
                tracing::warn!("cannot take a snapshot of the state (the log still has it all): {e}");
            }
        }
    });
    (handle, thread)
}

/// Runs its closure when dropped, including while a panic unwinds.
struct OnExit<F: FnOnce()>(Option<F>);

impl<F: FnOnce()> Drop for OnExit<F> {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}
