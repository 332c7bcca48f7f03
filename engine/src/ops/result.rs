//! Saved results as operations: loading one (by name or file, PTS
//! composite.xml included), editing it under its lock, merging many (each
//! checked against the schema first), importing a PTS result, deleting.

use crate::events::Events;
use crate::model::result::{LeftOut, ResultFile};
use crate::ops::{Context, Failure, exit};
use crate::store::{self, StoreError, edit, validate::Validator};
use std::path::Path;

/// Whether `what` names a file rather than a saved result.
fn looks_like_file(what: &str) -> bool {
    what.contains('/') || what.ends_with(".json") || what.ends_with(".xml")
}

/// A file's label: its folder's name (`fetched/host3/result.json`: host3).
fn folder_label(what: &str) -> String {
    Path::new(what)
        .parent()
        .and_then(|d| d.file_name())
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| what.to_string())
}

/// A PTS composite.xml, imported.
fn import_pts(cx: &Context, file: &Path) -> Result<ResultFile, Failure> {
    let text = crate::interop::pts::read(file).map_err(Failure::error)?;
    crate::interop::pts::import(&text, &file.display().to_string(), cx.catalog())
        .map_err(|e| Failure::usage(e.to_string()))
}

/// A saved result by name, or a file (result.json, or a PTS composite.xml),
/// with the label reports give it; what loading repaired goes to `events`.
pub fn load(cx: &Context, what: &str, events: &dyn Events) -> Result<(String, ResultFile), Failure> {
    let p = Path::new(what);
    let (label, f) = if looks_like_file(what) && p.is_file() {
        let f = if what.ends_with(".xml") { import_pts(cx, p)? } else { store::load_file(p)? };
        (folder_label(what), f)
    } else {
        (what.to_string(), cx.store.load(what).map_err(|e| named(cx, what, e))?)
    };
    for r in &f.repaired {
        events.message(&format!("warning: {label}: {r}"));
    }
    Ok((label, f))
}

/// A store error about `name`; a name no result has gets the nearest one.
pub(crate) fn named(cx: &Context, name: &str, e: StoreError) -> Failure {
    let missing = matches!(e, StoreError::NotFound(_));
    let f = Failure::from(e);
    let names = cx.store.list();
    match crate::model::diag::did_you_mean(name, names.iter().map(String::as_str)).filter(|_| missing) {
        Some(s) => f.hint(format!("did you mean `{s}`? (`engine result list` lists them)")),
        None => f,
    }
}

/// An edit of one saved result.
pub enum Edit {
    RenameIdentifier {
        from: String,
        to: String,
    },
    RemoveIdentifier(String),
    /// Results by test identity, profile id, or `profile: description`.
    RemoveResult(String),
}

/// Loads `name`, applies `e`, writes it back atomically under the lock.
/// Returns how many results a removal removed.
pub fn edit(cx: &Context, name: &str, e: &Edit) -> Result<usize, Failure> {
    let _lock = cx.store.lock(name)?;
    let mut file = cx.store.load(name)?;
    let usage = |e: edit::EditError| Failure::usage(e.to_string());
    let n = match e {
        Edit::RenameIdentifier { from, to } => edit::rename_identifier(&mut file, from, to).map(|()| 0),
        Edit::RemoveIdentifier(id) => edit::remove_identifier(&mut file, id).map(|()| 0),
        Edit::RemoveResult(what) => edit::remove_result(&mut file, what),
    }
    .map_err(usage)?;
    cx.store.save(name, &file)?;
    Ok(n)
}

pub fn delete(cx: &Context, name: &str) -> Result<(), Failure> {
    cx.store.delete(name).map_err(|e| named(cx, name, e))
}

/// Imports a PTS composite.xml as saved result `save` (default: its title).
pub fn import(cx: &Context, file: &Path, save: Option<store::ResultName>) -> Result<(String, ResultFile), Failure> {
    let f = import_pts(cx, file)
        .map_err(|f| f.hint("engine imports the composite.xml of a PTS result (test-results/NAME/composite.xml)"))?;
    let name = save.map_or_else(|| f.title.clone(), |n| n.to_string());
    store::check_name(&name)?;
    let _lock = cx.store.lock(&name)?;
    if cx.store.exists(&name) {
        return Err(Failure::usage(format!("a result named `{name}` exists")).hint("pick another name with --save"));
    }
    cx.store.save(&name, &f)?;
    Ok((name, f))
}

/// `engine result merge`.
pub struct Merge {
    pub names: Vec<String>,
    pub save: store::ResultName,
    /// Merge nothing when any input is refused.
    pub strict: bool,
    /// `SOURCE=REASON`: sources that have no result to merge.
    pub left_out: Vec<String>,
    /// Replace a result of that name.
    pub replace: bool,
}

/// What a merge wrote.
pub struct Merged {
    pub inputs: usize,
    pub file: ResultFile,
    /// Inputs refused (left out, named in the merged result).
    pub refused: usize,
}

impl Merged {
    pub fn exit_code(&self) -> i32 {
        if self.refused == 0 { exit::OK } else { exit::TESTS_FAILED }
    }
}

