//! The red team's holes in `engine serve`, each kept as a test: clients
//! that stop reading cannot take every connection or the server's memory,
//! a signal ends it within its drain time whatever a page is doing, a
//! result name is never a path (a name ending in `.json` once read a file
//! in the server's working directory), the token file is its owner's
//! alone, and a hostile server cannot forge lines in `result push`'s output.

use super::{Server, TOKEN, fixture, token_file};
use crate::common::{Env, Run};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// A connection from `from` (another loopback address than the tests') to
/// the server, with a small receive buffer.
fn connect_from(from: &str, to: &str) -> TcpStream {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    s.set_recv_buffer_size(4096).unwrap();
    s.bind(&format!("{from}:0").parse::<SocketAddr>().unwrap().into()).unwrap();
    s.connect(&to.parse::<SocketAddr>().unwrap().into()).unwrap();
    s.into()
}

/// `GET path` from 127.0.0.1 answers within `limit`: its status.
fn answers_within(s: &Server, path: &str, limit: Duration) -> u16 {
    let c = super::client_within(limit);
    match c.get(format!("{}{path}", s.base)).send() {
        Ok(r) => r.status().as_u16(),
        Err(e) => panic!("GET {path} got no answer within {limit:?}: {e}"),
    }
}

#[test]
fn clients_that_stop_reading_hold_neither_every_connection_nor_the_memory() {
    let env = Env::new();
    fixture(&env, &["--fleet", "3000"]);
    let s = Server::start(&env, &[]);
    let addr = s.base.trim_start_matches("http://").to_string();
    let (_, before) = s.memory();
    // 100 connections from one other address, each asking 20 times for a
    // fleet's whole file (MBs each) and reading nothing.
    let request = "GET /results/fleet.json HTTP/1.1\r\nHost: x\r\n\r\n".repeat(20);
    let mut held = Vec::new();
    let mut closed = 0;
    for _ in 0..100 {
        let mut c = connect_from("127.0.0.2", &addr);
        if c.write_all(request.as_bytes()).is_err() {
            closed += 1;
            continue;
        }
        held.push(c);
    }
    std::thread::sleep(Duration::from_secs(3));
    // Past its share, an address's connections are closed at once.
    for c in &mut held {
        c.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        let mut b = [0u8; 1];
        // Closed with our requests unread: an end of file or a reset.
        match c.read(&mut b) {
            Ok(0) => closed += 1,
            Err(e) if !matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => closed += 1,
            _ => {}
        }
    }
    assert!(closed >= 30, "one address kept {} connections", 100 - closed);
    // Everyone else is served meanwhile.
    assert_eq!(answers_within(&s, "/assets/engine.css", Duration::from_secs(5)), 200);
    assert_eq!(answers_within(&s, "/results.json", Duration::from_secs(10)), 200);
    let (now, peak) = s.memory();
    assert!(
        peak < before + (900 << 20),
        "the server grew from {} MB to a peak of {} MB (now {} MB)",
        before >> 20,
        peak >> 20,
        now >> 20
    );
    drop(held);
    assert_eq!(s.stop(), 0);
}

/// The server's CPU time so far, in clock ticks (user and system).
fn cpu_ticks(s: &Server) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", s.child.id())).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split(' ').collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

#[test]
fn a_signal_ends_the_server_within_its_drain_time_whatever_a_page_is_doing() {
    let env = Env::new();
    fixture(&env, &["--fleet", "20000"]);
    let mut s = Server::start(&env, &[]);
    // A page that takes far longer than the drain (a 20,000-host fleet as
    // CSV in a debug build), asked for and then not waited for.
    let base = s.base.clone();
    std::thread::spawn(move || {
        let _ = super::client_within(Duration::from_secs(120)).get(format!("{base}/results/fleet.csv")).send();
    });
    std::thread::sleep(Duration::from_secs(1));
    let busy = cpu_ticks(&s);
    std::thread::sleep(Duration::from_secs(1));
    assert!(cpu_ticks(&s) - busy > 30, "the page is being computed (the server works)");
    assert!(s.log.try_iter().count() == 0, "and not done yet");
    let t0 = Instant::now();
    s.signal(libc::SIGTERM);
    let code = s.wait_exit(Duration::from_secs(15));
    assert_eq!(code, Some(0), "exit within 15 s of SIGTERM (took {:?})", t0.elapsed());

    // A second signal does not wait for the drain.
    let mut s = Server::start(&env, &[]);
    let base = s.base.clone();
    std::thread::spawn(move || {
        let _ = super::client_within(Duration::from_secs(120)).get(format!("{base}/results/fleet.csv")).send();
    });
    std::thread::sleep(Duration::from_secs(2));
    s.signal(libc::SIGTERM);
    std::thread::sleep(Duration::from_millis(300));
    let t0 = Instant::now();
    s.signal(libc::SIGINT);
    assert!(s.wait_exit(Duration::from_secs(3)).is_some(), "a second signal ends it at once");
    assert!(t0.elapsed() < Duration::from_secs(3));
}

