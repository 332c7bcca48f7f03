//! WASM plugins hold too (issue 44): a link a plugin plants while it is
//! configured is never followed (locally and from a repository); many
//! memories, huge tables and compile bombs meet one limit each; floods of
//! progress notes, report lines and WASI descriptors are bounded; a plugin's
//! text cannot forge a log line; a value for a result it does not declare is
//! refused; a repository's plugin gets the defaults unless granted. Each
//! test fails with the limit named and the next test runs.

use super::{BaitDir, Hostile, failures};
use crate::common::*;
use crate::plugins::wasm;

/// The abuse plugin with one more core module instantiated at its start
/// (appended to the component: a core module section and a core instance
/// section that instantiates it).
fn with_module(module: &[u8]) -> Vec<u8> {
    let mut c = std::fs::read(wasm("abuse_plugin")).unwrap();
    let modules = top_level_sections(&c).iter().filter(|id| **id == 1).count() as u32;
    let section = |c: &mut Vec<u8>, id: u8, body: &[u8]| {
        c.push(id);
        leb(c, body.len() as u32);
        c.extend_from_slice(body);
    };
    section(&mut c, 1, module);
    // One core instance: `instantiate` (0x00) of module `modules`, no arguments.
    let mut inst = Vec::new();
    leb(&mut inst, 1);
    inst.push(0x00);
    leb(&mut inst, modules);
    leb(&mut inst, 0);
    section(&mut c, 2, &inst);
    c
}

fn leb(out: &mut Vec<u8>, mut v: u32) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// The ids of a component's top-level sections.
fn top_level_sections(c: &[u8]) -> Vec<u8> {
    let (mut at, mut ids) = (8, Vec::new());
    while at < c.len() {
        ids.push(c[at]);
        at += 1;
        let (mut size, mut shift) = (0usize, 0);
        loop {
            let b = c[at];
            at += 1;
            size |= ((b & 0x7f) as usize) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        at += size;
    }
    ids
}

/// A core module of `memories` memories of `pages` 64 KiB pages, `tables`
/// funcref tables of `elements`, and one function of `nesting` nested blocks.
fn module(memories: u32, pages: u64, tables: u32, elements: u64, nesting: usize) -> Vec<u8> {
    use wasm_encoder::*;
    let mut m = Module::new();
    let mut types = TypeSection::new();
    types.ty().function([], []);
    m.section(&types);
    let mut funcs = FunctionSection::new();
    funcs.function(0);
    m.section(&funcs);
    let mut t = TableSection::new();
    for _ in 0..tables {
        t.table(TableType {
            element_type: RefType::FUNCREF,
            minimum: elements,
            maximum: None,
            table64: false,
            shared: false,
        });
    }
    m.section(&t);
    let mut mem = MemorySection::new();
    for _ in 0..memories {
        mem.memory(MemoryType { minimum: pages, maximum: None, memory64: false, shared: false, page_size_log2: None });
    }
    m.section(&mem);
    let mut f = Function::new([]);
    for _ in 0..nesting {
        f.instruction(&Instruction::Block(BlockType::Empty));
    }
    for _ in 0..nesting {
        f.instruction(&Instruction::End);
    }
    f.instruction(&Instruction::End);
    let mut code = CodeSection::new();
    code.function(&f);
    m.section(&code);
    m.finish()
}

/// A local profile `id` running `plugin` with `config` and `limits`.
fn profile(env: &Env, id: &str, plugin: &[u8], config: &str, limits: &str) {
    let dir = env.profiles.path().join("test-profiles").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("plugin.wasm"), plugin).unwrap();
    std::fs::write(dir.join("profile.yaml"), plugin_yaml(id, config, limits)).unwrap();
}

fn plugin_yaml(id: &str, config: &str, limits: &str) -> String {
    format!(
        "id: {id}\nversion: 1.0.0\ntitle: Plugin {id}\ntest_type: other\nexecutor:\n  wasm:\n    plugin: plugin.wasm\n    config: {config}\n    limits: {limits}\nresults:\n  - {{id: value, unit: Items, proportion: HIB}}\nparsers: []\n"
    )
}

