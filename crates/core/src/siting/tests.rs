use super::*;
use crate::{Container, Name};
use crate::{PodClone, PoolTask, VolumeClone, WorkBranch};

fn nonce() -> Nonce {
    Nonce::from_bits(7)
}

fn id() -> WorkspaceId {
    WorkspaceId::new(&Name::derive("a"), &nonce())
}

fn ask(workspace: WorkspaceAsk, runtime: RuntimeAsk) -> StartAsk<'static> {
    StartAsk { workspace, branch: None, base_ref: None, pool_options: false, runtime }
}

fn branch() -> WorkBranch {
    WorkBranch { repo: "/r".into(), branch: "b".into(), base_ref: "HEAD".into(), base: "c0ffee".into() }
}

fn container() -> Container {
    Container { image: "agent:1".into(), cpus_milli: None, memory_bytes: None, network: true, volume: None }
}

fn pod(namespace: &str) -> Pod {
    Pod::new(namespace, "agent:1")
}

fn runtime_of(ask: RuntimeAsk) -> Runtime {
    match ask {
        RuntimeAsk::Local => Runtime::Local,
        RuntimeAsk::Sandbox => Runtime::Sandbox { network: false },
        RuntimeAsk::Docker => Runtime::Docker(container()),
        RuntimeAsk::K8s => Runtime::K8s(pod("default")),
    }
}

#[test]
fn what_a_start_asks_is_refused_where_it_does_not_go_together() {
    use RuntimeAsk::{Docker, K8s, Local, Sandbox};
    use WorkspaceAsk::{Folder, Pool, Volume, Worktree};
    let with = |a: StartAsk<'static>, f: fn(&mut StartAsk<'static>)| {
        let mut a = a;
        f(&mut a);
        a
    };
    let cases: Vec<(StartAsk<'static>, Result<(), PlaceRefusal>)> = vec![
        (ask(Worktree, Local), Ok(())),
        (ask(Worktree, Sandbox), Ok(())),
        (ask(Worktree, Docker), Ok(())),
        (ask(Worktree, K8s), Ok(())),
        (ask(Folder, Local), Ok(())),
        (ask(Pool, Sandbox), Ok(())),
        (ask(Volume, Docker), Ok(())),
        (with(ask(Worktree, Local), |a| a.base_ref = Some("main")), Ok(())),
        (with(ask(Volume, Docker), |a| a.branch = Some("x")), Ok(())),
        (with(ask(Pool, Local), |a| a.branch = Some("x")), Ok(())),
        (with(ask(Pool, Local), |a| a.pool_options = true), Ok(())),
        (ask(Volume, Local), Err(PlaceRefusal::VolumeOutsideContainer)),
        (ask(Volume, Sandbox), Err(PlaceRefusal::VolumeOutsideContainer)),
        (ask(Volume, K8s), Err(PlaceRefusal::VolumeOutsideContainer)),
        (ask(Folder, K8s), Err(PlaceRefusal::PodWorkspace)),
        (ask(Pool, K8s), Err(PlaceRefusal::PodWorkspace)),
        (with(ask(Pool, Local), |a| a.base_ref = Some("main")), Err(PlaceRefusal::RefInPool)),
        (with(ask(Folder, Local), |a| a.branch = Some("x")), Err(PlaceRefusal::BranchInFolder)),
        (with(ask(Folder, Local), |a| a.base_ref = Some("x")), Err(PlaceRefusal::BranchInFolder)),
        (with(ask(Worktree, Local), |a| a.pool_options = true), Err(PlaceRefusal::PoolOptions)),
    ];
    for (ask, want) in cases {
        assert_eq!(ask.check(), want, "{ask:?}");
        // What is refused is refused before anything is looked for.
        let gathered = ask.gather(&runtime_of(ask.runtime), &nonce());
        assert_eq!(gathered.err(), want.err(), "{ask:?}");
    }
}

