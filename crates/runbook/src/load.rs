//! Finding and reading runbooks: every `*.hcl` and `*.toml` file in the `.bosun/runbooks/`
//! directory nearest up from where bosun runs, read into one model and checked, with every
//! error as `file:line:column: message`.

use std::path::{Path, PathBuf};

use crate::check::check;
use crate::decode::{decode, Problems};
use crate::model::{Job, Run, Runbook, Source, Step, DEFAULT_MAX_STEP_VISITS};
use crate::syntax::{self, line_col};

/// One problem, placed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}:{column}: {message}", file.display())]
pub struct RunbookError {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// A runbook file, as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
}

/// The `.bosun/runbooks` directory in `dir` or its nearest ancestor that has one.
pub fn find_dir(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().map(|d| d.join(".bosun/runbooks")).find(|d| d.is_dir())
}

/// The runbook files of a directory, sorted by name.
pub fn files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && matches!(p.extension().and_then(|e| e.to_str()), Some("hcl" | "toml")))
        .collect();
    v.sort();
    Ok(v)
}

/// Reads, decodes and checks `sources` as one runbook. All problems are reported, in order.
pub fn load(sources: &[SourceFile]) -> Result<Runbook, Vec<RunbookError>> {
    let mut rb = Runbook::default();
    let mut errors = Vec::new();
    let mut per_file: Vec<(&SourceFile, Runbook)> = Vec::new();
    for src in sources {
        let tree = match parse(src) {
            Ok(t) => t,
            Err(e) => {
                errors.push(place(src, &e.span, e.message));
                continue;
            }
        };
        let mut p = Problems::default();
        let mut own = Runbook::default();
        decode(&tree, &mut own, &mut p);
        merge(&mut rb, &own, &mut p);
        errors.extend(p.0.into_iter().map(|pr| place(src, &pr.span, pr.message)));
        per_file.push((src, own));
    }
    // Each file's blocks are checked against the whole runbook, so a job may use an agent
    // defined in another file; problems are placed in the file that holds the block.
    for (src, own) in &per_file {
        let mut p = Problems::default();
        let view = Runbook {
            commands: own.commands.clone(),
            jobs: own.jobs.clone(),
            workers: own.workers.clone(),
            crons: own.crons.clone(),
            plans: own.plans.clone(),
            ..rb.clone()
        };
        check(&view, &mut p);
        errors.extend(p.0.into_iter().map(|pr| place(src, &pr.span, pr.message)));
    }
    if errors.is_empty() {
        direct_runs(&mut rb);
        Ok(rb)
    } else {
        Err(errors)
    }
}

/// A command or cron that runs a shell command or an agent directly runs a job of one step,
/// named `command:NAME` or `cron:NAME` (a name no runbook can write): a shell command in the
/// directory it was started from, an agent in a worktree of its own.
fn direct_runs(rb: &mut Runbook) {
    let job = |run: &Run, span: &crate::syntax::Span| Job {
        span: span.clone(),
        vars: Vec::new(),
        defaults: Default::default(),
        locals: Default::default(),
        source: match run {
            Run::Agent(_) => Source::Worktree { branch: None, base_ref: None },
            _ => Source::None,
        },
        steps: vec![Step {
            name: "run".into(),
            span: span.clone(),
            run: run.clone(),
            on_done: None,
            on_fail: None,
            on_cancel: None,
            attempts: 1,
            backoff_ms: 0,
        }],
        on_done: None,
        on_fail: None,
        notify: Default::default(),
        max_step_visits: DEFAULT_MAX_STEP_VISITS,
    };
    let mut made = Vec::new();
    for (name, c) in rb.commands.iter_mut().filter(|(_, c)| !matches!(c.run, Run::Job(_))) {
        let id = format!("command:{name}");
        made.push((id.clone(), job(&c.run, &c.span)));
        c.run = Run::Job(id);
    }
    for (name, c) in rb.crons.iter_mut().filter(|(_, c)| !matches!(c.run, Run::Job(_))) {
        let id = format!("cron:{name}");
        made.push((id.clone(), job(&c.run, &c.span)));
        c.run = Run::Job(id);
    }
    rb.jobs.extend(made);
}

/// Adds a file's blocks; a name another file defined already is a problem.
fn merge(into: &mut Runbook, from: &Runbook, p: &mut Problems) {
    fn add<T: Clone>(
        kind: &str,
        into: &mut std::collections::BTreeMap<String, T>,
        from: &std::collections::BTreeMap<String, T>,
        span: impl Fn(&T) -> crate::syntax::Span,
        p: &mut Problems,
    ) {
        for (name, v) in from {
            if into.contains_key(name) {
                p.at(&span(v), format!("{kind} {name:?} is also defined in another runbook file"));
            } else {
                into.insert(name.clone(), v.clone());
            }
        }
    }
    add("command", &mut into.commands, &from.commands, |v| v.span.clone(), p);
    add("job", &mut into.jobs, &from.jobs, |v| v.span.clone(), p);
    add("agent", &mut into.agents, &from.agents, |v| v.span.clone(), p);
    add("queue", &mut into.queues, &from.queues, |v| v.span.clone(), p);
    add("worker", &mut into.workers, &from.workers, |v| v.span.clone(), p);
    add("cron", &mut into.crons, &from.crons, |v| v.span.clone(), p);
    add("plan", &mut into.plans, &from.plans, |v| v.span.clone(), p);
}

fn parse(src: &SourceFile) -> Result<syntax::Node, syntax::SyntaxError> {
    match src.path.extension().and_then(|e| e.to_str()) {
        Some("toml") => syntax::toml::parse(&src.text),
        _ => syntax::hcl::parse(&src.text),
    }
}

fn place(src: &SourceFile, span: &syntax::Span, message: String) -> RunbookError {
    let (line, column) = line_col(&src.text, span.start);
    RunbookError { file: src.path.clone(), line, column, message }
}

/// Reads every runbook file of `dir`.
pub fn read_dir(dir: &Path) -> std::io::Result<Vec<SourceFile>> {
    files(dir)?.into_iter().map(|path| std::fs::read_to_string(&path).map(|text| SourceFile { path, text })).collect()
}
