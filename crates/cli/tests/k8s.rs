//! The pieces of the Kubernetes runtime together, against the testkit's fake API server (whose
//! pods run on the test's own Docker engine): the pod `bosun_k8s::spec` makes for an agent clones
//! the repository (served by `git daemon`) onto the agent's branch in its init container, runs
//! bosun's session host on the pod's own address with its token from a secret, and is typed
//! into and read over TCP with that token; asked to save, it pushes the agent's branch back
//! (never over a branch moved meanwhile), and killed it saves before it ends, saying how in its
//! termination message; `KubeCluster`'s one watch sees it run, end and go. A Claude agent's
//! settings go into its pod with its host, and its hooks' reports come back through the host,
//! which the daemon follows again after a restart; a report naming another agent is refused.

mod support;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::process::Command;
use std::sync::mpsc;

use bosun_core::TermKey;
use bosun_host::{HostClient, HostEndpoint, HostRequest, HostResponse, HostToken};
use bosun_k8s::{Cluster, KubeCluster, Object, PodChange, PodPhase, PodPlan, PodSeen};
use bosun_testkit::docker::DockerEngine;
use bosun_testkit::git_daemon::GitDaemon;
use bosun_testkit::kube::FakeCluster;
use bosun_testkit::poll::wait_for;
use support::*;

/// Says where its clone is, then echoes; `commit` commits a file, `scratch` leaves one uncommitted.
const AGENT: &str = "echo \"on $(git rev-parse --abbrev-ref HEAD) at $(git rev-parse --short HEAD)\"; \
    while read l; do case \"$l\" in \
    commit) echo work >> w.txt && git add w.txt && \
        git -c user.name=agent -c user.email=agent@example.com commit -qm pod-work && echo committed ;; \
    scratch) echo x > scratch.txt && echo scratched ;; \
    quit) exit 3 ;; \
    *) echo \"got: $l\" ;; esac; done";

