//! Saved results as operations: loading one (by name or file, PTS
//! composite.xml included), editing it under its lock, merging many (each
//! checked against the schema first), importing a PTS result, deleting.

use crate::{Context, Failure, exit};
use engine::events::Events;
use engine::model::result::{LeftOut, ResultFile};
use engine::store::{self, StoreError, edit, validate::Validator};
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
    let text = engine::interop::pts::read(file).map_err(Failure::error)?;
    engine::interop::pts::import(&text, &file.display().to_string(), cx.catalog())
        .map_err(|e| Failure::usage(e.to_string()))
}

/// A saved result by name, or a file (result.json, or a PTS composite.xml),
/// with the label reports give it, for a view: a fleet's bulk (trial
/// counters, system details) is not read. What loading repaired goes to
/// `events`.
pub fn load(cx: &Context, what: &str, events: &dyn Events) -> Result<(String, ResultFile), Failure> {
    load_as(cx, what, events, false)
}

/// [`load`], and with `whole` a saved fleet's bulk attached (an export).
pub fn load_as(cx: &Context, what: &str, events: &dyn Events, whole: bool) -> Result<(String, ResultFile), Failure> {
    let p = Path::new(what);
    let (label, f) = if looks_like_file(what) && p.is_file() {
        let f = if what.ends_with(".xml") { import_pts(cx, p)? } else { store::load_file(p)? };
        (folder_label(what), f)
    } else {
        let f = if whole { cx.store.load(what) } else { cx.store.load_lean(what) };
        (what.to_string(), f.map_err(|e| named(cx, what, e))?)
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
    match engine::model::diag::did_you_mean(name, names.iter().map(String::as_str)).filter(|_| missing) {
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
    /// The result's title and description (what reports head it with).
    Describe {
        title: Option<String>,
        description: Option<String>,
    },
}

/// Loads `name`, applies `e`, writes it back atomically under the lock.
/// Returns how many results a removal removed.
pub fn edit(cx: &Context, name: &str, e: &Edit) -> Result<usize, Failure> {
    let _lock = cx.store.lock(name)?;
    let mut file = cx.store.load(name)?;
    let usage = |e: edit::EditError| Failure::usage(e.to_string());
    let n = match e {
        Edit::RenameIdentifier { from, to } => {
            edit::rename_identifier(&mut file, from, to).map_err(usage)?;
            cx.store.move_logs(name, &mut file, from, to)?;
            Ok(0)
        }
        Edit::RemoveIdentifier(id) => edit::remove_identifier(&mut file, id).map(|()| 0),
        Edit::RemoveResult(what) => edit::remove_result(&mut file, what),
        Edit::Describe { title, description } => {
            if let Some(t) = title {
                file.title = t.clone();
            }
            if let Some(d) = description {
                file.description = d.clone();
            }
            Ok(0)
        }
    }
    .map_err(usage)?;
    cx.store.save(name, &mut file)?;
    // Its logs go once the file no longer names them.
    if let Edit::RemoveIdentifier(id) = e {
        cx.store.drop_logs(name, id)?;
    }
    Ok(n)
}

pub fn delete(cx: &Context, name: &str) -> Result<(), Failure> {
    cx.store.delete(name).map_err(|e| named(cx, name, e))
}

/// Imports a PTS composite.xml as saved result `save` (default: its title).
pub fn import(cx: &Context, file: &Path, save: Option<store::ResultName>) -> Result<(String, ResultFile), Failure> {
    let mut f = import_pts(cx, file)
        .map_err(|f| f.hint("engine imports the composite.xml of a PTS result (test-results/NAME/composite.xml)"))?;
    let name = save.map_or_else(|| f.title.clone(), |n| n.to_string());
    store::check_name(&name)?;
    let _lock = cx.store.lock(&name)?;
    if cx.store.exists(&name) {
        return Err(Failure::usage(format!("a result named `{name}` exists")).hint("pick another name with --save"));
    }
    cx.store.save(&name, &mut f)?;
    Ok((name, f))
}

/// One input of a merge: a saved result by name, or a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Saved(String),
    /// A result.json or a PTS composite.xml (by its extension).
    File(std::path::PathBuf),
}

impl Input {
    /// What a word of the command line names: a file when it looks like a
    /// path (a `/`, or `.json`/`.xml` at the end) and is one, or when no
    /// saved result has that name; else a saved result.
    pub fn from_word(cx: &Context, what: &str) -> Input {
        let p = Path::new(what);
        if looks_like_file(what) && (p.is_file() || !cx.store.exists(what)) {
            Input::File(p.to_path_buf())
        } else {
            Input::Saved(what.to_string())
        }
    }

    fn label(&self) -> String {
        match self {
            Input::Saved(n) => n.clone(),
            Input::File(p) => folder_label(&p.display().to_string()),
        }
    }
}

/// `engine result merge`.
pub struct Merge {
    pub inputs: Vec<Input>,
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
    let merged = merge_locked(cx, m, events);
    // A merge that wrote nothing leaves no folder (its lock, a bulk begun).
    if merged.is_err() {
        cx.store.discard_unsaved(&m.save);
    }
    merged
}

fn merge_locked(cx: &Context, m: &Merge, events: &dyn Events) -> Result<Merged, Failure> {
    let declared = declared(&m.left_out)?;
    let validator = Validator::new();
    let _lock = cx.store.lock(&m.save)?;
    if cx.store.exists(&m.save) && !m.replace {
        return Err(Failure::usage(format!("a result named `{}` exists", m.save))
            .hint("pick another name with --save, or replace it with --replace"));
    }
    // One input in memory at a time beside the merged result; each input's
    // bulk (trial counters, system details) goes to the bulk file as it comes.
    let dir = cx.store.dir(&m.save);
    let writer =
        store::bulk::Writer::create(&dir).map_err(|e| store::StoreError::Write { path: dir.clone(), source: e })?;
    let mut merger = edit::Merger::with_bulk(&m.save, writer);
    let mut inputs = 0;
    let mut refused = Vec::new();
    let mut sources = store::series::Sources::default();
    // Inputs are read, checked and their bulk compressed on two threads,
    // each a bounded number ahead; they are merged here in the order given,
    // and what the merge does not keep goes back to its reader to be freed.
    std::thread::scope(|s| -> Result<(), Failure> {
        let readers = start_readers(s, &m.inputs, &cx.store, &validator)?;
        for (i, n) in m.inputs.iter().enumerate() {
            let (rx, back) = &readers[i % READERS];
            let ready = rx.recv().map_err(|_| Failure::error(format!("reading {} stopped", n.label())))?;
            let added = ready.and_then(|r| take_in(cx, &mut merger, r, events, &mut sources));
            match added {
                Ok(spent) => {
                    inputs += 1;
                    // A reader that has stopped leaves it to this thread.
                    if let Some(s) = spent {
                        drop(back.send(s));
                    }
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
        Ok(())
    })?;
    if inputs == 0 {
        return Err(Failure::error("nothing to merge: every input was left out"));
    }
    let (mut file, writer) = merger.finish();
    file.left_out.extend(declared);
    file.left_out.extend(refused.iter().cloned());
    for why in store::series::carry(&mut file, &dir, &sources) {
        events.message(&format!("warning: {why}"));
    }
    attach_or_name_bulk(&mut file, writer, &dir)?;
    cx.store.save(&m.save, &mut file)?;
    Ok(Merged { inputs, file, refused: refused.len() })
}

/// A fleet's merged result names the bulk file the merge wrote; a smaller
/// one takes its bulk back (it keeps everything in `result.json`).
fn attach_or_name_bulk(file: &mut ResultFile, writer: Option<store::bulk::Writer>, dir: &Path) -> Result<(), Failure> {
    let Some(w) = writer else { return Ok(()) };
    let failed = |source| Failure::from(store::StoreError::Write { path: dir.to_path_buf(), source });
    if file.systems.len() >= store::bulk::FROM_IDENTIFIERS {
        file.bulk = Some(w.finish().map_err(failed)?);
    } else {
        let (frames, said) = w.read_back().map_err(failed)?;
        if let Some(why) = said.first() {
            return Err(Failure::error(format!("the merge's own bulk file cannot be read back: {why}")));
        }
        store::bulk::restore(file, frames);
    }
    Ok(())
}

/// Why an input of a merge is not used.
enum Checked {
    /// Not a valid result (named by its label): left out, or with `--strict` the merge stops.
    Refused { label: String, reason: String },
    /// Bad usage or an error that stops the command either way.
    Failed(Failure),
}

/// Threads that read a merge's inputs.
const READERS: usize = 2;

/// A reader's channels: inputs it read, in its share of the order; what
/// the merge did not keep of them, back to be freed there.
type Reader = (std::sync::mpsc::Receiver<Result<Ready, Checked>>, std::sync::mpsc::Sender<edit::Spent>);

/// Starts [`READERS`] threads, reader `w` reading every `READERS`-th input
/// from the `w`-th, each a bounded number ahead of the merge.
fn start_readers<'s>(
    s: &'s std::thread::Scope<'s, '_>,
    names: &'s [Input],
    store: &'s store::Store,
    validator: &'s Validator,
) -> Result<Vec<Reader>, Failure> {
    (0..READERS)
        .map(|w| {
            let (tx, rx) = std::sync::mpsc::sync_channel(4);
            let (back, spent) = std::sync::mpsc::channel::<edit::Spent>();
            let read = move || {
                for n in names.iter().skip(w).step_by(READERS) {
                    spent.try_iter().for_each(drop);
                    if tx.send(prepare(store, validator, n)).is_err() {
                        break;
                    }
                }
                drop(tx);
                spent.iter().for_each(drop);
            };
            std::thread::Builder::new()
                .name("merge-reader".into())
                .spawn_scoped(s, read)
                .map_err(|e| Failure::error(format!("cannot start a thread: {e}")))?;
            Ok((rx, back))
        })
        .collect()
}

/// A merge input read and checked (on a reader thread), its bulk split off
/// and encoded; or a PTS composite.xml, imported on the merging thread.
enum Ready {
    Input { label: String, path: std::path::PathBuf, f: Box<ResultFile>, frames: Vec<Vec<u8>> },
    Xml(std::path::PathBuf),
}

/// Reads merge input `what`: a saved result (read whatever its size, its
/// format and versions checked on the model) or a result.json from
/// elsewhere (checked against the schema and engine version).
fn prepare(store: &store::Store, validator: &Validator, what: &Input) -> Result<Ready, Checked> {
    let (label, path, own) = match what {
        Input::File(p) => {
            if !p.is_file() {
                let reason = match std::fs::metadata(p) {
                    Ok(_) => format!("{}: not a file", p.display()),
                    Err(e) => format!("{}: cannot read it: {e}", p.display()),
                };
                return Err(Checked::Refused { label: what.label(), reason });
            }
            if p.extension().is_some_and(|x| x == "xml") {
                return Ok(Ready::Xml(p.clone()));
            }
            (what.label(), p.clone(), None)
        }
        Input::Saved(name) => match store.load(name) {
            Ok(f) => (name.clone(), store.path(name), Some(f)),
            Err(e @ StoreError::Invalid { .. }) => {
                return Err(Checked::Refused { label: name.clone(), reason: e.to_string() });
            }
            Err(e) => return Err(Checked::Failed(e.into())),
        },
    };
    let refuse =
        |reason: String| Checked::Refused { label: label.clone(), reason: format!("{}: {reason}", path.display()) };
    let mut f = match own {
        Some(f) => store::validate::check_own(&f).map(|_| f).map_err(|e| refuse(e.to_string()))?,
        None => validator.check_file(&path).map_err(|e| refuse(e.reason.to_string()))?,
    };
    let frames =
        store::bulk::split(&mut f).iter().map(store::bulk::encode).collect::<Result<Vec<_>, _>>().map_err(|e| {
            Checked::Failed(Failure::error(format!("cannot compress {}'s counters: {e}", path.display())))
        })?;
    Ok(Ready::Input { label, path, f: Box::new(f), frames })
}

/// Merges a read input: says what loading repaired, anchors its series
/// where they are (they are copied into the merged result), adds it.
/// Returns what the merge did not keep of an input a reader allocated.
fn take_in(
    cx: &Context,
    merger: &mut edit::Merger,
    ready: Ready,
    events: &dyn Events,
    sources: &mut store::series::Sources,
) -> Result<Option<edit::Spent>, Checked> {
    let (label, mut f, frames) = match ready {
        Ready::Xml(path) => {
            let f = import_pts(cx, &path).map_err(Checked::Failed)?;
            for r in &f.repaired {
                events.message(&format!("warning: {}: {r}", path.display()));
            }
            (folder_label(&path.display().to_string()), f, None)
        }
        Ready::Input { label, path, f, frames } => {
            let mut f = *f;
            for r in &f.repaired {
                events.message(&format!("warning: {label}: {r}"));
            }
            for why in store::series::anchor(&mut f, path.parent().unwrap_or(Path::new(".")), sources) {
                events.message(&format!("warning: {label}: {why}"));
            }
            (label, f, Some(frames))
        }
    };
    let added = match frames {
        Some(frames) => merger.add_encoded(&label, std::mem::take(&mut f), frames).map(Some),
        None => merger.add(&label, f).map(|()| None),
    };
    match added {
        Ok(spent) => Ok(spent),
        Err(e @ edit::MergeError::Clash { .. }) => Err(Checked::Refused { label, reason: e.to_string() }),
        Err(e) => Err(Checked::Failed(Failure::error(e.to_string()))),
    }
}
