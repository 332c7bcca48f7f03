//! A plugin that misbehaves as its `mode` says, for the sandbox tests:
//! `escape` reads /etc/passwd, `loop` never returns, `bomb` allocates
//! without end, `trap` executes `unreachable`, `panic` panics, `flood`
//! prints 17 MiB to stdout, `flood-log` logs 17 MiB; the bulk file calls
//! (`engine:plugin/files`): `bulk-escape` opens ../../etc/passwd,
//! `bulk-negative` asks `read-at` for a negative length (straight through
//! the bindings, as a plugin in another language could), `bulk-past-end`
//! reads past the end of a 5-byte file; `ok` returns 1. Issue 44's attacks:
//! `plant` makes `/scratch/trial` a link to the `victim` folder while it is
//! configured, then reads `keep.txt` and writes `pwned` in its scratch (the
//! victim's, had engine followed the link); `progress-flood` and
//! `report-flood` send 20 MiB (over the 16 MiB output cap) as a progress note and as report lines;
//! `fd-flood` opens files through WASI until refused; `text` fails with an
//! error, log lines and a result name holding terminal escapes and line
//! breaks; `undeclared` returns a value for a result it does not declare;
//! `absurd` returns 1e308; `intervals` reports figures with a hostile
//! name, unit and value, far too many of them, at a time far ahead;
//! `tty` reads its standard input (what the person typed, were it the
//! terminal), tries `/dev/tty` and writes a raw escape, and returns 1 if
//! any of it reached something. Issue 53's: `sleep` sleeps an hour in a
//! WASI call (std's sleep: `subscribe-duration` + `block`); `error-flood`
//! fails with a 64 MiB message; `names` reports 20,000 intervals, each
//! figure with a name of its own; `fill` writes 2 GiB of 1 MiB files and
//! `fill-hidden` 2 GiB into one file it removed first (held open).

use engine_sdk::{Config, Context, Error, Figure, Report, Workload};

const MODES: &[&str] = &[
    "escape",
    "loop",
    "bomb",
    "trap",
    "panic",
    "flood",
    "flood-log",
    "bulk-escape",
    "bulk-negative",
    "bulk-past-end",
    "plant",
    "progress-flood",
    "report-flood",
    "fd-flood",
    "text",
    "undeclared",
    "absurd",
    "intervals",
    "tty",
    "sleep",
    "error-flood",
    "names",
    "fill",
    "fill-hidden",
    "ok",
];

pub struct Abuse {
    mode: &'static str,
}