#[test]
fn a_start_looks_for_a_new_branch_its_remote_for_a_pod_or_a_free_branch_in_the_pool() {
    let k8s = ask(WorkspaceAsk::Worktree, RuntimeAsk::K8s);
    let gather = k8s.gather(&runtime_of(RuntimeAsk::K8s), &nonce()).unwrap();
    let new = |remote| Gather::NewBranch { branch: nonce().default_branch(), base_ref: "HEAD".into(), remote };
    assert_eq!(gather, new(true));
    let local = ask(WorkspaceAsk::Worktree, RuntimeAsk::Local);
    assert_eq!(local.gather(&Runtime::Local, &nonce()).unwrap(), new(false));
    let named = StartAsk { branch: Some("fix"), base_ref: Some("main"), ..local };
    let want = Gather::NewBranch { branch: "fix".into(), base_ref: "main".into(), remote: false };
    assert_eq!(named.gather(&Runtime::Local, &nonce()).unwrap(), want);
    let pool = ask(WorkspaceAsk::Pool, RuntimeAsk::Local);
    assert_eq!(
        pool.gather(&Runtime::Local, &nonce()).unwrap(),
        Gather::PoolBranch { branch: nonce().default_branch() }
    );
    let folder = ask(WorkspaceAsk::Folder, RuntimeAsk::Docker);
    assert_eq!(folder.gather(&runtime_of(RuntimeAsk::Docker), &nonce()).unwrap(), Gather::Nothing);
    let bad = Runtime::K8s(pod("Not_A_Label"));
    assert_eq!(k8s.gather(&bad, &nonce()), Err(PlaceRefusal::Namespace("Not_A_Label".into())));
}

#[test]
fn a_start_gets_the_workspace_and_runtime_its_ask_and_facts_make() {
    let facts = || RepoFacts::NewBranch { branch: branch(), remote: None };
    let worktree = ask(WorkspaceAsk::Worktree, RuntimeAsk::Sandbox);
    let sited = worktree.site(runtime_of(RuntimeAsk::Sandbox), facts(), &id(), &nonce(), None).unwrap();
    let want = WorkspaceKind::Worktree(WorkBranch {
        repo: "/r".into(),
        branch: "b".into(),
        base_ref: "HEAD".into(),
        base: "c0ffee".into(),
    });
    assert_eq!(
        (sited.kind, sited.runtime, sited.settings_root),
        (want, Runtime::Sandbox { network: false }, "/r".into())
    );

    let volume = ask(WorkspaceAsk::Volume, RuntimeAsk::Docker);
    let sited = volume.site(runtime_of(RuntimeAsk::Docker), facts(), &id(), &nonce(), None).unwrap();
    assert!(
        matches!(&sited.kind, WorkspaceKind::Volume(VolumeClone { volume, image, .. }) if *volume == id().volume() && image == "agent:1")
    );
    assert_eq!(sited.runtime, Runtime::Docker(Container { volume: Some(id().volume()), ..container() }));
    // A worktree asked in a container is bound in: no volume.
    let bound = ask(WorkspaceAsk::Worktree, RuntimeAsk::Docker);
    let sited = bound.site(runtime_of(RuntimeAsk::Docker), facts(), &id(), &nonce(), None).unwrap();
    assert_eq!((sited.kind.label(), sited.runtime), ("worktree", Runtime::Docker(container())));

    let folder = ask(WorkspaceAsk::Folder, RuntimeAsk::Local);
    let sited = folder.site(Runtime::Local, RepoFacts::Nothing { source: "/here".into() }, &id(), &nonce(), None);
    assert_eq!(
        sited.unwrap(),
        Sited { kind: WorkspaceKind::Folder, runtime: Runtime::Local, settings_root: "/here".into() }
    );

    let pool = ask(WorkspaceAsk::Pool, RuntimeAsk::Local);
    let facts_pool = RepoFacts::PoolBranch { repo: "/r".into(), branch: "t".into() };
    let sited = pool.site(Runtime::Local, facts_pool, &id(), &nonce(), Some("do it".into())).unwrap();
    let want = WorkspaceKind::Pool(PoolTask {
        git: WorkBranch { repo: "/r".into(), branch: "t".into(), base: String::new(), base_ref: String::new() },
        slot: None,
        task: Some("do it".into()),
    });
    assert_eq!(sited.kind, want);
}

