//! Privilege and planted paths (issue 37 items 2–4): what a hostile
//! publisher's profile tried, from inside the sandbox and by making engine
//! act for it outside. Each is a signed repository profile run as a user
//! would; each asserts what was denied and that nothing outside changed.

use super::{Bait, BaitDir, Hostile, all_text, failures, script_profile};
use crate::common::*;

/// A tag unique to this test run, for bait names.
fn tag(what: &str) -> String {
    format!("{what}-{}", std::process::id())
}

/// The "shocker" escape (a handle to the host's `/` through
/// `open_by_handle_at`), reading a 0600 file of the host's root, and
/// reading the user's environment: all denied or absent.
#[test]
#[ignore = "needs root"]
fn no_privilege_reaches_outside_the_sandbox() {
    require_root();
    let env = Env::new();
    let t = tag("priv");
    let bait = Bait::new(&t, &["/etc", "/var/tmp"]);
    let etc_bait = bait.files[0].0.display().to_string();
    // name_to_handle_at(AT_FDCWD, ".") then open_by_handle_at on it: with
    // CAP_DAC_READ_SEARCH this opened the host's root; here both are refused.
    let shocker = r#"python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(136)
ctypes.memmove(buf, (128).to_bytes(4, "little"), 4)
mid = ctypes.c_int()
r = libc.syscall(303, -100, b".", buf, ctypes.byref(mid), 0)
e = ctypes.get_errno()
r2 = libc.syscall(304, os.open("/", os.O_RDONLY), buf, 0)
e2 = ctypes.get_errno()
print("name_to_handle_at", r, e, "open_by_handle_at", r2, e2)
if r2 < 0:
    sys.stderr.write(os.strerror(e2) + "\n")
    sys.exit(1)
'"#;
    let h = Hostile::new(&env);
    h.profile("shocker", &script_profile("shocker", "sh", shocker, "", ""))
        .profile("shadow", &script_profile("shadow", "sh", &format!("cat {etc_bait}"), "", ""))
        .profile(
            "environ",
            &script_profile(
                "environ",
                "sh",
                "env | sort; echo home=$HOME; grep Cap /proc/self/status",
                "relevant_env: [ENGINE_ATTACK_TOKEN]\n",
                "",
            ),
        )
        .suite("priv", "title: Privilege\ntests:\n  - profile: shocker\n  - profile: shadow\n  - profile: environ\n");
    assert_eq!(h.add(&env, "evil").code, 0);
    let r: Run = env
        .cmd(&["benchmark", "-y", "--target-dir", env.target.path().to_str().unwrap()])
        .args(["evil/suite/priv", "--runs", "1", "--save", "p", "--logs", "all"])
        .env("ENGINE_ATTACK_TOKEN", "s3cr3t-token-value")
        .output()
        .unwrap()
        .into();
    assert_eq!(r.code, 4, "{r:?}");
    let f = failures(&env, "p");
    let reason = |id: &str| f.iter().find(|(p, _)| p == id).map(|(_, r)| r.clone()).unwrap_or_default();
    assert!(
        reason("shocker").contains("denied by the sandbox: an operation the sandbox forbids"),
        "{}\n{r:?}",
        reason("shocker")
    );
    assert!(
        reason("shadow").contains("denied by the sandbox: a path outside the sandbox's world"),
        "{}",
        reason("shadow")
    );
    let text = all_text(&env);
    assert!(text.contains("name_to_handle_at -1 1 open_by_handle_at -1 1"), "the filter did not answer EPERM");
    for s in bait.secrets() {
        assert!(!text.contains(&s), "a 0600 file of root's reached the logs: {s}");
    }
    // The environment is the sandbox's, not the user's: no token (not even
    // in the result, where `relevant_env` would have recorded it), HOME the scratch.
    assert!(!text.contains("s3cr3t-token-value"), "the user's environment leaked into a confined test");
    assert!(text.contains("home=") && !text.contains("home=/root"), "HOME was not the scratch directory");
    assert!(!text.contains("ENGINE_HOME="), "engine's own variables leaked");
    // No capability in the host's namespace: CapBnd holds only the namespaced few.
    assert!(text.contains("CapBnd:\t00000000000000fb"), "{text}");
    assert_eq!(bait.changes(), Vec::<String>::new());
}

