//! `bosun usage` through the CLI: what claudeless agents' answers used, summed by plan and by
//! UTC day, all of it or since a time; a time that cannot be read is refused with the forms.

mod support;

use bosun_testkit::poll::wait_for;
use support::*;

fn usage(bosun: &Bosun, repo: &TempRepo, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["usage", "--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&bosun.ok(repo.path(), &all)).unwrap()
}

fn line<'a>(v: &'a serde_json::Value, of: &str) -> Option<&'a serde_json::Value> {
    v["lines"].as_array().unwrap().iter().find(|l| l["of"] == of)
}

#[test]
fn usage_is_summed_by_plan_and_by_utc_day_and_since_a_time() {
    let bosun = bosun();
    let repo = repo_with_example("plan.hcl", 1);
    bosun.ok(repo.path(), &["plan", "run", "auth"]);
    let plans =
        || serde_json::from_str::<serde_json::Value>(&bosun.ok(repo.path(), &["plan", "ls", "--json"])).unwrap();
    let done = wait_for(PATIENCE, || (plans()[0]["state"]["state"] == "done").then_some(()));
    assert!(done.is_some(), "{}\n{}", plans(), bosun.log());
    let plan = plans()[0]["id"].as_str().unwrap().to_owned();
    // One agent of no plan beside it.
    let (cl, sc) = (claudeless(), scenario("chat"));
    let lone = bosun.start(repo.path(), &claude_args(&cl, &sc, &["--prompt", "ping"]));
    let counted = wait_for(PATIENCE, || bosun.agent(&lone).usage.by_model.values().any(|t| t.input > 0).then_some(()));
    assert!(counted.is_some(), "{}", bosun.log());

    let agents = bosun.list().agents;
    let input_of = |f: &dyn Fn(&bosun_wire::AgentSummary) -> bool| -> u64 {
        agents.iter().filter(|a| f(a)).flat_map(|a| a.tokens.values()).map(|t| t.input).sum()
    };
    let planned = input_of(&|a| a.id.as_str() != lone);
    assert!(planned > 0 && input_of(&|a| a.id.as_str() == lone) > 0, "{agents:?}");
    let by_plan = usage(&bosun, &repo, &["--by", "plan"]);
    assert_eq!(by_plan["by"], "plan");
    assert_eq!(line(&by_plan, &plan).map(|l| l["input"].as_u64()), Some(Some(planned)), "{by_plan}");
    assert_eq!(
        line(&by_plan, "(no plan)").map(|l| l["input"].as_u64()),
        Some(Some(input_of(&|a| a.id.as_str() == lone)))
    );
    assert_eq!(by_plan["lines"].as_array().unwrap().len(), 2, "{by_plan}");
    let listed = bosun.ok(repo.path(), &["usage", "--by", "plan"]);
    assert!(listed.starts_with("PLAN") && listed.contains(&plan), "{listed}");
    // The plan's summary says what it spent, and each job's part.
    let summary: serde_json::Value =
        serde_json::from_str(&bosun.ok(repo.path(), &["plan", "show", &plan, "--json"])).unwrap();
    assert_eq!(summary["spent"]["tokens"]["input"].as_u64(), Some(planned), "{summary}");
    let parts: u64 =
        summary["jobs"].as_array().unwrap().iter().map(|j| j["spent"]["tokens"]["input"].as_u64().unwrap()).sum();
    assert_eq!(parts, planned);
    assert!(summary["jobs"].as_array().unwrap().iter().all(|j| j["spent"]["cost"].as_u64() > Some(0)), "{summary}");
    let shown = bosun.ok(repo.path(), &["plan", "show", &plan]);
    let spent = shown.lines().find(|l| l.starts_with("spent: ")).unwrap_or_else(|| panic!("{shown}"));
    assert!(spent.contains(" in · ") && spent.contains("($"), "{spent}");
    assert_eq!(shown.lines().filter(|l| l.starts_with("  tokens   ")).count(), 3, "{shown}");

    // All of it was spent today (UTC), and in the last hour; none of it since tomorrow.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    let today = bosun_core::usage::day_of(now / bosun_core::usage::HOUR_MS);
    let all = usage(&bosun, &repo, &[]);
    let by_day = usage(&bosun, &repo, &["--by", "day"]);
    assert_eq!(by_day["lines"].as_array().unwrap().len(), 1, "{by_day}");
    assert_eq!(by_day["lines"][0]["of"], today.as_str());
    assert_eq!(by_day["total"], all["total"], "each response in its day once");
    assert!(all["total"]["cost_usd"].as_f64().unwrap() > 0.0, "claudeless names a priced model: {all}");
    assert_eq!(usage(&bosun, &repo, &["--since", "1h"])["total"], all["total"]);
    assert_eq!(usage(&bosun, &repo, &["--since", &today, "--by", "plan"])["total"], all["total"]);
    let later = usage(&bosun, &repo, &["--since", "2099-01-01T00:00:00Z"]);
    assert_eq!((later["lines"].as_array().unwrap().len(), &later["total"]["total"]), (0, &serde_json::json!(0)));

    // A time that cannot be read is refused with the forms it may take.
    for bad in ["yesterday", "24", "5w", "2026-13-01", "--by"] {
        let out = bosun.run(repo.path(), &["usage", "--since", bad]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        if bad != "--by" {
            assert!(err.contains("RFC 3339") && err.contains("`24h`") && err.contains("`2026-11-28`"), "{err}");
        }
    }
    bosun.ok(repo.path(), &["kill", &lone]);
}

/// bosun's config gives the repository a daily budget: a claudeless agent's answer spends it,
/// and the agent is paused and escalated, naming the daily budget; no other agent starts on the
/// repository today.
#[test]
fn a_repositorys_daily_budget_pauses_its_agent_and_starts_no_other_that_day() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let root = repo.path().canonicalize().unwrap();
    let config = format!("[budget.repos.\"{}\"]\ndaily = \"1tok\"\n", root.display());
    std::fs::write(bosun.state_dir().join("config.toml"), config).unwrap();
    let (cl, sc) = (claudeless(), scenario("chat"));
    let id = bosun.start(repo.path(), &claude_args(&cl, &sc, &["--prompt", "ping"]));
    let paused = wait_for(PATIENCE, || bosun.agent(&id).paused);
    let paused = paused.unwrap_or_else(|| panic!("paused:\n{}", bosun.log()));
    assert_eq!(paused.of.as_deref(), Some(format!("repository {}'s daily budget", root.display()).as_str()));
    let shown = bosun.ok(repo.path(), &["show", &id]);
    assert!(shown.contains(&format!("paused     at repository {}'s daily budget of 1tok", root.display())), "{shown}");
    let ls = bosun.ok(repo.path(), &["ls"]);
    assert!(ls.lines().any(|l| l.starts_with(&id) && l.contains("paused(budget)")), "{ls}");
    let escalations = bosun.ok(repo.path(), &["escalations"]);
    assert!(escalations.contains("daily budget of 1tok is spent"), "{escalations}");
    let err = bosun.fails(repo.path(), &["agent", "start", "--", &cl, "--scenario", &sc]);
    assert!(err.contains("daily budget of 1tok is spent for today (UTC)"), "{err}");
    assert_eq!(bosun.list().agents.len(), 1, "nothing started");
    bosun.ok(repo.path(), &["kill", &id]);
}
