//! `bosun merge`: an agent's branch into the branch it started from — a fast-forward into the
//! checked-out branch (its files follow), a merge commit, a squash, a rebase, `--into` a branch
//! not checked out (no file touched) — then its agent ended and its workspace removed, its branch
//! deleted only when all of it is merged; and each refusal leaves everything as it was.

mod support;

use support::*;

fn git_in(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git").args(args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A claudeless agent idle in a worktree of `repo` whose branch has one commit adding `file`.
fn agent_with_work(bosun: &Bosun, repo: &TempRepo, file: &str) -> (String, std::path::PathBuf, String) {
    let (cl, sc) = (claudeless(), scenario("chat"));
    let id = bosun.start(repo.path(), &claude_args(&cl, &sc, &[]));
    bosun.wait_state(&id, "idle");
    let detail = bosun.show(&id);
    let ws = detail.workspace.expect("its workspace");
    std::fs::write(ws.path.join(file), format!("{file} from the agent\n")).unwrap();
    git_in(&ws.path, &["add", "-A"]);
    git_in(&ws.path, &["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", &format!("add {file}")]);
    (id, ws.path.clone(), ws.branch().unwrap().to_owned())
}

#[test]
fn a_fast_forward_into_the_checked_out_branch_moves_its_files_ends_the_agent_and_removes_its_workspace() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (id, path, branch) = agent_with_work(&bosun, &repo, "ff.txt");
    let out = bosun.ok(repo.path(), &["merge", &id]);
    assert!(out.contains(&format!("merged {branch} into main (fast-forward)")), "{out}");
    assert!(out.contains(&format!("deleted  branch {branch}")), "{out}");
    assert!(repo.path().join("ff.txt").exists(), "the checked-out branch's files follow");
    assert_eq!(git_in(repo.path(), &["status", "--porcelain"]), "", "and it is clean");
    assert!(bosun.agent(&id).state.is_dead(), "its agent is ended");
    assert!(!path.exists(), "its workspace is removed");
    assert!(git_in(repo.path(), &["branch", "--list", &branch]).is_empty());
    let merged = bosun.events().into_iter().any(|e| matches!(e, bosun_core::Event::WorkMerged { .. }));
    assert!(merged, "recorded");
}

#[test]
fn a_merge_commit_a_squash_and_a_rebase_and_into_a_branch_not_checked_out() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (a, _, _) = agent_with_work(&bosun, &repo, "a.txt");
    repo.commit_file("main.txt", "main moved on\n");
    let out = bosun.ok(repo.path(), &["merge", &a, "--message", "Take a"]);
    assert!(out.contains("(merge)"), "{out}");
    assert_eq!(
        git_in(repo.path(), &["log", "-1", "--format=%s %p"]).split(' ').count(),
        4,
        "a merge commit: two parents"
    );
    assert_eq!(git_in(repo.path(), &["log", "-1", "--format=%s"]), "Take a");

    let (b, _, b_branch) = agent_with_work(&bosun, &repo, "b.txt");
    let v: serde_json::Value =
        serde_json::from_str(&bosun.ok(repo.path(), &["merge", &b, "--squash", "--json"])).unwrap();
    assert_eq!(v["merged"]["how"], "squash");
    assert_eq!(v["merged"]["branch_merged"], false);
    assert_eq!(v["removed"]["branch_kept"]["branch"], b_branch.as_str(), "a squashed branch is kept: {v}");
    assert_eq!(git_in(repo.path(), &["log", "-1", "--format=%P"]).split(' ').count(), 1, "one new commit");
    assert!(repo.path().join("b.txt").exists());

    repo.git(&["branch", "release"]);
    let (c, c_path, c_branch) = agent_with_work(&bosun, &repo, "c.txt");
    // release moves on: c's commit is replayed onto it.
    repo.git(&["checkout", "-q", "release"]);
    repo.commit_file("release.txt", "release moved on\n");
    repo.git(&["checkout", "-q", "main"]);
    repo.commit_file("main2.txt", "main moved on again\n");
    let main_before = repo.head();
    let out = bosun.ok(repo.path(), &["merge", &c, "--rebase", "--into", "release"]);
    assert!(out.contains(&format!("merged {c_branch} into release (rebase)")), "{out}");
    assert!(!c_path.exists(), "its worktree followed its replayed branch, clean, and went: {out}");
    assert_eq!(repo.head(), main_before, "main, checked out, is untouched");
    assert!(!repo.path().join("c.txt").exists(), "no file of the checked-out branch is touched");
    assert_eq!(git_in(repo.path(), &["log", "-1", "--format=%s", "release"]), "add c.txt");
    assert!(out.contains(&format!("deleted  branch {c_branch}")), "rebased, all of it is in release: {out}");
}