#[test]
fn an_agents_pod_clones_its_branch_and_serves_its_session_over_tcp_with_its_token() {
    let engine = DockerEngine::start();
    let cluster = FakeCluster::start(engine);
    let bosun_exe = std::path::PathBuf::from(env!("CARGO_BIN_EXE_bosun"));
    let image = engine.image("bosun-k8s:test", &[&bosun_exe, &bosun_testkit::tools::which("git")]);
    let repo = TempRepo::new();
    let git = GitDaemon::serve(repo.path());
    let base = repo.git(&["rev-parse", "HEAD"]).trim().to_owned();

    let kube = KubeCluster::new(Some(cluster.kubeconfig())).unwrap();
    kube.check_available().unwrap();
    let (tx, changes) = mpsc::channel();
    kube.watch("default", "bosun.agent=k3j9x0aa", tx).unwrap();

    let ask = bosun_core::Pod {
        cpus_milli: Some(500),
        bosun: bosun_exe.display().to_string(),
        ..bosun_core::Pod::new("default", image)
    };
    let labels = BTreeMap::from([("bosun.agent".to_owned(), "k3j9x0aa".to_owned())]);
    let token = HostToken::generate().unwrap();
    let command = ["sh".to_owned(), "-c".to_owned(), AGENT.to_owned()];
    let env = BTreeMap::from([("BOSUN_AGENT_ID".to_owned(), "k3j9x0aa".to_owned())]);
    let url = git.url(repo.path());
    let plan = PodPlan {
        name: "bosun-k3j9x0aa",
        ask: &ask,
        labels: &labels,
        repo_url: Some(&url),
        base: &base,
        branch: "agent/k8s",
        command: &command,
        env: &env,
        host_secret: "bosun-k3j9x0aa-token",
        claim: None,
    };
    kube.create_secret(&bosun_k8s::host_secret(plan.host_secret, "default", token.text(), &[], &labels)).unwrap();
    kube.create_pod(&bosun_k8s::pod(&plan)).unwrap();
    kube.create_pod(&bosun_k8s::pod(&plan)).expect("a pod already there counts as made");

    let running = until(&changes, |c| match c {
        PodChange::Seen(p @ PodSeen { phase: PodPhase::Running, ip: Some(_), .. }) => Some(p.clone()),
        _ => None,
    });
    let addr: SocketAddr = format!("{}:{}", running.ip.unwrap(), bosun_k8s::HOST_PORT).parse().unwrap();
    let client = HostClient::new(HostEndpoint::Tcp { addr, token: token.clone() });
    let status = wait_for(PATIENCE, || client.status().ok()).expect("the pod's host answers with its token");
    assert_eq!(status.session, "bosun-k3j9x0aa");
    let short = repo.git(&["rev-parse", "--short", "HEAD"]).trim().to_owned();
    screen_shows(&client, &format!("on agent/k8s at {short}"));
    type_line(&client, "from the daemon");
    screen_shows(&client, "got: from the daemon");
    let stranger = HostClient::new(HostEndpoint::Tcp { addr, token: HostToken::generate().unwrap() });
    assert!(stranger.status().is_err(), "another token is refused");

    // The work comes back: the host pushes the branch to the repository it was cloned from.
    type_line(&client, "commit");
    screen_shows(&client, "committed");
    let (pushed, dirty, said) = client.save().unwrap();
    assert!(pushed && !dirty, "pushed, nothing left uncommitted: {said}");
    assert_eq!(repo.git(&["log", "-1", "--format=%s", "agent/k8s"]).trim(), "pod-work", "the branch is here");
    // A branch moved here meanwhile is never overwritten, and uncommitted work is told.
    repo.git(&["branch", "-f", "agent/k8s", &base]);
    repo.git(&["commit", "-q", "--allow-empty", "-m", "mine"]);
    repo.git(&["branch", "-f", "agent/k8s", "HEAD"]);
    type_line(&client, "scratch");
    screen_shows(&client, "scratched");
    let (pushed, dirty, said) = client.save().unwrap();
    assert!(!pushed && dirty, "refused, and the scratch file told: {said}");
    assert!(said.contains("rejected"), "{said}");
    assert_eq!(repo.git(&["log", "-1", "--format=%s", "agent/k8s"]).trim(), "mine", "the branch here is untouched");

    let listed = kube.pods("default", "bosun.agent=k3j9x0aa").unwrap();
    assert_eq!(listed.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["bosun-k3j9x0aa"]);

    // Killed, the agent's host saves before it ends, and says how in its termination message,
    // which the watch brings: the branch is back (moved to where the pod can push again), the
    // scratch file told.
    repo.git(&["branch", "-f", "agent/k8s", &base]);
    assert!(matches!(client.ask(&HostRequest::Kill), Ok(HostResponse::Ok)));
    let ended = until(&changes, |c| match c {
        PodChange::Seen(PodSeen { exit: Some(code), message, .. }) => Some((*code, message.clone())),
        _ => None,
    });
    let told = bosun_host::Ended::from_message(ended.1.as_deref().unwrap_or_default()).expect("an Ended message");
    assert_eq!(ended.0, told.exit.code.or(told.exit.signal.map(|s| 128 + s)).unwrap(), "it exits as its agent did");
    let saved = told.saved.expect("it saved");
    assert!(saved.pushed && saved.dirty, "{saved:?}");
    assert_eq!(repo.git(&["log", "-1", "--format=%s", "agent/k8s"]).trim(), "pod-work");

    // A new pod of the agent's goes on from the branch its last pod saved.
    let again = PodPlan { name: "bosun-k3j9x0aa-r1", ..plan.clone() };
    kube.create_pod(&bosun_k8s::pod(&again)).unwrap();
    let ip = until(&changes, |c| match c {
        PodChange::Seen(PodSeen { name, phase: PodPhase::Running, ip: Some(ip), .. }) if name == again.name => {
            Some(ip.clone())
        }
        _ => None,
    });
    let addr: SocketAddr = format!("{ip}:{}", bosun_k8s::HOST_PORT).parse().unwrap();
    let next = HostClient::new(HostEndpoint::Tcp { addr, token: token.clone() });
    let saved = repo.git(&["rev-parse", "--short", "agent/k8s"]).trim().to_owned();
    wait_for(PATIENCE, || next.status().ok()).expect("the new pod's host answers");
    screen_shows(&next, &format!("on agent/k8s at {saved}"));
    assert!(matches!(next.ask(&HostRequest::Kill), Ok(HostResponse::Ok)));
    kube.delete(Object::Pod, "default", again.name).unwrap();

    kube.delete(Object::Pod, "default", "bosun-k3j9x0aa").unwrap();
    kube.delete(Object::Pod, "default", "bosun-k3j9x0aa").expect("a pod already gone counts as deleted");
    kube.delete(Object::Secret, "default", "bosun-k3j9x0aa-token").unwrap();
    until(&changes, |c| matches!(c, PodChange::Gone(n) if n == "bosun-k3j9x0aa").then_some(()));
    assert!(cluster.containers("default", "bosun-k3j9x0aa").is_empty(), "its containers are gone");
}

/// The first change `want` picks, within the patience.
fn until<T>(changes: &mpsc::Receiver<PodChange>, want: impl Fn(&PodChange) -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + PATIENCE;
    let mut seen = Vec::new();
    while let Ok(c) = changes.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())) {
        if let Some(found) = want(&c) {
            return found;
        }
        seen.push(c);
    }
    panic!("the watch never gave what was waited for; it gave {seen:?}");
}

fn type_line(client: &HostClient, line: &str) {
    let keys = vec![TermKey::Text(line.into()), TermKey::Enter];
    assert!(matches!(client.ask(&HostRequest::Press { keys }), Ok(HostResponse::Ok)));
}

fn screen_shows(client: &HostClient, text: &str) {
    let mut last = String::new();
    let seen = wait_for(PATIENCE, || match client.ask(&HostRequest::Screen { colors: false, scrollback: 0 }) {
        Ok(HostResponse::Screen { text: s }) => {
            last = s.clone();
            s.contains(text).then_some(())
        }
        _ => None,
    });
    assert!(seen.is_some(), "{text:?} never showed; the screen: {last}");
}

