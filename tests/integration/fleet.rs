//! Fleets (issue 16): progress events for orchestrators, one benchmark per
//! host at a time, merging fetched results (refusing invalid ones by name),
//! and the Ansible collection against real sshd hosts on 127.0.0.x.

use crate::common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The lines of `--progress json` output, each checked against
/// schemas/progress.schema.json.
fn events(stdout: &str) -> Vec<Value> {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("schemas/progress.schema.json")).unwrap()).unwrap();
    let v = jsonschema::draft7::new(&schema).expect("progress schema compiles");
    stdout
        .lines()
        .map(|l| {
            let e: Value =
                serde_json::from_str(l).unwrap_or_else(|err| panic!("not one JSON object per line: {l}: {err}"));
            let errors: Vec<String> = v.iter_errors(&e).map(|x| x.to_string()).collect();
            assert!(errors.is_empty(), "{l}: {errors:?}");
            e
        })
        .collect()
}

fn kinds(ev: &[Value]) -> Vec<&str> {
    ev.iter().map(|e| e["event"].as_str().unwrap()).collect()
}

#[test]
fn progress_json_is_one_event_per_line_from_start_to_finish() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["7"]));
    env.profile("broken", &counter_profile("broken", "echo nothing here", ""));
    let r = env.bench(&["echo", "broken", "--save", "p", "--identifier", "h1", "--runs", "2", "--progress", "json"]);
    assert_eq!(r.code, 4, "{r:?}");
    let ev = events(&r.stdout);
    let k = kinds(&ev);
    assert_eq!(k.first(), Some(&"run_started"), "{k:?}");
    assert_eq!(k.last(), Some(&"run_finished"), "{k:?}");
    assert_eq!(ev[0]["identifier"], "h1");
    assert_eq!(ev[0]["tests"], 2);
    assert_eq!(ev[0]["engine_version"], env!("CARGO_PKG_VERSION"));
    // echo: started, two trials, done with its value.
    let echo: Vec<&Value> = ev.iter().filter(|e| e["test"].as_str().is_some_and(|t| t.starts_with("echo@"))).collect();
    assert_eq!(
        kinds(&echo.iter().map(|e| (*e).clone()).collect::<Vec<_>>()),
        ["test_started", "trial_done", "trial_done", "test_done"]
    );
    assert_eq!(echo[0]["index"], 1);
    assert_eq!(echo[0]["total"], 2);
    assert_eq!(echo[2]["trial"], 2);
    let done = echo[3];
    assert_eq!(done["status"], "completed");
    assert_eq!(done["trials"], 2);
    assert_eq!(done["results"][0]["value"], 7.0);
    assert_eq!(done["results"][0]["unit"], "Items/s");
    // broken: its test_done says failed, and an error event names its log.
    let failed = ev.iter().find(|e| e["event"] == "test_done" && e["status"] == "failed").expect("failed test_done");
    assert!(failed["reason"].as_str().unwrap().contains("no line of the output matched"), "{failed}");
    let err = ev.iter().find(|e| e["event"] == "error").expect("error event");
    assert!(err["test"].as_str().unwrap().starts_with("broken@"), "{err}");
    assert!(err["log"].as_str().unwrap().starts_with("logs/"), "{err}");
    let fin = ev.last().unwrap();
    assert_eq!(fin["exit_code"], 4);
    assert_eq!((fin["saved"].as_u64(), fin["failed"].as_u64()), (Some(1), Some(1)), "{fin}");
    assert_eq!(fin["path"].as_str().map(PathBuf::from), Some(env.result_path("p")));
    // Human messages stay on standard error.
    assert!(r.stderr.contains("failed broken"), "{r:?}");
}

