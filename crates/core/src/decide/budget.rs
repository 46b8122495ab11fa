//! Budgets, as an agent's ledger grows: at 80 % of its budget a person is told once; at 100 %
//! the agent is paused — its turn in flight interrupted with its client's own key, an
//! escalation saying which budget and by how much, and nothing more delivered to it — until a
//! person raises the budget (`bosun resume AGENT --budget MORE`), which goes on with the same
//! conversation.

use super::escalation::escalate;
use super::ground::{set_timer, Decision};
use super::session::{live_agent, queue};
use crate::budget::{Budget, Pause};
use crate::usage::Usage;
use crate::{
    Agent, AgentId, Effect, Event, MessageKind, Notice, NoticeKind, Rejection, SessionState, State, TimerKind,
    Timestamp, Trigger,
};

/// What an agent whose budget was raised is told, when its turn was stopped at the crossing.
pub const RAISED: &str = "Your budget was raised: go on with your task where you left off.";

/// The agent's ledger is now `usage`: pause every agent a daily budget holds over once the
/// day's spend reaches it; tell a person at 80 % of the agent's own budget, pause it at 100 %.
pub(super) fn spent(state: &State, a: &Agent, usage: &Usage, now: Timestamp, d: &mut Decision) {
    if a.paused.is_some() || a.outcome.is_some() || daily(state, a, usage, now, d) {
        return;
    }
    let Some(budget) = a.policy.budget else { return };
    unseen(state, a, budget, usage, now, d);
    let spent = budget.spent(usage);
    if spent.is_over() {
        let over = spent.used.saturating_sub(spent.limit);
        let why = format!(
            "agent {} reached its budget of {budget}: {} spent ({} over, {}%); it is paused with its work and \
             conversation kept. Go on with `bosun resume {} --budget MORE`",
            a.id,
            budget.of_amount(spent.used),
            budget.of_amount(over),
            spent.percent(),
            a.id
        );
        pause(state, a, Pause { budget, of: None, spent: spent.used, at: now }, why, d);
    } else if spent.is_near() && !a.budget_told {
        d.event(Event::BudgetNear { id: a.id.clone(), budget, spent: spent.used, at: now });
        let notice = Notice {
            kind: NoticeKind::Budget,
            title: format!("bosun: {} has spent {}% of its budget", a.name, spent.percent()),
            body: format!(
                "agent {} has spent {} of its budget of {budget}; at all of it, it is paused",
                a.id,
                budget.of_amount(spent.used)
            ),
            agent: Some(a.id.clone()),
            job: a.step.as_ref().map(|(job, _, _)| job.clone()),
            escalation: None,
            at: now,
        };
        d.effect(Effect::Notify { notice, desktop: true, webhook: super::escalation::webhook_of(state, a) });
    }
}

/// Pauses the agent at `pause`: its turn in flight is stopped as a person would stop it, so the
/// spending stops, and an escalation says `why`.
fn pause(state: &State, a: &Agent, pause: Pause, why: String, d: &mut Decision) {
    let now = pause.at;
    d.event(Event::AgentPaused { id: a.id.clone(), pause });
    interrupt(state, a, INTERRUPTS_AGAIN, now, d);
    escalate(state, a, Trigger::Budget, why, now, d);
}

/// How many times more a paused agent still working is interrupted, `INTERRUPT_AGAIN_MS` apart.
pub const INTERRUPTS_AGAIN: u32 = 2;
/// How long after an interrupt a paused agent is looked at again.
pub const INTERRUPT_AGAIN_MS: u64 = 3_000;

/// A paused agent still working: its client's interrupt key pressed, and a look again later
/// (`left` more times).
fn interrupt(state: &State, a: &Agent, left: u32, now: Timestamp, d: &mut Decision) {
    let Some(keys) = a.driver.behaviour().interrupt_keys().filter(|_| a.state == SessionState::Running) else {
        return;
    };
    d.effect(Effect::PressKeys { session: a.session.clone(), keys: keys.to_vec() });
    if left > 0 {
        let at = Timestamp::from_millis(now.as_millis() + INTERRUPT_AGAIN_MS);
        set_timer(state, d, TimerKind::Interrupt { agent: a.id.clone(), left: left - 1 }, at);
    }
}

/// The look again: a paused agent still working is interrupted again.
pub(super) fn interrupt_again(state: &State, a: &Agent, left: u32, now: Timestamp, d: &mut Decision) {
    if a.paused.is_some() {
        interrupt(state, a, left, now, d);
    }
}