/// A bosun whose daemon reaches the fake cluster, a repository whose `origin` is served by
/// `git daemon`, and the image of its pods (bosun and git in it).
fn k8s_bosun() -> (FakeCluster, Bosun, TempRepo, GitDaemon, String) {
    let engine = DockerEngine::start();
    let cluster = FakeCluster::start(engine);
    let bosun_exe = std::path::PathBuf::from(env!("CARGO_BIN_EXE_bosun"));
    let image = engine.image("bosun-k8s:test", &[&bosun_exe, &bosun_testkit::tools::which("git")]);
    let repo = TempRepo::new();
    let git = GitDaemon::serve(repo.path());
    repo.git(&["remote", "add", "origin", &git.url(repo.path())]);
    let bosun = bosun().with_env("KUBECONFIG", cluster.kubeconfig().to_str().unwrap());
    (cluster, bosun, repo, git, image)
}

fn start_in_pod(bosun: &Bosun, repo: &TempRepo, image: &str, branch: &str) -> String {
    start_in_pod_with(bosun, repo, image, branch, &[])
}

fn start_in_pod_with(bosun: &Bosun, repo: &TempRepo, image: &str, branch: &str, more: &[&str]) -> String {
    let exe = env!("CARGO_BIN_EXE_bosun");
    let args = ["--runtime", "k8s", "--image", image, "--bosun-in-image", exe, "--branch", branch];
    let mut all: Vec<&str> = args.to_vec();
    all.extend(more);
    all.extend(["--", "sh", "-c", AGENT]);
    bosun.start(repo.path(), &all)
}

#[test]
fn an_agent_in_a_pod_is_typed_into_killed_and_its_work_comes_back_before_its_pod_goes() {
    let (cluster, bosun, repo, _git, image) = k8s_bosun();
    let id = start_in_pod(&bosun, &repo, &image, "agent/pod");
    bosun.wait_state(&id, "running");
    let short = repo.git(&["rev-parse", "--short", "HEAD"]).trim().to_owned();
    bosun.wait_screen(&id, &format!("on agent/pod at {short}"));
    bosun.ok(repo.path(), &["send", &id, "commit"]);
    bosun.wait_screen(&id, "committed");
    let session = format!("bosun-{id}");
    assert!(cluster.pod("default", &session).is_some(), "its pod is the session's");

    bosun.kill_daemon_hard();
    assert_eq!(bosun.agent(&id).state.label(), "running", "adopted after a daemon SIGKILL");
    bosun.ok(repo.path(), &["kill", &id]);
    bosun.wait_state(&id, "dead(killed)");
    let gone = wait_for(PATIENCE, || cluster.pod("default", &session).is_none().then_some(()));
    assert!(gone.is_some(), "its pod is deleted once its work is saved\n{}", bosun.log());
    assert_eq!(repo.git(&["log", "-1", "--format=%s", "agent/pod"]).trim(), "pod-work", "its branch came back");
    let saved = bosun.events().into_iter().find_map(|e| match e {
        bosun_core::Event::WorkSaved { saved, .. } => Some(saved),
        _ => None,
    });
    assert!(saved.is_some_and(|s| s.is_safe()), "its save is recorded");
    assert!(!bosun.ok(repo.path(), &["escalations", "--json"]).contains(&id), "no one is asked");
}

