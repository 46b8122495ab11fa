//! How plan events fold into the state: which of a plan's jobs were dispatched, ended and chosen.

use crate::{Event, State};

pub(super) fn apply(state: &mut State, event: &Event) {
    match event {
        Event::PlanStarted { plan } => {
            state.plans.insert(plan.id.clone(), plan.clone());
        }
        Event::PlanJobDispatched { plan, index, job, source, merged, variant } => {
            if let Some(p) = state.plans.get_mut(plan) {
                p.dispatched(*index, *variant, job, source, merged);
            }
        }
        Event::PlanVariantEnded { plan, index, variant, target, failure } => {
            if let Some(p) = state.plans.get_mut(plan) {
                p.variant_ended(*index, *variant, target.as_deref(), failure.as_deref());
            }
        }
        Event::PlanVariantChosen { plan, index, variant, by } => {
            if let Some(p) = state.plans.get_mut(plan) {
                p.chose(*index, *variant, by);
            }
        }
        Event::PlanJobEnded { plan, index, target, failure } => {
            if let Some(p) = state.plans.get_mut(plan) {
                p.ended(*index, target.as_deref(), failure.as_deref());
            }
        }
        Event::PlanResumed { plan } => {
            if let Some(p) = state.plans.get_mut(plan) {
                p.resumed();
            }
        }
        _ => {}
    }
}