/// `configure` plants `/scratch/trial` → the victim: engine neither reuses
/// it as the trial's directory nor follows it, run locally or from a
/// signed repository; the victim keeps its files and gets none.
#[test]
#[ignore = "needs root"]
fn a_link_a_plugin_planted_is_never_followed() {
    require_root();
    let env = Env::new();
    let victim = BaitDir::new(&format!("plant-wasm-{}", std::process::id()));
    let v = victim.path.display().to_string();
    let abuse = std::fs::read(wasm("abuse_plugin")).unwrap();
    profile(&env, "plant", &abuse, &format!("{{mode: plant, victim: \"{v}\"}}"), "{}");
    let h = Hostile::new(&env);
    h.profile("plant", &plugin_yaml("plant", &format!("{{mode: plant, victim: \"{v}\"}}"), "{}")).file(
        "plant",
        "plugin.wasm",
        &abuse,
    );
    assert_eq!(h.add(&env, "evil").code, 0);
    for (reference, save) in [("plant", "local"), ("evil/plant", "repo")] {
        let r = env.bench(&[reference, "--runs", "3", "--save", save]);
        assert_eq!(r.code, 0, "{reference}: {r:?}");
        let res = env.result(save);
        assert_eq!(res["results"][0]["entries"][0]["value"].as_f64(), Some(0.0), "{reference} read the victim");
        assert_eq!(victim.changes(), Vec::<String>::new(), "{reference}: the victim changed");
    }
}