#[test]
fn a_pod_whose_work_is_not_all_saved_is_kept_and_a_person_is_asked() {
    let (cluster, bosun, repo, git, image) = k8s_bosun();
    let id = start_in_pod(&bosun, &repo, &image, "agent/unsaved");
    bosun.wait_state(&id, "running");
    bosun.wait_screen(&id, "on agent/unsaved");
    bosun.ok(repo.path(), &["send", &id, "scratch"]);
    bosun.wait_screen(&id, "scratched");
    bosun.ok(repo.path(), &["kill", &id]);
    let asked = wait_for(PATIENCE, || {
        let listed = bosun.ok(repo.path(), &["escalations", "--json"]);
        listed.contains("only in its pod").then_some(listed)
    });
    assert!(asked.is_some(), "a person is asked\n{}", bosun.log());
    let session = format!("bosun-{id}");
    assert!(cluster.pod("default", &session).is_some(), "its pod is kept with the work only it holds");

    // A pod of this daemon's that no agent has (a crash between its making and its record) is
    // found by doctor and kept while it runs; the agent's own kept pod is not a leftover.
    let digest = bosun_wire::StateDir::new(bosun.state_dir().to_path_buf()).unwrap().digest();
    let labels = BTreeMap::from([("bosun.state".to_owned(), digest)]);
    let ask = bosun_core::Pod { bosun: env!("CARGO_BIN_EXE_bosun").into(), ..bosun_core::Pod::new("default", image) };
    let (url, base) = (git.url(repo.path()), repo.git(&["rev-parse", "HEAD"]).trim().to_owned());
    let command = ["sleep".to_owned(), "600".to_owned()];
    let stray = PodPlan {
        name: "bosun-stray",
        ask: &ask,
        labels: &labels,
        repo_url: Some(&url),
        base: &base,
        branch: "stray",
        command: &command,
        env: &BTreeMap::new(),
        host_secret: "bosun-stray-token",
        claim: None,
    };
    let kube = KubeCluster::new(Some(cluster.kubeconfig())).unwrap();
    let token = HostToken::generate().unwrap();
    kube.create_secret(&bosun_k8s::host_secret("bosun-stray-token", "default", token.text(), &[], &labels)).unwrap();
    kube.create_pod(&bosun_k8s::pod(&stray)).unwrap();
    // And a claim of this daemon's that no workspace has: it may hold work, so it is kept.
    kube.create_claim(&bosun_k8s::claim("bosun-stray-work", "default", 64 << 20, &labels)).unwrap();
    let out = bosun.run(repo.path(), &["doctor", "--fix"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("pod default/bosun-stray") && text.contains("still runs"), "{text}");
    assert!(text.contains("claim default/bosun-stray-work"), "{text}");
    assert!(cluster.claim("default", "bosun-stray-work").is_some(), "doctor --fix keeps a claim");
    assert!(!text.contains(&session), "the agent's own pod is not a leftover: {text}");
    assert!(cluster.pod("default", "bosun-stray").is_some(), "doctor --fix keeps a running pod");

    let err = bosun.fails(repo.path(), &["agent", "start", "--runtime", "k8s", "--", "sh"]);
    assert!(err.contains("--runtime k8s needs --image"), "{err}");
    let err = bosun.fails(repo.path(), &["agent", "start", "--namespace", "a/b", "--", "sh"]);
    assert!(err.contains("apply to --runtime k8s"), "{err}");
}

#[test]
fn an_agent_whose_pod_ended_is_resumed_in_a_new_pod_from_the_branch_its_last_one_saved() {
    let (cluster, bosun, repo, _git, image) = k8s_bosun();
    let id = start_in_pod_with(&bosun, &repo, &image, "agent/again", &["--on-dead", "resume"]);
    bosun.wait_state(&id, "running");
    bosun.wait_screen(&id, "on agent/again");
    bosun.ok(repo.path(), &["send", &id, "commit"]);
    bosun.wait_screen(&id, "committed");
    bosun.ok(repo.path(), &["send", &id, "quit"]);
    let saved = wait_for(PATIENCE, || {
        let out = Command::new("git")
            .arg("-C")
            .arg(repo.path())
            .args(["log", "-1", "--format=%h %s", "agent/again"])
            .output()
            .ok()?;
        let log = String::from_utf8_lossy(&out.stdout).into_owned();
        log.contains("pod-work").then(|| log.split_whitespace().next().unwrap_or_default().to_owned())
    });
    let saved = saved.expect("the first pod saved its branch");
    let resumed = wait_for(PATIENCE, || (bosun.agent(&id).restarts == 1).then_some(()));
    assert!(resumed.is_some(), "resumed once\n{}", bosun.log());
    bosun.wait_screen(&id, &format!("on agent/again at {saved}"));
    let first = format!("bosun-{id}");
    let gone = wait_for(PATIENCE, || cluster.pod("default", &first).is_none().then_some(()));
    assert!(gone.is_some(), "the first pod went, its work saved");
    assert_eq!(bosun.agent(&id).state.label(), "running", "the resumed agent runs");
}

#[test]
fn a_pod_deleted_behind_bosuns_back_ends_its_agent_whether_or_not_a_daemon_watched() {
    let (cluster, bosun, repo, _git, image) = k8s_bosun();
    // The fake kills a deleted pod's containers at once (no grace to save in): its agent dies
    // by that signal, or is lost when the pod went unseen; either way it is dead, and asked of.
    let dead = |id: &str| {
        let ended = wait_for(PATIENCE, || bosun.agent(id).state.is_dead().then_some(()));
        assert!(ended.is_some(), "agent {id} never died\n{}", bosun.log());
    };
    let watched = start_in_pod(&bosun, &repo, &image, "agent/watched");
    bosun.wait_state(&watched, "running");
    assert!(cluster.delete_behind_back("default", &format!("bosun-{watched}")));
    dead(&watched);

    let unwatched = start_in_pod(&bosun, &repo, &image, "agent/unwatched");
    bosun.wait_state(&unwatched, "running");
    let pid = bosun.daemon_pid().expect("a daemon");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL).unwrap();
    let gone = wait_for(PATIENCE, || (!std::path::Path::new(&format!("/proc/{pid}")).exists()).then_some(()));
    assert!(gone.is_some(), "the daemon died");
    assert!(cluster.delete_behind_back("default", &format!("bosun-{unwatched}")));
    bosun.wait_state(&unwatched, "dead(lost)");
}

