//! `engine serve` in a real browser: headless Chromium driven through
//! ChromeDriver's W3C WebDriver protocol (plain JSON over HTTP on
//! 127.0.0.1), over a store with a 1,000-host fleet, a 100-result history
//! and a result whose every text is markup and script. It searches, ticks
//! two results and compares them, opens a test's history, a fleet and the
//! systems table, and checks that the hostile text is shown, not run, and
//! that the Content-Security-Policy lets engine's own inline code run and
//! nothing else. Screenshots go to `target/serve-screenshots/` to be
//! looked at when the layout changes.

use super::{Server, fixture};
use crate::common::{Env, repo};
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Driver {
    child: Child,
    base: String,
    session: String,
    http: reqwest::blocking::Client,
    _profile: tempfile::TempDir,
}

impl Driver {
    fn start() -> Driver {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver (Debian's chromium-driver) is installed: scripts/install-deps.sh --tests");
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::blocking::Client::builder().timeout(Duration::from_secs(120)).build().unwrap();
        let base = format!("http://127.0.0.1:{port}");
        let t0 = Instant::now();
        while http.get(format!("{base}/status")).send().is_err() {
            assert!(t0.elapsed() < Duration::from_secs(30), "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        let profile = tempfile::tempdir().unwrap();
        // As root, without a sandbox of its own; no connection anywhere
        // but the page's server (this machine's network is closed).
        let args = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--no-first-run",
            "--window-size=1280,900",
        ];
        let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        args.push(format!("--user-data-dir={}", profile.path().display()));
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args},
            "goog:loggingPrefs": {"browser": "ALL"},
        }}});
        let r: Value = http.post(format!("{base}/session")).json(&caps).send().unwrap().json().unwrap();
        let session = r["value"]["sessionId"].as_str().unwrap_or_else(|| panic!("no session: {r}")).to_string();
        Driver { child, base, session, http, _profile: profile }
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}/session/{}{path}", self.base, self.session);
        let req = match method {
            "GET" => self.http.get(url),
            _ => self.http.post(url).json(&body.unwrap_or(json!({}))),
        };
        let v: Value = req.send().unwrap().json().unwrap();
        v["value"].clone()
    }

    fn go(&self, url: &str) {
        self.call("POST", "/url", Some(json!({"url": url})));
    }

    fn run(&self, script: &str) -> Value {
        self.call("POST", "/execute/sync", Some(json!({"script": script, "args": []})))
    }

    fn find_all(&self, css: &str) -> Vec<String> {
        let v = self.call("POST", "/elements", Some(json!({"using": "css selector", "value": css})));
        v.as_array()
            .map(|a| a.iter().filter_map(|e| e.as_object()?.values().next()?.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    }

    fn find(&self, css: &str) -> String {
        self.find_all(css).into_iter().next().unwrap_or_else(|| panic!("no `{css}` on {}", self.url()))
    }

    fn click(&self, css: &str) {
        let e = self.find(css);
        self.call("POST", &format!("/element/{e}/click"), None);
    }

    /// Clicks `css` and waits until the page it leads to, whose URL holds
    /// `to`, has loaded (a click does not wait for the navigation it starts).
    fn click_to(&self, css: &str, to: &str) {
        self.click(css);
        let t0 = Instant::now();
        while !(self.url().contains(to) && self.run("return document.readyState") == json!("complete")) {
            assert!(t0.elapsed() < Duration::from_secs(20), "no page at {to} after clicking {css}: {}", self.url());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn type_in(&self, css: &str, text: &str) {
        let e = self.find(css);
        self.call("POST", &format!("/element/{e}/clear"), None);
        self.call("POST", &format!("/element/{e}/value"), Some(json!({"text": text})));
    }

    fn text(&self, css: &str) -> String {
        let e = self.find(css);
        self.call("GET", &format!("/element/{e}/text"), None).as_str().unwrap_or("").to_string()
    }

    fn url(&self) -> String {
        self.call("GET", "/url", None).as_str().unwrap_or("").to_string()
    }

    /// The browser's console since the last call (CSP violations land here).
    fn console(&self) -> Vec<String> {
        let v = self.call("POST", "/se/log", Some(json!({"type": "browser"})));
        v.as_array()
            .map(|a| a.iter().map(|m| m["message"].as_str().unwrap_or("").to_string()).collect())
            .unwrap_or_default()
    }

    fn screenshot(&self, name: &str) {
        use base64::Engine;
        let b64 = self.call("GET", "/screenshot", None);
        let png = base64::engine::general_purpose::STANDARD.decode(b64.as_str().unwrap_or("")).unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a screenshot of {name}");
        let dir = repo().join("target/serve-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.http.delete(format!("{}/session/{}", self.base, self.session)).send();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Nothing the page did was refused by the policy, and no script failed.
fn assert_clean_console(d: &Driver, page: &str) {
    let bad: Vec<String> = d
        .console()
        .into_iter()
        .filter(|m| m.contains("Content Security Policy") || m.contains("Refused") || m.contains("Uncaught"))
        .collect();
    assert!(bad.is_empty(), "{page}: the console says {bad:#?}");
}

#[test]
#[ignore = "needs chromium and chromium-driver (CI installs them)"]
fn a_browser_searches_compares_and_opens_history_fleet_and_systems() {
    let env = Env::new();
    fixture(&env, &["--history", "100", "--fleet", "1000", "--hostile"]);
    let s = Server::start(&env, &[]);
    let d = Driver::start();

    // The list, searched from its form.
    d.go(&format!("{}/", s.base));
    assert!(d.url().ends_with("/results"), "/ leads to the list: {}", d.url());
    assert_eq!(d.find_all("tbody tr").len(), 50, "a page of 50 of the 102 results");
    assert!(d.text("p.links").starts_with("102 result(s), page 1 of 3"), "{}", d.text("p.links"));
    d.screenshot("list");
    // The console is read (a probe comes back), so a clean one means something.
    d.run("console.error('engine-probe')");
    assert!(d.console().iter().any(|m| m.contains("engine-probe")), "the browser's console cannot be read");
    assert_clean_console(&d, "the list");
    d.type_in("input[name=q]", "WD5000");
    d.click_to("form.search button", "q=WD5000");
    assert_eq!(d.find_all("tbody tr").len(), 1);
    assert!(d.text("tbody tr").contains("Fleet of 1000"), "{}", d.text("tbody tr"));
    d.go(&format!("{}/results?q=nightly&sort=oldest", s.base));
    d.click_to("a[rel=next]", "page=2");
    assert!(d.text("tbody tr").contains("nightly-0051"), "{}", d.text("tbody tr"));

    // Two ticked and compared.
    d.go(&format!("{}/results?q=nightly&sort=oldest&per=100", s.base));
    d.click("input[value=nightly-0001]");
    d.click("input[value=nightly-0100]");
    d.click_to("button#compare", "/compare?r=nightly-0001&r=nightly-0100");
    let body = d.text("body");
    assert!(body.contains("nightly-0001 vs nightly-0100"), "{body}");
    assert!(body.contains("1 better (Engine I/O: Case 0 +2"), "the step shows in the comparison: {body}");
    d.screenshot("compare");
    assert_clean_console(&d, "compare");

    // A test's history, picked from the list of tests: the step is found.
    d.go(&format!("{}/history", s.base));
    d.click_to("tbody a", "/history?test=io");
    assert!(!d.find_all("svg").is_empty(), "the history is drawn");
    let body = d.text("body");
    assert!(body.contains("nightly-0051"), "the change point is named at the 51st run: {body}");
    d.screenshot("history");
    assert_clean_console(&d, "history");

    // A fleet of 1,000 hosts grouped by disk: the planted hosts are odd.
    d.go(&format!("{}/fleet/fleet", s.base));
    d.type_in("input[name=by]", "disk-model");
    d.click_to("form button", "by=disk-model");
    let body = d.text("body");
    assert!(body.contains("host-0017") && body.contains("host-0999"), "{body}");
    d.screenshot("fleet");
    assert_clean_console(&d, "fleet");

    // The systems table of every host that ran the test.
    d.go(&format!("{}/systems?test=io", s.base));
    assert_eq!(d.find_all("tbody tr").len(), 100 + 1000 + 1);
    d.screenshot("systems");

    // The result's own report: its script runs under the policy.
    d.go(&format!("{}/results/fleet", s.base));
    d.screenshot("fleet-result");
    assert_clean_console(&d, "a result");
    d.go(&format!("{}/results/nightly-0001", s.base));
    assert!(!d.find_all("svg.chart").is_empty(), "the report's own script drew its charts under the policy");
    assert_clean_console(&d, "a result");
    d.screenshot("result");

    // Hostile text is shown as text and runs nothing.
    for page in ["/results/hostile", "/results?q=hostile", "/systems?test=io", "/compare?r=hostile&r=nightly-0001"] {
        d.go(&format!("{}{page}", s.base));
        let title = d.run("return document.title").as_str().unwrap_or("").to_string();
        // The hostile scripts would make the title exactly this.
        assert_ne!(title, "PWNED", "{page}: a script ran");
        assert_eq!(d.run("return document.querySelectorAll('img[src=\"x\"]').length"), json!(0), "{page}");
        let body = d.text("body");
        assert!(body.contains("<script>document.title='PWNED'</script>"), "{page}: the text is shown: {body}");
        let alert = d.call("GET", "/alert/text", None);
        assert!(alert.get("error").is_some(), "{page}: an alert opened: {alert}");
    }
    d.screenshot("hostile");
    // Even markup that got into a page could not run: the policy refuses it.
    d.go(&format!("{}/results/hostile", s.base));
    d.console();
    d.run("document.body.insertAdjacentHTML('beforeend', '<img src=x onerror=\"document.title=\\'INJECTED\\'\">'); \
           var s = document.createElement('script'); s.textContent = 'document.title=\"INJECTED\"'; document.body.appendChild(s);");
    std::thread::sleep(Duration::from_millis(300));
    assert_ne!(d.run("return document.title"), json!("INJECTED"), "the policy let injected code run");
    assert!(d.console().iter().any(|m| m.contains("Content Security Policy")), "the browser names the refusal");
    assert_eq!(s.stop(), 0);
}
