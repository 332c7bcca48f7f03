//! How downloads show on standard error: a bar per file on a terminal
//! (indicatif), else a line as each download starts. The library only
//! reports progress (`install::download::Progress`).

use engine_ops::vocab::install::download::{Progress, ProgressSink};
use engine_sys::text::terminal;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

/// The display for this process's standard error.
pub fn progress() -> ProgressSink {
    if std::io::stderr().is_terminal() {
        ProgressSink(Arc::new(Bars { multi: MultiProgress::new(), bars: Mutex::new(HashMap::new()) }))
    } else {
        ProgressSink(Arc::new(Lines))
    }
}

/// A line per download started from its first byte (a resumed one said so before).
struct Lines;

impl Progress for Lines {
    fn started(&self, _key: &str, file: &str, url: &str, at: u64, _total: Option<u64>) {
        if at == 0 {
            eprintln!("{}", terminal(&format!("downloading {file} from {url}")));
        }
    }
    fn advanced(&self, _key: &str, _at: u64) {}
    fn ended(&self, _key: &str) {}
    fn fetched(&self, file: &str, bytes: u64, seconds: f64) {
        eprintln!(
            "{}: {} in {seconds:.1} s ({:.1} MB/s), sha256 verified",
            engine_sys::text::one_line(file),
            engine_model::units::format_bytes_binary(bytes),
            bytes as f64 / seconds.max(1e-9) / 1e6
        );
    }
}

/// A bar per transfer (by SHA-256), cleared when it ends.
struct Bars {
    multi: MultiProgress,
    bars: Mutex<HashMap<String, ProgressBar>>,
}

impl Progress for Bars {
    fn started(&self, key: &str, file: &str, _url: &str, at: u64, total: Option<u64>) {
        let pb = self.multi.add(ProgressBar::new(total.unwrap_or(0)));
        let style = ProgressStyle::with_template(
            "{msg:24!} {bytes:>10}/{total_bytes:<10} {binary_bytes_per_sec:>12} eta {eta:>4} {wide_bar}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        pb.set_style(style);
        pb.set_message(terminal(file).into_owned());
        pb.set_position(at);
        let old = self.bars.lock().unwrap_or_else(|p| p.into_inner()).insert(key.to_string(), pb);
        if let Some(old) = old {
            old.finish_and_clear();
        }
    }
    fn advanced(&self, key: &str, at: u64) {
        if let Some(pb) = self.bars.lock().unwrap_or_else(|p| p.into_inner()).get(key) {
            pb.set_position(at);
        }
    }
    fn fetched(&self, _file: &str, _bytes: u64, _seconds: f64) {}
    fn ended(&self, key: &str) {
        if let Some(pb) = self.bars.lock().unwrap_or_else(|p| p.into_inner()).remove(key) {
            pb.finish_and_clear();
        }
    }
}