/// The image of pods that run claudeless: bosun, git, claudeless and bash (which claudeless
/// runs its hooks with).
fn claude_image() -> String {
    let engine = DockerEngine::start();
    let tools = [env!("CARGO_BIN_EXE_bosun").into(), bosun_testkit::tools::which("git"), claudeless().into()];
    let [bosun, git, claudeless]: [std::path::PathBuf; 3] = tools;
    engine.image("bosun-k8s-claude:test", &[&bosun, &git, &claudeless, std::path::Path::new("/bin/bash")])
}

/// The states the agent's hooks' reports put it in, in order.
fn hooked_states(bosun: &Bosun, id: &str) -> Vec<String> {
    let heard = |e: &bosun_core::Event| match e {
        bosun_core::Event::AgentObserved { id: a, source: bosun_core::Source::Hook, state, .. }
            if a.to_string() == id =>
        {
            Some(state.label())
        }
        _ => None,
    };
    bosun.events().iter().filter_map(heard).collect()
}

#[test]
fn claudeless_in_a_pod_goes_idle_through_hooks_its_host_relays_also_after_a_daemon_sigkill() {
    let (_cluster, bosun, repo, _git, _) = k8s_bosun();
    // The scenario travels with the repository, which the pod clones.
    std::fs::copy(scenario("chat"), repo.path().join("chat.toml")).unwrap();
    repo.git(&["add", "chat.toml"]);
    repo.git(&["commit", "-qm", "scenario"]);
    let image = claude_image();
    let exe = env!("CARGO_BIN_EXE_bosun");
    let cl = claudeless();
    let args = ["--runtime", "k8s", "--image", &image, "--bosun-in-image", exe, "--branch", "agent/hooks", "--"];
    let mut all = args.to_vec();
    all.extend([cl.as_str(), "--scenario", "chat.toml"]);
    let id = bosun.start(repo.path(), &all);
    bosun.wait_state(&id, "idle");
    let started = hooked_states(&bosun, &id);
    assert_eq!(started.last().map(String::as_str), Some("idle"), "its SessionStart came through its host: {started:?}");

    // The restarted daemon follows the host again: the next turn's start and end come from it.
    bosun.kill_daemon_hard();
    bosun.ok(repo.path(), &["send", &id, "ping"]);
    let turn = wait_for(PATIENCE, || {
        let states = hooked_states(&bosun, &id);
        let turn = states[started.len()..].to_vec();
        (turn.iter().any(|s| s == "running") && turn.last().is_some_and(|s| s == "idle")).then_some(turn)
    });
    assert!(turn.is_some(), "{:?}\n{}", hooked_states(&bosun, &id), bosun.log());
    assert_eq!(bosun.agent(&id).state.label(), "idle");
}

