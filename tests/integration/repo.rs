//! Profile repositories: publish a folder, serve it with nginx on 127.0.0.1,
//! add it, run from it; every trust refusal (tampered archive, tampered
//! index, wrong key, no key); the offline copy; versions; shared results;
//! reproducible packing; conditional GET; malformed indexes and names.

use crate::common::{Env, Run};
use crate::httpd::Nginx;
use std::path::{Path, PathBuf};

/// A profile printing `value: <v>` at `version`.
fn profile(id: &str, version: &str, v: &str) -> String {
    format!(
        r#"id: {id}
version: {version}
title: Echo {id} {version}
test_type: other
executor:
  external:
    program: sh
    args: ["-c", "echo value: {v}"]
results:
  - {{id: number, unit: Items/s, proportion: HIB}}
parsers:
  - {{result: number, regex: 'value: (?P<value>[0-9.]+)'}}
"#
    )
}

/// A publisher's folder: `test-profiles/<id>/` and `suites/<id>.yaml`.
pub struct Source {
    dir: tempfile::TempDir,
}

impl Source {
    pub fn new() -> Source {
        Source { dir: tempfile::tempdir().unwrap() }
    }
    /// `test-profiles/<id>/profile.yaml` with `yaml` as it is.
    pub fn raw_profile(&self, id: &str, yaml: &str) -> &Self {
        let d = self.dir.path().join("test-profiles").join(id);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("profile.yaml"), yaml).unwrap();
        self
    }
    fn profile(&self, id: &str, version: &str, v: &str) -> &Self {
        let d = self.dir.path().join("test-profiles").join(id);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("profile.yaml"), profile(id, version, v)).unwrap();
        self
    }
    pub fn suite(&self, id: &str, text: &str) -> &Self {
        let d = self.dir.path().join("suites");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(format!("{id}.yaml")), text).unwrap();
        self
    }
    fn path(&self) -> &str {
        self.dir.path().to_str().unwrap()
    }
    /// The publisher's folder.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// Keys made by `engine repo keygen` in `dir`: (public file, secret file).
