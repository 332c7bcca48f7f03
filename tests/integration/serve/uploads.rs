//! Uploads: `engine result push` and `POST /api/results` with the
//! server's token, checked as `result merge` checks its inputs; refused
//! without a token, with a wrong one, too large, with a bad name, or
//! malformed — nothing written then. A server reachable beyond loopback
//! without a token, and a port in use, are refused at start.

use super::{Server, TOKEN, fixture, token_file};
use crate::common::Env;
use std::os::unix::fs::PermissionsExt;

fn post(s: &Server, name: &str, token: Option<&str>, body: Vec<u8>) -> (u16, serde_json::Value) {
    let mut r = Server::client().post(format!("{}/api/results?name={name}", s.base)).body(body);
    if let Some(t) = token {
        r = r.bearer_auth(t);
    }
    let r = r.send().unwrap();
    let status = r.status().as_u16();
    (status, serde_json::from_str(&r.text().unwrap()).unwrap_or_default())
}

/// The names of the folders in the server's results (what an upload wrote).
fn folders(env: &Env) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(env.home.path().join("results"))
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.retain(|n| !n.starts_with('.'));
    v.sort();
    v
}

#[test]
fn results_are_pushed_appended_and_refused_as_merge_refuses() {
    let (server_env, ci) = (Env::new(), Env::new());
    fixture(&ci, &["--history", "2", "--fleet", "40"]);
    let s = Server::start(&server_env, &["--upload-token-file", &token_file(&server_env), "--max-upload", "1"]);

    let push = |args: &[&str]| {
        let mut all = vec!["result", "push", s.base.as_str()];
        all.extend_from_slice(args);
        ci.cmd(&all).env("ENGINE_UPLOAD_TOKEN", TOKEN).output().map(crate::common::Run::from).unwrap()
    };
    let r = push(&["nightly-0001", "--as", "ci"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("saved as `ci`"), "{r:?}");
    assert_eq!(s.json("/results.json?q=ci")["rows"][0]["name"], "ci", "the list shows it at once");
    // A fleet goes whole (its bulk too) and its hosts are all there.
    let r = push(&["fleet"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.json("/results/fleet.json")["systems"].as_array().unwrap().len(), 40);
    // Appending the same identifier is the merge's clash: 422, nothing changed.
    let before = std::fs::read(server_env.result_path("ci")).unwrap();
    let r = push(&["nightly-0002", "--as", "ci"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("(422)") && r.stderr.contains("identifier `ci-box` is also in"), "{r:?}");
    assert_eq!(std::fs::read(server_env.result_path("ci")).unwrap(), before);
    // A renamed identifier is appended.
    assert_eq!(ci.run(&["result", "rename-identifier", "nightly-0002", "ci-box", "ci-box-2"]).code, 0);
    let r = push(&["nightly-0002", "--as", "ci"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("appended to `ci`"), "{r:?}");
    assert_eq!(server_env.result("ci")["systems"].as_array().unwrap().len(), 2);

    // Refusals over the API, each writing nothing.
    let good = std::fs::read(ci.result_path("nightly-0001")).unwrap();
    assert_eq!(post(&s, "x", None, good.clone()).0, 401);
    assert_eq!(post(&s, "x", Some("a-long-enough-token-0123456780"), good.clone()).0, 401);
    let (status, body) = post(&s, "..%2Fx", Some(TOKEN), good.clone());
    assert_eq!(status, 400);
    assert!(body["error"].as_str().unwrap().contains("parameter `name`"), "{body}");
    let (status, body) = post(&s, "x", Some(TOKEN), b"{\"schema_version\": 1, \"title\": 3}".to_vec());
    assert_eq!(status, 422, "{body}");
    assert!(!body["error"].as_str().unwrap().contains("/tmp"), "the server's paths stay its own: {body}");
    let bomb = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(post(&s, "x", Some(TOKEN), bomb.into_bytes()).0, 422);
    let (status, _) = post(&s, "x", Some(TOKEN), vec![b' '; (1 << 20) + 1]);
    assert_eq!(status, 413);
    assert_eq!(folders(&server_env), ["ci", "fleet"], "nothing refused left a trace");
    let r = ci
        .cmd(&["result", "push", &s.base, "nightly-0001"])
        .env("ENGINE_UPLOAD_TOKEN", "wrong-but-long-enough-1234")
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2), "a wrong token is the user's to fix");
    assert_eq!(s.stop(), 0);
}

#[test]
fn a_read_only_server_refuses_uploads_and_exposure_and_busy_ports_are_refused_at_start() {
    let env = Env::new();
    fixture(&env, &["--history", "1"]);
    let s = Server::start(&env, &[]);
    let good = std::fs::read(env.result_path("nightly-0001")).unwrap();
    let (status, body) = post(&s, "x", Some(TOKEN), good);
    assert_eq!(status, 403, "{body}");
    assert!(body["error"].as_str().unwrap().contains("--upload-token-file"), "{body}");

    // The port it holds cannot be taken again.
    let port = s.base.rsplit(':').next().unwrap().to_string();
    let r = env.run(&["serve", "--bind", &format!("127.0.0.1:{port}")]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains(&format!("cannot listen on 127.0.0.1:{port}")), "{r:?}");
    // Beyond loopback only with a token; a token others can read is none.
    let r = env.run(&["serve", "--bind", "0.0.0.0:0"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("reaches beyond this machine"), "{r:?}");
    let loose = env.home.path().join("loose-token");
    std::fs::write(&loose, TOKEN).unwrap();
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o644)).unwrap();
    let r = env.run(&["serve", "--bind", "0.0.0.0:0", "--upload-token-file", loose.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("chmod 600"), "{r:?}");
    let short = env.home.path().join("short-token");
    std::fs::write(&short, "abc").unwrap();
    std::fs::set_permissions(&short, std::fs::Permissions::from_mode(0o600)).unwrap();
    let r = env.run(&["serve", "--upload-token-file", short.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("shorter than 16"), "{r:?}");
    assert_eq!(s.stop(), 0);
}