#[test]
fn refusals_change_nothing_a_conflict_names_its_files_and_commit_takes_uncommitted_work() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (id, path, branch) = agent_with_work(&bosun, &repo, "same.txt");
    repo.commit_file("same.txt", "main's own\n");
    let main_before = repo.head();
    let err = bosun.fails(repo.path(), &["merge", &id]);
    assert!(err.contains(&format!("merging {branch} into main conflicts in same.txt")), "{err}");
    assert_eq!(repo.head(), main_before, "main untouched");
    assert!(path.exists() && !bosun.agent(&id).state.is_dead(), "the agent and its workspace stay");

    let (other, other_path, _) = agent_with_work(&bosun, &repo, "other.txt");
    std::fs::write(other_path.join("loose.txt"), "not committed\n").unwrap();
    let err = bosun.fails(repo.path(), &["merge", &other]);
    assert!(err.contains("holds work not committed") && err.contains("--commit"), "{err}");
    std::fs::write(repo.path().join("README.md"), "changed here\n").unwrap();
    let err = bosun.fails(repo.path(), &["merge", &other, "--commit"]);
    assert!(err.contains("main is checked out in") && err.contains("with changes not committed"), "{err}");
    assert_eq!(repo.head(), main_before, "main untouched");
    git_in(repo.path(), &["checkout", "--", "README.md"]);
    let out = bosun.ok(repo.path(), &["merge", &other, "--commit"]);
    assert!(out.contains("merged"), "{out}");
    assert!(repo.path().join("loose.txt").exists(), "what was not committed came too");
    let body = git_in(repo.path(), &["log", "-1", "--format=%s"]);
    assert!(body.starts_with("Work of ws-"), "{body}");

    let err = bosun.fails(repo.path(), &["merge", "nope"]);
    assert!(err.contains("no agent or job nope"), "{err}");
    // An agent at work is not merged from under it, unless forced.
    let busy = bosun.start(repo.path(), &["--", "sh", "-c", "echo working; sleep 600"]);
    bosun.wait_state(&busy, "running");
    let ws = bosun.show(&busy).workspace.unwrap();
    git_in(
        &ws.path,
        &["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "busy work"],
    );
    let err = bosun.fails(repo.path(), &["merge", &busy]);
    assert!(err.contains("is working") && err.contains("--force"), "{err}");
    assert!(!bosun.agent(&busy).state.is_dead());
    let out = bosun.ok(repo.path(), &["merge", &busy, "--force"]);
    assert!(out.contains("merged") && out.contains(&format!("ended    {busy}")), "{out}");
    let err = bosun.fails(repo.path(), &["merge", &id, "--squash", "--rebase"]);
    assert!(err.contains("cannot be used with"), "{err}");
}

#[test]
fn a_pool_workspace_is_released_after_its_branch_is_merged() {
    use bosun_testkit::poll::wait_for;
    let bosun = bosun();
    let repo = TempRepo::new();
    bosun.ok(repo.path(), &["pool", "init", "--size", "1"]);
    let (cl, sc) = (claudeless(), scenario("chat"));
    let mut args = vec!["agent", "start", "--json", "--workspace", "pool"];
    args.extend(claude_args(&cl, &sc, &[]));
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &args)).unwrap();
    let id = v["agent"].as_str().unwrap().to_owned();
    bosun.wait_state(&id, "idle");
    let ws = wait_for(PATIENCE, || bosun.show(&id).workspace.filter(|w| !w.path.as_os_str().is_empty()))
        .expect("bound to a slot");
    std::fs::write(ws.path.join("pooled.txt"), "from the pool\n").unwrap();
    git_in(&ws.path, &["add", "pooled.txt"]);
    git_in(&ws.path, &["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "pooled work"]);
    let branch = ws.branch().unwrap().to_owned();
    let out = bosun.ok(repo.path(), &["merge", &id, "--into", "main"]);
    assert!(out.contains(&format!("merged {branch} into main")), "{out}");
    assert!(repo.path().join("pooled.txt").exists());
    let released = wait_for(PATIENCE, || {
        let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["pool", "ls", "--json"])).ok()?;
        (v["pools"][0]["slots"][0]["state"]["state"] == "available").then_some(())
    });
    assert!(released.is_some(), "its slot is available again\n{}", bosun.log());
    assert!(ws.path.exists(), "the slot's worktree stays, reset, for the next task");
    assert!(git_in(repo.path(), &["branch", "--list", &branch]).is_empty(), "its merged branch goes");
}

