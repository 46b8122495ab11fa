//! The checks family: gates, classifiers and the judges of a plan's variants.

use super::*;

impl Executor {
    /// Runs gates, classifiers and judges.
    pub(super) fn checks(&self, effect: Effect) -> Option<Input> {
        Some(match effect {
            Effect::RunGate { agent, run, cwd } => {
                let code = self
                    .gates
                    .run(&run, &cwd)
                    .map_err(|e| tracing::warn!(%agent, "gate {run:?} could not run: {e}"))
                    .ok()
                    .flatten();
                Input::GateFinished { agent, run, code }
            }
            Effect::Classify { agent, turn, command, cwd, said } => {
                // A classifier whose program is not logged in is not run: the core falls back.
                let not_ready = command.first().and_then(|p| self.readiness.check(p)).and_then(Result::err);
                let answer = match not_ready {
                    Some(why) => Err(format!("not run, its program is not ready: {why}")),
                    None => self.classifiers.classify(&command, &cwd, &said).map_err(|e| e.to_string()),
                };
                Input::Classified { agent, turn, said, answer }
            }
            Effect::JudgeVariants { plan, index, judge, repo, source, candidates } => {
                let scratch = self.dirs.root().join("plans").join(&plan).join(format!("job-{index}"));
                let (winner, detail) = crate::judge::judge(&*self.gates, &judge, &repo, &source, &candidates, &scratch);
                Input::VariantsJudged { plan, index, winner, detail }
            }
            // Another family's: `run` routes none here.
            _ => return None,
        })
    }
}
