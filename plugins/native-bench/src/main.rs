//! Runs an example workload natively, with the same code the plugin runs:
//! `native-bench sha256 size=256MiB`, `native-bench files-io DIR files=4` or
//! `native-bench seq-io DIR size=256MiB`.
//! Prints one `result value` line per measurement.

use engine_sdk::{Config, Context, Workload};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

struct Native {
    dir: PathBuf,
    start: Instant,
}

impl Context for Native {
    fn scratch_dir(&self) -> &Path {
        &self.dir
    }
    fn target_dir(&self) -> &Path {
        &self.dir
    }
    fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }
    fn cancelled(&self) -> bool {
        false
    }
}

fn run<W: Workload>(dir: PathBuf, pairs: &[String]) -> Result<(), String> {
    let config: Config = pairs.iter().filter_map(|p| p.split_once('=')).collect();
    let mut w = W::new(&config).map_err(|e| e.to_string())?;
    let report = w.run(&Native { dir, start: Instant::now() }).map_err(|e| e.to_string())?;
    for m in report.measurements {
        println!("{} {}", m.result, m.value);
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("sha256") => run::<sha256_plugin::Sha256Workload>(std::env::temp_dir(), &args[1..]),
        Some("files-io") if args.len() >= 2 => run::<files_io_plugin::FilesIo>(PathBuf::from(&args[1]), &args[2..]),
        Some("seq-io") if args.len() >= 2 => run::<seq_io_plugin::SeqIo>(PathBuf::from(&args[1]), &args[2..]),
        _ => Err("usage: native-bench sha256 [key=value…] | native-bench files-io|seq-io DIR [key=value…]".into()),
    };
    if let Err(e) = r {
        eprintln!("native-bench: {e}");
        std::process::exit(1);
    }
}
