//! What `engine serve` asks of the saved results, as operations: the index
//! kept in step, a search, one result by its name (never a path: a name
//! from a URL passes the store's grammar first) presented as `result show`
//! presents it, a comparison of any selection as `result compare` makes it,
//! a test's history with its change points, a fleet's odd hosts, the
//! systems that ran a test, and an upload checked as `result merge` checks
//! its inputs. The server only speaks HTTP.

use crate::present::{self, Format, Presentation};
use crate::result::{Input, Merge, Merged};
use crate::{Context, Failure};
use engine::analysis::history::Query;
use engine::events::Events;
use engine::model::result::ResultFile;
use engine::store::{self, StoreError, edit};
use std::path::Path;
use thiserror::Error;

pub use engine::store::index::{Index, Refreshed};
pub use engine::store::search::{Found, Row, Search, Sort};

/// Why a page cannot be given; each is its own HTTP status.
#[derive(Debug, Error)]
pub enum BrowseError {
    /// No saved result of that name (404).
    #[error("no saved result named `{0}`")]
    NotFound(String),
    /// Its file cannot be read: listed, never served half (422).
    #[error("result `{name}` is damaged: {why}")]
    Damaged { name: String, why: String },
    /// A request that asks for what cannot be (400).
    #[error("{0}")]
    Bad(String),
    /// An upload refused as `result merge` refuses an input (422).
    #[error("{0}")]
    Refused(String),
    /// Anything else (500).
    #[error("{0}")]
    Failed(String),
}

impl From<Failure> for BrowseError {
    fn from(f: Failure) -> Self {
        let m = match f.hint {
            Some(h) => format!("{} ({h})", f.message),
            None => f.message,
        };
        if f.code == crate::exit::USAGE { BrowseError::Bad(m) } else { BrowseError::Failed(m) }
    }
}

impl From<engine::store::index::IndexError> for BrowseError {
    fn from(e: engine::store::index::IndexError) -> Self {
        BrowseError::Failed(e.to_string())
    }
}

/// The index of the saved results, brought in step with the files.
pub fn index(cx: &Context) -> Result<(Index, Refreshed), BrowseError> {
    let mut i = Index::open(&cx.store)?;
    let r = i.refresh(&cx.store)?;
    Ok((i, r))
}

/// Saved result `name` for a view (a fleet's bulk left where it is). A name
/// that is not a result name is not found: it never reaches a path.
pub fn saved(cx: &Context, name: &str) -> Result<ResultFile, BrowseError> {
    if store::check_name(name).is_err() {
        return Err(BrowseError::NotFound(name.to_string()));
    }
    saved_as(cx, name, false)
}

fn saved_as(cx: &Context, name: &str, whole: bool) -> Result<ResultFile, BrowseError> {
    let loaded = if whole { cx.store.load(name) } else { cx.store.load_lean(name) };
    loaded.map_err(|e| match e {
        StoreError::NotFound(_) | StoreError::BadName(..) => BrowseError::NotFound(name.to_string()),
        e @ (StoreError::Invalid { .. } | StoreError::Read { .. }) => {
            BrowseError::Damaged { name: name.to_string(), why: e.to_string() }
        }
        e => BrowseError::Failed(e.to_string()),
    })
}

/// The saved result's file as engine would export it (`result show --format json`: whole).
pub fn exported(cx: &Context, name: &str) -> Result<ResultFile, BrowseError> {
    saved(cx, name)?;
    saved_as(cx, name, true)
}

/// How a page presents a result: `result show`'s defaults in `format`.
pub fn presentation(format: Format) -> Presentation {
    Presentation {
        format,
        width: 100,
        tests: Vec::new(),
        baseline: None,
        normalize: None,
        remove_outliers: false,
        hide_noisy: None,
        noise_pct: present::NOISE_PCT,
        equivalence_pct: present::EQUIVALENCE_PCT,
        notable: 10,
        detail: false,
        fail_on_regression: None,
        fleet: present::FleetView::default(),
    }
}

