//! A person's defaults in config.toml (issue 54, item 15): set once with
//! `engine config set`, used by every run, the flag winning; a bad file
//! refused at its line and column like a profile.

use crate::common::*;

/// A trial that says where it ran.
fn here_profile() -> String {
    "id: here\nversion: 1.0.0\ntitle: Here\ntest_type: other\nexecutor: {external: {program: sh, args: [-c, 'pwd >&2; c=$(cat {{test_dir}}/n 2>/dev/null || echo 0); echo $((c + 1)) > {{test_dir}}/n; echo value: $((100 + c % 2))']}}\nresults: [{id: x, unit: U, proportion: HIB}]\nparsers: [{result: x, regex: 'value: (?P<value>\\d+)'}]\n".into()
}

fn trial_log(env: &Env, name: &str) -> String {
    let dir = env.result_path(name).parent().unwrap().to_path_buf();
    let mut text = String::new();
    for e in walk(&dir) {
        if e.extension().is_some_and(|x| x == "log") {
            text.push_str(&std::fs::read_to_string(&e).unwrap_or_default());
        }
    }
    text
}

#[test]
fn defaults_set_once_are_used_and_a_flag_wins() {
    let env = Env::new();
    env.profile("here", &here_profile());
    let target = env.target.path().to_str().unwrap();
    for (k, v) in
        [("target-dir", target), ("identifier", "lab-a"), ("budget", "3s"), ("monitor", "none"), ("equivalence", "3.5")]
    {
        let r = env.run(&["config", "set", k, v]);
        assert_eq!(r.code, 0, "{r:?}");
    }
    let path = env.home.path().join("config/engine/config.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("budget = \"3s\"") && text.contains("equivalence = 3.5"), "{text}");
    // A comment of the person's stays through a later set.
    std::fs::write(&path, format!("# our lab's defaults\n{text}")).unwrap();
    assert_eq!(env.run(&["config", "set", "budget", "4s"]).code, 0);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("# our lab's defaults\n") && text.contains("budget = \"4s\""), "{text}");

    let l = env.run(&["config", "list"]);
    assert_eq!(l.code, 0, "{l:?}");
    assert!(l.stdout.contains("identifier") && l.stdout.contains("lab-a  (line "), "{l:?}");
    assert!(l.stdout.contains("format") && l.stdout.contains("text  (engine's default)"), "{l:?}");
    assert_eq!(env.run(&["config", "get", "budget"]).stdout.trim(), "4s");

    // No --target-dir, no --identifier: the file's.
    let r = env.run(&["benchmark", "here", "-y", "--save", "c"]);
    assert_eq!(r.code, 0, "{r:?}");
    let f = env.result("c");
    assert_eq!(f["systems"][0]["identifier"], "lab-a");
    assert!(trial_log(&env, "c").contains(target), "the trial ran in the configured target directory");
    assert!(
        f["results"][0]["entries"][0].get("monitors").is_none_or(|m| m.is_null()),
        "monitor = none: {}",
        f["results"][0]["entries"][0]
    );
    // The flag wins.
    let r = env.run(&["benchmark", "here", "-y", "--save", "c", "--identifier", "lab-b", "--runs", "2"]);
    assert_eq!(r.code, 0, "{r:?}");
    let ids: Vec<_> = env.result("c")["systems"].as_array().unwrap().iter().map(|s| s["identifier"].clone()).collect();
    assert_eq!(ids, ["lab-a", "lab-b"]);
    // The margin reaches `result compare`.
    // 100, 101, 100 against 100, 101: within the file's ±3.5 %, not within ±1 %.
    let c = env.run(&["result", "show", "c"]);
    assert!(c.stdout.contains("equivalent within ±3.5 %"), "{c:?}");
    let c = env.run(&["result", "show", "c", "--equivalence", "1"]);
    assert!(!c.stdout.contains("equivalent within") && c.stdout.contains("undecided"), "{c:?}");

    // Unset: engine's default again.
    let u = env.run(&["config", "unset", "identifier"]);
    assert_eq!(u.code, 0, "{u:?}");
    let g = env.run(&["config", "get", "identifier"]);
    assert!(g.stderr.contains("engine's default"), "{g:?}");
}

#[test]
fn a_bad_config_is_refused_at_its_line_and_column_and_set_checks_values() {
    let env = Env::new();
    env.profile("here", &here_profile());
    let dir = env.home.path().join("config/engine");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        "# defaults\nbudjet = \"2m\"\nmonitor = \"sometimes\"\ntarget-dir = \"scratch\"\n",
    )
    .unwrap();
    let r = env.bench(&["here", "--save", "x"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("config.toml:2:1: `budjet` is not a setting"), "{r:?}");
    assert!(r.stderr.contains("did you mean `budget`?"), "{r:?}");
    assert!(r.stderr.contains("config.toml:3:11: `monitor`: "), "{r:?}");
    assert!(r.stderr.contains("config.toml:4:14: `target-dir`: `scratch` is not an absolute path"), "{r:?}");
    assert!(!env.result_path("x").exists(), "nothing ran");
    std::fs::write(dir.join("config.toml"), "budget = [\n").unwrap();
    let r = env.run(&["config", "list"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("config.toml:2:1: not TOML") || r.stderr.contains("config.toml:1:"), "{r:?}");
    // set refuses what the flag would refuse, and names that are no setting.
    std::fs::remove_file(dir.join("config.toml")).unwrap();
    let r = env.run(&["config", "set", "budget", "0s"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("`budget = 0s`: must be longer than zero"), "{r:?}");
    let r = env.run(&["config", "set", "formt", "bars"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("did you mean `format`?"), "{r:?}");
    assert!(!dir.join("config.toml").exists(), "nothing written");
}