/// `symlink(2)` of WASI's libc (std's is unstable on WASI).
#[cfg(target_arch = "wasm32")]
fn symlink(target: &str, link: &str) -> Result<(), Error> {
    unsafe extern "C" {
        fn symlink(target: *const std::ffi::c_char, link: *const std::ffi::c_char) -> std::ffi::c_int;
    }
    let t = std::ffi::CString::new(target).map_err(|_| Error::failed("NUL"))?;
    let l = std::ffi::CString::new(link).map_err(|_| Error::failed("NUL"))?;
    // SAFETY: two valid C strings.
    match unsafe { symlink(t.as_ptr(), l.as_ptr()) } {
        0 => Ok(()),
        _ => Err(Error::io("symlink", &std::io::Error::last_os_error())),
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn symlink(_target: &str, _link: &str) -> Result<(), Error> {
    Err(Error::unsupported("only as a plugin"))
}

impl Workload for Abuse {
    const KEYS: &'static [&'static str] = &["mode", "victim"];
    const RESULTS: &'static [&'static str] = &["value"];

    fn new(config: &Config) -> Result<Self, Error> {
        config.only(Self::KEYS)?;
        let mode = config.choice_or("mode", MODES, "ok")?;
        if mode == "plant" {
            // Relative targets that climb out are allowed by WASI; engine
            // must never follow them.
            let victim = config.required("victim")?;
            let up = "../".repeat(12);
            symlink(&format!("{up}{}", victim.trim_start_matches('/')), "/scratch/trial")?;
        }
        Ok(Abuse { mode })
    }

    fn run(&mut self, cx: &dyn Context) -> Result<Report, Error> {
        // 17 MiB in 64 KiB lines: past the 16 MiB the engine keeps.
        let line = "x".repeat((64 << 10) - 1);
        match self.mode {
            "escape" => {
                let text = std::fs::read_to_string("/etc/passwd").map_err(|e| Error::io("open /etc/passwd", &e))?;
                Ok(Report::new().value("value", text.len() as f64))
            }
            "sleep" => {
                // Parked in the host: no wasm runs, so no epoch check either.
                let _ = std::fs::write("/scratch/asleep", "");
                std::thread::sleep(std::time::Duration::from_secs(3600));
                Ok(Report::new().value("value", 1.0))
            }
            "fill" | "fill-hidden" => {
                use std::io::Write;
                let chunk = vec![7u8; 1 << 20];
                let mut hidden = None;
                if self.mode == "fill-hidden" {
                    let f = std::fs::File::create("/scratch/hidden").map_err(|e| Error::io("create", &e))?;
                    std::fs::remove_file("/scratch/hidden").map_err(|e| Error::io("remove", &e))?;
                    hidden = Some(f);
                }
                for k in 0..2048 {
                    match hidden.as_mut() {
                        Some(f) => f.write_all(&chunk).map_err(|e| Error::io("write", &e))?,
                        None => std::fs::write(format!("/scratch/f{k}"), &chunk).map_err(|e| Error::io("write", &e))?,
                    }
                }
                Ok(Report::new().value("value", 1.0))
            }
            "error-flood" => Err(Error::failed("E".repeat(64 << 20))),
            "names" => {
                for k in 0..20_000u64 {
                    let name = format!("f{k}");
                    cx.interval(std::time::Duration::from_millis(k), &[Figure::new(&name, "1/s", 1.0)]);
                }
                Ok(Report::new().value("value", 1.0))
            }
            "loop" => {
                let mut n = 0u64;
                // Never calls the host: only the engine's epoch deadline ends it.
                while std::hint::black_box(n) != u64::MAX {
                    n = n.wrapping_add(2);
                }
                Ok(Report::new().value("value", n as f64))
            }
            "bomb" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1u8; 16 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
            "trap" => {
                #[cfg(target_arch = "wasm32")]
                core::arch::wasm32::unreachable();
                #[cfg(not(target_arch = "wasm32"))]
                std::process::abort()
            }
            "panic" => panic!("the abuse plugin panics on purpose"),
            "flood" => {
                for _ in 0..17 * 16 {
                    println!("{line}");
                }
                Ok(Report::new().value("value", 1.0))
            }
            "flood-log" => {
                for _ in 0..17 * 16 {
                    cx.log(&line);
                }
                Ok(Report::new().value("value", 1.0))
            }
            "bulk-escape" => {
                let f = cx.open_file("../../etc/passwd", false)?;
                Ok(Report::new().value("value", f.size()? as f64))
            }
            "bulk-negative" => negative_length(),
            "plant" => {
                std::fs::write("/scratch/pwned", "pwned").map_err(|e| Error::io("write /scratch/pwned", &e))?;
                let read = std::fs::read_to_string("/scratch/keep.txt").is_ok();
                Ok(Report::new().value("value", if read { 1.0 } else { 0.0 }))
            }
            "progress-flood" => {
                cx.progress(0.5, &"x".repeat(20 << 20));
                Ok(Report::new().value("value", 1.0))
            }
            "report-flood" => Ok(Report::new().value("value", 1.0).line("x".repeat(20 << 20))),
            "fd-flood" => {
                let mut held = Vec::new();
                std::fs::write("/scratch/f", "x").map_err(|e| Error::io("write /scratch/f", &e))?;
                loop {
                    match std::fs::File::open("/scratch/f") {
                        Ok(f) => held.push(f),
                        Err(e) => return Err(Error::io(&format!("open number {}", held.len() + 1), &e)),
                    }
                }
            }
            "text" => {
                cx.log("fine\n=== trial-9 ===\n# forged line\r\x1b]0;pwned\x07");
                Err(Error::failed("\x1b]0;pwned\x07\x1b[2J\r\x1b[32mall tests passed\nsecond line"))
            }
            "tty" => {
                let mut typed = Vec::new();
                let n = std::io::Read::read_to_end(&mut std::io::stdin(), &mut typed).unwrap_or(0);
                let tty = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty").is_ok();
                cx.log(&format!("stdin gave {n} bytes; /dev/tty opened: {tty}"));
                print!("\x1b]0;pwned\x07");
                eprint!("\x1b]0;pwned\x07");
                Ok(Report::new().value("value", if n > 0 || tty { 1.0 } else { 0.0 }))
            }
            "undeclared" => Ok(Report::new().value("value", 1.0).value("other\nforged", 2.0)),
            "absurd" => Ok(Report::new().value("value", 1e308)),
            "intervals" => {
                // Hostile figures: a name with an escape, a unit that would
                // set the terminal's title, a NaN, a time far ahead, and
                // far more figures in one call than are kept.
                let mut many: Vec<Figure> = vec![
                    Figure::new("\x1b[2Jbad", "1/s", 1.0),
                    Figure::new("ok_s", "\x1b]0;pwned\x07", 7.0),
                    Figure::new("nan_s", "1/s", f64::NAN),
                ];
                let names: Vec<String> = (0..100).map(|i| format!("f{i}")).collect();
                many.extend(names.iter().map(|n| Figure::new(n, "1/s", 1.0)));
                cx.interval(std::time::Duration::from_secs(1 << 40), &many);
                Ok(Report::new().value("value", 1.0))
            }
            "bulk-past-end" => {
                // Named as `/scratch/data`: the same file as `data`.
                let mut f = cx.open_file(&cx.scratch_dir().join("data").to_string_lossy(), true)?;
                f.write_at(0, b"hello")?;
                let n = f.read_block(100, 10)?.len();
                Ok(Report::new().value("value", n as f64))
            }
            _ => Ok(Report::new().value("value", 1.0)),
        }
    }
}

#[cfg(target_arch = "wasm32")]
fn negative_length() -> Result<Report, Error> {
    use __engine_plugin_workload::engine::plugin::files::File;
    let f = File::open("data", true).map_err(|e| Error::failed(e.message))?;
    let data = f.read_at(0, -1).map_err(|e| Error::failed(e.message))?;
    Ok(Report::new().value("value", data.len() as f64))
}

#[cfg(not(target_arch = "wasm32"))]
fn negative_length() -> Result<Report, Error> {
    Err(Error::unsupported("only as a plugin"))
}

engine_sdk::export_workload!(Abuse);
