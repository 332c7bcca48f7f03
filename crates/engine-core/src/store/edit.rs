//! Editing result files: merge, rename or remove an identifier, remove a
//! result. Each returns a new file; the caller writes it atomically.

use super::bulk;
use crate::model::facts::Identifier;
use crate::model::result::ResultFile;
use std::collections::{HashMap, HashSet};
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum EditError {
    #[error("no identifier `{0}` in this result")]
    NoIdentifier(String),
    #[error("identifier `{0}` already exists")]
    Exists(String),
    #[error("no result matches `{0}`")]
    NoResult(String),
}

/// Merges `files` in order: tests are aligned by identity (test and result
/// id); every identifier is kept — one that appears in several files gets the
/// file's title added (`host (run-2)`), as comparing two runs of one machine
/// needs. Tests that only some files have are kept; the identifiers without
/// them simply have no entry there. Failed tests and left-out sources of
/// every file come along.
pub fn merge(files: Vec<(String, ResultFile)>, title: &str) -> ResultFile {
    let mut m = Merger::new(title);
    m.rename = true;
    for (name, f) in files {
        m.add(&name, f).expect("a renaming merge writes no bulk and refuses nothing");
    }
    m.finish().0
}

/// Why an input was not merged.
#[derive(Debug, Error)]
pub enum MergeError {
    /// An identifier an earlier input has (`engine result merge` keeps one
    /// source per identifier).
    #[error("identifier `{identifier}` is also in {first}; rename one first (`engine result rename-identifier`)")]
    Clash { identifier: String, first: String },
    #[error("cannot write the merged result's bulk file: {0}")]
    Bulk(std::io::Error),
}

/// What a merge did not keep of an input (emptied vectors, the results
/// whose entries it took, the encoded bulk it wrote), to be dropped where
/// it was allocated.
pub struct Spent {
    _file: ResultFile,
    _results: Vec<crate::model::result::TestResult>,
    _frames: Vec<Vec<u8>>,
}

/// A merge taking one input at a time (each dropped once added), in time
/// linear in the inputs: where each (test, result id) is and which
/// identifiers are taken are looked up, not searched. With a bulk writer,
/// each input's trial counters and system details go to the bulk file as
/// it is added, so memory holds the merged result without them.
pub struct Merger {
    out: ResultFile,
    at: HashMap<(String, String), usize>,
    /// Each identifier taken, and the input it came from.
    ids: HashMap<Identifier, std::rc::Rc<str>>,
    /// Rename an identifier that is taken instead of refusing its input.
    rename: bool,
    bulk: Option<bulk::Writer>,
}

impl Merger {
    pub fn new(title: &str) -> Self {
        Merger { out: ResultFile::new(title), at: HashMap::new(), ids: HashMap::new(), rename: false, bulk: None }
    }

    /// A merge whose inputs' bulk goes to `w` as they come.
    pub fn with_bulk(title: &str, w: bulk::Writer) -> Self {
        Merger { bulk: Some(w), ..Merger::new(title) }
    }

    /// Adds input `name`'s file (see [`merge`]); an input with an identifier
    /// an earlier one has is refused whole (nothing of it added) unless the
    /// merge renames.
    pub fn add(&mut self, name: &str, f: ResultFile) -> Result<(), MergeError> {
        self.add_with(name, f, None).map(drop)
    }

    /// [`Merger::add`] of a file whose bulk was already split off and
    /// encoded (`frames`, by [`bulk::encode`] on the thread that read it).
    /// Returns what the merge did not keep, for the thread that allocated
    /// it to free (glibc serialises frees of another thread's memory on
    /// that thread's arena lock: a 10,000-host merge waited on it).
    pub fn add_encoded(&mut self, name: &str, f: ResultFile, frames: Vec<Vec<u8>>) -> Result<Spent, MergeError> {
        self.add_with(name, f, Some(frames))
    }

