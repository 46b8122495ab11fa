//! The jobs family: shell steps run and cancelled, `pr` steps' pull requests opened, plans
//! summarised, queues listed and their items made into jobs.

use bosun_adapters::steps::{Ended, StepCommand};

use super::*;

impl Executor {
    /// Runs and cancels steps, opens pull requests, lists queues and makes jobs.
    pub(super) fn jobs(&self, effect: Effect) -> Option<Input> {
        Some(match effect {
            Effect::RunStep { job, step, attempt, run, env, cwd, log, run_dir } => {
                let (ok, detail) = match run {
                    StepRun::Shell(command) => self.shell_step(&job, &command, &env, &cwd, &log, &run_dir),
                    // The core starts agent steps and jobs run as steps itself.
                    StepRun::Agent(_) | StepRun::Job(_) | StepRun::Pr { .. } => (false, "not a shell step".to_owned()),
                };
                Input::StepFinished { job, step, attempt, ok, detail: Some(detail) }
            }
            Effect::OpenPr { job, step, attempt, workspace, repo, branch, base_ref, draft, title, body } => {
                // Recorded as it reads.
                let result = self.open_pr(&repo, &branch, base_ref, draft, &title, &body).map_err(|e| e.to_string());
                Input::PrStepDone { job, step, attempt, workspace, result }
            }
            Effect::SummarizePlan { plan } => {
                crate::plan_log::write(&self.dirs, &plan);
                return None;
            }
            Effect::ListQueue { worker, list, cwd } => Input::Listed {
                worker,
                output: self.queue_commands.output(&list, &BTreeMap::new(), &cwd).map_err(|e| e.to_string()),
            },
            Effect::Dispatch { origin, job, data, job_name, book, cwd, take, branch } => {
                if let Some(Err(e)) = take.as_ref().map(|t| self.queue_commands.output(&t.text, &t.env, &cwd)) {
                    return Some(Input::DispatchFailed { origin, error: format!("its take command failed: {e}") });
                }
                let making = Making {
                    git: &*self.git,
                    pools: &*self.pools,
                    dirs: &self.dirs,
                    hook_command: &self.hook_command,
                    branch,
                };
                let item = match &origin {
                    Origin::Item(item) => Some((*item, data.clone())),
                    Origin::Cron(_) | Origin::Plan(..) | Origin::PlanVariant(..) => None,
                };
                let asked = Asked { id: job, nonce: self.nonces.nonce(), vars: data, cwd, item };
                let made = making.job(&book, &job_name, asked).map(|mut spec| {
                    if let Origin::Plan(plan, index) | Origin::PlanVariant(plan, index, _) = &origin {
                        spec.plan = Some((plan.clone(), *index));
                    }
                    spec
                });
                match made {
                    Ok(spec) => Input::StartJob(Box::new(spec)),
                    Err(error) => Input::DispatchFailed { origin, error },
                }
            }
            Effect::CancelStep { job, .. } => {
                let group = self.running.lock().unwrap_or_else(PoisonError::into_inner).get(&job).copied();
                if let Some(group) = group {
                    self.steps.stop(group);
                }
                return None;
            }
            // Another family's: `run` routes none here.
            _ => return None,
        })
    }

    /// A `pr` step's pull request, into the branch `base_ref` names (else the current one).
    fn open_pr(
        &self,
        repo: &Path,
        branch: &str,
        base_ref: Option<String>,
        draft: bool,
        title: &str,
        body: &str,
    ) -> Result<bosun_core::PullRequest, PrFailed> {
        let into = crate::pull_request::target(&*self.git, repo, base_ref).map_err(PrFailed::Target)?;
        let ask = bosun_adapters::forge::PrAsk { branch, into: &into, title, body, draft };
        Ok(crate::pull_request::open(&*self.git, &*self.forge, repo, &ask, crate::engine::now())?)
    }

    /// Runs a shell step with `sh -c` in `cwd`, its output appended to `log`.
    fn shell_step(
        &self,
        job: &JobId,
        command: &str,
        env: &BTreeMap<String, String>,
        cwd: &Path,
        log: &Path,
        run_dir: &Path,
    ) -> (bool, String) {
        let running = self.running.clone();
        let step = StepCommand { command, env, cwd, log, run_dir };
        let ended = self.steps.run(&step, &mut |pid| {
            running.lock().unwrap_or_else(PoisonError::into_inner).insert(job.clone(), pid);
        });
        self.running.lock().unwrap_or_else(PoisonError::into_inner).remove(job);
        match ended {
            Ended::Exited(0) => (true, "exit 0".into()),
            Ended::Exited(code) => (false, format!("exit {code}")),
            Ended::Killed => (false, "killed by a signal".into()),
            Ended::Failed(e) => (false, e),
        }
    }
}

/// Why a `pr` step's pull request was not opened.
#[derive(Debug, thiserror::Error)]
enum PrFailed {
    #[error("{0}")]
    Target(crate::pull_request::NoTarget),
    #[error(transparent)]
    Open(#[from] bosun_adapters::AdapterError),
}
