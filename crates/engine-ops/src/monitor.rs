//! `engine result monitor`: the series recorded around a result's tests,
//! one per test and identifier.

use crate::{Context, Failure};
use engine::events::Events;
use engine::model::facts::Identifier;
use engine::model::result::ResultFile;
use engine::model::series::{Recorded, Series};
use std::path::{Path, PathBuf};

/// One test's series for one identifier, or why it cannot be read.
pub struct Monitored {
    /// The test's identity.
    pub test: String,
    /// Its title and options, as reports head it.
    pub heading: String,
    pub identifier: Identifier,
    pub series: Result<Series, engine::store::series::SeriesError>,
    /// Its own processes' stall shares (I/O, CPU, memory, per cent) from
    /// their cgroups, when confined: [`engine::model::result::own_pressure`].
    pub pressure: Option<[f64; 3]>,
}

/// The series of saved result (or result.json file) `what`, of the tests
/// `tests` name (all when empty), in the file's order.
pub fn series(cx: &Context, what: &str, tests: &[String], events: &dyn Events) -> Result<Vec<Monitored>, Failure> {
    let (_, file) = super::result::load(cx, what, events)?;
    let out = of_file(&file, &folder_of(cx, what), tests);
    if out.is_empty() {
        let which = if tests.is_empty() { String::new() } else { format!(" for {}", tests.join(", ")) };
        return Err(Failure::usage(format!("`{what}` has no monitor series{which}")).hint(
            "series are recorded by `engine benchmark` (monitors are on unless --monitor none); results from before they existed have none",
        ));
    }
    Ok(out)
}

/// The series of `file` that can be read, for a report: none is no error.
pub fn readable(cx: &Context, what: &str, file: &ResultFile) -> Vec<Recorded> {
    readable_in(&folder_of(cx, what), file)
}

/// [`readable`] for a result whose folder is known (a saved result's, by
/// its name: never a path guessed from the name).
pub fn readable_in(folder: &Path, file: &ResultFile) -> Vec<Recorded> {
    of_file(file, folder, &[])
        .into_iter()
        .filter_map(|m| Some(Recorded { test: m.test, identifier: m.identifier, series: m.series.ok()? }))
        .collect()
}

/// The series `file`'s entries name (paths relative to `folder`), of the
/// tests `tests` name (all when empty), in the file's order.
fn of_file(file: &ResultFile, folder: &Path, tests: &[String]) -> Vec<Monitored> {
    let mut out: Vec<Monitored> = Vec::new();
    for r in file.results.iter().filter(|r| tests.is_empty() || tests.iter().any(|t| r.matches(t))) {
        for e in &r.entries {
            let Some(rel) = &e.monitor else { continue };
            if out.iter().any(|m| m.test == r.test && m.identifier == e.identifier) {
                continue;
            }
            let series = engine::store::series::read_in(folder, rel);
            let heading = r.heading(&r.title);
            let pressure = engine::model::result::own_pressure(&e.trial_io, &e.trial_seconds);
            out.push(Monitored { test: r.test.clone(), heading, identifier: e.identifier.clone(), series, pressure });
        }
    }
    out
}

/// The folder a result's relative paths start from.
fn folder_of(cx: &Context, what: &str) -> PathBuf {
    let p = Path::new(what);
    if p.is_file() { p.parent().map(Path::to_path_buf).unwrap_or_default() } else { cx.store.dir(what) }
}

#[cfg(test)]
mod tests {
    use engine::store::series::inside;

    #[test]
    fn only_paths_inside_the_folder_are_read() {
        assert!(inside("logs/h/fio-1a2b/monitor.json.gz").is_some());
        for bad in ["../x", "/etc/passwd", "logs/../../x", "./x", ""] {
            assert!(inside(bad).is_none(), "{bad}");
        }
    }
}