    fn add_with(&mut self, name: &str, mut f: ResultFile, frames: Option<Vec<Vec<u8>>>) -> Result<Spent, MergeError> {
        let clashing: Vec<Identifier> =
            f.systems.iter().filter(|s| self.ids.contains_key(&s.identifier)).map(|s| s.identifier.clone()).collect();
        if let Some(id) = clashing.first()
            && !self.rename
        {
            return Err(MergeError::Clash { identifier: id.to_string(), first: self.ids[id].to_string() });
        }
        if !clashing.is_empty() {
            let own: HashSet<Identifier> = f.systems.iter().map(|s| s.identifier.clone()).collect();
            for id in clashing {
                let mut new = format!("{id} ({name})");
                let mut i = 2;
                while self.ids.contains_key(new.as_str()) || own.contains(new.as_str()) {
                    new = format!("{id} ({name} {i})");
                    i += 1;
                }
                rename_in(&mut f, &id, &new);
            }
        }
        if let Some(w) = &mut self.bulk {
            match &frames {
                Some(encoded) => encoded.iter().try_for_each(|b| w.encoded(b)),
                None => bulk::split(&mut f).iter().try_for_each(|frame| w.frame(frame)),
            }
            .map_err(MergeError::Bulk)?;
        }
        let source: std::rc::Rc<str> = name.into();
        self.ids.extend(f.systems.iter().map(|s| (s.identifier.clone(), source.clone())));
        let out = &mut self.out;
        out.systems.append(&mut f.systems);
        out.failures.append(&mut f.failures);
        out.left_out.append(&mut f.left_out);
        if out.description.is_empty() {
            out.description = std::mem::take(&mut f.description);
        }
        let mut spent = Vec::with_capacity(f.results.len());
        for mut r in std::mem::take(&mut f.results) {
            // Looked up with the input's own strings, which go back with it.
            let key = (std::mem::take(&mut r.test), std::mem::take(&mut r.result));
            match self.at.get(&key) {
                Some(&i) => {
                    out.results[i].entries.append(&mut r.entries);
                    (r.test, r.result) = key;
                    spent.push(r);
                }
                None => {
                    (r.test, r.result) = key.clone();
                    self.at.insert(key, out.results.len());
                    out.results.push(r);
                }
            }
        }
        Ok(Spent { _file: f, _results: spent, _frames: frames.unwrap_or_default() })
    }

    /// The merged result, and the bulk writer holding its inputs' bulk.
    pub fn finish(self) -> (ResultFile, Option<bulk::Writer>) {
        (self.out, self.bulk)
    }
}

fn rename_in(f: &mut ResultFile, from: &str, to: &str) {
    for s in &mut f.systems {
        if s.identifier == from {
            s.identifier = to.into();
        }
    }
    for r in &mut f.results {
        for e in &mut r.entries {
            if e.identifier == from {
                e.identifier = to.into();
            }
        }
    }
    for x in &mut f.failures {
        if x.identifier == from {
            x.identifier = to.into();
        }
    }
}

pub fn rename_identifier(f: &mut ResultFile, from: &str, to: &str) -> Result<(), EditError> {
    if f.system(from).is_none() {
        return Err(EditError::NoIdentifier(from.to_string()));
    }
    if f.system(to).is_some() {
        return Err(EditError::Exists(to.to_string()));
    }
    rename_in(f, from, to);
    Ok(())
}

/// Removes an identifier and its values; results left without any value go too.
pub fn remove_identifier(f: &mut ResultFile, id: &str) -> Result<(), EditError> {
    if f.system(id).is_none() {
        return Err(EditError::NoIdentifier(id.to_string()));
    }
    f.systems.retain(|s| s.identifier != id);
    for r in &mut f.results {
        r.entries.retain(|e| e.identifier != id);
    }
    f.results.retain(|r| !r.entries.is_empty());
    Ok(())
}