#[test]
fn a_pod_clones_its_branch_from_its_remote_on_a_claim_of_its_own_when_it_asks_for_storage() {
    let k8s = ask(WorkspaceAsk::Worktree, RuntimeAsk::K8s);
    let remote = Some("https://git.example/r".to_owned());
    let facts = RepoFacts::NewBranch { branch: branch(), remote: remote.clone() };
    let stored = Runtime::K8s(Pod { storage_bytes: Some(1 << 30), ..pod("agents") });
    let sited = k8s.site(stored, facts, &id(), &nonce(), None).unwrap();
    let claim = Pod::claim_name(&nonce());
    let Runtime::K8s(p) = &sited.runtime else { panic!("{:?}", sited.runtime) };
    let source = PodSource { remote: remote.clone(), repo: "/r".into(), base: "c0ffee".into(), branch: "b".into() };
    assert_eq!((p.source.as_deref(), p.claim.as_deref()), (Some(&source), Some(claim.as_str())));
    let WorkspaceKind::Pod(PodClone { remote: r, claim: c, .. }) = &sited.kind else { panic!("{:?}", sited.kind) };
    assert_eq!((r, c), (&remote, &Some(PodClaim { namespace: "agents".into(), name: claim })));
    // No storage asked: no claim; no remote: the branch goes as a bundle.
    let facts = RepoFacts::NewBranch { branch: branch(), remote: None };
    let sited = k8s.site(runtime_of(RuntimeAsk::K8s), facts, &id(), &nonce(), None).unwrap();
    assert!(matches!(sited.kind, WorkspaceKind::Pod(PodClone { remote: None, claim: None, .. })), "{:?}", sited.kind);
}

fn job<'a>(source: &'a JobSource, steps: &'a [(&'a str, StepRun)], agents: &'a [(&'a str, Runtime)]) -> JobAsk<'a> {
    JobAsk {
        job: "j",
        source,
        as_step: false,
        in_plan: false,
        steps: steps.iter().map(|(n, r)| (*n, r)).collect(),
        agents: agents.iter().map(|(n, r)| (*n, r)).collect(),
    }
}

#[test]
fn a_job_in_pods_or_in_a_plan_is_refused_unless_its_workspace_can_go_there() {
    let worktree = JobSource::Worktree { branch: None, base_ref: None };
    let folder = JobSource::Folder;
    let agent = |n: &str| StepRun::Agent(n.into());
    let one = [("a", agent("a"))];
    let two = [("a", agent("a")), ("b", agent("b"))];
    let in_pod = |ns: &str| Runtime::K8s(pod(ns));
    let job_name = || "j".to_owned();
    let pods = [("a", in_pod("x")), ("b", in_pod("x"))];
    let mixed = [("a", in_pod("x")), ("b", Runtime::Local)];
    let spread = [("a", in_pod("x")), ("b", in_pod("y"))];
    let shell = [("a", agent("a")), ("t", StepRun::Shell("make test".into()))];
    let child = [("a", agent("a")), ("c", StepRun::Job("lint".into()))];
    let cases: Vec<(JobAsk<'_>, Result<(), PlaceRefusal>)> = vec![
        (job(&folder, &two, &[("a", Runtime::Local), ("b", Runtime::Sandbox { network: true })]), Ok(())),
        (job(&worktree, &two, &pods), Ok(())),
        (
            job(&worktree, &two, &mixed),
            Err(PlaceRefusal::PodAndHere { job: job_name(), pod: "a".into(), here: "b".into() }),
        ),
        (
            job(&worktree, &two, &spread),
            Err(PlaceRefusal::PodNamespaces { job: job_name(), one: "x".into(), other: "y".into() }),
        ),
        (
            job(&worktree, &shell, &pods[..1]),
            Err(PlaceRefusal::StepHere { job: job_name(), step: "t".into(), what: "its command" }),
        ),
        (
            job(&worktree, &child, &pods[..1]),
            Err(PlaceRefusal::StepHere { job: job_name(), step: "c".into(), what: "another job" }),
        ),
        (job(&folder, &one, &pods[..1]), Err(PlaceRefusal::PodSource { job: job_name(), agent: "a".into() })),
        (
            JobAsk { as_step: true, ..job(&worktree, &one, &pods[..1]) },
            Err(PlaceRefusal::PodInStep { job: job_name(), agent: "a".into() }),
        ),
        (JobAsk { in_plan: true, ..job(&folder, &one, &[]) }, Err(PlaceRefusal::PlanSource { job: job_name() })),
        (JobAsk { in_plan: true, as_step: true, ..job(&folder, &one, &[]) }, Ok(())),
        (JobAsk { in_plan: true, ..job(&worktree, &one, &[]) }, Ok(())),
    ];
    for (ask, want) in cases {
        assert_eq!(ask.check(), want, "{ask:?}");
    }
}