/// A `gh` that records its arguments, one a line, in `<dir>/gh.args`, is logged in unless
/// `<dir>/logged-out` exists, answers `pr create` with a URL, and `pr view` with that pull
/// request once it was created.
fn stub_gh(dir: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let script = format!(
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> '{0}/gh.args'\necho --- >> '{0}/gh.args'\n\
         case \"$1 $2\" in\n  'auth status') test ! -e '{0}/logged-out' ;;\n  'pr create') touch '{0}/opened'; echo 'https://github.example/o/r/pull/7' ;;\n  \
         'pr view') test -e '{0}/opened' && echo '{{\"state\":\"OPEN\",\"url\":\"https://github.example/o/r/pull/7\"}}' ;;\n  \
         *) exit 2 ;;\nesac\n",
        dir.display()
    );
    let gh = dir.join("gh");
    std::fs::write(&gh, script).unwrap();
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_pull_request_is_opened_with_gh_after_a_push_and_its_url_recorded() {
    let stub = tempfile::tempdir().unwrap();
    stub_gh(stub.path());
    let path = format!("{}:{}", stub.path().display(), std::env::var("PATH").unwrap_or_default());
    let bosun = bosun().with_env("PATH", path);
    let repo = TempRepo::new();
    let (id, path, branch) = agent_with_work(&bosun, &repo, "pr.txt");
    std::fs::write(path.join("loose.txt"), "not committed\n").unwrap();
    let err = bosun.fails(repo.path(), &["pr", &id]);
    assert!(err.contains("no remote `origin`"), "{err}");
    let origin = repo.bare_clone();
    repo.git(&["remote", "add", "origin", origin.path().to_str().unwrap()]);
    std::fs::write(stub.path().join("logged-out"), "").unwrap();
    let err = bosun.fails(repo.path(), &["pr", &id]);
    assert!(err.contains("gh is not logged in") && err.contains("gh auth login"), "{err}");
    std::fs::remove_file(stub.path().join("logged-out")).unwrap();

    let out = bosun.run(repo.path(), &["pr", &id, "--draft", "--title", "Add pr.txt; $(rm -rf /)"]);
    let (said, warned) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && said.contains("pull request https://github.example/o/r/pull/7 (draft)"), "{said}");
    assert!(warned.contains("warning:") && warned.contains("leaves out"), "the work not committed is told: {warned}");
    let pushed =
        std::process::Command::new("git").arg("-C").arg(origin.path()).args(["rev-parse", &branch]).output().unwrap();
    assert!(pushed.status.success(), "the branch is on origin");
    let args = std::fs::read_to_string(stub.path().join("gh.args")).unwrap();
    let create = args.split("---\n").find(|a| a.starts_with("pr\ncreate")).expect("gh pr create ran");
    let expected = format!("pr\ncreate\n--head\n{branch}\n--base\nmain\n--title\nAdd pr.txt; $(rm -rf /)\n--body\n");
    assert!(
        create.starts_with(&expected) && create.trim_end().ends_with("--draft"),
        "every value an argument: {create}"
    );
    let shown = bosun.ok(repo.path(), &["show", &id]);
    assert!(
        shown.contains(&format!("pr         https://github.example/o/r/pull/7 ({branch} into main, draft)")),
        "{shown}"
    );
    // Asked again (as a pr step cut off by a restart is), the branch's open pull request is
    // the answer: another cannot be made.
    let again = bosun.ok(repo.path(), &["pr", &id]);
    assert!(again.contains("pull request https://github.example/o/r/pull/7"), "{again}");
    let args = std::fs::read_to_string(stub.path().join("gh.args")).unwrap();
    assert_eq!(args.split("---\n").filter(|a| a.starts_with("pr\ncreate")).count(), 1, "created once: {args}");
}