/// Saved result `name` as `p` presents it (the HTML report with its
/// monitors' charts).
pub fn report(cx: &Context, name: &str, p: &Presentation) -> Result<Vec<u8>, BrowseError> {
    let file = saved(cx, name)?;
    let monitors = if p.format == Format::Html { crate::monitor::readable(cx, name, &file) } else { Vec::new() };
    Ok(present::present(&file, p, monitors)?.bytes)
}

/// The most results one page compares, and their files' bytes together:
/// a comparison holds them all, about ten times their size.
pub const MAX_COMPARED: usize = 32;
pub const MAX_COMPARED_BYTES: u64 = 32 << 20;

/// The saved results `names` compared as `result compare` compares them;
/// with `only`, just those identifiers (as the merged result names them).
/// Returns the report and every identifier there was to pick.
pub fn compare(
    cx: &Context,
    names: &[String],
    only: &[String],
    p: &Presentation,
) -> Result<(Vec<u8>, Vec<String>), BrowseError> {
    if names.is_empty() {
        return Err(BrowseError::Bad("parameter `r`: name at least one result to compare".into()));
    }
    if names.len() > MAX_COMPARED {
        return Err(BrowseError::Bad(format!(
            "parameter `r`: {} results named; a page compares at most {MAX_COMPARED} (`engine result compare` has no such limit)",
            names.len()
        )));
    }
    // What the comparison will hold in memory, bounded before anything is read.
    let bytes: u64 = names.iter().filter_map(|n| cx.store.size_of(n)).sum();
    if bytes > MAX_COMPARED_BYTES {
        return Err(BrowseError::Bad(format!(
            "parameter `r`: these results are {} MiB of files together; a page compares at most {} MiB (`engine result compare` has no such limit)",
            bytes >> 20,
            MAX_COMPARED_BYTES >> 20
        )));
    }
    let mut files = Vec::with_capacity(names.len());
    for n in names {
        if files.iter().any(|(m, _)| m == n) {
            return Err(BrowseError::Bad(format!("parameter `r`: `{n}` is named twice")));
        }
        files.push((n.clone(), saved(cx, n)?));
    }
    let title = names.join(" vs ");
    let mut merged = edit::merge(files, &title);
    let ids: Vec<String> = merged.systems.iter().map(|s| s.identifier.to_string()).collect();
    if !only.is_empty() {
        if let Some(missing) = only.iter().find(|o| !ids.contains(o)) {
            return Err(BrowseError::Bad(format!(
                "parameter `id`: no identifier `{missing}` in these results (they have: {})",
                ids.join(", ")
            )));
        }
        for id in ids.iter().filter(|i| !only.contains(i)) {
            edit::remove_identifier(&mut merged, id).map_err(|e| BrowseError::Bad(e.to_string()))?;
        }
    }
    Ok((present::present(&merged, p, Vec::new())?.bytes, ids))
}

/// Test `test`'s history across every saved result that holds it, in
/// `format` (change points marked as `result history` marks them).
pub fn history(
    cx: &Context,
    index: &Index,
    test: &str,
    format: crate::history::Format,
    events: &dyn Events,
) -> Result<String, BrowseError> {
    let names = index.holding(test)?;
    if names.is_empty() {
        return Err(BrowseError::Bad(format!("parameter `test`: no saved result holds test `{test}`")));
    }
    let q = Query { tests: vec![test.to_string()], ..Query::default() };
    let h = crate::history::of_saved(cx, &names, &q, events)?;
    Ok(crate::history::render(&[h], format, 100)?)
}

