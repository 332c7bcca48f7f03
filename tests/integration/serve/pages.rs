//! The pages over HTTP: search, a result, compare, history, fleet and
//! systems, each with its JSON and CSV twin; bad requests named; damaged
//! results listed, never served half; the index rebuilt and kept in step.

use super::{Server, fixture};
use crate::common::Env;

/// Hosts 17 and 59 are planted at 0.6× their disk group in case 0.
const FLEET: &str = "60";

#[test]
fn every_page_has_a_stable_url_and_json_and_csv_twins() {
    let env = Env::new();
    fixture(&env, &["--history", "12", "--fleet", FLEET, "--hostile"]);
    let s = Server::start(&env, &[]);

    // The list: newest first, 14 results, paged.
    let all = s.json("/results.json");
    assert_eq!(all["total"], 14, "{all:#}");
    assert_eq!(all["rows"][0]["name"], "nightly-0012");
    let page2 = s.json("/results.json?per=5&page=2");
    assert_eq!(page2["rows"].as_array().unwrap().len(), 5);
    assert_eq!(page2["rows"][0]["name"], "nightly-0007");
    let by_name = s.json("/results.json?sort=name&per=1");
    assert_eq!(by_name["rows"][0]["name"], "fleet");
    // Search: free text (a disk model), a test, an identifier, a tag, a field, dates.
    assert_eq!(s.json("/results.json?q=WD5000")["total"], 1, "only the fleet has that disk");
    assert_eq!(s.json("/results.json?test=io")["total"], 14);
    assert_eq!(s.json("/results.json?identifier=ci-box")["total"], 12);
    assert_eq!(s.json("/results.json?tag=rack%3Dr3")["total"], 1);
    assert_eq!(s.json("/results.json?field=Kernel%3D6.1.0")["total"], 13);
    let dated = s.json("/results.json?from=2026-01-03&until=2026-01-05&sort=oldest");
    let names: Vec<&str> = dated["rows"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    // The fleet ran the same hour as nightly-0004: ties go by name.
    assert_eq!(names, ["nightly-0003", "fleet", "nightly-0004"], "{dated:#}");
    let csv = s.ok("/results.csv?identifier=ci-box&per=2");
    assert!(
        csv.starts_with("name,title,started,identifiers,tests,profiles,damaged\nnightly-0012,Nightly 0012,"),
        "{csv}"
    );
    let html = s.ok("/results?q=nightly");
    assert!(html.contains("<a href=\"/results/nightly-0001\">nightly-0001</a>"), "{html}");
    assert!(html.contains("name=\"r\" value=\"nightly-0001\""), "each row can be ticked for a comparison");

    // A result: the report, its file, its values.
    let report = s.ok("/results/nightly-0003");
    assert!(report.contains("Nightly 0003") && report.contains("<nav class=\"engine\">"), "{report}");
    assert_eq!(s.json("/results/nightly-0003.json")["systems"][0]["identifier"], "ci-box");
    let (status, ct, csv) = s.get("/results/nightly-0003.csv");
    assert_eq!((status, ct.as_str()), (200, "text/csv; charset=utf-8"));
    assert!(csv.contains("ci-box") && csv.contains("Case 0"), "{csv}");
    // The same as `result show`.
    let shown = env.run(&["result", "show", "nightly-0003", "--format", "csv"]);
    assert_eq!(csv, shown.stdout, "the page's CSV is `result show --format csv`'s");

    // Compare a selection, and pick identifiers in it.
    let cmp = s.json("/compare.json?r=nightly-0001&r=nightly-0012");
    let ids: Vec<&str> = cmp["systems"].as_array().unwrap().iter().map(|x| x["identifier"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    let page = s.ok("/compare?r=nightly-0001&r=nightly-0012");
    assert!(page.contains("Comparing <input type=\"hidden\" name=\"r\" value=\"nightly-0001\">"), "{page}");
    let cli = env.run(&["result", "compare", "nightly-0001", "nightly-0012", "--format", "csv"]);
    assert_eq!(s.ok("/compare.csv?r=nightly-0001&r=nightly-0012"), cli.stdout, "the same analysis as `result compare`");
    let one = s.json(&format!("/compare.json?r=nightly-0001&r=nightly-0012&id={}", ids[1]));
    assert_eq!(one["systems"].as_array().unwrap().len(), 1);

    // A test's history finds the +30 % step at the middle.
    let h = s.json("/history.json?test=io@1.0%5Bcase%3D0%5D");
    let text = h.to_string();
    assert!(text.contains("nightly-0007"), "the change point at the 7th run: {h:#}");
    let changes =
        h["histories"][0]["series"][0]["changes"].as_array().or_else(|| h[0]["series"][0]["changes"].as_array());
    assert!(changes.is_some_and(|c| !c.is_empty()), "a change point: {h:#}");
    assert!(s.ok("/history.csv?test=io").lines().count() > 12);
    assert!(s.ok("/history?test=io").contains("<svg"), "the history is drawn");
    assert!(s.ok("/history").contains("href=\"/history?test=io%401.0%5Bcase%3D0%5D\""), "the tests to pick");

    // A fleet: grouped by disk, the two planted hosts are odd.
    let odd = s.json("/fleet/fleet.json?by=disk-model");
    let hosts: Vec<&str> = odd["odd"].as_array().unwrap().iter().map(|o| o["identifier"].as_str().unwrap()).collect();
    assert!(hosts.contains(&"host-0017") && hosts.contains(&"host-0059"), "{odd:#}");
    assert!(s.ok("/fleet/fleet.csv?by=disk-model").contains("host-0017,io@1.0[case=0]"));
    assert!(s.ok("/fleet/fleet?by=disk-model").contains("<svg"));

    // The systems that ran a test: 12 runs of ci-box, the fleet's hosts, the hostile one.
    let sys = s.json("/systems.json?test=io");
    assert_eq!(sys["hosts"].as_array().unwrap().len(), 12 + 60 + 1);
    let csv = s.ok("/systems.csv?test=io");
    assert!(csv.lines().next().unwrap().starts_with("result,identifier,started,Disk,CPU,Kernel"), "{csv}");

    // Accept: application/json gives the twin at the same URL.
    let r = Server::client()
        .get(format!("{}/results/nightly-0001", s.base))
        .header("accept", "application/json")
        .send()
        .unwrap();
    assert_eq!(r.headers()["content-type"], "application/json");
    // The access log is Common Log Format, a line per request.
    let lines: Vec<String> = s.log.try_iter().collect();
    let line = lines
        .iter()
        .find(|l| l.contains("\"GET /results.json?per=5&page=2 HTTP/1.1\" 200 "))
        .unwrap_or_else(|| panic!("no log line for the request: {lines:#?}"));
    assert!(line.starts_with("127.0.0.1 - - [") && line.contains(" +0000] "), "{line}");
    assert_eq!(s.stop(), 0, "SIGTERM ends the server cleanly");
}

/// The status of `GET path` sent byte for byte, as no URL library would.
fn raw_status(s: &Server, path: &str) -> u16 {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(s.base.trim_start_matches("http://")).unwrap();
    write!(c, "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut out = String::new();
    c.read_to_string(&mut out).unwrap();
    out.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

#[test]
fn bad_requests_are_named_and_nothing_outside_the_store_is_reached() {
    let env = Env::new();
    fixture(&env, &["--history", "2"]);
    std::fs::create_dir_all(env.home.path().join("results/broken")).unwrap();
    std::fs::write(env.home.path().join("results/broken/result.json"), "{\"schema_version\": 1, \"title\": ").unwrap();
    std::fs::write(env.home.path().join("secret.json"), "{}").unwrap();
    let s = Server::start(&env, &[]);

    let (status, _, body) = s.get("/results/nope");
    assert_eq!(status, 404);
    assert!(body.contains("no saved result named `nope`") && body.contains("<a href=\"/results\">"), "{body}");
    for path in ["/results/..%2Fsecret.json", "/fleet/..%2F..%2Fetc%2Fpasswd", "/results/%2E%2E%2Fsecret.json"] {
        let (status, _, body) = s.get(path);
        assert_eq!(status, 404, "{path}: {body}");
    }
    // Paths a client would have normalized, sent as they are.
    for path in ["/results/..", "/results/%2E%2E", "/results/../../secret.json", "/results/.engine-index.sqlite"] {
        assert_eq!(raw_status(&s, path), 404, "{path}");
    }
    let (status, _, body) = s.get("/results?sort=fastest");
    assert_eq!(status, 400);
    assert!(body.contains("parameter `sort`"), "{body}");
    let (status, _, body) = s.get("/results.json?page=0");
    assert_eq!(status, 400);
    assert!(body.contains("parameter `page`"), "{body}");
    let (status, ct, body) = s.get("/results.json?from=yesterday");
    assert_eq!((status, ct.as_str()), (400, "application/json"), "{body}");
    assert!(body.contains("parameter `from`"), "{body}");
    let (status, _, body) = s.get("/results?colour=red");
    assert_eq!(status, 400);
    assert!(body.contains("unknown parameter `colour`"), "{body}");
    let (status, _, body) = s.get("/compare?r=nightly-0001&r=nope");
    assert_eq!(status, 404);
    assert!(body.contains("parameter `r`"), "{body}");
    let (status, _, body) = s.get("/compare");
    assert_eq!(status, 400);
    assert!(body.contains("parameter `r`"), "{body}");
    let (status, _, body) = s.get("/history?test=nothing-like-it");
    assert_eq!(status, 400);
    assert!(body.contains("parameter `test`"), "{body}");

    // A damaged file is listed as damaged and never served half.
    let list = s.json("/results.json?sort=name");
    let broken = &list["rows"][0];
    assert_eq!(broken["name"], "broken");
    assert!(broken["damaged"].as_str().unwrap().contains("not a valid result file"), "{list:#}");
    let (status, _, body) = s.get("/results/broken");
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("damaged"), "{body}");

    // Every answer says what may run.
    let r = Server::client().get(format!("{}/results", s.base)).send().unwrap();
    let csp = r.headers()["content-security-policy"].to_str().unwrap().to_string();
    assert!(csp.starts_with("default-src 'none';") && !csp.contains("unsafe-inline"), "{csp}");
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    let (status, _, _) = s.get("/no/such/page");
    assert_eq!(status, 404);
    let r = Server::client().delete(format!("{}/results/nightly-0001", s.base)).send().unwrap();
    assert_eq!(r.status().as_u16(), 405);
    assert!(env.result_path("nightly-0001").is_file());
}

#[test]
fn the_index_is_rebuilt_and_kept_in_step_with_the_files() {
    let env = Env::new();
    fixture(&env, &["--history", "3"]);
    let index = env.home.path().join("results/.engine-index.sqlite");
    {
        let s = Server::start(&env, &[]);
        assert_eq!(s.json("/results.json")["total"], 3);
        // engine's own edits keep the index in step at once.
        assert!(env.run(&["result", "edit", "nightly-0001", "--title", "Renamed run"]).code == 0);
        assert_eq!(s.json("/results.json?q=renamed")["total"], 1);
        assert!(env.run(&["result", "delete", "nightly-0002", "-y"]).code == 0);
        assert_eq!(s.json("/results.json")["total"], 2);
        let m = env.run(&["result", "merge", "nightly-0001", "nightly-0003", "--save", "both"]);
        assert_eq!(m.code, 4, "the two share an identifier: one is left out and named\n{m:?}");
        assert_eq!(s.json("/results.json?q=both")["total"], 1);
        // A file changed by other means is read again at the next refresh.
        let p = env.result_path("nightly-0003");
        let text = std::fs::read_to_string(&p).unwrap().replace("Nightly 0003", "Edited by hand");
        std::fs::write(&p, text).unwrap();
        crate::common::wait_for("the hand edit in the index", || s.json("/results.json?q=edited")["total"] == 1);
        assert_eq!(s.stop(), 0);
    }
    // A deleted index is built again; a damaged one is replaced.
    std::fs::remove_file(&index).unwrap();
    let s = Server::start(&env, &[]);
    assert_eq!(s.json("/results.json")["total"], 3);
    drop(s);
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", index.display()));
    }
    std::fs::write(&index, b"SQLite format 3\0 but not really").unwrap();
    let s = Server::start(&env, &[]);
    assert_eq!(s.json("/results.json")["total"], 3);
}