/// Removes the results matching `what`; returns how many.
pub fn remove_result(f: &mut ResultFile, what: &str) -> Result<usize, EditError> {
    let before = f.results.len();
    f.results.retain(|r| !r.matches(what));
    match before - f.results.len() {
        0 => Err(EditError::NoResult(what.to_string())),
        n => Ok(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::profile::Proportion;
    use crate::model::result::{ResultEntry, System, TestResult};

    fn file(ids: &[&str], tests: &[&str]) -> ResultFile {
        let mut f = ResultFile::new("t");
        f.systems = ids.iter().map(|i| System { identifier: (*i).into(), ..Default::default() }).collect();
        for t in tests {
            f.results.push(TestResult {
                test: t.to_string(),
                profile: "p".into(),
                profile_version: "1.0.0".into(),
                result: "r".into(),
                title: "T".into(),
                app_version: None,
                description: format!("Test: {t}"),
                options: vec![],
                unit: "U".into(),
                proportion: Proportion::Hib,
                entries: ids
                    .iter()
                    .map(|i| ResultEntry::from_trials(i, vec![1.0], None, vec![], String::new().into()).unwrap())
                    .collect(),
                pts: None,
                repository: None,
                about: String::new(),
            });
        }
        f
    }

    #[test]
    fn merging_aligns_tests_and_keeps_all() {
        let a = file(&["A"], &["t1", "t2"]);
        let b = file(&["B", "A"], &["t2", "t3"]);
        let m = merge(vec![("a".into(), a), ("b".into(), b)], "m");
        let ids: Vec<&str> = m.systems.iter().map(|s| s.identifier.as_str()).collect();
        assert_eq!(ids, ["A", "B", "A (b)"]);
        let tests: Vec<(&str, usize)> = m.results.iter().map(|r| (r.test.as_str(), r.entries.len())).collect();
        assert_eq!(tests, [("t1", 1), ("t2", 3), ("t3", 2)]);
    }

    #[test]
    fn merging_keeps_failures_and_left_out_sources() {
        let mut a = file(&["A"], &["t1"]);
        let mut b = file(&["A"], &["t1"]);
        let failed = crate::model::result::FailedTest {
            test: "t2".into(),
            profile: "p".into(),
            title: "T".into(),
            description: "d".into(),
            identifier: "A".into(),
            status: crate::model::result::FailureStatus::Failed,
            reason: "exit 1".into(),
            log: None,
            stderr_tail: vec![],
            timestamp: "t".into(),
        };
        b.failures.push(failed);
        a.left_out.push(crate::model::result::LeftOut { source: "h3".into(), reason: "unreachable".into() });
        let m = merge(vec![("a".into(), a), ("b".into(), b)], "m");
        assert_eq!(m.failures.len(), 1);
        assert_eq!(m.failures[0].identifier, "A (b)", "renamed with its identifier");
        assert_eq!(m.left_out[0].source, "h3");
    }

    #[test]
    fn rename_and_remove() {
        let mut f = file(&["A", "B"], &["t1"]);
        assert_eq!(rename_identifier(&mut f, "A", "B"), Err(EditError::Exists("B".into())));
        rename_identifier(&mut f, "A", "C").unwrap();
        assert_eq!(f.results[0].entries[0].identifier, "C");
        remove_identifier(&mut f, "C").unwrap();
        assert_eq!(f.results[0].entries.len(), 1);
        assert_eq!(remove_identifier(&mut f, "Z"), Err(EditError::NoIdentifier("Z".into())));
        remove_identifier(&mut f, "B").unwrap();
        assert!(f.results.is_empty(), "results without values go");
        let mut f = file(&["A"], &["t1", "t2"]);
        assert_eq!(remove_result(&mut f, "p: Test: t1"), Ok(1));
        assert_eq!(remove_result(&mut f, "nope"), Err(EditError::NoResult("nope".into())));
    }
}