#[test]
fn a_report_relayed_from_a_pod_that_names_another_agent_is_refused() {
    let (_cluster, bosun, repo, _git, image) = k8s_bosun();
    let local = bosun.start(repo.path(), &claude_args(&claudeless(), &scenario("chat"), &[]));
    bosun.wait_state(&local, "idle");
    // An agent in a pod that runs `bosun hook` as its hooks do, naming the agent it is told.
    let exe = env!("CARGO_BIN_EXE_bosun");
    let forger = format!(
        "while read other; do echo '{{\"hook_event_name\":\"UserPromptSubmit\",\"prompt\":\"x\"}}' | \
         '{exe}' --state-dir /bosun/state hook claude \"$other\" 0 UserPromptSubmit; echo \"forged $other\"; done"
    );
    let args = ["--runtime", "k8s", "--image", &image, "--bosun-in-image", exe, "--branch", "agent/forger"];
    let mut all = args.to_vec();
    all.extend(["--", "sh", "-c", &forger]);
    let id = bosun.start(repo.path(), &all);
    bosun.wait_state(&id, "running");
    bosun.ok(repo.path(), &["send", &id, &local]);
    bosun.wait_screen(&id, &format!("forged {local}"));
    let refused = wait_for(PATIENCE, || bosun.log().contains("refused a relayed report naming agent").then_some(()));
    assert!(refused.is_some(), "the daemon heard it and refused it\n{}", bosun.log());
    assert_eq!(bosun.agent(&local).state.label(), "idle", "the other agent is not moved by it");

    // The same report from where the other agent's hooks run moves it: it was refused for where
    // it came from, not for what it said.
    let out = bosun.hook(&local, "UserPromptSubmit", br#"{"hook_event_name":"UserPromptSubmit","prompt":"x"}"#);
    assert!(out.status.success());
    bosun.wait_state(&local, "running");
}

#[test]
fn on_a_claim_uncommitted_work_outlives_its_pod_for_the_resumed_agent_and_goes_only_with_its_workspace() {
    let (cluster, bosun, repo, _git, image) = k8s_bosun();
    let exe = env!("CARGO_BIN_EXE_bosun");
    // Says whether an earlier pod's uncommitted file is here, then goes on as AGENT does.
    let agent = format!("test -f scratch.txt && echo 'found scratch'; {AGENT}");
    let args = ["--runtime", "k8s", "--image", &image, "--bosun-in-image", exe, "--branch", "agent/claim"];
    let mut all = args.to_vec();
    all.extend(["--storage", "64m", "--on-dead", "resume", "--", "sh", "-c", &agent]);
    let id = bosun.start(repo.path(), &all);
    bosun.wait_state(&id, "running");
    bosun.wait_screen(&id, "on agent/claim");
    let claim = format!("bosun-{id}-work");
    assert!(cluster.claim("default", &claim).is_some(), "its claim is made with its first pod");
    let shown = bosun.ok(repo.path(), &["show", &id]);
    assert!(shown.contains(&format!("claim      default/{claim}")), "{shown}");
    assert!(shown.contains("path       /bosun/workspace in its pod"), "{shown}");
    bosun.ok(repo.path(), &["send", &id, "scratch"]);
    bosun.wait_screen(&id, "scratched");
    bosun.ok(repo.path(), &["send", &id, "quit"]);

    // Its pod ended with work no push carries: the next pod, on the same claim, finds it.
    let resumed = wait_for(PATIENCE, || (bosun.agent(&id).restarts == 1).then_some(()));
    assert!(resumed.is_some(), "resumed once\n{}", bosun.log());
    bosun.wait_screen(&id, "found scratch");
    let first = format!("bosun-{id}");
    let gone = wait_for(PATIENCE, || cluster.pod("default", &first).is_none().then_some(()));
    assert!(gone.is_some(), "the first pod went: the claim holds its work");
    assert!(!bosun.ok(repo.path(), &["escalations", "--json"]).contains(&id), "no one is asked: the work goes on");

    // Killed for good, the work is still only on the claim: it is kept, and a person is told.
    bosun.ok(repo.path(), &["kill", &id]);
    let asked = wait_for(PATIENCE, || {
        let listed = bosun.ok(repo.path(), &["escalations", "--json"]);
        listed.contains(&format!("claim default/{claim}")).then_some(())
    });
    assert!(asked.is_some(), "a person is told where the work is\n{}", bosun.log());
    let pods_gone = wait_for(PATIENCE, || cluster.pods().is_empty().then_some(()));
    assert!(pods_gone.is_some(), "no pod is kept for it");
    assert!(cluster.claim("default", &claim).is_some(), "the claim is kept");
    let ws = bosun.show(&id).workspace.unwrap().id.to_string();
    let err = bosun.fails(repo.path(), &["workspace", "rm", &ws]);
    assert!(err.contains("--force"), "{err}");
    assert!(cluster.claim("default", &claim).is_some(), "a refused removal deletes nothing");
    bosun.ok(repo.path(), &["workspace", "rm", "--force", &ws]);
    assert!(cluster.claim("default", &claim).is_none(), "removed with its workspace");

    let err = bosun.fails(repo.path(), &["agent", "start", "--storage", "1g", "--", "sh"]);
    assert!(err.contains("apply to --runtime k8s"), "{err}");
}

/// A job of two agent steps whose agents run in pods (`runtime = { k8s = … }`); `more` goes into
/// the job.
fn pod_runbook(image: &str, more: &str) -> String {
    let exe = env!("CARGO_BIN_EXE_bosun");
    let commit = |n: &str| {
        format!(
            "[\"sh\", \"-c\", \"echo {n} > {n}.txt && git add {n}.txt && \
             git -c user.name=agent -c user.email=agent@example.com commit -qm {n}\"]"
        )
    };
    format!(
        r#"
command "pods" {{
  args = "<name>"
  run  = {{ job = "pods" }}
}}

job "pods" {{
  vars = ["name"]
  source {{
    git    = true
    branch = "feature/${{var.name}}"
  }}
  step "one" {{
    run     = {{ agent = "first" }}
    on_done = {{ step = "two" }}
  }}
  step "two" {{
    run     = {{ agent = "second" }}
    on_done = "done"
  }}
{more}
}}

agent "first" {{
  run     = {first}
  runtime = {{ k8s = {{ image = "{image}", bosun = "{exe}" }} }}
}}

agent "second" {{
  run     = ["sh", "-c", "test -f one.txt && echo two > two.txt && git add two.txt && git -c user.name=agent -c user.email=agent@example.com commit -qm two"]
  runtime = {{ k8s = {{ image = "{image}", bosun = "{exe}" }} }}
}}
"#,
        first = commit("one"),
    )
}

#[test]
fn a_runbook_jobs_agents_run_in_pods_one_after_the_other_on_the_branch_each_pushed_back() {
    let (cluster, bosun, repo, _git, image) = k8s_bosun();
    write_runbook(&repo, "pods.hcl", &pod_runbook(&image, ""));
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["run", "--json", "pods", "x"])).unwrap();
    let job = v["job"].as_str().unwrap().to_owned();
    let out = bosun.run(repo.path(), &["job", "wait", &job]);
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), bosun.log());
    let log = repo.git(&["log", "--format=%s", "feature/x"]);
    let mine: Vec<&str> = log.lines().take(2).collect();
    assert_eq!(mine, ["two", "one"], "the second pod went on from what the first pushed");
    let agents = bosun.list().agents;
    assert_eq!(agents.len(), 2);
    assert!(agents.iter().all(|a| a.state.label() == "dead(completed)"), "{agents:?}");
    let gone = wait_for(PATIENCE, || cluster.pods().is_empty().then_some(()));
    assert!(gone.is_some(), "each pod went once its work was saved");
}