#[test]
fn a_result_name_is_never_read_as_a_path() {
    let (env, ci) = (Env::new(), Env::new());
    fixture(&ci, &["--history", "2"]);
    assert_eq!(ci.run(&["result", "rename-identifier", "nightly-0002", "ci-box", "other-box"]).code, 0);
    let token = token_file(&env);
    // The server's working directory holds files named as results could be.
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("secret.json"), "\"TOPSECRET-db-password\"").unwrap();
    std::fs::copy(ci.result_path("nightly-0001"), cwd.path().join("other.json")).unwrap();
    let s = Server::start_in(&env, &["--upload-token-file", &token], Some(cwd.path()));
    let push = |name: &str, to: &str| -> Run {
        ci.cmd(&["result", "push", &s.base, name, "--as", to])
            .env("ENGINE_UPLOAD_TOKEN", TOKEN)
            .output()
            .unwrap()
            .into()
    };
    let r = push("nightly-0001", "secret.json");
    assert_eq!(r.code, 0, "{r:?}");
    let (status, _, body) = s.get("/history.json?test=io");
    assert!(!body.contains("TOPSECRET"), "a file of the server's working directory was read: {body}");
    assert_eq!(status, 200, "{body}");
    assert!(s.ok("/results/secret.json.json").contains("ci-box"));
    // Appending to `other.json` appends to the saved result, not to the file there.
    assert_eq!(push("nightly-0002", "other.json").code, 0);
    let r = push("nightly-0001", "other.json");
    assert_eq!(r.code, 0, "{r:?}");
    let ids: Vec<String> = env.result("other.json")["systems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["identifier"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["other-box", "ci-box"]);
    assert_eq!(s.stop(), 0);
}

#[test]
fn a_token_file_others_can_read_or_change_is_refused() {
    let env = Env::new();
    use std::os::unix::fs::PermissionsExt;
    for mode in [0o640, 0o620, 0o604, 0o660] {
        let f = env.home.path().join(format!("token-{mode:o}"));
        std::fs::write(&f, TOKEN).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(mode)).unwrap();
        let r = env.run(&["serve", "--bind", "127.0.0.1:0", "--upload-token-file", f.to_str().unwrap()]);
        assert_eq!(r.code, 2, "mode {mode:o}: {r:?}");
        assert!(r.stderr.contains("chmod 600"), "{r:?}");
    }
}