#[test]
fn a_conflict_is_resolved_by_the_agent_on_its_branch_and_the_merge_tried_again() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let dir = tempfile::tempdir().unwrap();
    let resolver = dir.path().join("resolver.toml");
    std::fs::write(
        &resolver,
        r#"[claude]
trusted = true

[[responses]]
on = { contains = "conflicts in" }
say = "Resolved, keeping my version."

[[responses.tools]]
call = "Bash"
input = { command = "git -c user.name=agent -c user.email=agent@example.com merge -X ours --no-edit main" }

[default]
say = "Understood."

[tools]
mode = "live"

[tools.Bash]
approve = true
"#,
    )
    .unwrap();
    let cl = claudeless();
    let id = bosun.start(repo.path(), &claude_args(&cl, resolver.to_str().unwrap(), &[]));
    bosun.wait_state(&id, "idle");
    let ws = bosun.show(&id).workspace.unwrap();
    std::fs::write(ws.path.join("same.txt"), "the agent's\n").unwrap();
    git_in(&ws.path, &["add", "-A"]);
    git_in(&ws.path, &["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "agent's same.txt"]);
    repo.commit_file("same.txt", "main's own\n");

    let out = bosun.run(repo.path(), &["merge", &id, "--resolve-with-agent", "--wait", "60"]);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}\n{}", bosun.log());
    assert!(stderr.contains("conflicts in same.txt: asked agent"), "{stderr}");
    assert!(stdout.contains("merged") && stdout.contains("into main"), "{stdout}");
    assert_eq!(std::fs::read_to_string(repo.path().join("same.txt")).unwrap(), "the agent's\n");
    assert!(bosun.agent(&id).state.is_dead(), "its agent is ended once merged");
}

#[test]
fn a_jobs_pr_step_pushes_its_branch_and_opens_a_pull_request() {
    use bosun_testkit::poll::wait_for;
    let stub = tempfile::tempdir().unwrap();
    stub_gh(stub.path());
    let path = format!("{}:{}", stub.path().display(), std::env::var("PATH").unwrap_or_default());
    let bosun = bosun().with_env("PATH", path);
    let repo = TempRepo::new();
    let origin = repo.bare_clone();
    repo.git(&["remote", "add", "origin", origin.path().to_str().unwrap()]);
    let runbook = r#"
command "ship" {
  run = { job = "ship" }
}

job "ship" {
  source = "worktree"
  step "work" {
    run     = "echo shipped > ship.txt && git add -A && git commit -qm shipped"
    on_done = { step = "open" }
  }
  step "open" {
    run = { pr = { draft = true } }
  }
}
"#;
    write_runbook(&repo, "ship.hcl", runbook);
    let ls = bosun.ok(repo.path(), &["runbook", "ls"]);
    assert!(ls.contains("work → open"), "its steps listed: {ls}");
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["run", "--json", "ship"])).unwrap();
    let job = v["job"].as_str().unwrap().to_owned();
    let branch = v["branch"].as_str().unwrap().to_owned();
    let done = wait_for(PATIENCE, || {
        let shown = bosun.ok(repo.path(), &["job", "show", &job]);
        (shown.contains("done") || shown.contains("failed")).then_some(shown)
    });
    let shown = done.unwrap_or_default();
    assert!(shown.contains("done"), "{shown}\n{}", bosun.log());
    let opened = bosun.events().into_iter().find_map(|e| match e {
        bosun_core::Event::PullRequestOpened { pr, .. } => Some(pr),
        _ => None,
    });
    let pr = opened.expect("its pull request is recorded");
    assert_eq!(
        (pr.url.as_str(), pr.branch.as_str(), pr.into.as_str(), pr.draft),
        ("https://github.example/o/r/pull/7", branch.as_str(), "main", true)
    );
    let pushed =
        std::process::Command::new("git").arg("-C").arg(origin.path()).args(["rev-parse", &branch]).output().unwrap();
    assert!(pushed.status.success(), "the branch is on origin");

    let bad = "command \"open\" {\n  run = { pr = {} }\n}\n";
    write_runbook(&repo, "bad.hcl", bad);
    let err = bosun.fails(repo.path(), &["runbook", "check"]);
    let out = format!("{err}{}", String::from_utf8_lossy(&bosun.run(repo.path(), &["runbook", "check"]).stdout));
    assert!(out.contains("opens a pull request, which is a job's step"), "{out}");
}

