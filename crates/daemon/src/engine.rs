//! The engine loop, on a thread of its own: takes an input, asks the core to `decide`, appends
//! the events to the store (durable before anyone hears of them), `apply`s each exactly once,
//! answers, and hands the effects to the executor without waiting for them.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use bosun_core::{apply, decide, Effect, Event, Input, Rejection, State, Timestamp};
use tokio::sync::{broadcast, mpsc, oneshot};

use crate::store::{Store, StoreError};

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
    /// Submits an input and waits until its events are durable and applied.
    pub async fn submit(&self, input: Input) -> Result<Vec<Event>, EngineError> {
        let (tx, rx) = oneshot::channel();
        self.tx.send(Msg::Input(Box::new(input), Some(tx))).map_err(|_| EngineError::Stopped)?;
        rx.await.map_err(|_| EngineError::Stopped)?
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
        while let Some(msg) = rx.blocking_recv() {
            let (input, reply) = match msg {
                Msg::Stop => break,
                Msg::Query(q) => {
                    q(&state, store.count());
                    continue;
                }
                Msg::Input(input, reply) => (input, reply),
            };
            let Some(tx) = weak.upgrade() else { break };
            let engine = EngineHandle { tx, events: events.clone() };
            let effects = match step(&mut store, &mut state, &input, &events) {
                Ok((recorded, effects)) => {
                    if let Some(r) = reply {
                        let _ = r.send(Ok(recorded));
                    }
                    effects
                }
                Err(e) => {
                    if !matches!(e, EngineError::Rejected(_)) {
                        tracing::error!(?input, "input failed: {e}");
                    }
                    if let Some(r) = reply {
                        let _ = r.send(Err(e));
                    }
                    Vec::new()
                }
            };
            for effect in effects {
                sink.dispatch(effect, &engine);
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

fn step(
    store: &mut Store,
    state: &mut State,
    input: &Input,
    events: &broadcast::Sender<Arc<Event>>,
) -> Result<(Vec<Event>, Vec<Effect>), EngineError> {
    let at = now();
    let decision = decide(state, input, at)?;
    store.append(at, &decision.events).map_err(|e: StoreError| EngineError::Store(e.to_string()))?;
    for event in &decision.events {
        apply(state, event);
        tracing::debug!(?event, "applied");
        let _ = events.send(Arc::new(event.clone()));
    }
    Ok((decision.events, decision.effects))
}
