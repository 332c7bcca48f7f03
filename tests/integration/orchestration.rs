//! Running engine on many machines: the Ansible collection (engine.fleet)
//! against real sshd hosts on 127.0.0.x — a suite on every host, merged into
//! one result, with failed, interrupted and unreachable hosts named — and
//! the Kubernetes manifests in deploy/kubernetes.

use crate::common::succeed as sh;
use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------
// The Ansible collection against real sshd hosts.

/// `ansible-playbook`, `kubernetes-validate`: the virtualenv scripts/install-deps.sh makes.
fn ansible_bin(tool: &str) -> PathBuf {
    let tools = std::env::var_os("ENGINE_TOOLS").map(PathBuf::from).unwrap_or_else(|| "/opt/engine-tools".into());
    let p = tools.join("bin").join(tool);
    assert!(p.is_file(), "{} is missing: run scripts/install-deps.sh", p.display());
    p
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
            // The "hosts" share this machine: each is its own machine to the
            // machine-wide benchmark lock.
            "engine_environment": {"ENGINE_MACHINE_LOCK": format!("{d}/machine.lock")},
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
            v["engine_environment"]["PATH"] = format!("{path}/usr/sbin:/usr/bin:/sbin:/bin").into();
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

// ---------------------------------------------------------------------------
// Kubernetes: the manifests the book, "Many machines" describes.

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