#[test]
fn a_runbook_job_with_agents_in_pods_and_a_command_step_is_refused_and_nothing_starts() {
    let (cluster, bosun, repo, _git, image) = k8s_bosun();
    let check = "  step \"check\" {\n    run = \"test -f two.txt\"\n  }";
    write_runbook(&repo, "pods.hcl", &pod_runbook(&image, check));
    let err = bosun.fails(repo.path(), &["run", "pods", "x"]);
    assert!(err.contains("step \"check\" has no workspace here"), "{err}");
    assert!(bosun.list().agents.is_empty() && cluster.pods().is_empty(), "nothing started");
    assert!(repo.git(&["branch", "--list", "feature/x"]).trim().is_empty(), "no branch made");
}

#[test]
fn a_daemon_outside_the_cluster_reaches_its_pods_through_port_forwards_again_after_a_restart() {
    let (cluster, bosun, repo, _git, image) = k8s_bosun();
    let bosun = bosun.with_env("BOSUN_K8S_REACH", "forward");
    let id = start_in_pod(&bosun, &repo, &image, "agent/forwarded");
    bosun.wait_state(&id, "running");
    bosun.wait_screen(&id, "on agent/forwarded");
    let addr = || std::fs::read_to_string(bosun.state_dir().join(format!("h/bosun-{id}.addr"))).unwrap_or_default();
    let first = addr();
    assert!(first.starts_with("127.0.0.1:"), "reached at a forwarded address here, not the pod's: {first}");
    let forwards = || cluster.requests().iter().filter(|r| r.path.ends_with("/portforward")).count();
    assert!(forwards() > 0, "through the API server's port-forward");

    // A new daemon's forwards are its own: it looks for the pod again and forwards anew. The old
    // forward's port, which anyone may bind once its daemon is gone, is never sent the token.
    bosun.kill_daemon_hard();
    let squatter = std::net::TcpListener::bind(first.trim()).expect("the old forward's port is free");
    squatter.set_nonblocking(true).unwrap();
    let sent =
        wait_for(PATIENCE, || bosun.run(repo.path(), &["send", &id, "after restart"]).status.success().then_some(()));
    assert!(sent.is_some(), "typed into through a new forward\n{}", bosun.log());
    bosun.wait_screen(&id, "got: after restart");
    assert_ne!(addr(), first, "a new forward");
    assert!(squatter.accept().is_err(), "no connection (and no token) went to the old forward's port");
    bosun.ok(repo.path(), &["send", &id, "commit"]);
    bosun.wait_screen(&id, "committed");
    bosun.ok(repo.path(), &["kill", &id]);
    bosun.wait_state(&id, "dead(killed)");
    let gone = wait_for(PATIENCE, || cluster.pod("default", &format!("bosun-{id}")).is_none().then_some(()));
    assert!(gone.is_some(), "its pod goes once its work is saved\n{}", bosun.log());
    assert_eq!(repo.git(&["log", "-1", "--format=%s", "agent/forwarded"]).trim(), "pod-work");

    bosun.ok(repo.path(), &["daemon", "stop"]);
    let bogus = bosun.with_env("BOSUN_K8S_REACH", "sideways");
    let err = bogus.fails(repo.path(), &["ls"]);
    assert!(err.contains("BOSUN_K8S_REACH=\"sideways\" is not a way to reach pods"), "{err}");
}

