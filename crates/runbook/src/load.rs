//! Finding and reading runbooks: every `*.hcl` and `*.toml` file in the `.bosun/runbooks/`
//! directory nearest up from where bosun runs, read into one model and checked, with every
//! error as `file:line:column: message`.

use std::path::{Path, PathBuf};

use crate::check::{self, check};
use crate::decode::{decode, Problem, Problems};
use crate::model::{Job, Run, Runbook, Source, Step, DEFAULT_MAX_STEP_VISITS};
use crate::syntax;

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
/// A leading byte-order mark is no part of the text.
pub fn load(sources: &[SourceFile]) -> Result<Runbook, Vec<RunbookError>> {
    let mut rb = Runbook::default();
    let mut errors = Vec::new();
    let mut per_file: Vec<(&Path, &str, Runbook)> = Vec::new();
    for src in sources {
        let text = src.text.strip_prefix('\u{feff}').unwrap_or(&src.text);
        let tree = match parse(&src.path, text) {
            Ok(t) => t,
            Err(e) => {
                errors.extend(placed(&src.path, text, vec![Problem { span: e.span, message: e.message }]));
                continue;
            }
        };
        let mut p = Problems::default();
        let mut own = Runbook::default();
        decode(&tree, &mut own, &mut p);
        merge(&mut rb, &own, &mut p);
        errors.extend(placed(&src.path, text, p.0));
        per_file.push((&src.path, text, own));
    }
    // Each file's blocks are checked against the whole runbook, so a job may use an agent
    // defined in another file; problems are placed in the file that holds the block.
    let mut cycles = check::job_cycles(&rb);
    for (path, text, own) in &per_file {
        let mut p = Problems::default();
        check(&rb, own, &mut p);
        p.0.extend(cycles.extract_if(.., |(job, _)| own.jobs.contains_key(*job)).map(|(_, pr)| pr));
        errors.extend(placed(path, text, p.0));
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
        budget: None,
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

fn parse(path: &Path, text: &str) -> Result<syntax::Node, syntax::SyntaxError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("toml") => syntax::toml::parse(text),
        _ => syntax::hcl::parse(text),
    }
}

/// Problems of one file as `file:line:column` errors; its lines are found once, so placing many
/// problems stays linear.
fn placed(path: &Path, text: &str, problems: Vec<Problem>) -> Vec<RunbookError> {
    if problems.is_empty() {
        return Vec::new();
    }
    let starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let place = |pr: Problem| {
        let offset = pr.span.start.min(text.len());
        let line = starts.partition_point(|s| *s <= offset);
        let start = starts.get(line.wrapping_sub(1)).copied().unwrap_or(0);
        let column = text.get(start..offset).map_or(0, |l| l.chars().count()) + 1;
        RunbookError { file: path.to_owned(), line, column, message: pr.message }
    };
    problems.into_iter().map(place).collect()
}

/// The largest runbook file read, in bytes: 16 MiB.
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// Why the runbook files of a directory could not be read; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot list {}: {source}", dir.display())]
    List { dir: PathBuf, source: std::io::Error },
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}: a runbook file may be at most {MAX_FILE_BYTES} bytes (16 MiB): split it into several files", path.display())]
    TooBig { path: PathBuf },
    #[error("{}:{line}:{column}: not UTF-8 text (byte {offset}): save the file as UTF-8", path.display())]
    NotUtf8 { path: PathBuf, offset: usize, line: usize, column: usize },
}

/// Reads every runbook file of `dir`, each at most [`MAX_FILE_BYTES`].
pub fn read_dir(dir: &Path) -> Result<Vec<SourceFile>, ReadError> {
    let paths = files(dir).map_err(|source| ReadError::List { dir: dir.to_owned(), source })?;
    paths.into_iter().map(read_file).collect()
}

fn read_file(path: PathBuf) -> Result<SourceFile, ReadError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    let read = std::fs::File::open(&path).and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes));
    if let Err(source) = read {
        return Err(ReadError::Read { path, source });
    }
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ReadError::TooBig { path });
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(SourceFile { path, text }),
        Err(e) => {
            let offset = e.utf8_error().valid_up_to();
            let valid = std::str::from_utf8(&e.as_bytes()[..offset]).unwrap_or_default();
            let line = valid.matches('\n').count() + 1;
            let column = valid.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            Err(ReadError::NotUtf8 { path, offset, line, column })
        }
    }
}