/// `--left-out SOURCE=REASON` flags, checked.
fn declared(left_out: &[String]) -> Result<Vec<LeftOut>, Failure> {
    left_out
        .iter()
        .map(|l| match l.split_once('=').filter(|(s, r)| !s.trim().is_empty() && !r.trim().is_empty()) {
            Some((source, reason)) => {
                Ok(LeftOut { source: source.trim().to_string(), reason: reason.trim().to_string() })
            }
            None => Err(Failure::usage(format!("--left-out `{l}`: expected SOURCE=REASON"))
                .hint("e.g. --left-out 'host3=unreachable: connection refused'")),
        })
        .collect()
}

/// Every input checked (schema, format, engine version) before anything is
/// merged; refused inputs are left out and named in the merged result with
/// the reason (`strict`: nothing is merged).
pub fn merge(cx: &Context, m: &Merge, events: &dyn Events) -> Result<Merged, Failure> {
    let declared = declared(&m.left_out)?;
    let validator = Validator::new();
    let _lock = cx.store.lock(&m.save)?;
    if cx.store.exists(&m.save) && !m.replace {
        return Err(Failure::usage(format!("a result named `{}` exists", m.save))
            .hint("pick another name with --save, or replace it with --replace"));
    }
    // One input in memory at a time beside the merged result.
    let mut merger = edit::Merger::new(&m.save);
    let mut inputs = 0;
    let mut refused = Vec::new();
    let mut sources = store::series::Sources::default();
    for n in &m.names {
        match load_checked(cx, &validator, n, events, &mut sources) {
            Ok((label, f)) => {
                merger.add(&label, f);
                inputs += 1;
            }
            Err(Checked::Refused { label, reason }) if !m.strict => {
                events.message(&format!("left out {label}: {reason}"));
                refused.push(LeftOut { source: label, reason });
            }
            Err(Checked::Refused { label, reason }) => {
                return Err(Failure::error(format!("{label} is not merged: {reason}"))
                    .hint("nothing was written (--strict); without --strict such inputs are left out and named"));
            }
            Err(Checked::Failed(f)) => return Err(f),
        }
    }
    if inputs == 0 {
        return Err(Failure::error("nothing to merge: every input was left out"));
    }
    let mut file = merger.finish();
    file.left_out.extend(declared);
    file.left_out.extend(refused.iter().cloned());
    for why in store::series::carry(&mut file, &cx.store.dir(&m.save), &sources) {
        events.message(&format!("warning: {why}"));
    }
    cx.store.save(&m.save, &file)?;
    Ok(Merged { inputs, file, refused: refused.len() })
}

/// Why an input of a merge is not used.
enum Checked {
    /// Not a valid result (named by its label): left out, or with `--strict` the merge stops.
    Refused { label: String, reason: String },
    /// Bad usage or an error that stops the command either way.
    Failed(Failure),
}

/// Loads a merge input: a saved result or result.json (checked against the
/// schema and engine version), or a PTS composite.xml (imported).
fn load_checked(
    cx: &Context,
    validator: &Validator,
    what: &str,
    events: &dyn Events,
    sources: &mut store::series::Sources,
) -> Result<(String, ResultFile), Checked> {
    let p = Path::new(what);
    let is_file = looks_like_file(what) && p.is_file();
    if looks_like_file(what) && !is_file && !cx.store.exists(what) {
        let reason = match std::fs::metadata(p) {
            Ok(_) => format!("{what}: not a file"),
            Err(e) => format!("{what}: cannot read it: {e}"),
        };
        return Err(Checked::Refused { label: folder_label(what), reason });
    }
    if is_file && what.ends_with(".xml") {
        return load(cx, what, events).map_err(Checked::Failed);
    }
    // A saved result is engine's own: read whatever its size, its format and
    // versions checked on the model; a file from elsewhere against the schema.
    let (label, path, own) = if is_file {
        (folder_label(what), p.to_path_buf(), None)
    } else {
        match cx.store.load(what) {
            Ok(f) => (what.to_string(), cx.store.path(what), Some(f)),
            Err(e @ StoreError::Invalid { .. }) => {
                return Err(Checked::Refused { label: what.to_string(), reason: e.to_string() });
            }
            Err(e) => return Err(Checked::Failed(e.into())),
        }
    };
    let refuse =
        |reason: String| Checked::Refused { label: label.clone(), reason: format!("{}: {reason}", path.display()) };
    let mut f = match own {
        Some(f) => store::validate::check_own(&f).map(|_| f).map_err(|e| refuse(e.to_string()))?,
        None => validator.check_file(&path).map_err(|e| refuse(e.reason.to_string()))?,
    };
    for r in &f.repaired {
        events.message(&format!("warning: {label}: {r}"));
    }
    // Its series are copied into the merged result from where they are.
    for why in store::series::anchor(&mut f, path.parent().unwrap_or(Path::new(".")), sources) {
        events.message(&format!("warning: {label}: {why}"));
    }
    Ok((label, f))
}