pub fn keygen(env: &Env, dir: &Path, name: &str) -> (String, String) {
    let prefix = dir.join(name);
    let r = env.run(&["repo", "keygen", "--out", prefix.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{r:?}");
    (format!("{}.pub", prefix.display()), format!("{}.key", prefix.display()))
}

pub fn publish(env: &Env, src: &Source, out: &Path, key: &str) -> Run {
    env.run(&["repo", "publish", src.path(), "--out", out.to_str().unwrap(), "--key", key])
}

/// The usual set-up: a source with `echo1@1.2.0` and suite `small`, published into `out`.
struct Published {
    _keys: tempfile::TempDir,
    out: tempfile::TempDir,
    pubkey: String,
    secret: String,
    src: Source,
}

fn published(env: &Env) -> Published {
    let keys = tempfile::tempdir().unwrap();
    let (pubkey, secret) = keygen(env, keys.path(), "team");
    let src = Source::new();
    src.profile("echo1", "1.2.0", "5").suite("small", "title: Small\ntests:\n  - profile: echo1\n");
    let out = tempfile::tempdir().unwrap();
    let r = publish(env, &src, out.path(), &secret);
    assert_eq!(r.code, 0, "{r:?}");
    Published { _keys: keys, out, pubkey, secret, src }
}

fn repos_dir(env: &Env) -> PathBuf {
    env.home.path().join("repos")
}

#[test]
fn publish_serve_add_and_run_a_suite_from_it() {
    let env = Env::new();
    let p = published(&env);
    assert!(p.out.path().join("index.json").is_file());
    assert!(p.out.path().join("profiles/echo1/echo1-1.2.0.tar.gz").is_file());
    // The real minisign tool verifies the index signature.
    let v = std::process::Command::new("minisign")
        .args(["-Vm", p.out.path().join("index.json").to_str().unwrap(), "-p", &p.pubkey])
        .output()
        .expect("minisign is installed (scripts/install-deps.sh)");
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
    assert!(String::from_utf8_lossy(&v.stdout).contains("Trusted comment: engine repository index"));

    let nginx = Nginx::start(p.out.path());
    let url = nginx.url("");
    let r = env.run(&["repo", "add", "team", &url, "--key", &p.pubkey]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = env.run(&["repo", "list"]);
    assert!(r.stdout.contains("team") && r.stdout.contains("1 profile(s), 1 suite(s)"), "{r:?}");
    let r = env.run(&["list", "profiles"]);
    assert!(r.stdout.lines().any(|l| l.starts_with("team/echo1@1.2.0")), "{r:?}");
    let r = env.run(&["list", "suites"]);
    // Counted as a local suite is: its tests, as --dry-run would run them.
    assert!(
        r.stdout.lines().any(|l| l.starts_with("team/suite/small@1.0.0") && l.contains("Small (1 tests;")),
        "{r:?}"
    );

    let r = env.bench(&["team/suite/small", "--runs", "2", "--save", "s"]);
    assert_eq!(r.code, 0, "{r:?}");
    let res = env.result("s");
    let t = &res["results"][0];
    assert_eq!(t["profile"], "echo1");
    assert_eq!(t["profile_version"], "1.2.0");
    assert_eq!(t["repository"]["name"], "team");
    assert_eq!(t["repository"]["url"], url.as_str());
    let idx = std::fs::read(p.out.path().join("index.json")).unwrap();
    use sha2::Digest;
    let sha: String = sha2::Sha256::digest(&idx).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(t["repository"]["index_sha256"], sha.as_str());
    // nginx served the index, its signature and both archives.
    let log = nginx.requests().join("\n");
    for f in ["/index.json ", "/index.json.minisig", "echo1-1.2.0.tar.gz", "small-1.0.0.tar.gz"] {
        assert!(log.contains(f), "{f} not requested:\n{log}");
    }
}

#[test]
fn a_key_made_by_the_minisign_tool_publishes_too() {
    let env = Env::new();
    let keys = tempfile::tempdir().unwrap();
    let (pk, sk) = (keys.path().join("m.pub"), keys.path().join("m.key"));
    let g = std::process::Command::new("minisign")
        .args(["-G", "-W", "-p", pk.to_str().unwrap(), "-s", sk.to_str().unwrap()])
        .output()
        .expect("minisign is installed");
    assert!(g.status.success(), "{}", String::from_utf8_lossy(&g.stderr));
    let src = Source::new();
    src.profile("echo1", "1.0.0", "1");
    let out = tempfile::tempdir().unwrap();
    let r = publish(&env, &src, out.path(), sk.to_str().unwrap());
    assert_eq!(r.code, 0, "{r:?}");
    let r = env.run(&["repo", "add", "m", out.path().to_str().unwrap(), "--key", pk.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{r:?}");
}

/// Adding must fail with `needle` in stderr and leave nothing behind.
fn refused(env: &Env, args: &[&str], needle: &str) -> Run {
    let r = env.run(args);
    assert_ne!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains(needle), "expected `{needle}`: {r:?}");
    let d = repos_dir(env);
    let left: Vec<String> = std::fs::read_dir(&d)
        .map(|rd| rd.flatten().map(|e| e.file_name().to_string_lossy().to_string()).collect())
        .unwrap_or_default();
    assert!(left.iter().all(|n| n == "repos.json"), "left behind in {}: {left:?}", d.display());
    let reg = std::fs::read_to_string(d.join("repos.json")).unwrap_or_default();
    assert!(!reg.contains("\"team\""), "registered anyway: {reg}");
    r
}

#[test]
fn tampered_archive_is_refused_with_expected_and_found() {
    let env = Env::new();
    let p = published(&env);
    let a = p.out.path().join("profiles/echo1/echo1-1.2.0.tar.gz");
    let mut bytes = std::fs::read(&a).unwrap();
    let expected = {
        use sha2::Digest;
        sha2::Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    let n = bytes.len();
    bytes[n / 2] ^= 0xff;
    std::fs::write(&a, &bytes).unwrap();
    let nginx = Nginx::start(p.out.path());
    let r = refused(&env, &["repo", "add", "team", &nginx.url(""), "--key", &p.pubkey], "sha256");
    assert!(r.stderr.contains(&format!("expected {expected}")), "{r:?}");
    assert!(r.stderr.contains("nothing of it was unpacked"), "{r:?}");

    // A longer archive: refused on its size.
    bytes.push(0);
    std::fs::write(&a, &bytes).unwrap();
    let r = refused(&env, &["repo", "add", "team", &nginx.url(""), "--key", &p.pubkey], "expected");
    assert!(r.stderr.contains("bytes"), "{r:?}");
}

#[test]
fn tampered_index_wrong_key_and_no_key_are_refused() {
    let env = Env::new();
    let p = published(&env);
    let nginx = Nginx::start(p.out.path());
    let url = nginx.url("");

    // Wrong key.
    let other = tempfile::tempdir().unwrap();
    let (other_pub, _) = keygen(&env, other.path(), "other");
    refused(&env, &["repo", "add", "team", &url, "--key", &other_pub], "not by the repository's key");
    // No key.
    refused(&env, &["repo", "add", "team", &url], "no public key");

    // A changed index (a title) with the old signature.
    let ip = p.out.path().join("index.json");
    let text = std::fs::read_to_string(&ip).unwrap();
    std::fs::write(&ip, text.replace("Echo echo1 1.2.0", "Echo echo1 1.2.0 (evil)")).unwrap();
    refused(&env, &["repo", "add", "team", &url, "--key", &p.pubkey], "does not verify");

    // --insecure-no-signature adds it, and `repo list` says so loudly.
    let r = env.run(&["repo", "add", "team", &url, "--insecure-no-signature"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("WITHOUT a key"), "{r:?}");
    let r = env.run(&["repo", "list"]);
    assert!(r.stdout.contains("UNSIGNED"), "{r:?}");
}

#[test]
fn a_changed_index_on_update_is_refused_and_the_copy_kept() {
    let env = Env::new();
    let p = published(&env);
    let nginx = Nginx::start(p.out.path());
    let r = env.run(&["repo", "add", "team", &nginx.url(""), "--key", &p.pubkey]);
    assert_eq!(r.code, 0, "{r:?}");
    let copy = repos_dir(&env).join("team/index.json");
    let before = std::fs::read(&copy).unwrap();
    let ip = p.out.path().join("index.json");
    let text = std::fs::read_to_string(&ip).unwrap();
    std::fs::write(&ip, text.replace("\"title\": \"Small\"", "\"title\": \"Small!\"")).unwrap();
    let r = env.run(&["repo", "update", "team"]);
    assert_ne!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("does not verify") && r.stderr.contains("kept unchanged"), "{r:?}");
    assert_eq!(std::fs::read(&copy).unwrap(), before);
}

#[test]
fn unreachable_server_uses_the_last_synced_copy_with_its_age() {
    let env = Env::new();
    let p = published(&env);
    let nginx = Nginx::start(p.out.path());
    let r = env.run(&["repo", "add", "team", &nginx.url(""), "--key", &p.pubkey]);
    assert_eq!(r.code, 0, "{r:?}");
    drop(nginx);
    let r = env.cmd(&["repo", "update", "team"]).env("ENGINE_DOWNLOAD_TIMEOUT", "2").output().unwrap();
    let r: Run = r.into();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("unreachable") && r.stderr.contains("using the copy synced"), "{r:?}");
    assert!(r.stderr.contains("second"), "the age: {r:?}");
    let r = env.bench(&["team/suite/small", "--runs", "2", "--save", "off"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(env.result("off")["results"][0]["repository"]["name"], "team");
}

#[test]
fn conditional_get_makes_one_request_when_unchanged() {
    let env = Env::new();
    let p = published(&env);
    let nginx = Nginx::start(p.out.path());
    let r = env.run(&["repo", "add", "team", &nginx.url(""), "--key", &p.pubkey]);
    assert_eq!(r.code, 0, "{r:?}");
    let before = nginx.requests().len();
    let r = env.run(&["repo", "update", "team"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("unchanged"), "{r:?}");
    let log = nginx.requests();
    let new = &log[before..];
    assert_eq!(new.len(), 1, "{new:?}");
    assert!(new[0].contains("GET /index.json ") && new[0].contains(" 304 "), "{new:?}");

    // A new version: the update fetches the index, its signature and the one new archive.
    p.src.profile("echo1", "1.3.0", "6");
    let r = publish(&env, &p.src, p.out.path(), &p.secret);
    assert_eq!(r.code, 0, "{r:?}");
    let before = nginx.requests().len();
    let r = env.run(&["repo", "update", "team"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("updated (1 archive(s)"), "{r:?}");
    assert_eq!(nginx.requests().len() - before, 3, "{:?}", &nginx.requests()[before..]);
    let r = env.run(&["info", "team/echo1"]);
    assert!(r.stdout.contains("echo1@1.3.0"), "{r:?}");
}

#[test]
fn version_resolution_table() {
    let env = Env::new();
    let keys = tempfile::tempdir().unwrap();
    let (pubkey, secret) = keygen(&env, keys.path(), "team");
    let out = tempfile::tempdir().unwrap();
    // Publish 1.0.0, 1.2.0, 1.2.3, 2.0.0 of `ver` one after the other: a repository keeps every version.
    let src = Source::new();
    for v in ["1.0.0", "1.2.0", "1.2.3", "2.0.0"] {
        src.profile("ver", v, "1");
        let r = publish(&env, &src, out.path(), &secret);
        assert_eq!(r.code, 0, "{r:?}");
    }
    // A later publish of 1.2.0 with other content is refused.
    src.profile("ver", "1.2.0", "2");
    let r = publish(&env, &src, out.path(), &secret);
    assert_ne!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("already published with other content"), "{r:?}");

    let r = env.run(&["repo", "add", "team", out.path().to_str().unwrap(), "--key", &pubkey]);
    assert_eq!(r.code, 0, "{r:?}");
    // A local 1.1.0 (local first on a tie; the newest wins otherwise).
    env.profile("ver", &profile("ver", "1.1.0", "1"));
    let local = env.profiles.path().join("test-profiles/ver/profile.yaml");
    let table: &[(&str, Option<&str>, bool)] = &[
        ("ver", Some("2.0.0"), true),
        ("ver@1", Some("1.2.3"), true),
        ("ver@1.2", Some("1.2.3"), true),
        ("ver@1.2.0", Some("1.2.0"), true),
        ("ver@1.1", Some("1.1.0"), false),
        ("ver@1.0", Some("1.0.0"), true),
        ("team/ver", Some("2.0.0"), true),
        ("team/ver@1.2", Some("1.2.3"), true),
        ("team/ver@1.1", None, true),
        ("ver@3", None, false),
        ("team/nope", None, false),
        ("ghost/ver", None, false),
    ];
    for (reference, want, from_repo) in table {
        let r = env.run(&["info", reference]);
        match want {
            Some(v) => {
                assert_eq!(r.code, 0, "{reference}: {r:?}");
                assert!(r.stdout.contains(&format!("(ver@{v})")), "{reference} → {v}: {r:?}");
                if *from_repo {
                    assert!(r.stdout.contains("repository: team"), "{reference}: {r:?}");
                } else {
                    assert!(r.stdout.contains(local.to_str().unwrap()), "{reference}: {r:?}");
                }
            }
            None => {
                assert_eq!(r.code, 2, "{reference}: {r:?}");
                assert!(r.stderr.contains("error:"), "{reference}: {r:?}");
            }
        }
    }
    let r = env.run(&["info", "ver@3"]);
    assert!(r.stderr.contains("team/ver@2.0.0"), "lists what exists: {r:?}");
    // `list profiles`: the local 1.1.0 says a newer version is in `team`.
    let r = env.run(&["list", "profiles"]);
    let line = r.stdout.lines().find(|l| l.starts_with("ver@1.1.0")).unwrap_or_else(|| panic!("{r:?}"));
    assert!(line.contains("newer: team/ver@2.0.0"), "{line}");
    assert!(r.stdout.lines().any(|l| l.starts_with("team/ver@2.0.0")), "{r:?}");
}

#[test]
fn a_published_result_re_run_appends_an_identifier() {
    let publisher = Env::new();
    let p = published(&publisher);
    let r = publisher.run(&["repo", "add", "team", p.out.path().to_str().unwrap(), "--key", &p.pubkey]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = publisher.bench(&["team/suite/small", "--runs", "2", "--save", "base", "--identifier", "publisher box"]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = publisher.run(&[
        "repo",
        "publish",
        p.src.path(),
        "--out",
        p.out.path().to_str().unwrap(),
        "--key",
        &p.secret,
        "--result",
        "base",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("result base@1.0.0"), "{r:?}");

    let user = Env::new();
    let nginx = Nginx::start(p.out.path());
    let r = user.run(&["repo", "add", "lab", &nginx.url(""), "--key", &p.pubkey]);
    assert_eq!(r.code, 0, "{r:?}");
    // Listed with the saved ones, and shown without being copied in.
    let r = user.run(&["list", "results"]);
    assert!(
        r.stdout.contains("lab/results/base@1.0.0  shared: 1 identifier(s)") && r.stdout.contains("publisher box"),
        "{r:?}"
    );
    let r = user.run(&["info", "lab/results/base"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("saved result base: 1 test(s) can be re-run"), "{r:?}");
    assert!(!user.home.path().join("results/base").exists(), "info copied the shared result");
    let r = user.bench(&["lab/results/base", "--runs", "2", "--identifier", "my box"]);
    assert_eq!(r.code, 0, "{r:?}");
    let res = user.result("base");
    let ids: Vec<&str> = res["systems"].as_array().unwrap().iter().map(|s| s["identifier"].as_str().unwrap()).collect();
    assert_eq!(ids, vec!["publisher box", "my box"]);
    let entries = res["results"][0]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{res}");
    // The result names the publisher's repository (`team`, a folder path);
    // here it is `lab` over HTTP: the exact version came from `lab`, the
    // repository the result was shared through.
    assert_eq!(res["results"][0]["profile_version"], "1.2.0");
    assert!(user.home.path().join("repos/lab/profiles/echo1@1.2.0/echo1/profile.yaml").is_file());
}

#[test]
fn packing_is_reproducible() {
    let env = Env::new();
    let p = published(&env);
    let again = tempfile::tempdir().unwrap();
    let r = publish(&env, &p.src, again.path(), &p.secret);
    assert_eq!(r.code, 0, "{r:?}");
    let files = |d: &Path| -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![d.to_path_buf()];
        while let Some(x) = stack.pop() {
            for e in std::fs::read_dir(&x).unwrap().flatten() {
                if e.file_type().unwrap().is_dir() {
                    stack.push(e.path());
                } else {
                    out.push((
                        e.path().strip_prefix(d).unwrap().display().to_string(),
                        std::fs::read(e.path()).unwrap(),
                    ));
                }
            }
        }
        out.sort();
        out
    };
    let (a, b) = (files(p.out.path()), files(again.path()));
    assert_eq!(a.len(), 4, "{:?}", a.iter().map(|x| &x.0).collect::<Vec<_>>());
    // Archives and index: the same bytes. The signature differs (the
    // minisign crate's signatures carry random noise) and both verify.
    for ((na, ba), (nb, bb)) in a.iter().zip(&b) {
        assert_eq!(na, nb);
        if na != "index.json.minisig" {
            assert!(ba == bb, "{na} differs between two publishes of the same folder");
        }
    }
    let r = env.run(&["repo", "add", "again", again.path().to_str().unwrap(), "--key", &p.pubkey]);
    assert_eq!(r.code, 0, "{r:?}");
    // Publishing again into the same folder changes no byte, signature included.
    let b = files(again.path());
    let r = publish(&env, &p.src, again.path(), &p.secret);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(files(again.path()) == b, "a second publish into the same folder changed it");
    // Touching the files (new mtimes) changes nothing either.
    let f = p.src.dir.path().join("test-profiles/echo1/profile.yaml");
    std::fs::write(&f, std::fs::read(&f).unwrap()).unwrap();
    let a = files(p.out.path());
    let r = publish(&env, &p.src, p.out.path(), &p.secret);
    assert!(r.stdout.contains("unchanged  profile echo1@1.2.0"), "{r:?}");
    assert!(files(p.out.path()) == a);
}

#[test]
fn malformed_indexes_and_bad_names_are_refused_with_the_field() {
    let env = Env::new();
    let p = published(&env);
    let out = p.out.path().to_str().unwrap();
    // Names.
    for (name, needle) in [("fio", "built-in"), ("a/b", "`/`"), ("suite", "already means"), ("Team", "lower-case")] {
        let r = env.run(&["repo", "add", name, out, "--key", &p.pubkey]);
        assert_eq!(r.code, 2, "{name}: {r:?}");
        assert!(r.stderr.contains(needle), "{name}: {r:?}");
    }
    let ip = p.out.path().join("index.json");
    let good = std::fs::read_to_string(&ip).unwrap();
    let add = || env.run(&["repo", "add", "team", out, "--insecure-no-signature"]);
    let check = |r: Run, needle: &str| {
        assert_ne!(r.code, 0, "{r:?}");
        assert!(r.stderr.contains(needle), "expected `{needle}`: {r:?}");
        assert!(!repos_dir(&env).join("team").exists(), "nothing written: {r:?}");
    };
    // Truncated.
    std::fs::write(&ip, &good[..good.len() / 2]).unwrap();
    check(add(), "cut off");
    // A wrong type: the error names the field.
    std::fs::write(&ip, good.replacen("\"size\": ", "\"size\": \"x\", \"was\": ", 1)).unwrap();
    check(add(), "profiles[0].versions[0].archive.size");
    // Deep.
    std::fs::write(&ip, format!("{{\"format\": 1, \"title\": {}{}}}", "[".repeat(50_000), "]".repeat(50_000))).unwrap();
    check(add(), "title: invalid type");
    // Huge.
    std::fs::write(&ip, format!("{}{}", good, " ".repeat(17 << 20))).unwrap();
    check(add(), "larger than");
    // An archive path that climbs out.
    std::fs::write(&ip, good.replacen("profiles/echo1/", "../../", 1)).unwrap();
    check(add(), "archive.path");
    // Needs a newer engine.
    std::fs::write(&ip, good.replacen("\"engine\": \"", "\"engine\": \"99", 1)).unwrap();
    check(add(), "needs engine 99");
}