#[test]
fn a_hostile_server_cannot_forge_lines_in_push_output() {
    let env = Env::new();
    fixture(&env, &["--history", "1"]);
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming().take(1) {
            let mut c = c.unwrap();
            let mut buf = vec![0u8; 1 << 20];
            let _ = c.set_read_timeout(Some(Duration::from_millis(500)));
            let _ = c.read(&mut buf);
            let body = "{\"error\":\"\\u001b]0;PWNED\\u0007bad\\nfake line: saved OK\"}";
            let _ = write!(
                c,
                "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let r: Run = env
        .cmd(&["result", "push", &format!("http://127.0.0.1:{port}"), "nightly-0001"])
        .env("ENGINE_UPLOAD_TOKEN", TOKEN)
        .output()
        .unwrap()
        .into();
    assert_ne!(r.code, 0, "{r:?}");
    assert!(!r.stderr.lines().any(|l| l.starts_with("fake line")), "a forged line: {r:?}");
    assert!(!r.stderr.contains('\x1b') && !r.stderr.contains('\x07'), "{r:?}");
}

// Round 2: the store and the index as an attacker who can write into
// `results/` shapes them, the cache, many addresses, uploads that grow.

#[test]
fn the_index_is_never_written_through_a_link_nor_runs_a_planted_trigger() {
    let env = Env::new();
    fixture(&env, &["--history", "3"]);
    let index = env.home.path().join("results/.engine-index.sqlite");
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.sqlite");
    std::fs::write(&victim, b"not engine's").unwrap();
    std::os::unix::fs::symlink(&victim, &index).unwrap();
    // engine's own writes leave a planted link alone.
    assert_eq!(env.run(&["result", "edit", "nightly-0001", "--title", "x"]).code, 0);
    assert_eq!(std::fs::read(&victim).unwrap(), b"not engine's");
    let s = Server::start(&env, &[]);
    assert_eq!(s.json("/results.json")["total"], 3);
    assert_eq!(std::fs::read(&victim).unwrap(), b"not engine's", "written through the link");
    assert!(std::fs::symlink_metadata(&index).unwrap().file_type().is_file(), "the link was replaced by an index");
    assert!(!outside.path().join("victim.sqlite-wal").exists());
    assert_eq!(s.stop(), 0);

    // A trigger in a planted index would run on every write: it is never used.
    let planted = "CREATE TRIGGER slow AFTER UPDATE ON meta BEGIN SELECT count(*) FROM \
        (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<20000000000) SELECT x FROM c); END;";
    let out = std::process::Command::new("sqlite3").arg(&index).arg(planted).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r =
        env.run_within(&["result", "edit", "nightly-0002", "--title", "after-the-trigger"], Duration::from_secs(20));
    assert_eq!(r.code, 0, "{r:?}");
    let s = Server::start(&env, &[]);
    assert_eq!(s.json("/results.json?q=after-the-trigger")["total"], 1, "built anew");
    let list = std::process::Command::new("sqlite3")
        .arg(&index)
        .arg("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&list.stdout).trim(), "0");
    assert_eq!(s.stop(), 0);
}

#[test]
fn links_fifos_and_outside_files_in_the_store_are_no_results() {
    let env = Env::new();
    fixture(&env, &["--history", "1"]);
    let results = env.home.path().join("results");
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("result.json");
    let mut f = env.result("nightly-0001");
    f["title"] = "TOP-SECRET-TITLE".into();
    std::fs::write(&secret, serde_json::to_vec(&f).unwrap()).unwrap();
    std::fs::write(outside.path().join("array.json"), b"[\"hunter2-secret\", 1]").unwrap();
    std::fs::create_dir(results.join("leak")).unwrap();
    std::os::unix::fs::symlink(&secret, results.join("leak/result.json")).unwrap();
    std::os::unix::fs::symlink(outside.path(), results.join("leakdir")).unwrap();
    std::fs::create_dir(results.join("leak2")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("array.json"), results.join("leak2/result.json")).unwrap();
    std::fs::create_dir(results.join("fifo")).unwrap();
    let c = std::ffi::CString::new(results.join("fifo/result.json").to_str().unwrap()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let s = Server::start(&env, &[]);
    let list = s.ok("/results.json?per=100");
    assert!(!list.contains("TOP-SECRET") && !list.contains("hunter2"), "{list}");
    assert!(!list.contains(&results.display().to_string()), "the store's path is the server's own: {list}");
    for page in
        ["/results/leak", "/results/leak.json", "/results/leakdir.json", "/results/leak2.json", "/results/fifo.json"]
    {
        let (status, _, body) = s.get(page);
        assert!(status == 404 || status == 422, "{page}: {status} {body}");
        assert!(!body.contains("TOP-SECRET") && !body.contains("hunter2"), "{page}: {body}");
    }
    assert_eq!(answers_within(&s, "/results.json", Duration::from_secs(5)), 200, "nothing waits on the FIFO");
    // The command line refuses them the same way.
    let r = env.run_within(&["result", "show", "leak"], Duration::from_secs(20));
    assert_ne!(r.code, 0, "{r:?}");
    assert!(!r.stdout.contains("TOP-SECRET"), "{r:?}");
    let r = env.run_within(&["result", "show", "fifo"], Duration::from_secs(20));
    assert_ne!(r.code, 0, "{r:?}");
    assert_eq!(s.stop(), 0);
}

#[test]
fn the_cache_keeps_what_each_page_is_and_long_urls_are_refused() {
    let env = Env::new();
    fixture(&env, &["--history", "1"]);
    std::fs::rename(env.home.path().join("results/nightly-0001"), env.home.path().join("results/cachet.json")).unwrap();
    let s = Server::start(&env, &[]);
    for _ in 0..2 {
        let (status, ct, body) = s.get("/results/cachet.json");
        assert_eq!((status, ct.as_str()), (200, "text/html; charset=utf-8"), "{body}");
    }
    let (status, _, _) = s.get(&format!("/results.json?identifier={}", "x".repeat(9000)));
    assert_eq!(status, 414);
    let (_, peak_before) = s.memory();
    let c = Server::client();
    for i in 0..400 {
        let r = c.get(format!("{}/results.json?identifier={}{i}", s.base, "x".repeat(8000))).send().unwrap();
        assert_eq!(r.status().as_u16(), 200);
    }
    let (_, peak) = s.memory();
    assert!(peak < peak_before + (64 << 20), "distinct URLs grew the server by {} MB", (peak - peak_before) >> 20);
    assert_eq!(s.stop(), 0);
}

#[test]
fn idle_connections_from_many_addresses_do_not_shut_others_out() {
    let env = Env::new();
    fixture(&env, &["--history", "1"]);
    let s = Server::start(&env, &[]);
    let addr = s.base.trim_start_matches("http://").to_string();
    let mut held = Vec::new();
    for a in 2..=11 {
        for _ in 0..70 {
            held.push(connect_from(&format!("127.0.0.{a}"), &addr));
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(answers_within(&s, "/results.json", Duration::from_secs(5)), 200);
    drop(held);
    assert_eq!(s.stop(), 0);
}

#[test]
fn an_upload_that_would_grow_ninefold_is_refused() {
    let (env, ci) = (Env::new(), Env::new());
    fixture(&ci, &["--history", "1"]);
    let token = token_file(&env);
    let s = Server::start(&env, &["--upload-token-file", &token]);
    let mut f = ci.result("nightly-0001");
    f["results"][0]["entries"][0]["trials"] = serde_json::Value::Array(vec![1.into(); 1_100_000]);
    let r = Server::client()
        .post(format!("{}/api/results?name=big", s.base))
        .bearer_auth(TOKEN)
        .body(serde_json::to_vec(&f).unwrap())
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 422);
    assert!(r.text().unwrap().contains("at most 1000000"));
    assert!(!env.home.path().join("results/big").exists());
    assert_eq!(s.stop(), 0);
}

// Round 3: a FIFO as a result's bulk file, comparisons of everything,
// uploads whose clients went.

#[test]
fn a_fifo_as_a_bulk_file_is_refused_not_waited_on() {
    let env = Env::new();
    fixture(&env, &["--history", "2"]);
    let mut f = env.result("nightly-0001");
    f["bulk"] = "bulk-0123456789abcdef.bin".into();
    std::fs::write(env.result_path("nightly-0001"), serde_json::to_vec(&f).unwrap()).unwrap();
    let fifo = env.home.path().join("results/nightly-0001/bulk-0123456789abcdef.bin");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let s = Server::start(&env, &[]);
    // The whole file (bulk attached) is what the JSON twin sends: asked for on every core and more.
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let url = format!("{}/results/nightly-0001.json", s.base);
            std::thread::spawn(move || {
                super::client_within(Duration::from_secs(30)).get(url).send().map(|r| r.status().as_u16())
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap().expect("an answer"), 200);
    }
    assert_eq!(answers_within(&s, "/results/nightly-0002", Duration::from_secs(5)), 200, "no page turn is stuck");
    assert_eq!(s.stop(), 0);
}

#[test]
fn a_comparison_is_bounded_in_results_and_bytes() {
    let env = Env::new();
    fixture(&env, &["--many", "10", "--hosts", "4000"]);
    let s = Server::start(&env, &[]);
    let all: Vec<String> = (0..10).map(|i| format!("r=run-{i:05}")).collect();
    let (status, _, body) = s.get(&format!("/compare.json?{}", all.join("&")));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("parameter `r`") && body.contains("MiB"), "{body}");
    let many: Vec<String> = (0..40).map(|i| format!("r=x{i}")).collect();
    let (status, _, body) = s.get(&format!("/compare.json?{}", many.join("&")));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("at most 32"), "{body}");
    assert_eq!(s.get("/compare.json?r=run-00000&r=run-00001").0, 200, "a comparison within the bounds is made");
    assert_eq!(s.stop(), 0);
}

#[test]
fn uploads_whose_clients_went_still_run_one_at_a_time() {
    let (env, ci) = (Env::new(), Env::new());
    fixture(&ci, &["--fleet", "6000"]);
    let token = token_file(&env);
    let s = Server::start(&env, &["--upload-token-file", &token]);
    let body = std::fs::read(ci.result_path("fleet")).unwrap();
    // Four uploads whose clients give up after the body is sent.
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let (url, body) = (format!("{}/api/results?name=big{i}", s.base), body.clone());
            std::thread::spawn(move || {
                let _ =
                    super::client_within(Duration::from_millis(1500)).post(url).bearer_auth(TOKEN).body(body).send();
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    // While they run, never more than one merge's readers at once.
    let t0 = Instant::now();
    let mut most = 0;
    while t0.elapsed() < Duration::from_secs(8) {
        let readers = std::fs::read_dir(format!("/proc/{}/task", s.child.id()))
            .unwrap()
            .flatten()
            .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == "merge-reader"))
            .count();
        most = most.max(readers);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(most <= 2, "{most} merge readers at once: more than one upload merged at a time");
    assert_eq!(s.stop(), 0);
}