/// Engine never follows what a command planted: the private /tmp and
/// /dev/shm swapped for links, `stdin` naming a host file or a planted
/// link, a server's `remove` through a link, a readiness socket outside,
/// and a racer that keeps swapping the trial directory for a link while
/// engine hands it to the unprivileged user.
#[test]
#[ignore = "needs root"]
fn nothing_engine_does_follows_a_planted_path() {
    require_root();
    let env = Env::new();
    let t = tag("plant");
    let bait = Bait::new(&t, &["/etc", "/root"]);
    let dir = BaitDir::new(&t);
    let d = dir.path.display().to_string();
    let etc_bait = bait.files[0].0.display().to_string();
    let root_bait = bait.files[1].0.display().to_string();
    // A listener outside every test: a readiness probe must never reach it.
    let outside = tempfile::tempdir_in("/var/lib").unwrap();
    let sock = outside.path().join("s.sock");
    let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    listener.set_nonblocking(true).unwrap();
    let h = Hostile::new(&env);
    // The old bind sources, and the sandbox's real ones beside the test folder.
    let swap = "    pre_test:\n      - shell: \"mkdir -p .sandbox; rm -rf .sandbox/tmp .sandbox/shm; ln -s /etc .sandbox/tmp; ln -s /root .sandbox/shm; ln -sfn /etc ../$(basename $PWD).sandbox/tmp || true\"\n";
    let write_tmp = format!("echo pwned > /tmp/engine-bait-{t}; echo pwned > /dev/shm/engine-bait-{t}");
    h.profile("tmpswap", &script_profile("tmpswap", "sh", &write_tmp, "", swap));
    let stdin =
        |id: &str, file: &str, pre: &str| script_profile(id, "sh", "cat", "", &format!("    stdin: {file:?}\n{pre}"));
    h.profile("stdin-abs", &stdin("stdin-abs", &etc_bait, ""));
    h.profile(
        "stdin-link",
        &stdin("stdin-link", "planted", &format!("    pre_trial:\n      - shell: \"ln -sf {root_bait} planted\"\n")),
    );
    let server = |id: &str, server: &str, pre: &str| {
        script_profile(
            id,
            "sh",
            "true",
            "",
            &format!("    pre_test:\n{pre}      - server:\n{server}        timeout: 3s\n"),
        )
    };
    h.profile(
        "remove",
        &server(
            "remove",
            "          name: hold\n          program: sleep\n          args: [\"1000\"]\n          ready: {command: [\"true\"]}\n          remove: [\"{{test_dir}}/data/keep.txt\", \"{{test_dir}}/data/sub\"]\n",
            &format!("      - shell: \"ln -s {d} {{{{test_dir}}}}/data\"\n"),
        ),
    );
    h.profile(
        "socket",
        &server(
            "socket",
            &format!(
                "          name: probe\n          program: sleep\n          args: [\"1000\"]\n          ready: {{socket: \"{}\"}}\n",
                sock.display()
            ),
            "",
        ),
    );
    // The racer: a server for the whole test that keeps replacing the
    // trial's directory with a link to the bait while trials run and
    // engine hands each one to the unprivileged user.
    let racer = format!(
        "          name: racer\n          program: sh\n          args: [\"-c\", \"while :; do rm -rf {{{{test_dir}}}}/trial; ln -sfn {d} {{{{test_dir}}}}/trial; done\"]\n          ready: {{command: [\"true\"]}}\n"
    );
    let race_steps = format!(
        "    pre_test:\n      - server:\n{racer}    pre_trial:\n      - shell: \"touch x 2>/dev/null; true\"\n        unprivileged: true\n"
    );
    h.profile("race", &script_profile("race", "sh", "touch mine 2>/dev/null; true", "", &race_steps));
    h.suite(
        "plant",
        "title: Planted\ntests:\n  - profile: tmpswap\n  - profile: stdin-abs\n  - profile: stdin-link\n  - profile: remove\n  - profile: socket\n  - profile: race\n",
    );
    assert_eq!(h.add(&env, "evil").code, 0);
    let r = env.bench(&["evil/suite/plant", "--runs", "5", "--save", "p", "--logs", "all"]);
    assert_eq!(r.code, 4, "{r:?}");
    let f = failures(&env, "p");
    let reason = |id: &str| f.iter().find(|(p, _)| p == id).map(|(_, r)| r.clone()).unwrap_or_default();
    // The swapped sources mattered to nobody: /tmp was the private one.
    assert!(reason("tmpswap").is_empty(), "{}", reason("tmpswap"));
    assert!(!std::path::Path::new(&format!("/etc/engine-bait-{t}")).exists(), "/etc was written through /tmp");
    assert!(!std::path::Path::new(&format!("/root/engine-bait-{t}")).exists(), "/root was written through /dev/shm");
    // stdin is opened inside, with the command's rights.
    assert!(reason("stdin-abs").contains("opening its standard input"), "{}", reason("stdin-abs"));
    assert!(reason("stdin-link").contains("opening its standard input"), "{}", reason("stdin-link"));
    // remove: refused through the link; the socket: never connected.
    assert!(reason("remove").contains("symlink"), "{}", reason("remove"));
    assert!(reason("socket").contains("was not ready"), "{}", reason("socket"));
    assert!(listener.accept().is_err(), "engine connected to a socket outside the test");
    // The race may fail its trials (the racer deletes their directories
    // under them); what matters is that the bait kept its owner and contents.
    let text = all_text(&env);
    for s in bait.secrets() {
        assert!(!text.contains(&s), "a secret reached the logs: {s}");
    }
    assert_eq!(dir.changes(), Vec::<String>::new(), "the bait directory changed");
    assert_eq!(bait.changes(), Vec::<String>::new());
    // The refused removal was no change of engine's: nothing stays pending
    // in the journal, and the next run starts (issue 53).
    let r = env.bench(&["evil/tmpswap", "--runs", "1", "--save", "after"]);
    assert_eq!(r.code, 0, "a refusal wedged the next run: {r:?}");
    assert!(!r.stderr.contains("left system state changed"), "{r:?}");
}

