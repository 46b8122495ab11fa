//! The daemon run with its parts filled with fakes: requests over its socket, effects carried
//! out through fake sessions, workspaces and processes, outcomes read back from its answers and
//! from what the fakes were asked to do.

mod support;

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bosun_core::{Agent, Chain, Classify, ItemState, JobState, Outcome, Policy, SessionState, TurnClass};
use bosun_testkit::poll::wait_for;
use bosun_wire::{read_frame, write_frame, Envelope, Request, Response, StartAgent, StateDir};

/// A daemon on a state directory of its own, its parts the fakes', stopped when dropped.
struct Daemon {
    dir: tempfile::TempDir,
    fakes: support::Fakes,
    thread: Option<std::thread::JoinHandle<Result<(), bosun_daemon::DaemonError>>>,
}

impl Daemon {
    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let fakes = support::Fakes::default();
        let dirs = StateDir::new(dir.path().join("state")).unwrap();
        let opts = bosun_daemon::Options { dirs, exe: PathBuf::from("/bin/false"), detach: false };
        let parts = fakes.parts();
        let thread = std::thread::spawn(move || bosun_daemon::run_with(opts, move |_, _| Ok(parts)));
        let daemon = Daemon { dir, fakes, thread: Some(thread) };
        // Its socket is there a moment before it listens: up once a connection is taken.
        let up = wait_for(Duration::from_secs(20), || UnixStream::connect(daemon.socket()).ok());
        assert!(up.is_some(), "the daemon never listened");
        daemon
    }

    fn socket(&self) -> PathBuf {
        StateDir::new(self.dir.path().join("state")).unwrap().socket()
    }

    fn ask(&self, request: Request) -> Response {
        let mut stream = UnixStream::connect(self.socket()).unwrap();
        let envelope = Envelope { version: bosun_wire::VERSION.to_owned(), request, id: None };
        write_frame(&mut stream, &envelope).unwrap();
        read_frame(&mut stream).unwrap()
    }

    /// A folder to work in, outside the state directory.
    fn work(&self) -> PathBuf {
        let work = self.dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        work
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        // Asked without a panic: a daemon that died already (the failure a test reports) is
        // not asked again.
        if let Ok(mut stream) = UnixStream::connect(self.socket()) {
            let envelope = Envelope { version: bosun_wire::VERSION.to_owned(), request: Request::Shutdown, id: None };
            if write_frame(&mut stream, &envelope).is_ok() {
                let _: Result<Response, _> = read_frame(&mut stream);
            }
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn start_agent(work: &Path, command: &[&str], policy: Policy) -> Request {
    Request::StartAgent(Box::new(StartAgent {
        repo: None,
        cwd: work.to_owned(),
        workspace: bosun_core::WorkspaceAsk::Folder,
        branch: None,
        base_ref: None,
        name: Some("helper".into()),
        command: command.iter().map(|s| s.to_string()).collect(),
        env: Default::default(),
        // What the CLI sends: its environment, where the program is looked for.
        inherit: [("PATH".to_owned(), std::env::var("PATH").unwrap())].into(),
        driver: None,
        prompt: None,
        policy,
        patterns: Default::default(),
        task: None,
        session: Default::default(),
        runtime: Default::default(),
        no_wait: false,
        account: None,
    }))
}

fn agent(daemon: &Daemon) -> Option<Agent> {
    match daemon.ask(Request::Show { agent: "helper".into() }) {
        Response::Agent(detail) => Some(detail.agent),
        _ => None,
    }
}

fn agent_state(daemon: &Daemon) -> Option<SessionState> {
    agent(daemon).map(|a| a.state)
}

/// An agent started runs its command in a session of the fake's, and a kill ends that session.
#[test]
fn an_agent_starts_in_a_fake_session_running_its_command_and_a_kill_ends_it() {
    let daemon = Daemon::start();
    let started = daemon.ask(start_agent(&daemon.work(), &["cat", "--flag"], Policy::default()));
    assert!(matches!(started, Response::Started(_)), "{started:?}");
    let state = wait_for(Duration::from_secs(20), || agent_state(&daemon).filter(SessionState::is_up));
    assert!(state.is_some(), "the agent never came up: {:?}", agent_state(&daemon));
    let session = {
        let s = daemon.fakes.sessions.state();
        let (name, session) = s.sessions.iter().next().expect("a session was spawned");
        assert_eq!(session.command.first().map(String::as_str), Some("cat"), "{:?}", session.command);
        assert!(session.command.iter().any(|a| a == "--flag"), "{:?}", session.command);
        name.clone()
    };
    let killed = daemon.ask(Request::Kill { agent: "helper".into() });
    assert!(matches!(killed, Response::Ok | Response::Killed { .. }), "{killed:?}");
    assert!(!daemon.fakes.sessions.state().sessions.contains_key(&session), "the session was ended");
}

/// An idle agent's gate runs through the gate runner, in the agent's workspace: one that passes
/// ends the agent done; one that fails moves its chain on, here to `fail`.
#[test]
fn an_idle_agents_gate_runs_through_the_gate_runner_and_its_exit_decides_the_agents_outcome() {
    for (code, outcome) in [(Some(0), Outcome::Done), (Some(1), Outcome::Failed)] {
        let daemon = Daemon::start();
        daemon.fakes.processes.state().gate_codes.insert("make check".into(), code);
        let chain = Chain(vec!["gate:make check".parse().unwrap(), "fail".parse().unwrap()]);
        let policy = Policy { on_idle: chain, grace_ms: 0, ..Policy::default() };
        let started = daemon.ask(start_agent(&daemon.work(), &["cat"], policy));
        assert!(matches!(started, Response::Started(_)), "{started:?}");
        let up = wait_for(Duration::from_secs(20), || agent(&daemon).filter(|a| a.state.is_up()));
        let up = up.expect("the agent never came up");
        // Its program wrote something, then nothing more: a generic agent is idle once quiet.
        std::fs::write(up.output_log(), "working…\n").unwrap();
        let ended = wait_for(Duration::from_secs(30), || agent(&daemon).and_then(|a| a.outcome));
        assert_eq!(ended, Some(outcome), "gate exit {code:?}");
        let gates = daemon.fakes.processes.state().gates_run.clone();
        assert_eq!(gates, [("make check".to_owned(), up.cwd.clone())], "gate exit {code:?}");
    }
}

/// An agent whose chain escalates is put to a person: the escalation is listed, and shown on
/// the desktop through the notifier, naming the agent.
#[test]
fn an_escalation_is_listed_and_shown_through_the_notifier() {
    let daemon = Daemon::start();
    let policy = Policy { on_idle: Chain(vec!["escalate".parse().unwrap()]), grace_ms: 0, ..Policy::default() };
    let started = daemon.ask(start_agent(&daemon.work(), &["cat"], policy));
    assert!(matches!(started, Response::Started(_)), "{started:?}");
    let up = wait_for(Duration::from_secs(20), || agent(&daemon).filter(|a| a.state.is_up()));
    let up = up.expect("the agent never came up");
    std::fs::write(up.output_log(), "working…\n").unwrap();
    let shown = wait_for(Duration::from_secs(30), || {
        let shown = daemon.fakes.notifier.shown.lock().unwrap().clone();
        (!shown.is_empty()).then_some(shown)
    });
    let shown = shown.expect("nothing was shown on the desktop");
    assert_eq!(shown.len(), 1, "{shown:?}");
    let (title, body) = &shown[0];
    assert!(format!("{title} {body}").contains("helper"), "{shown:?}");
    let Response::Escalations { escalations, .. } = daemon.ask(Request::Escalations { all: false }) else { panic!() };
    assert_eq!(escalations.len(), 1, "{escalations:?}");
    assert_eq!(escalations[0].agent, up.id);
}

/// `bosun pr` opens the pull request through the forge, for the agent's branch into the branch
/// its workspace started from, and answers with the forge's URL.
#[test]
fn a_pull_request_is_opened_through_the_forge_for_the_agents_branch() {
    let daemon = Daemon::start();
    let work = daemon.work();
    let Request::StartAgent(mut start) = start_agent(&work, &["cat"], Policy::default()) else { unreachable!() };
    (start.workspace, start.branch, start.base_ref) =
        (bosun_core::WorkspaceAsk::Worktree, Some("feature/x".into()), Some("main".into()));
    let started = daemon.ask(Request::StartAgent(start));
    assert!(matches!(started, Response::Started(_)), "{started:?}");
    let ask = bosun_wire::PrAsk { target: "helper".into(), into: None, title: Some("Fix it".into()), draft: false };
    let answered = daemon.ask(Request::Pr(Box::new(ask)));
    let Response::PullRequest { pr, .. } = answered else { panic!("{answered:?}") };
    assert_eq!(pr.url, "https://forge.example/pr/1");
    let opened = daemon.fakes.forge.opened.lock().unwrap().clone();
    assert_eq!(opened, [(work, "feature/x".to_owned(), "main".to_owned(), "Fix it".to_owned())]);
}

/// An idle agent's turn is classified by the classifier runner, in the agent's workspace, and
/// the class it answers picks the chain that runs: `done` ends the agent done, `blocked` failed.
#[test]
fn an_idle_agents_turn_is_classified_through_the_classifier_runner_and_its_class_picks_the_chain() {
    for (answer, outcome) in [("done", Outcome::Done), ("blocked", Outcome::Failed)] {
        let daemon = Daemon::start();
        daemon.fakes.processes.state().classifier_answer = Some(Ok(format!("{answer}\n")));
        let chain = |step: &str| Chain(vec![step.parse().unwrap()]);
        let policy = Policy {
            classify: Some(Classify { rules: vec![], command: Some(vec!["judge-turn".into()]) }),
            on_idle_class: [(TurnClass::Done, chain("done")), (TurnClass::Blocked, chain("fail"))].into(),
            grace_ms: 0,
            ..Policy::default()
        };
        let started = daemon.ask(start_agent(&daemon.work(), &["cat"], policy));
        assert!(matches!(started, Response::Started(_)), "{started:?}");
        let up = wait_for(Duration::from_secs(20), || agent(&daemon).filter(|a| a.state.is_up()));
        let up = up.expect("the agent never came up");
        std::fs::write(up.output_log(), "working…\n").unwrap();
        let ended = wait_for(Duration::from_secs(30), || agent(&daemon).and_then(|a| a.outcome));
        assert_eq!(ended, Some(outcome), "classified {answer}");
        let classified = daemon.fakes.processes.state().classified.clone();
        let ran: Vec<_> = classified.iter().map(|(command, cwd, _)| (command.clone(), cwd.clone())).collect();
        assert_eq!(ran, [(vec!["judge-turn".to_owned()], up.cwd.clone())], "classified {answer}");
    }
}

const RUNBOOK: &str = r#"
command "ci" {
  run = { job = "ci" }
}

job "ci" {
  step "build" {
    run     = "make build"
    on_done = { step = "test" }
  }

  step "test" {
    run     = "make test"
    on_done = "done"
    on_fail = { step = "report" }
  }

  step "report" {
    run     = "make report"
    on_done = "fail"
  }
}
"#;

/// Runs `ci` and waits for its job to end: its state, and the steps the fake ran, in order.
fn run_ci(daemon: &Daemon) -> (JobState, Vec<(String, PathBuf)>) {
    let work = daemon.work();
    let sources = vec![(work.join("ci.hcl"), RUNBOOK.to_owned())];
    let run = bosun_wire::RunCommand { sources, command: "ci".into(), args: vec![], cwd: work };
    let started = daemon.ask(Request::Run(Box::new(run)));
    let Response::JobStarted { job, .. } = started else { panic!("{started:?}") };
    let end = wait_for(Duration::from_secs(20), || match daemon.ask(Request::JobShow { job: job.to_string() }) {
        Response::Job { job, over: true, .. } => Some(job.state),
        _ => None,
    });
    (end.expect("the job never ended"), daemon.fakes.processes.state().steps_run.clone())
}

/// A job's shell steps run through the step runner, in order, and their exits route the job.
#[test]
fn a_jobs_steps_run_through_the_step_runner_and_a_failed_one_routes_the_job_to_its_failure() {
    let daemon = Daemon::start();
    let (state, ran) = run_ci(&daemon);
    assert!(matches!(state, JobState::Done), "{state:?}");
    let commands: Vec<&str> = ran.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(commands, ["make build", "make test"]);

    let daemon = Daemon::start();
    daemon.fakes.processes.state().step_codes.insert("make test".into(), 2);
    let (state, ran) = run_ci(&daemon);
    assert!(matches!(state, JobState::Failed { .. }), "{state:?}");
    let commands: Vec<&str> = ran.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(commands, ["make build", "make test", "make report"]);
}

const INBOX: &str = r#"
queue "inbox" {
  list = "list-inbox"
  take = "take-item"
  poll = "100ms"
}

worker "sorter" {
  queue = "inbox"
  job   = "sort"
}

job "sort" {
  step "sort" {
    run = "sort-item"
  }
}
"#;

/// A worker on an external queue lists it through the queue command runner, however often, and
/// takes each item it lists once, its job's step run through the step runner.
#[test]
fn a_worker_lists_its_queue_through_the_queue_command_runner_and_takes_each_item_once() {
    let daemon = Daemon::start();
    let listed = "{\"id\":\"a\",\"title\":\"first\"}\n{\"id\":\"b\",\"title\":\"second\"}\n";
    daemon.fakes.processes.state().queue_outputs.insert("list-inbox".into(), listed.into());
    let work = daemon.work();
    let sources = vec![(work.join("inbox.hcl"), INBOX.to_owned())];
    let started = daemon.ask(Request::WorkerStart { name: "sorter".into(), sources, cwd: work });
    assert!(matches!(started, Response::Ok), "{started:?}");
    let items = || match daemon.ask(Request::QueueList { queue: None }) {
        Response::Items { items, .. } => items,
        other => panic!("{other:?}"),
    };
    let done = wait_for(Duration::from_secs(20), || {
        let items = items();
        (items.len() == 2 && items.iter().all(|i| i.state == ItemState::Done)).then_some(items)
    });
    assert!(done.is_some(), "{:?}", items());
    // Listed again and again while the items ran: taken once each all the same.
    let wait_lists = wait_for(Duration::from_secs(20), || {
        let s = daemon.fakes.processes.state();
        (s.queue_commands_run.iter().filter(|c| *c == "list-inbox").count() > 3).then_some(())
    });
    assert!(wait_lists.is_some(), "the queue was listed again");
    let s = daemon.fakes.processes.state();
    assert_eq!(s.queue_commands_run.iter().filter(|c| *c == "take-item").count(), 2, "{:?}", s.queue_commands_run);
    let steps: Vec<&str> = s.steps_run.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(steps, ["sort-item", "sort-item"]);
}