/// Many memories, huge tables and compile bombs, each in an otherwise good
/// plugin: the test fails naming the limit, the next one runs.
#[test]
fn plugin_resources_are_bounded_by_one_limiter_and_compile_limits() {
    let env = Env::new();
    let cases = [
        // Eight memories of 256 MiB under a 256 MiB cap: the second is refused.
        ("memories", module(8, 4096, 0, 0, 1), "its memories and tables together would hold"),
        // Four funcref tables of 64 Mi elements.
        ("tables", module(0, 0, 4, 64 << 20, 1), "tables of more than 1048576 elements"),
        // Nested 5,000 deep: refused before anything is compiled.
        ("nesting", module(0, 0, 0, 0, 5000), "nests blocks 1025 deep"),
        // One function of 2.3 M nested blocks (4.6 MB): refused for its size.
        ("bomb", module(0, 0, 0, 0, 2_300_000), "a compile bomb"),
    ];
    let mut suite = String::from("title: Resources\ntests:\n");
    for (id, m, _) in &cases {
        profile(&env, id, &with_module(m), "{mode: ok}", "{memory: 256MiB}");
        suite.push_str(&format!("  - profile: {id}\n"));
    }
    let abuse = std::fs::read(wasm("abuse_plugin")).unwrap();
    profile(&env, "fine", &abuse, "{mode: ok}", "{}");
    suite.push_str("  - profile: fine\n");
    env.suite("resources", &suite);
    let t0 = std::time::Instant::now();
    let r = env.bench(&["suite/resources", "--runs", "1", "--save", "r"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(t0.elapsed() < std::time::Duration::from_secs(120), "took {:?}", t0.elapsed());
    let f = failures(&env, "r");
    for (id, _, says) in &cases {
        let reason = f.iter().find(|(p, _)| p == id).map(|(_, r)| r.as_str()).unwrap_or("");
        assert!(reason.contains(says), "{id}: `{reason}`");
    }
    assert!(f.iter().all(|(p, _)| p != "fine"), "{f:?}");
}

/// Floods through every channel meet one output cap; descriptors one
/// handle limit; a plugin's text is one framed, inert record; a value for
/// an undeclared result is refused; 1e308 is stored and shown as such.
#[test]
fn floods_descriptors_and_text_of_a_plugin_are_bounded() {
    let env = Env::new();
    let abuse = std::fs::read(wasm("abuse_plugin")).unwrap();
    let modes = ["progress-flood", "report-flood", "fd-flood", "text", "undeclared", "absurd"];
    let mut suite = String::from("title: Floods\ntests:\n");
    for m in modes {
        profile(&env, m, &abuse, &format!("{{mode: {m}}}"), "{}");
        suite.push_str(&format!("  - profile: {m}\n"));
    }
    env.suite("floods", &suite);
    let r = env.bench(&["suite/floods", "--runs", "1", "--save", "f", "--logs", "all"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(!r.stdout.contains('\x1b') && !r.stderr.contains('\x1b'), "{r:?}");
    let f = failures(&env, "f");
    let reason = |id: &str| f.iter().find(|(p, _)| p == id).map(|(_, r)| r.clone()).unwrap_or_default();
    for id in ["progress-flood", "report-flood"] {
        assert!(reason(id).contains("wrote more than 16 MiB in all"), "{id}: {}", reason(id));
    }
    assert!(reason("fd-flood").contains("open"), "{}", reason("fd-flood"));
    let n: usize = reason("fd-flood")
        .split("open number ")
        .nth(1)
        .and_then(|s| s.split(':').next())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    assert!(
        reason("fd-flood").contains("files, directories and streams") || (1..=300).contains(&n),
        "{}",
        reason("fd-flood")
    );
    assert!(reason("undeclared").contains("a result it does not declare"), "{}", reason("undeclared"));
    assert!(reason("text").contains("all tests passed") && !reason("text").contains('\x1b'), "{}", reason("text"));
    // The log keeps the plugin's text as one record: no forged line.
    let logs: String = super::walk(&env.home.path().join("results/f/logs"))
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect();
    assert!(logs.contains("log: fine\\n=== trial-9 ===\\n# forged line\\r\\e]0;pwned"), "{logs}");
    assert!(!logs.lines().any(|l| l.starts_with("=== trial-9") || l.starts_with("# forged")), "{logs}");
    let res = env.result("f");
    let absurd = res["results"].as_array().unwrap().iter().find(|x| x["profile"] == "absurd").unwrap().clone();
    assert_eq!(absurd["entries"][0]["value"].as_f64(), Some(1e308));
}

/// A repository's plugin asking more memory or time than the defaults is
/// refused at its field unless granted; `engine info` says what it may use.
#[test]
fn a_repository_plugin_gets_the_defaults_unless_granted() {
    let env = Env::new();
    let abuse = std::fs::read(wasm("abuse_plugin")).unwrap();
    let h = Hostile::new(&env);
    h.profile("big", &plugin_yaml("big", "{mode: ok}", "{memory: 4GiB, time: 2h}")).file("big", "plugin.wasm", &abuse);
    h.profile("small", &plugin_yaml("small", "{mode: ok}", "{}")).file("small", "plugin.wasm", &abuse);
    assert_eq!(h.add(&env, "evil").code, 0);
    let r = env.bench(&["evil/big", "--runs", "1", "--save", "b"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("big/profile.yaml:9:22") && r.stderr.contains("--grant memory=4GiB"), "{r:?}");
    assert!(r.stderr.contains("--grant time=2h"), "{r:?}");
    let r = env.bench(&["evil/big", "--runs", "1", "--save", "b", "--grant", "memory=4GiB", "--grant", "time=2h"]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = env.run(&["info", "evil/small"]);
    assert!(r.stdout.contains("a WASM plugin in wasmtime") && r.stdout.contains("unless --grant"), "{r:?}");
}

/// A plugin's WASI standard input is never engine's: what the person
/// types (here, engine's stdin holds a "password") is not readable, there
/// is no /dev/tty to open, and its raw escapes reach no terminal.
#[test]
fn a_plugin_never_reads_the_users_input_or_terminal() {
    let env = Env::new();
    let abuse = std::fs::read(wasm("abuse_plugin")).unwrap();
    let h = Hostile::new(&env);
    h.profile("tty", &plugin_yaml("tty", "{mode: tty}", "{}")).file("tty", "plugin.wasm", &abuse);
    assert_eq!(h.add(&env, "evil").code, 0);
    let mut child = env
        .cmd(&["benchmark", "-y", "--target-dir", env.target.path().to_str().unwrap()])
        .args(["evil/tty", "--runs", "1", "--save", "t", "--logs", "all"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"hunter2-typed-password\n").unwrap();
    }
    let r: Run = child.wait_with_output().unwrap().into();
    assert_eq!(r.code, 0, "{r:?}");
    let trials = env.result("t")["results"][0]["entries"][0]["trials"].clone();
    assert_eq!(trials, serde_json::json!([0.0]), "the plugin read engine's stdin or opened /dev/tty");
    let text = super::all_text(&env);
    assert!(text.contains("stdin gave 0 bytes; /dev/tty opened: false"), "{text}");
    assert!(!text.contains("hunter2"), "the typed text reached the plugin");
    assert!(!r.stdout.contains("\x1b]0;pwned") && !r.stderr.contains("\x1b]0;pwned"), "{r:?}");
}

/// A plugin parked in a WASI call (std's sleep of an hour: no wasm runs,
/// so the epoch check never comes) is stopped at its 2 s time limit —
/// the run takes no longer than a quick plugin's plus the limit — and by
/// Ctrl-C within a second: the call is a future dropped where it waits.
#[test]
fn a_plugin_asleep_in_wasi_is_stopped_at_its_limit_and_by_ctrl_c() {
    use std::time::{Duration, Instant};
    let env = Env::new();
    crate::plugins::abuse(&env, "quick", "ok", "{}");
    crate::plugins::abuse(&env, "asleep", "sleep", "{time: 2s}");
    crate::plugins::abuse(&env, "asleep-long", "sleep", "{time: 10m}");
    let t0 = Instant::now();
    assert_eq!(env.bench(&["quick", "--runs", "1", "--save", "q"]).code, 0);
    let quick = t0.elapsed();
    let t0 = Instant::now();
    let r = env.bench(&["asleep", "--runs", "1", "--save", "s"]);
    let asleep = t0.elapsed();
    assert_eq!(r.code, 4, "{r:?}");
    let f = failures(&env, "s");
    assert!(f[0].1.contains("ran past its time limit of 2s"), "{f:?}");
    assert!(asleep < quick + Duration::from_millis(3000), "stopped late: {asleep:?} (a quick run {quick:?})");

    let child = env
        .cmd(&["benchmark", "-y", "--target-dir", env.target.path().to_str().unwrap()])
        .args(["asleep-long", "--runs", "1", "--save", "l"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the plugin asleep", || super::walk(env.target.path()).iter().any(|p| p.ends_with("asleep")));
    std::thread::sleep(Duration::from_millis(200));
    let t0 = Instant::now();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let r: Run = child.wait_with_output().unwrap().into();
    let took = t0.elapsed();
    assert_eq!(r.code, 130, "{r:?}");
    eprintln!("asleep 2s limit: {asleep:?} (quick {quick:?}); Ctrl-C to exit: {took:?}");
    assert!(took < Duration::from_secs(1), "Ctrl-C took {took:?} to end the run");
}

/// A 64 MiB error from a plugin's `run` counts towards its 16 MiB output
/// cap: the test fails for the cap, and engine prints, stores and logs a
/// bounded text (not 67 MB to the terminal and into result.json).
#[test]
fn a_plugins_huge_error_is_its_output_and_is_bounded() {
    let env = Env::new();
    crate::plugins::abuse(&env, "error-flood", "error-flood", "{}");
    let r = env.bench(&["error-flood", "--runs", "1", "--save", "e", "--logs", "all"]);
    assert_eq!(r.code, 4, "{}", &r.stderr[..r.stderr.len().min(2000)]);
    let f = failures(&env, "e");
    assert!(f[0].1.contains("wrote more than 16 MiB in all"), "{}", &f[0].1[..f[0].1.len().min(500)]);
    assert!(r.stdout.len() + r.stderr.len() < 64 << 10, "{} bytes printed", r.stdout.len() + r.stderr.len());
    let stored: u64 = super::walk(&env.home.path().join("results"))
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    assert!(stored < 1 << 20, "{stored} bytes stored for a 64 MiB error");
}

/// 20,000 intervals, each figure with a name of its own: engine keeps 32
/// names a trial (the rest refused and counted), so its table is linear —
/// measured as engine's peak memory beside a plugin that reports nothing
/// (before, the 20,000 × 20,000 table took 6 GB).
#[test]
fn twenty_thousand_interval_names_cost_engine_no_more_than_a_quiet_plugin() {
    let env = Env::new();
    crate::plugins::abuse(&env, "quiet", "ok", "{}");
    crate::plugins::abuse(&env, "names", "names", "{}");
    let bench = |id: &str, save: &str| {
        let mut c = env.cmd(&["benchmark", "-y", "--target-dir", env.target.path().to_str().unwrap()]);
        c.args([id, "--runs", "1", "--save", save, "--monitor-interval", "100ms", "--logs", "all"]);
        super::run_measured(&mut c)
    };
    let (r, quiet) = bench("quiet", "q");
    assert_eq!(r.code, 0, "{r:?}");
    let (r, names) = bench("names", "n");
    assert_eq!(r.code, 0, "{r:?}");
    eprintln!("peak RSS: 20,000 names {names} KiB, a quiet plugin {quiet} KiB");
    assert!(names < quiet + 50 * 1024, "peak {names} KiB against a quiet plugin's {quiet} KiB");
    let text = super::all_text(&env);
    assert!(text.contains("# 19968 interval figure(s) refused"), "the refused names are counted");
    let e = &env.result("n")["results"][0]["entries"][0];
    let series = env.home.path().join("results/n").join(e["monitor"].as_str().unwrap());
    let gz = std::fs::read(&series).unwrap();
    let mut json = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut json).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["workload"]["metrics"].as_array().unwrap().len(), 32);
}

/// A plugin past its space limit (`requirements.free_space: 32MiB`: 64 MiB
/// allowed), writing 2 GiB as files and as one file it removed first
/// (open in engine's own process, which no walk sees): stopped by the
/// watchdog, the limit named. On a 1 GiB loop device of its own (what it
/// writes before it is stopped would otherwise land beside other tests).
#[test]
#[ignore = "needs root"]
fn a_plugin_past_its_space_limit_is_stopped() {
    require_root();
    let fs = crate::loopdev::LoopFs::new(1024, "relatime");
    let env = Env::new();
    for (id, mode) in [("fill", "fill"), ("fill-hidden", "fill-hidden")] {
        let body = format!(
            "requirements: {{free_space: 32MiB}}\nexecutor:\n  wasm:\n    plugin: plugin.wasm\n    config: {{mode: {mode}}}\nresults:\n  - {{id: value, unit: Items, proportion: HIB}}\nparsers: []\n"
        );
        assert!(crate::plugins::wasm_profile(&env, id, Some("abuse_plugin"), &body).join("plugin.wasm").is_file());
    }
    let r =
        env.run(&["benchmark", "-y", "--target-dir", fs.path(), "fill", "fill-hidden", "--runs", "1", "--save", "f"]);
    assert_eq!(r.code, 4, "{r:?}");
    let f = failures(&env, "f");
    assert_eq!(f.len(), 2, "{f:?}");
    for (id, reason) in &f {
        assert!(
            reason.contains("more than 64.0 MiB written") && reason.contains("the test's space limit"),
            "{id}: {reason}"
        );
    }
    let left: u64 = super::walk(std::path::Path::new(fs.path()))
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    assert!(left < 1 << 20, "{left} bytes left in the target");
}

/// Something else fills the test's file system while a plugin runs (a
/// 200 MiB loop device, filled beside the test): the test is
/// stopped, and its failure says engine cannot tell what filled it.
#[test]
#[ignore = "needs root"]
fn a_file_system_filled_by_another_stops_the_test_saying_so() {
    require_root();
    let fs = crate::loopdev::LoopFs::new(200, "relatime");
    let env = Env::new();
    let body = "requirements: {free_space: 16MiB}\nexecutor:\n  wasm:\n    plugin: plugin.wasm\n    config: {mode: sleep}\n    limits: {time: 20s}\nresults:\n  - {id: value, unit: Items, proportion: HIB}\nparsers: []\n";
    crate::plugins::wasm_profile(&env, "asleep", Some("abuse_plugin"), body);
    let child = env
        .cmd(&["benchmark", "-y", "--target-dir", fs.path(), "asleep", "--runs", "1", "--save", "a"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let root = std::path::PathBuf::from(fs.path());
    wait_for("the plugin asleep", || super::walk(&root).iter().any(|p| p.ends_with("asleep")));
    let other = root.join("other");
    // Until it is full (the file system's own blocks take some).
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&other).unwrap();
        let chunk = vec![1u8; 1 << 20];
        for _ in 0..256 {
            if f.write_all(&chunk).and_then(|()| f.sync_data()).is_err() {
                break;
            }
        }
    }
    let r: Run = child.wait_with_output().unwrap().into();
    std::fs::remove_file(&other).unwrap();
    assert_eq!(r.code, 4, "{r:?}");
    let f = failures(&env, "a");
    assert!(f[0].1.contains("nearly full") && f[0].1.contains("stopped rather than guessed"), "{f:?}");
}

/// A core module of `functions` functions, each keeping `live` values on
/// the stack at once (just under the size limit): seconds of compiling each.
fn slow_to_compile(functions: u32, live: u32) -> Vec<u8> {
    use wasm_encoder::*;
    let mut m = Module::new();
    let mut types = TypeSection::new();
    types.ty().function([], [ValType::I32]);
    m.section(&types);
    let mut funcs = FunctionSection::new();
    (0..functions).for_each(|_| {
        funcs.function(0);
    });
    m.section(&funcs);
    let mut code = CodeSection::new();
    for _ in 0..functions {
        let mut f = Function::new([]);
        for i in 0..live {
            f.instruction(&Instruction::I32Const(i as i32 & 63));
        }
        for _ in 1..live {
            f.instruction(&Instruction::I32Add);
        }
        f.instruction(&Instruction::End);
        code.function(&f);
    }
    m.section(&code);
    m.finish()
}

/// Ctrl-C while a plugin built to compile slowly compiles: engine exits
/// 130 at once instead of waiting for the compiler (46 s before).
#[test]
fn ctrl_c_while_a_plugin_compiles_exits_at_once() {
    let env = Env::new();
    profile(&env, "slowbuild", &with_module(&slow_to_compile(3, 300_000)), "{mode: ok}", "{}");
    let mut child = env
        .cmd(&["benchmark", "-y", "slowbuild", "--runs", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert!(child.try_wait().unwrap().is_none(), "still compiling after 3 s");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let asked = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    let took = asked.elapsed();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(took < std::time::Duration::from_secs(2), "exited {took:?} after Ctrl-C");
}