/// The day's spend (UTC), with the agent's ledger now `usage`, reached a daily budget over it:
/// every live agent that budget holds over is paused, left for a person (whether to go on the
/// next day is theirs to say). Whether one was reached.
fn daily(state: &State, a: &Agent, usage: &Usage, now: Timestamp, d: &mut Decision) -> bool {
    for daily in crate::daily::over(state, crate::daily::repo_of(state, a)) {
        let used = crate::daily::spent_today(state, &daily, Some((a, usage)), now);
        let (Budget::Usd(limit) | Budget::Tokens(limit)) = daily.budget;
        if used < limit {
            continue;
        }
        let live = |o: &&Agent| o.paused.is_none() && o.outcome.is_none() && !o.state.is_dead();
        for o in state.agents.values().filter(live).filter(|o| crate::daily::holds_over(state, &daily, o)) {
            let why = format!(
                "agent {} is paused: {} of {} is spent ({} today, UTC, by its agents together); its work and \
                 conversation are kept, and no new agent starts on it until the day ends. Go on with `bosun \
                 resume {} --budget AMOUNT`",
                o.id,
                daily.whose,
                daily.budget,
                daily.budget.of_amount(used),
                o.id
            );
            let of = Some(daily.whose.clone());
            pause(state, o, Pause { budget: daily.budget, of, spent: used, at: now }, why, d);
        }
        return true;
    }
    false
}

/// A dollar budget cannot count the responses of a model with no price: the first time the
/// agent has some, a person is told, once, which models' spend it does not see.
fn unseen(state: &State, a: &Agent, budget: Budget, usage: &Usage, now: Timestamp, d: &mut Decision) {
    if !matches!(budget, Budget::Usd(_)) || a.budget_unseen_told || usage.unpriced.is_empty() {
        return;
    }
    let models: Vec<String> =
        usage.unpriced.iter().map(|m| if m.is_empty() { "(not named)".to_owned() } else { m.clone() }).collect();
    d.event(Event::BudgetUnseen { id: a.id.clone(), budget, models: models.clone(), at: now });
    let notice = Notice {
        kind: NoticeKind::Budget,
        title: format!("bosun: {}'s budget of {budget} cannot see all it spends", a.name),
        body: format!(
            "agent {} has responses of {} with no price: their cost is not counted against its budget of \
             {budget} (its tokens are); give the model a price in prices.toml, or a budget in tokens",
            a.id,
            models.join(", ")
        ),
        agent: Some(a.id.clone()),
        job: a.step.as_ref().map(|(job, _, _)| job.clone()),
        escalation: None,
        at: now,
    };
    d.effect(Effect::Notify { notice, desktop: true, webhook: super::escalation::webhook_of(state, a) });
}

/// A person raised an agent's budget (or gave it one), and so ended its pause: a paused agent
/// goes on with its conversation — told so when it waits for input, resumed when it died
/// meanwhile. A budget already spent is refused.
pub(super) fn raise(
    state: &State,
    agent: &AgentId,
    budget: Option<Budget>,
    now: Timestamp,
    d: &mut Decision,
) -> Result<(), Rejection> {
    let a = state.agents.get(agent).ok_or_else(|| Rejection::NoSuchAgent(agent.to_string()))?;
    let Some(budget) = budget.or(a.policy.budget) else {
        return Err(Rejection::NotPaused { id: a.id.clone() });
    };
    let spent = budget.spent(&a.usage);
    if spent.is_over() {
        return Err(Rejection::BudgetSpent {
            id: a.id.clone(),
            budget: budget.to_string(),
            spent: budget.of_amount(spent.used),
        });
    }
    if a.paused.is_none() && a.policy.budget == Some(budget) {
        return Err(Rejection::NotPaused { id: a.id.clone() });
    }
    let was_paused = a.paused.is_some();
    d.event(Event::AgentUnpaused { id: a.id.clone(), budget, at: now });
    for e in state.open_escalations().filter(|e| e.agent == a.id && e.trigger == Trigger::Budget) {
        d.event(Event::EscalationResolved { id: e.id, at: now, message: None });
    }
    if !was_paused {
        return Ok(());
    }
    if a.state.is_dead() {
        let next = Agent { paused: None, ..a.clone() };
        super::recovery::resume(state, &next, Some(RAISED), false, now, d);
    } else if let Ok(live) = live_agent(state, &a.id) {
        queue(state, live, RAISED, MessageKind::Resolve, now, d);
    }
    Ok(())
}
