//! The README's walkthrough must keep working as written.

use crate::common::*;

fn walkthrough_profile() -> String {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let start = readme.find("**2. Write").expect("walkthrough step 2");
    let block = &readme[start..];
    let yaml = block.split("```yaml\n").nth(1).unwrap().split("```").next().unwrap();
    yaml.to_string()
}

#[test]
fn the_walkthrough_profile_validates_and_runs() {
    let env = Env::new();
    let path = env.profile("dd-write", &walkthrough_profile());
    let r = env.run(&["validate", path.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = env.bench(&[
        "dd-write",
        "--option",
        "block_size=1MiB",
        "--runs",
        "2",
        "--save",
        "my-disk",
        "--identifier",
        "laptop: ext4",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("dd Write 9.1\nBlock Size: 1MiB\nSeconds < Lower Is Better\nlaptop: ext4 . "), "{r:?}");

    // The error the README shows for a misspelt key.
    let bad = walkthrough_profile().replace("    args:", "    argz:");
    let path = env.profile("dd-write", &bad);
    let r = env.run(&["validate", path.to_str().unwrap()]);
    assert_eq!(r.code, 3);
    assert!(r.stderr.contains("profile.yaml:19:5: unknown field `argz`\n  hint: did you mean `args`?"), "{r:?}");
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(readme.contains("…/profile.yaml:19:5: unknown field `argz`"));
}

/// README's exit-code table lists exactly the codes of `ops::failure::exit`,
/// and `engine --help` names each of them (6 was missing from both once).
#[test]
fn the_exit_codes_are_one_table() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let table = readme.split("### Exit codes").nth(1).unwrap().split("###").next().unwrap();
    let codes: Vec<i32> =
        table.lines().filter_map(|l| l.strip_prefix("| ")?.split(" |").next()?.trim().parse().ok()).collect();
    let ours: Vec<i32> = engine_ops::exit::TABLE.iter().map(|(c, _)| *c).collect();
    assert_eq!(codes, ours);
    let help = Env::new().run(&["--help"]).stdout;
    for (c, w) in engine_ops::exit::TABLE {
        assert!(help.replace('\n', " ").contains(&format!("{c} {w}")), "--help lacks `{c} {w}`:\n{help}");
    }
}
