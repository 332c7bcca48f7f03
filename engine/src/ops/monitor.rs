//! `engine result monitor`: the series recorded around a result's tests,
//! one per test and identifier.

use crate::events::Events;
use crate::model::series::Series;
use crate::ops::{Context, Failure};
use std::path::{Path, PathBuf};

/// One test's series for one identifier, or why it cannot be read.
pub struct Monitored {
    /// The test's identity.
    pub test: String,
    /// Its title and options, as reports head it.
    pub heading: String,
    pub identifier: String,
    pub series: Result<Series, String>,
}

/// The series of saved result (or result.json file) `what`, of the tests
/// `tests` name (all when empty), in the file's order.
pub fn series(cx: &Context, what: &str, tests: &[String], events: &dyn Events) -> Result<Vec<Monitored>, Failure> {
    let (_, file) = super::result::load(cx, what, events)?;
    let folder = folder_of(cx, what);
    let mut out: Vec<Monitored> = Vec::new();
    for r in file.results.iter().filter(|r| tests.is_empty() || tests.iter().any(|t| r.matches(t))) {
        for e in &r.entries {
            let Some(rel) = &e.monitor else { continue };
            if out.iter().any(|m| m.test == r.test && m.identifier == e.identifier) {
                continue;
            }
            let series = crate::store::series::inside(rel)
                .ok_or_else(|| format!("`{}` is not a path inside the result folder", crate::sys::text::one_line(rel)))
                .and_then(|p| crate::store::series::read(&folder.join(p)));
            let heading = r.heading(&r.title);
            out.push(Monitored { test: r.test.clone(), heading, identifier: e.identifier.clone(), series });
        }
    }
    if out.is_empty() {
        let which = if tests.is_empty() { String::new() } else { format!(" for {}", tests.join(", ")) };
        return Err(Failure::usage(format!("`{what}` has no monitor series{which}")).hint(
            "series are recorded by `engine benchmark` (monitors are on unless --monitor none); results from before they existed have none",
        ));
    }
    Ok(out)
}

/// The folder a result's relative paths start from.
fn folder_of(cx: &Context, what: &str) -> PathBuf {
    let p = Path::new(what);
    if p.is_file() { p.parent().map(Path::to_path_buf).unwrap_or_default() } else { cx.store.dir(what) }
}

#[cfg(test)]
mod tests {
    use crate::store::series::inside;

    #[test]
    fn only_paths_inside_the_folder_are_read() {
        assert!(inside("logs/h/fio-1a2b/monitor.json.gz").is_some());
        for bad in ["../x", "/etc/passwd", "logs/../../x", "./x", ""] {
            assert!(inside(bad).is_none(), "{bad}");
        }
    }
}