/// Between set-ups engine empties the test's folder, which the test's own
/// commands filled: links to a directory and to a file outside, and a
/// folder holding such a link, are removed as links, never followed.
#[test]
#[ignore = "needs root"]
fn emptying_the_test_folder_between_setups_follows_no_link() {
    require_root();
    let env = Env::new();
    let t = tag("setups");
    let bait = Bait::new(&t, &["/etc"]);
    let dir = BaitDir::new(&t);
    let (d, f) = (dir.path.display().to_string(), bait.files[0].0.display().to_string());
    let plant = format!(
        "    pre_test:\n      - shell: \"ln -s {d} dirlink; ln -s {f} filelink; mkdir -p sub; ln -s {d} sub/inner\"\n"
    );
    let h = Hostile::new(&env);
    h.profile("setups", &script_profile("setups", "sh", "true", "trials: {setups: 3}\n", &plant));
    assert_eq!(h.add(&env, "evil").code, 0);
    let r = env.bench(&["evil/setups", "--runs", "3", "--save", "s"]);
    assert_eq!(r.code, 0, "{r:?}");
    let e = &env.result("s")["results"][0]["entries"][0];
    assert_eq!(e["setups"], serde_json::json!([1, 2, 3]), "three set-ups, the folder emptied twice: {e}");
    assert_eq!(dir.changes(), Vec::<String>::new(), "the bait directory changed");
    assert_eq!(bait.changes(), Vec::<String>::new());
}

/// A shared profile cannot widen its own sandbox: each field that asks for
/// more is refused before anything runs, at its file:line:col, with the
/// `--grant` that would allow it; granted, it runs and the result says so.
#[test]
#[ignore = "needs root"]
fn a_shared_profile_cannot_widen_its_sandbox_unless_granted() {
    require_root();
    let env = Env::new();
    let dir = BaitDir::new(&tag("widen"));
    let d = dir.path.display().to_string();
    let h = Hostile::new(&env);
    let write = format!("echo granted > {d}/granted");
    h.profile("wide", &script_profile("wide", "sh", &write, &format!("sandbox:\n  writable: [{d}]\n"), ""))
        .profile("procs", &script_profile("procs", "sh", "true", "sandbox: {processes: 100000}\n", ""))
        .profile("mem", &script_profile("mem", "sh", "true", "sandbox: {memory: 64TiB}\n", ""))
        .profile("slow", &script_profile("slow", "sh", "true", "", "").replace("timeout: 30s", "timeout: 5h"))
        .profile("space", &script_profile("space", "sh", "true", "requirements: {free_space: 900GiB}\n", ""));
    assert_eq!(h.add(&env, "evil").code, 0);
    for (id, field, grant) in [
        ("wide", "wide/profile.yaml:6:14", format!("--grant writable={d}")),
        ("procs", "procs/profile.yaml:5:22", "--grant processes=100000".to_string()),
        ("mem", "mem/profile.yaml:5:19", "--grant memory=65536GiB".to_string()),
        ("slow", "slow/profile.yaml:9:14", "--grant time=5h".to_string()),
        ("space", "space/profile.yaml:5:28", "--grant scratch=900GiB".to_string()),
    ] {
        let r = env.bench(&[&format!("evil/{id}"), "--runs", "1", "--save", id]);
        assert_eq!(r.code, 1, "{id}: {r:?}");
        assert!(r.stderr.contains(field), "{id}: no {field} in {r:?}");
        assert!(r.stderr.contains("beyond what the sandbox gives a shared profile"), "{id}: {r:?}");
        assert!(r.stderr.contains(&grant), "{id}: no `{grant}` hint in {r:?}");
        assert!(!env.result_path(id).exists(), "{id}: a refused run wrote a result");
    }
    assert!(!dir.path.join("granted").exists());
    // Granted by name, it runs and writes there; Sandbox Notes record it.
    let r = env.bench(&["evil/wide", "--runs", "1", "--save", "g", "--grant", &format!("writable={d}")]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(std::fs::read_to_string(dir.path.join("granted")).unwrap(), "granted\n");
    // Written through an idmapped mount: the host's root owns it, not an id of the sandbox's range.
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(dir.path.join("granted")).unwrap().uid(), 0);
    let notes = env.result("g")["systems"][0]["notes"]["Sandbox Notes"].as_str().unwrap_or_default().to_string();
    assert!(notes.contains(&format!("granted by the user: writable={d}")), "{notes}");
    // A bad grant is a usage error that names the keys.
    let r = env.bench(&["evil/wide", "--grant", "network=all"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("unknown key `network`") && r.stderr.contains("writable="), "{r:?}");
}