#[test]
fn a_target_branch_in_the_middle_of_a_rebase_in_some_worktree_is_not_moved() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (id, path, _) = agent_with_work(&bosun, &repo, "work.txt");
    repo.git(&["branch", "release"]);
    let elsewhere = tempfile::tempdir().unwrap();
    let wt = elsewhere.path().join("release");
    repo.git(&["worktree", "add", "-q", wt.to_str().unwrap(), "release"]);
    for n in ["one", "two"] {
        std::fs::write(wt.join("r.txt"), n).unwrap();
        git_in(&wt, &["add", "r.txt"]);
        git_in(&wt, &["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", n]);
    }
    // A rebase stopped on its way: the worktree is detached, release still where it was.
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=a", "-c", "user.email=a@b", "rebase", "-q", "-x", "false", "HEAD~1"])
        .current_dir(&wt)
        .output()
        .unwrap();
    assert!(!out.status.success(), "the rebase stops at its failing exec");
    let before = repo.git(&["rev-parse", "release"]);
    let err = bosun.fails(repo.path(), &["merge", &id, "--into", "release"]);
    assert!(err.contains("release is being rebased in") && err.contains("finish or abort"), "{err}");
    assert_eq!(repo.git(&["rev-parse", "release"]), before, "release not moved");
    assert!(path.exists() && !bosun.agent(&id).state.is_dead(), "the agent and its workspace stay");
}

#[test]
fn merge_commit_into_a_checked_out_branch_with_changes_is_refused_before_anything_is_committed() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (id, path, branch) = agent_with_work(&bosun, &repo, "work.txt");
    std::fs::write(path.join("loose.txt"), "not committed\n").unwrap();
    std::fs::write(repo.path().join("README.md"), "the user's own change\n").unwrap();
    let (main_before, tip_before) = (repo.head(), git_in(repo.path(), &["rev-parse", &branch]));
    let out = bosun.run(repo.path(), &["merge", &id, "--commit"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "refused to protect work: {err}");
    assert!(err.contains("main is checked out in") && err.contains("with changes not committed"), "{err}");
    assert_eq!(git_in(repo.path(), &["rev-parse", &branch]), tip_before, "nothing committed on its branch");
    assert_eq!(git_in(&path, &["status", "--porcelain"]), "?? loose.txt", "its work is as it was");
    assert_eq!(repo.head(), main_before, "main untouched");
    assert_eq!(std::fs::read_to_string(repo.path().join("README.md")).unwrap(), "the user's own change\n");
    assert!(!bosun.agent(&id).state.is_dead(), "its agent goes on");
}

#[test]
fn merge_into_a_branch_that_does_not_exist_is_not_found_and_changes_nothing() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (id, path, branch) = agent_with_work(&bosun, &repo, "work.txt");
    let out = bosun.run(repo.path(), &["merge", &id, "--into", "nope"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "what was named does not exist: {err}");
    assert!(err.contains("has no branch nope"), "{err}");
    assert!(git_in(repo.path(), &["branch", "--list", "nope"]).is_empty(), "no branch made");
    assert!(path.exists() && !git_in(repo.path(), &["branch", "--list", &branch]).is_empty());
}

#[test]
fn a_plain_merges_conflict_says_how_to_merge_it_not_a_plans() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (id, _, branch) = agent_with_work(&bosun, &repo, "same.txt");
    repo.commit_file("same.txt", "main's own\n");
    let err = bosun.fails(repo.path(), &["merge", &id]);
    assert!(!err.contains("plan") && !err.contains("using"), "{err}");
    assert!(err.contains(&format!("merge main into {branch}")) && err.contains("--resolve-with-agent"), "{err}");
}

#[test]
fn work_a_person_committed_after_its_agent_ended_is_merged_and_its_workspace_removed() {
    use bosun_testkit::poll::wait_for;
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = bosun.start(repo.path(), &["--", "sh", "-c", "echo work > w.txt"]);
    bosun.wait_state(&id, "dead(completed)");
    let ws = wait_for(PATIENCE, || bosun.show(&id).workspace.filter(|w| w.state.label() == "dirty"))
        .expect("marked dirty when its agent ended");
    git_in(&ws.path, &["add", "-A"]);
    git_in(&ws.path, &["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "by hand"]);
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["merge", &id, "--json"])).unwrap();
    assert_eq!(v["kept"], serde_json::Value::Null, "not kept for the old mark: {v}");
    assert_eq!(v["removed"]["workspace"], ws.id.as_str(), "{v}");
    assert!(!ws.path.exists(), "its workspace is removed");
    assert_eq!(git_in(repo.path(), &["show", "main:w.txt"]), "work");
}