#[test]
fn progress_json_reports_a_refused_run_as_error_then_run_finished() {
    let env = Env::new();
    let r = env.bench(&["no-such-profile", "--progress", "json"]);
    assert_eq!(r.code, 2, "{r:?}");
    let ev = events(&r.stdout);
    assert_eq!(kinds(&ev), ["error", "run_finished"]);
    assert!(ev[0]["message"].as_str().unwrap().contains("no-such-profile"), "{}", ev[0]);
    assert_eq!(ev[1]["exit_code"], 2);
    // A report format would be mixed into the events: refused.
    let r = env.bench(&["no-such-profile", "--progress", "json", "--format", "csv"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(events(&r.stdout)[0]["message"].as_str().unwrap().contains("--format csv"), "{r:?}");
}

#[test]
fn a_second_benchmark_on_one_home_is_refused_and_the_first_finishes() {
    let env = Env::new();
    env.profile("slow", &counter_profile("slow", "sleep 2; echo value: 3", ""));
    env.profile("echo", &echo_profile("echo", &["1"]));
    let target = env.target.path().to_str().unwrap().to_string();
    let mut first = env
        .cmd(&["benchmark", "-y", "--target-dir", &target, "slow", "--save", "a", "--identifier", "one", "--runs", "1"])
        .args(["--progress", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait (bounded) until the first run is running its test.
    let mut out = BufReader::new(first.stdout.take().unwrap());
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !seen.contains("\"test_started\"") {
        assert!(Instant::now() < deadline, "the first run did not start: {seen}");
        let mut line = String::new();
        if out.read_line(&mut line).unwrap() == 0 {
            panic!("the first run ended early: {seen}");
        }
        seen.push_str(&line);
    }
    let second = env.bench(&["echo", "--save", "b", "--identifier", "two"]);
    assert_eq!(second.code, 1, "{second:?}");
    assert!(
        second.stderr.contains("another engine benchmark is running with this ENGINE_HOME")
            && second.stderr.contains(&format!("pid {}", first.id()))
            && second.stderr.contains("saving to `a` as `one`"),
        "{second:?}"
    );
    assert!(!env.home.path().join("results/b").exists(), "the refused run left nothing");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert!(first.wait().unwrap().success(), "{seen}{rest}");
    assert_eq!(env.result("a")["results"][0]["entries"][0]["value"], 3.0);
    // The lock went with the process: the next run goes ahead.
    let again = env.bench(&["echo", "--save", "b", "--identifier", "two"]);
    assert_eq!(again.code, 0, "{again:?}");
}

/// Results of `hosts` (folder, identifier) as an orchestrator fetches them:
/// `<dir>/<folder>/result.json`.
fn fetched(env: &Env, dir: &Path, hosts: &[(&str, &str)]) -> Vec<PathBuf> {
    env.profile("echo", &echo_profile("echo", &["5"]));
    hosts
        .iter()
        .map(|(h, id)| {
            let r = env.bench(&["echo", "--save", h, "--identifier", id]);
            assert_eq!(r.code, 0, "{r:?}");
            let p = dir.join(h).join("result.json");
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::copy(env.result_path(h), &p).unwrap();
            p
        })
        .collect()
}

fn edit_json(p: &Path, f: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(p, v.to_string()).unwrap();
}

#[test]
fn merge_leaves_out_invalid_results_by_name_and_merges_the_rest() {
    let env = Env::new();
    let d = tempfile::tempdir().unwrap();
    let files =
        fetched(&env, d.path(), &[("host1", "host1"), ("host2", "host2"), ("host3", "host3"), ("host4", "host4")]);
    // host3's file breaks the schema; host4's comes from another major version.
    edit_json(&files[2], |v| v["systems"][0]["started"] = Value::from(5));
    edit_json(&files[3], |v| v["systems"][0]["engine_version"] = Value::from("9.1.0"));
    let missing = d.path().join("host6/result.json");
    let mut args: Vec<String> = vec!["result".into(), "merge".into()];
    args.extend(files.iter().map(|p| p.display().to_string()));
    args.push(missing.display().to_string());
    args.extend(["--save", "fleet", "--left-out", "host5=unreachable: connection refused"].map(String::from));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();

    // --strict: nothing merged, the first bad file named.
    let mut strict = a.clone();
    strict.push("--strict");
    let r = env.run(&strict);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("host3 is not merged") && r.stderr.contains("/systems/0/started"), "{r:?}");
    assert!(!env.result_path("fleet").exists());

    let r = env.run(&a);
    assert_eq!(r.code, 4, "{r:?}");
    for (host, why) in [
        ("host3", "does not match schemas/result.schema.json: /systems/0/started"),
        ("host4", "written by engine 9.1.0 (identifier `host4`)"),
        ("host6", "cannot read it"),
    ] {
        assert!(
            r.stderr.lines().any(|l| l.starts_with(&format!("left out {host}: ")) && l.contains(why)),
            "{host}: {r:?}"
        );
    }
    let m = env.result("fleet");
    let ids: Vec<&str> = m["systems"].as_array().unwrap().iter().map(|s| s["identifier"].as_str().unwrap()).collect();
    assert_eq!(ids, ["host1", "host2"]);
    let entries = m["results"][0]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "nothing of host3 or host4 was merged: {m}");
    let left: Vec<&str> = m["left_out"].as_array().unwrap().iter().map(|l| l["source"].as_str().unwrap()).collect();
    assert_eq!(left, ["host5", "host3", "host4", "host6"]);
    // The reports name them.
    let shown = env.run(&["result", "show", "fleet"]);
    assert!(
        shown.stdout.contains("Left out of this result (4):") && shown.stdout.contains("host5: unreachable"),
        "{shown:?}"
    );
    // A second merge under the same name is refused unless --replace.
    assert_eq!(env.run(&a).code, 2);
    let mut replace = a.clone();
    replace.push("--replace");
    assert_eq!(env.run(&replace).code, 4);
    // Bad --left-out.
    let r = env.run(&["result", "merge", files[0].to_str().unwrap(), "--save", "x", "--left-out", "host5"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("expected SOURCE=REASON"), "{r:?}");
}

#[test]
fn merging_sweeps_keeps_host_by_state_identifiers() {
    let env = Env::new();
    let d = tempfile::tempdir().unwrap();
    // A sweep on each host: one result per host, an identifier per state.
    let files = fetched(&env, d.path(), &[("host1", "host1: bfq"), ("host2", "host2: bfq")]);
    for (f, h) in files.iter().zip(["host1", "host2"]) {
        edit_json(f, |v| {
            let mut none = v["systems"][0].clone();
            none["identifier"] = Value::from(format!("{h}: none"));
            v["systems"].as_array_mut().unwrap().push(none);
            let mut e = v["results"][0]["entries"][0].clone();
            e["identifier"] = Value::from(format!("{h}: none"));
            v["results"][0]["entries"].as_array_mut().unwrap().push(e);
        });
    }
    let mut args = vec!["result", "merge"];
    let all: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    args.extend(all.iter().map(String::as_str));
    args.extend(["--save", "sweep"]);
    let r = env.run(&args);
    assert_eq!(r.code, 0, "{r:?}");
    let m = env.result("sweep");
    let mut ids: Vec<&str> =
        m["systems"].as_array().unwrap().iter().map(|s| s["identifier"].as_str().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, ["host1: bfq", "host1: none", "host2: bfq", "host2: none"]);
}

// ---------------------------------------------------------------------------
// The Ansible collection against real sshd hosts.

fn require_root() {
    assert!(unsafe { libc::geteuid() } == 0, "needs root: sshd and root logins on 127.0.0.x");
}

/// `ansible-playbook`, `kubernetes-validate`: the virtualenv scripts/install-deps.sh makes.
fn ansible_bin(tool: &str) -> PathBuf {
    let tools = std::env::var_os("ENGINE_TOOLS").map(PathBuf::from).unwrap_or_else(|| "/opt/engine-tools".into());
    let p = tools.join("bin").join(tool);
    assert!(p.is_file(), "{} is missing: run scripts/install-deps.sh", p.display());
    p
}

fn sh(cmd: &mut Command) -> std::process::Output {
    let o = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        o.status.success(),
        "{cmd:?}: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// One test host: its own sshd (temporary config, host key and authorized
/// key) on its own loopback address, and its own folder for engine.
pub struct SshHost {
    pub name: String,
    pub addr: String,
    pub port: u16,
    pub dir: PathBuf,
    config: PathBuf,
    child: Option<Child>,
}

impl SshHost {
    pub fn new(root: &Path, name: &str, addr: &str, client_pub: &Path) -> SshHost {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        sh(Command::new("ssh-keygen").args(["-q", "-t", "ed25519", "-N", "", "-f"]).arg(dir.join("host_key")));
        std::fs::copy(client_pub, dir.join("authorized_keys")).unwrap();
        let port = std::net::TcpListener::bind((addr, 0)).unwrap().local_addr().unwrap().port();
        let config = dir.join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress {addr}\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n\
                 AuthorizedKeysFile {d}/authorized_keys\nPermitRootLogin prohibit-password\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n\
                 Subsystem sftp internal-sftp\nMaxStartups 100\nMaxSessions 100\nLogLevel ERROR\n",
                d = dir.display()
            ),
        )
        .unwrap();
        // sshd's privilege separation directory (Debian's unit makes it).
        std::fs::create_dir_all("/run/sshd").unwrap();
        let mut h = SshHost { name: name.into(), addr: addr.into(), port, dir, config, child: None };
        h.start();
        h
    }

    pub fn start(&mut self) {
        let child = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(&self.config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("sshd (openssh-server) runs");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect((self.addr.as_str(), self.port)).is_err() {
            assert!(Instant::now() < deadline, "sshd on {}:{} did not start", self.addr, self.port);
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Lets accounts without a password (locked: `!` in /etc/shadow) log in
    /// with their key, as PAM does; sshd alone refuses them.
    pub fn use_pam(&mut self) {
        self.stop();
        let c = std::fs::read_to_string(&self.config).unwrap().replace("UsePAM no", "UsePAM yes");
        std::fs::write(&self.config, c).unwrap();
        self.start();
    }

    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// The host's variables in an inventory.
    pub fn inventory_vars(&self, key: &Path) -> serde_json::Map<String, Value> {
        let d = self.dir.display();
        let v = serde_json::json!({
            "ansible_host": self.addr,
            "ansible_port": self.port,
            "ansible_user": "root",
            "ansible_ssh_private_key_file": key,
            "ansible_python_interpreter": "/usr/bin/python3",
            "ansible_remote_tmp": format!("{d}/.ansible-tmp"),
            "ansible_async_dir": format!("{d}/.ansible-async"),
            "engine_remote_dir": format!("{d}/engine"),
        });
        v.as_object().unwrap().clone()
    }
}

impl Drop for SshHost {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A control node: the collection built and installed into a temporary
/// collections path, a stripped engine binary, and the test's profiles.
pub struct Control {
    pub dir: tempfile::TempDir,
    pub key: PathBuf,
    pub binary: PathBuf,
    pub profiles: PathBuf,
}

impl Control {
    pub fn new() -> Control {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("id_ed25519");
        sh(Command::new("ssh-keygen").args(["-q", "-t", "ed25519", "-N", "", "-f"]).arg(&key));
        // The debug binary carries hundreds of MB of debug info; hosts need none.
        let binary = dir.path().join("engine");
        sh(Command::new("strip").args(["-o"]).arg(&binary).arg(bin()));
        let c = Control { key, binary, profiles: dir.path().join("profiles"), dir };
        sh(c.ansible("ansible-galaxy")
            .args(["collection", "build", "--force", "--output-path"])
            .arg(c.dir.path())
            .arg(repo().join("deploy/ansible")));
        let tarball = c.dir.path().join("engine-fleet-0.1.0.tar.gz");
        sh(c.ansible("ansible-galaxy")
            .args(["collection", "install", "--force", "-p"])
            .arg(c.dir.path().join("collections"))
            .arg(tarball));
        c
    }

    pub fn ansible(&self, tool: &str) -> Command {
        let mut c = Command::new(ansible_bin(tool));
        let d = self.dir.path();
        c.current_dir(d)
            .env("ANSIBLE_HOME", d.join("ansible-home"))
            .env("ANSIBLE_COLLECTIONS_PATH", d.join("collections"))
            .env("ANSIBLE_LOCAL_TEMP", d.join("ansible-local"))
            .env("ANSIBLE_HOST_KEY_CHECKING", "False")
            .env("ANSIBLE_SSH_ARGS", "-o ControlMaster=auto -o ControlPersist=60s -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no")
            .env("ANSIBLE_FORKS", "20")
            .env("ANSIBLE_PIPELINING", "True")
            .env("ANSIBLE_NOCOLOR", "1")
            .env("LC_ALL", "C.UTF-8")
            .env_remove("ENGINE_HOME");
        c
    }

    /// `ansible-playbook engine.fleet.benchmark` with `inventory` and `vars`.
    /// `inventory` is YAML (here written as JSON, which YAML includes).
    pub fn playbook(&self, inventory: &Value, vars: &Value) -> Run {
        let inv = self.dir.path().join("hosts.yml");
        std::fs::write(&inv, inventory.to_string()).unwrap();
        let out = self
            .ansible("ansible-playbook")
            .arg("-i")
            .arg(&inv)
            .arg("engine.fleet.benchmark")
            .arg("-e")
            .arg(vars.to_string())
            .output()
            .unwrap();
        out.into()
    }
}

/// Three quick tests: `needs-tool` runs `fleet-tool` (on PATH or skipped);
/// `count-a` and `count-b` append a line per trial to the
/// host's counters (next to its ENGINE_HOME), so a test can see what ran
/// where; `count-b` stops the run (SIGINT to engine) once on a host with an
/// `interrupt-once` file.
fn fleet_profiles(root: &Path) {
    let profile = |id: &str, script: &str| {
        format!(
            r#"id: {id}
version: 1.0.0
title: Fleet {id}
test_type: other
executor:
  external:
    program: sh
    args: ["-c", {script:?}]
results:
  - {{id: number, unit: Items, proportion: HIB}}
parsers:
  - {{result: number, regex: 'value: (?P<value>[0-9.]+)'}}
"#
        )
    };
    let a = r#"echo a >> "$ENGINE_HOME/../count-a"; echo value: 1"#;
    let b = r#"h="$ENGINE_HOME/.."; if [ -e "$h/interrupt-once" ]; then rm "$h/interrupt-once"; kill -INT $PPID; sleep 5; exit 1; fi; echo b >> "$h/count-b"; echo value: 2"#;
    for (id, script) in [("count-a", a), ("count-b", b)] {
        let d = root.join("test-profiles").join(id);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("profile.yaml"), profile(id, script)).unwrap();
    }
    let d = root.join("test-profiles/needs-tool");
    std::fs::create_dir_all(&d).unwrap();
    let needs = profile("needs-tool", "fleet-tool")
        .replace("program: sh\n    args: [\"-c\", \"fleet-tool\"]", "program: fleet-tool")
        + "requirements:\n  programs:\n    - {name: fleet-tool}\n";
    assert!(needs.contains("program: fleet-tool"), "{needs}");
    std::fs::write(d.join("profile.yaml"), needs).unwrap();
    std::fs::create_dir_all(root.join("suites")).unwrap();
    std::fs::write(
        root.join("suites/fleet-small.yaml"),
        "title: Fleet (small)\ntests:\n  - profile: count-a\n  - profile: count-b\n  - profile: needs-tool\n",
    )
    .unwrap();
}

fn lines(p: &Path) -> usize {
    std::fs::read_to_string(p).map(|s| s.lines().count()).unwrap_or(0)
}

#[test]
#[ignore = "needs root"]
fn the_playbook_runs_a_suite_on_every_host_and_merges_one_result() {
    require_root();
    let started = Instant::now();
    let control = Control::new();
    fleet_profiles(&control.profiles);
    let hosts_dir = control.dir.path().join("hosts");
    let mut hosts: Vec<SshHost> = (1..=4)
        .map(|i| {
            SshHost::new(
                &hosts_dir,
                &format!("host{i}"),
                &format!("127.0.0.{}", 40 + i),
                &control.key.with_extension("pub"),
            )
        })
        .collect();
    // host4 lacks a tool the suite's third test needs (fleet-tool, on the
    // others' PATH): that test is skipped there and the host still merges.
    let tools = control.dir.path().join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::write(tools.join("fleet-tool"), "#!/bin/sh\necho value: 3\n").unwrap();
    sh(Command::new("chmod").arg("755").arg(tools.join("fleet-tool")));
    let inventory = {
        let mut hs = serde_json::Map::new();
        for h in &hosts {
            let mut v = h.inventory_vars(&control.key);
            v.insert("disk_model".into(), "loop".into());
            let path = if h.name == "host4" { String::new() } else { format!("{}:", tools.display()) };
            v.insert(
                "engine_environment".into(),
                serde_json::json!({"PATH": format!("{path}/usr/sbin:/usr/bin:/sbin:/bin")}),
            );
            hs.insert(h.name.clone(), Value::Object(v));
        }
        serde_json::json!({"bench": {"hosts": hs}})
    };
    let fetch = control.dir.path().join("fetched");
    let vars = serde_json::json!({
        "engine_ref": "suite/fleet-small",
        "engine_save": "fleet",
        "engine_identifier": "{{ inventory_hostname }}: {{ disk_model }}",
        "engine_binary": control.binary,
        "engine_profile_dirs": [control.profiles],
        "engine_runs": 1,
        "engine_poll_interval": 1,
        "engine_fetch_dir": fetch,
    });
    // host2 is interrupted in its second test; host3 is down.
    let engine_dir = |h: &SshHost| h.dir.join("engine");
    std::fs::create_dir_all(engine_dir(&hosts[1])).unwrap();
    std::fs::write(engine_dir(&hosts[1]).join("interrupt-once"), "").unwrap();
    hosts[2].stop();

    eprintln!("fleet test: control node ready after {:.1} s", started.elapsed().as_secs_f64());
    let r = control.playbook(&inventory, &vars);
    eprintln!("fleet test: first run done after {:.1} s", started.elapsed().as_secs_f64());
    assert_ne!(r.code, 0, "host failures fail the play at the end: {r:?}");
    let out = &r.stdout;
    assert!(out.contains("host(s) failed:"), "{r:?}");
    assert!(out.contains("host3: unreachable:"), "{r:?}");
    assert!(
        out.contains("host2: engine benchmark exited 130 (interrupted; a re-run resumes): see ")
            && out.contains("/host2/fleet.stderr.log"),
        "{r:?}"
    );
    let merged_path = fetch.join("home/results/fleet/result.json");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&merged_path).unwrap()).unwrap();
    let ids: Vec<&str> = m["systems"].as_array().unwrap().iter().map(|s| s["identifier"].as_str().unwrap()).collect();
    assert_eq!(ids, ["host1: loop", "host4: loop"], "{m}");
    let left: Vec<(&str, &str)> = m["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["source"].as_str().unwrap(), l["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(left.iter().map(|l| l.0).collect::<Vec<_>>(), ["host2", "host3"], "{left:?}");
    assert!(left[1].1.starts_with("unreachable: ") && left[1].1.contains("127.0.0.43"), "{left:?}");
    assert!(fetch.join("fleet.html").is_file());
    // host4's missing tool: skipped there, recorded in the merged result.
    let skipped: Vec<(&str, &str)> = m["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["identifier"].as_str().unwrap(), f["status"].as_str().unwrap()))
        .collect();
    assert_eq!(skipped, [("host4: loop", "skipped")], "{m}");
    assert!(m["failures"][0]["reason"].as_str().unwrap().contains("fleet-tool"), "{m}");
    assert!(out.contains("\"msg\": \"host4: loop: skipped needs-tool: "), "the play names it too: {r:?}");
    for h in ["host1", "host4"] {
        for f in ["result.json", "fleet.events.jsonl", "fleet.stderr.log", "fleet.tar.gz", "fleet.result/result.json"] {
            assert!(fetch.join(h).join(f).is_file(), "{h}/{f}");
        }
        assert!(fetch.join(h).join("fleet.result/logs").is_dir(), "{h}: the tests' logs");
    }
    assert_eq!(lines(&engine_dir(&hosts[1]).join("count-a")), 1, "host2 ran its first test");
    assert_eq!(lines(&engine_dir(&hosts[1]).join("count-b")), 0, "and was stopped in its second");

    // Re-run with host3 back: every host ends complete; nothing that was
    // done is run again.
    hosts[2].start();
    let r = control.playbook(&inventory, &vars);
    eprintln!("fleet test: second run done after {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(r.code, 0, "{r:?}");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&merged_path).unwrap()).unwrap();
    let ids: Vec<&str> = m["systems"].as_array().unwrap().iter().map(|s| s["identifier"].as_str().unwrap()).collect();
    assert_eq!(ids, ["host1: loop", "host2: loop", "host3: loop", "host4: loop"], "{m}");
    assert!(m.get("left_out").is_none(), "{m}");
    let entries: Vec<(&str, usize)> = m["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["profile"].as_str().unwrap(), r["entries"].as_array().unwrap().len()))
        .collect();
    assert_eq!(entries, [("count-a", 4), ("count-b", 4), ("needs-tool", 3)], "{m}");
    for h in &hosts {
        assert_eq!(lines(&engine_dir(h).join("count-a")), 1, "{}: count-a ran once", h.name);
        assert_eq!(lines(&engine_dir(h).join("count-b")), 1, "{}: count-b ran once", h.name);
    }
    // host2's second run kept its first test: the events say so.
    let ev = std::fs::read_to_string(fetch.join("host2/fleet.events.jsonl")).unwrap();
    let first: Value = serde_json::from_str(ev.lines().next().unwrap()).unwrap();
    assert_eq!(
        (first["event"].as_str(), first["kept"].as_u64(), first["tests"].as_u64()),
        (Some("run_started"), Some(1), Some(2)),
        "{first}"
    );

    // A third run changes nothing on the hosts.
    let r = control.playbook(&inventory, &vars);
    assert_eq!(r.code, 0, "{r:?}");
    let recap = r.stdout.rsplit("PLAY RECAP").next().unwrap();
    for h in ["host1", "host2", "host3", "host4"] {
        let line = recap.lines().find(|l| l.starts_with(h)).unwrap_or_else(|| panic!("{h} in {recap}"));
        assert!(line.contains("changed=0"), "{line}");
    }
    eprintln!("fleet test: {:.1} s", started.elapsed().as_secs_f64());
}

// ---------------------------------------------------------------------------
// Kubernetes: the manifests README "Many machines" describes.

fn k8s_docs(file: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(repo().join("deploy/kubernetes").join(file)).unwrap();
    serde_saphyr::from_multiple::<Value>(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn job<'a>(docs: &'a [Value], name: &str) -> &'a Value {
    docs.iter().find(|d| d["kind"] == "Job" && d["metadata"]["name"] == name).unwrap_or_else(|| panic!("no Job {name}"))
}

#[test]
fn the_kubernetes_job_is_indexed_with_a_privileged_pod_per_node() {
    let docs = k8s_docs("engine-fleet.yaml");
    let j = job(&docs, "engine-fleet");
    assert_eq!(j["apiVersion"], "batch/v1");
    let spec = &j["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(spec["completions"], spec["parallelism"], "every node at once");
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    // One pod per node: required anti-affinity on the node's name, matching
    // the pod's own labels.
    let anti = &pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0];
    assert_eq!(anti["topologyKey"], "kubernetes.io/hostname");
    for (k, v) in anti["labelSelector"]["matchLabels"].as_object().unwrap() {
        assert_eq!(&spec["template"]["metadata"]["labels"][k], v, "{k}");
    }
    let c = &pod["containers"][0];
    assert_eq!(c["securityContext"]["privileged"], true);
    let env = c["env"].as_array().unwrap();
    let node = env.iter().find(|e| e["name"] == "NODE_NAME").expect("NODE_NAME");
    assert_eq!(node["valueFrom"]["fieldRef"]["fieldPath"], "spec.nodeName");
    assert!(env.iter().any(|e| e["name"] == "ENGINE_HOME"), "ENGINE_HOME on the node");
    let script = c["command"].as_array().unwrap().last().unwrap().as_str().unwrap();
    for needle in
        ["engine benchmark", "--identifier \"$NODE_NAME\"", "--progress json", "--save \"$ENGINE_SAVE\"", "result.json"]
    {
        assert!(script.contains(needle), "{needle} in {script}");
    }
    // ENGINE_HOME lives on the node (hostPath), so a re-run resumes there.
    let mounts = c["volumeMounts"].as_array().unwrap();
    let home = env.iter().find(|e| e["name"] == "ENGINE_HOME").unwrap()["value"].as_str().unwrap();
    let m = mounts.iter().find(|m| home.starts_with(m["mountPath"].as_str().unwrap())).expect("ENGINE_HOME mounted");
    let vol = pod["volumes"].as_array().unwrap().iter().find(|v| v["name"] == m["name"]).unwrap();
    assert!(vol["hostPath"]["path"].is_string(), "{vol}");
    // The ConfigMap and claim it uses exist.
    let cm = c["envFrom"][0]["configMapRef"]["name"].as_str().unwrap();
    let cm = docs.iter().find(|d| d["kind"] == "ConfigMap" && d["metadata"]["name"] == cm).expect("ConfigMap");
    assert!(cm["data"]["ENGINE_REF"].is_string() && cm["data"]["ENGINE_SAVE"].is_string());
    let claims: Vec<&str> = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["persistentVolumeClaim"]["claimName"].as_str())
        .collect();
    for claim in &claims {
        assert!(
            docs.iter().any(|d| d["kind"] == "PersistentVolumeClaim" && d["metadata"]["name"] == *claim),
            "{claim}"
        );
    }
    let merge = k8s_docs("engine-fleet-merge.yaml");
    let mj = job(&merge, "engine-fleet-merge");
    let mpod = &mj["spec"]["template"]["spec"];
    let mscript = mpod["containers"][0]["command"].as_array().unwrap().last().unwrap().as_str().unwrap();
    assert!(
        mscript.contains("engine result merge /results/*/result.json") && mscript.contains("--format html"),
        "{mscript}"
    );
    assert_eq!(mpod["volumes"][0]["persistentVolumeClaim"]["claimName"], claims[0]);
}

#[test]
fn the_kubernetes_manifests_satisfy_the_kubernetes_schemas() {
    // kubernetes-validate (PyPI, installed by scripts/install-deps.sh) checks
    // them offline against the API's own schemas, unknown fields included.
    let r: Run = Command::new(ansible_bin("kubernetes-validate"))
        .arg("--strict")
        .args(["engine-fleet.yaml", "engine-fleet-merge.yaml"])
        .current_dir(repo().join("deploy/kubernetes"))
        .output()
        .unwrap()
        .into();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.stdout.matches(" passed for resource ").count() + r.stderr.matches(" passed for resource ").count(),
        4,
        "{r:?}"
    );
}

#[test]
#[ignore = "needs root"]
fn a_sweep_on_a_host_without_root_is_named_with_the_reason() {
    require_root();
    // Debian's postgresql package (scripts/install-deps.sh) makes a system
    // user with a shell; the test's sshd lets it log in with the test's key.
    let uid = sh(Command::new("id").args(["-u", "postgres"]));
    let uid = String::from_utf8_lossy(&uid.stdout).trim().to_string();
    let control = Control::new();
    let hosts_dir = control.dir.path().join("hosts");
    let mut host = SshHost::new(&hosts_dir, "host1", "127.0.0.51", &control.key.with_extension("pub"));
    // The user must read its authorized keys and own its folder.
    for d in [control.dir.path(), &hosts_dir] {
        sh(Command::new("chmod").arg("755").arg(d));
    }
    sh(Command::new("chmod").arg("644").arg(host.dir.join("authorized_keys")));
    sh(Command::new("chown").arg("-R").arg("postgres").arg(&host.dir));
    host.use_pam();
    let mut v = host.inventory_vars(&control.key);
    v.insert("ansible_user".into(), "postgres".into());
    let inventory = serde_json::json!({"bench": {"hosts": {"host1": v}}});
    let vars = serde_json::json!({
        "engine_ref": "fio",
        "engine_binary": control.binary,
        "engine_scheduler": "none,bfq",
        "engine_fetch_dir": control.dir.path().join("fetched"),
    });
    let r = control.playbook(&inventory, &vars);
    assert_ne!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.contains(&format!("host(s) failed: host1: no root for a sweep: engine runs as uid {uid}")),
        "{r:?}"
    );
    assert!(!host.dir.join("engine/bin/engine").exists(), "nothing was copied to a host that cannot run it");
    host.stop();
}
