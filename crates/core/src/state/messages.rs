//! How message, escalation, timer and request events fold into the state: what bosun has to
//! say, to whom, when, and which requests it carried out.

use crate::{Event, MessageId, MessageState, Resolution, State, REQUESTS_KEPT};

pub(super) fn apply(state: &mut State, event: &Event, seq: u64) {
    match event {
        Event::RequestDone { id, events } => {
            if state.requests.len() >= REQUESTS_KEPT {
                state.requests.pop_front();
            }
            state.requests.push_back((*id, seq.saturating_sub(u64::from(*events)), *events));
        }
        Event::EscalationRaised { escalation } => {
            state.escalations.insert(escalation.id, escalation.clone());
        }
        Event::EscalationResolved { id, at, message } => {
            if let Some(e) = state.escalations.get_mut(id) {
                e.resolved = Some(Resolution { at: *at, message: message.clone() });
            }
        }
        Event::TimerSet { timer } => {
            state.last_timer = state.last_timer.max(timer.id.0);
            state.timers.insert(timer.id, timer.clone());
        }
        Event::TimerCleared { id } => {
            state.timers.remove(id);
        }
        Event::MessageQueued { message } => {
            state.messages.insert(message.id, message.clone());
        }
        Event::MessageSending { id } => {
            if let Some(m) = state.messages.get_mut(id) {
                m.state = MessageState::Sending;
                m.sent_seq = seq;
            }
        }
        Event::MessageDelivered { id } => set_msg(state, *id, MessageState::Delivered),
        Event::MessageFailed { id, error } => set_msg(state, *id, MessageState::Failed { error: error.clone() }),
        _ => {}
    }
}

fn set_msg(state: &mut State, id: MessageId, new: MessageState) {
    if let Some(m) = state.messages.get_mut(&id) {
        m.state = new;
    }
}