#[test]
fn a_repository_with_no_remote_sends_its_branch_to_the_pod_and_takes_it_back_as_a_bundle() {
    let (cluster, bosun, repo, _git, image) = k8s_bosun();
    repo.git(&["remote", "remove", "origin"]);
    let id = start_in_pod_with(&bosun, &repo, &image, "agent/bundled", &["--on-dead", "resume"]);
    bosun.wait_state(&id, "running");
    let short = repo.git(&["rev-parse", "--short", "HEAD"]).trim().to_owned();
    bosun.wait_screen(&id, &format!("on agent/bundled at {short}"));
    let shown = bosun.ok(repo.path(), &["show", &id]);
    assert!(shown.contains("sent as a git bundle"), "{shown}");
    let err = bosun.fails(repo.path(), &["fork", &id]);
    assert!(err.contains("runs in a pod") && err.contains("once it ended"), "{err}");
    bosun.ok(repo.path(), &["send", &id, "commit"]);
    bosun.wait_screen(&id, "committed");

    // Its agent ends: its branch comes back, and a new pod starts from it.
    bosun.ok(repo.path(), &["send", &id, "quit"]);
    let back = wait_for(PATIENCE, || {
        let log = repo.git(&["log", "-1", "--format=%h %s", "agent/bundled"]);
        log.contains("pod-work").then(|| log.split_whitespace().next().unwrap_or_default().to_owned())
    });
    let back = back.unwrap_or_else(|| panic!("its branch came back\n{}", bosun.log()));
    let resumed = wait_for(PATIENCE, || (bosun.agent(&id).restarts == 1).then_some(()));
    assert!(resumed.is_some(), "resumed once\n{}", bosun.log());
    bosun.wait_screen(&id, &format!("on agent/bundled at {back}"));
    let first = format!("bosun-{id}");
    let gone = wait_for(PATIENCE, || cluster.pod("default", &first).is_none().then_some(()));
    assert!(gone.is_some(), "the first pod went, its work back");

    // After a daemon SIGKILL, a kill still brings its work back before its pod goes.
    bosun.kill_daemon_hard();
    assert_eq!(bosun.agent(&id).state.label(), "running", "adopted after a daemon SIGKILL");
    bosun.ok(repo.path(), &["send", &id, "commit"]);
    bosun.wait_screen(&id, "committed");
    bosun.ok(repo.path(), &["kill", &id]);
    bosun.wait_state(&id, "dead(killed)");
    let pods_gone = wait_for(PATIENCE, || cluster.pods().is_empty().then_some(()));
    assert!(pods_gone.is_some(), "its pod is deleted once its work is back\n{}", bosun.log());
    let count = repo.git(&["rev-list", "--count", &format!("{back}..agent/bundled")]);
    assert_eq!(count.trim(), "1", "the second pod's commit came back too");
    assert!(!bosun.ok(repo.path(), &["escalations", "--json"]).contains(&id), "no one is asked");
    let saved = bosun
        .events()
        .into_iter()
        .filter(|e| matches!(e, bosun_core::Event::WorkSaved { saved, .. } if saved.is_safe()));
    assert_eq!(saved.count(), 2, "both saves are recorded as safe");
}

#[test]
fn a_bundle_that_would_move_a_branch_changed_here_meanwhile_is_refused_and_its_pod_kept() {
    let (cluster, bosun, repo, _git, image) = k8s_bosun();
    repo.git(&["remote", "remove", "origin"]);
    let id = start_in_pod(&bosun, &repo, &image, "agent/moved");
    bosun.wait_state(&id, "running");
    bosun.wait_screen(&id, "on agent/moved");
    bosun.ok(repo.path(), &["send", &id, "commit"]);
    bosun.wait_screen(&id, "committed");
    repo.git(&["checkout", "-q", "-b", "mine"]);
    let mine = repo.commit_file("mine.txt", "mine");
    repo.git(&["branch", "-f", "agent/moved", &mine]);
    bosun.ok(repo.path(), &["kill", &id]);
    let asked = wait_for(PATIENCE, || {
        let listed = bosun.ok(repo.path(), &["escalations", "--json"]);
        listed.contains("only in its pod").then_some(listed)
    });
    assert!(asked.is_some(), "a person is asked\n{}", bosun.log());
    assert!(asked.unwrap().contains("rejected"), "git's refusal is told");
    assert!(cluster.pod("default", &format!("bosun-{id}")).is_some(), "its pod is kept with the work only it holds");
    assert_eq!(repo.git(&["rev-parse", "agent/moved"]), mine, "the branch here is untouched");
}

#[test]
fn a_claude_agents_pod_config_holds_claudes_own_state_with_the_pods_workspace_trusted() {
    let (_cluster, bosun, repo, _git, image) = k8s_bosun();
    let exe = env!("CARGO_BIN_EXE_bosun");
    // Stands in for Claude under the claude driver: says what it finds where Claude looks for its
    // own state, and whether it runs in the folder that state trusts.
    let trusted = format!("\"{}\":{{\"hasTrustDialogAccepted\":true}}", bosun_core::POD_WORKSPACE);
    let agent = format!(
        "grep -qF '{trusted}' \"$CLAUDE_CONFIG_DIR/.claude.json\" && echo 'state: trusts its workspace'; \
         [ \"$(pwd -P)\" = {} ] && echo 'runs: in its workspace'; sleep 600",
        bosun_core::POD_WORKSPACE
    );
    let args = ["--runtime", "k8s", "--image", &image, "--bosun-in-image", exe, "--branch", "agent/state"];
    let mut all = args.to_vec();
    all.extend(["--driver", "claude", "--prompt", "go", "--", "sh", "-c", &agent]);
    let id = bosun.start(repo.path(), &all);
    let screen = bosun.wait_screen(&id, "runs: in its workspace");
    assert!(screen.contains("state: trusts its workspace"), "{screen}");
    assert!(!repo.path().join(".claude.json").exists() && !repo.path().join(".claude").exists(), "nothing here");
}