/// A fleet's hosts as `by` groups them (a system field or tag: `disk-model`,
/// `kernel`, `tag:rack`) and `hosts` (an identifier glob) picks them.
pub fn select(by: Option<&str>, hosts: Option<&str>) -> Result<present::Select, BrowseError> {
    let identifiers = hosts
        .map(|h| glob::Pattern::new(h).map_err(|e| BrowseError::Bad(format!("parameter `hosts`: `{h}`: {e}"))))
        .transpose()?;
    Ok(present::Select { group_by: by.map(str::to_string), identifiers })
}

/// A fleet's odd hosts in `format` (the fleet page's tables).
pub fn odd(
    cx: &Context,
    name: &str,
    select: &present::Select,
    format: present::OddFormat,
) -> Result<String, BrowseError> {
    let file = saved(cx, name)?;
    Ok(present::odd(&file, select, format))
}

/// One system that ran a test: where it was saved, what it is.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Host {
    pub result: String,
    pub identifier: String,
    pub started: String,
    pub hardware: indexmap::IndexMap<String, String>,
    pub software: indexmap::IndexMap<String, String>,
}

/// Every system that has a value of test `test`, result by result (oldest
/// first), at most `limit` of them; and whether there were more.
pub fn hosts(cx: &Context, index: &Index, test: &str, limit: usize) -> Result<(Vec<Host>, bool), BrowseError> {
    let mut out = Vec::new();
    for name in index.holding(test)? {
        let Ok(f) = saved(cx, &name) else { continue };
        let ran: std::collections::HashSet<&str> = f
            .results
            .iter()
            .filter(|r| r.test == test || r.profile == test || r.title == test)
            .flat_map(|r| r.entries.iter().map(|e| e.identifier.as_str()))
            .collect();
        for s in f.systems.iter().filter(|s| ran.contains(s.identifier.as_str())) {
            if out.len() == limit {
                return Ok((out, true));
            }
            out.push(Host {
                result: name.clone(),
                identifier: s.identifier.to_string(),
                started: s.started.to_string(),
                hardware: s.hardware.clone(),
                software: s.software.clone(),
            });
        }
    }
    Ok((out, false))
}

/// The most values (entries and their trials) an upload may hold.
pub const MAX_UPLOAD_VALUES: usize = 1_000_000;

/// An upload: the file at `upload` (a result.json the server wrote from the
/// request) checked as `result merge` checks its inputs and saved as
/// `name`, appended to the result of that name when there is one. Nothing
/// is written when it is refused.
pub fn accept(cx: &Context, upload: &Path, name: &str, events: &dyn Events) -> Result<Merged, BrowseError> {
    let save: store::ResultName = name.parse().map_err(|e: StoreError| BrowseError::Bad(e.to_string()))?;
    // What a result holds is bounded too, not only its bytes: a million
    // trials is far past any run, and a file of them grows ninefold when
    // saved readable.
    if let Ok(f) = store::load_file(upload) {
        let values: usize = f.results.iter().flat_map(|r| &r.entries).map(|e| 1 + e.trials.len()).sum();
        if values > MAX_UPLOAD_VALUES {
            return Err(BrowseError::Refused(format!(
                "the upload holds {values} values (entries and trials); at most {MAX_UPLOAD_VALUES} are taken"
            )));
        }
    }
    let exists = cx.store.exists(name);
    // Named by kind: a name is never read as a path, whatever it ends in.
    let mut inputs = Vec::new();
    if exists {
        inputs.push(Input::Saved(name.to_string()));
    }
    inputs.push(Input::File(upload.to_path_buf()));
    let m = Merge { inputs, save, strict: true, left_out: Vec::new(), replace: exists };
    // The server's own temporary path says nothing to the uploader.
    let told = |msg: String| {
        msg.replace(&format!("{}: ", upload.display()), "").replace(&upload.display().to_string(), "the upload")
    };
    crate::result::merge(cx, &m, events).map_err(|f| match f.code {
        crate::exit::USAGE => BrowseError::Bad(told(f.message)),
        _ => BrowseError::Refused(told(f.message)),
    })
}
pub use engine::report::content_security_policy;