#[test]
fn a_job_in_pods_gets_one_workspace_there_on_one_claim_of_the_largest_size_asked() {
    let worktree = JobSource::Worktree { branch: Some("t".into()), base_ref: None };
    let steps = [("a", StepRun::Agent("a".into())), ("b", StepRun::Agent("b".into()))];
    let agents = [
        ("a", Runtime::K8s(Pod { storage_bytes: Some(1 << 30), ..pod("x") })),
        ("b", Runtime::K8s(Pod { storage_bytes: Some(4 << 30), ..pod("x") })),
    ];
    let ask = job(&worktree, &steps, &agents);
    let want = Gather::NewBranch { branch: "t".into(), base_ref: "HEAD".into(), remote: true };
    assert_eq!(ask.gather(Some("t".into()), None, &nonce()), Some(want));
    let sited = ask.site(Some(RepoFacts::NewBranch { branch: branch(), remote: None }), &nonce()).unwrap();
    let claim = Pod::claim_name(&nonce());
    for name in ["a", "b"] {
        let Some(Runtime::K8s(p)) = sited.runtimes.get(name) else { panic!("{name}: {:?}", sited.runtimes) };
        assert_eq!((p.storage_bytes, p.claim.as_deref()), (Some(4 << 30), Some(claim.as_str())), "{name}");
        assert_eq!(p.source.as_ref().map(|s| s.branch.as_str()), Some("b"), "{name}");
    }
    assert!(matches!(&sited.kind, Some(WorkspaceKind::Pod(PodClone { claim: Some(c), .. })) if c.namespace == "x"));
    // Here, a worktree; as a step, nothing of its own.
    let here = [("a", Runtime::Local), ("b", Runtime::Local)];
    let ask = job(&worktree, &steps, &here);
    let sited = ask.site(Some(RepoFacts::NewBranch { branch: branch(), remote: None }), &nonce()).unwrap();
    assert_eq!((sited.kind.as_ref().map(WorkspaceKind::label), sited.runtimes.len()), (Some("worktree"), 0));
    let step = JobAsk { as_step: true, ..ask };
    assert_eq!(step.gather(None, None, &nonce()), None);
    assert_eq!(step.site(None, &nonce()), Ok(JobSited::default()));
}

#[test]
fn a_fork_goes_where_its_agent_works_in_a_volume_of_its_own_and_never_from_a_pod_or_a_folder() {
    let worktree = WorkspaceKind::Worktree(WorkBranch {
        repo: "/r".into(),
        branch: "b".into(),
        base_ref: "HEAD".into(),
        base: "c0ffee".into(),
    });
    let sandbox = Runtime::Sandbox { network: false };
    assert_eq!(fork_into(&worktree, &sandbox), Ok((WorkspaceAsk::Worktree, sandbox.clone())));
    let in_volume = Container { volume: Some("bosun-ws-a".into()), ..container() };
    let volume = WorkspaceKind::Volume(VolumeClone {
        git: WorkBranch { repo: "/r".into(), branch: "b".into(), base_ref: "HEAD".into(), base: "c0ffee".into() },
        volume: "bosun-ws-a".into(),
        image: "agent:1".into(),
    });
    let (into, runtime) = fork_into(&volume, &Runtime::Docker(in_volume)).unwrap();
    assert_eq!((into, runtime), (WorkspaceAsk::Volume, Runtime::Docker(container())), "a volume of its own, made anew");
    assert_eq!(fork_into(&worktree, &Runtime::K8s(pod("default"))), Err(PlaceRefusal::ForkInPod));
    assert_eq!(fork_into(&WorkspaceKind::Folder, &Runtime::Local), Err(PlaceRefusal::ForkOf("folder")));
    assert!(PlaceRefusal::ForkInPod.to_string().contains("--ref"));
}

#[test]
fn the_words_of_the_asks_are_the_ones_the_wire_and_runbooks_use() {
    for ask in [WorkspaceAsk::Worktree, WorkspaceAsk::Folder, WorkspaceAsk::Pool, WorkspaceAsk::Volume] {
        assert_eq!(serde_json::to_string(&ask).unwrap(), format!("\"{}\"", ask.name()));
        assert_eq!(WorkspaceAsk::named(ask.name()), Some(ask));
    }
    for ask in RuntimeAsk::ALL {
        assert_eq!(RuntimeAsk::named(ask.name()), Some(ask));
        assert_eq!(runtime_of(ask).ask(), ask);
    }
    assert_eq!(WorkspaceAsk::named("tree"), None);
}
