//! The saved results' index (`engine serve`): one SQLite file beside the
//! results, `results/.engine-index.sqlite`, built from the result files and
//! kept in step with them. The files stay the truth: a result whose file
//! changed (size, time or inode) is read again, one that went is dropped,
//! one that cannot be read is listed as damaged with why; a deleted or
//! damaged index is built anew. The index holds what a search needs (names,
//! titles, tests, identifiers, hardware and software fields, tags, dates),
//! never the values: a page reads its result on demand.

use super::Store;
use crate::model::result::ResultFile;
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};
use thiserror::Error;

/// The index's file name in the results folder (not a result name: it
/// starts with `.`).
pub const FILE: &str = ".engine-index.sqlite";

/// The layout below; an index of another version is built anew.
const VERSION: i32 = 3;

const SCHEMA: &str = "
CREATE TABLE results(
  name TEXT PRIMARY KEY, mtime INTEGER NOT NULL, size INTEGER NOT NULL, ino INTEGER NOT NULL,
  title TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
  started INTEGER, finished INTEGER, identifiers INTEGER NOT NULL DEFAULT 0,
  tests INTEGER NOT NULL DEFAULT 0, profiles TEXT NOT NULL DEFAULT '', damaged TEXT);
CREATE INDEX results_started ON results(started);
CREATE VIRTUAL TABLE results_text USING fts5(text, tokenize = 'trigram');
CREATE TABLE tests(result TEXT NOT NULL, test TEXT NOT NULL, profile TEXT NOT NULL,
  title TEXT NOT NULL, description TEXT NOT NULL, unit TEXT NOT NULL);
CREATE INDEX tests_result ON tests(result);
CREATE INDEX tests_test ON tests(test);
CREATE INDEX tests_profile ON tests(profile);
CREATE INDEX tests_title ON tests(title);
CREATE TABLE systems(result TEXT NOT NULL, identifier TEXT NOT NULL, started INTEGER);
CREATE INDEX systems_result ON systems(result);
CREATE INDEX systems_identifier ON systems(identifier);
CREATE TABLE fields(result TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL);
CREATE INDEX fields_result ON fields(result);
CREATE INDEX fields_key ON fields(key, value);
CREATE TABLE tags(result TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL);
CREATE INDEX tags_result ON tags(result);
CREATE INDEX tags_key ON tags(key, value);
CREATE TABLE meta(generation INTEGER NOT NULL);
INSERT INTO meta VALUES (0);
";

#[derive(Debug, Error)]
pub enum IndexError {
    #[error("the results index {}: {source}", path.display())]
    Sql { path: PathBuf, source: rusqlite::Error },
    #[error("cannot read the results folder {}: {source}", path.display())]
    Folder { path: PathBuf, source: std::io::Error },
}

/// Results read at once when the index is brought in step: this many, or
/// files of this many bytes together (one larger file is a batch alone).
const BATCH: usize = 256;
const BATCH_BYTES: i64 = 64 << 20;

/// `todo` in batches of at most [`BATCH`] results and [`BATCH_BYTES`].
fn batches(todo: &[(String, Stamp)]) -> Vec<&[(String, Stamp)]> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, (_, s)) in todo.iter().enumerate() {
        if i > start && (i - start == BATCH || bytes + s.size > BATCH_BYTES) {
            out.push(&todo[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += s.size;
    }
    if start < todo.len() {
        out.push(&todo[start..]);
    }
    out
}

/// What identifies a version of a result file: a save renames a new file
/// over the old (a new inode), an edit by hand changes size or time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    mtime: i64,
    size: i64,
    ino: i64,
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::symlink_metadata(path).ok()?;
        Some(Stamp { mtime: m.mtime() * 1_000_000_000 + m.mtime_nsec(), size: m.size() as i64, ino: m.ino() as i64 })
    }
}

/// What a refresh changed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Refreshed {
    pub read: usize,
    pub dropped: usize,
    pub damaged: usize,
    pub unchanged: usize,
}

/// An open index.
pub struct Index {
    conn: Connection,
    path: PathBuf,
}

impl Index {
    /// The index of `store`, made when missing; one that is damaged or of
    /// another version is removed and made again (it holds nothing the
    /// files do not).
    pub fn open(store: &Store) -> Result<Index, IndexError> {
        let path = store.root().join(FILE);
        std::fs::create_dir_all(store.root())
            .map_err(|source| IndexError::Folder { path: store.root().to_path_buf(), source })?;
        let fresh = || {
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
            }
        };
        // Only files of its own: a link, a FIFO or a device put in their
        // place is removed (the entry, never what it points at).
        if !own_files(&path) {
            fresh();
        }
        match Self::open_at(&path) {
            Ok(i) => Ok(i),
            Err(_) => {
                fresh();
                Self::open_at(&path)
            }
        }
    }

    /// The index of `store` if there is one of its own: a save or delete
    /// keeps an existing index in step and makes none (only `engine serve`
    /// needs it); one that is not what engine writes is left to the server
    /// to replace.
    pub fn existing(store: &Store) -> Option<Index> {
        let path = store.root().join(FILE);
        (own_files(&path) && path.exists()).then(|| Self::open_at(&path).ok()).flatten()
    }

    fn open_at(path: &Path) -> Result<Index, IndexError> {
        use rusqlite::OpenFlags;
        let sql = |source| IndexError::Sql { path: path.to_path_buf(), source };
        // Never through a link: the index is created and written as root.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn = Connection::open_with_flags(path, flags).map_err(sql)?;
        // What the file says runs no code of its own (triggers, views,
        // defaults are checked against engine's schema below).
        conn.pragma_update(None, "trusted_schema", false).map_err(sql)?;
        // Another engine saving a result waits for the server's write, not fails.
        conn.busy_timeout(Duration::from_secs(5)).map_err(sql)?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(sql)?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(sql)?;
        // Searches read the index mapped, not copied (it is a few MB per 10,000 results).
        conn.pragma_update(None, "mmap_size", 256i64 << 20).map_err(sql)?;
        let version: i32 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(sql)?;
        if version == 0 && schema_of(&conn).map_err(sql)?.is_empty() {
            conn.execute_batch(SCHEMA).map_err(sql)?;
            conn.pragma_update(None, "user_version", VERSION).map_err(sql)?;
        } else if version != VERSION || schema_of(&conn).map_err(sql)? != *expected_schema() {
            // Another version, or objects engine did not make (a trigger
            // would run on every write): built anew.
            return Err(sql(rusqlite::Error::InvalidQuery));
        }
        let ok: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0)).map_err(sql)?;
        if ok != "ok" {
            return Err(sql(rusqlite::Error::InvalidQuery));
        }
        Ok(Index { conn, path: path.to_path_buf() })
    }

    fn sql(&self) -> impl Fn(rusqlite::Error) -> IndexError + '_ {
        |source| IndexError::Sql { path: self.path.clone(), source }
    }

    /// The connection and the index's path, for the queries of [`super::search`].
    pub(crate) fn conn(&self) -> (&Connection, &Path) {
        (&self.conn, &self.path)
    }

    /// Brings the index in step with the files: each result whose file is
    /// new or changed is read (on all cores, as views read it: a fleet's
    /// bulk stays where it is), each one gone is dropped.
    pub fn refresh(&mut self, store: &Store) -> Result<Refreshed, IndexError> {
        let names = store.list();
        let known: std::collections::HashMap<String, Stamp> = self.stamps()?.into_iter().collect();
        let mut out = Refreshed::default();
        let mut todo = Vec::new();
        for n in &names {
            match Stamp::of(&store.path(n)) {
                Some(s) if known.get(n) == Some(&s) => out.unchanged += 1,
                Some(s) => todo.push((n.clone(), s)),
                None => {}
            }
        }
        let gone: Vec<&String> = known.keys().filter(|k| names.binary_search(k).is_err()).collect();
        let tx = self.conn.unchecked_transaction().map_err(self.sql())?;
        if !gone.is_empty() || !todo.is_empty() {
            changed(&tx).map_err(self.sql())?;
        }
        for name in gone {
            forget(&tx, name).map_err(self.sql())?;
            out.dropped += 1;
        }
        // A batch at a time in memory: 10,000 results read at once would
        // hold them all.
        for batch in batches(&todo) {
            for ((name, stamp), file) in batch.iter().zip(read_all(store, batch)) {
                match file {
                    Ok(f) => record(&tx, name, *stamp, &f).map_err(self.sql())?,
                    Err(why) => {
                        // Where the results are is the server's own business.
                        let why = why.replace(&format!("{}/", store.root().display()), "");
                        damaged(&tx, name, *stamp, &why).map_err(self.sql())?;
                        out.damaged += 1;
                    }
                }
                out.read += 1;
            }
        }
        tx.commit().map_err(self.sql())?;
        Ok(out)
    }

    /// Result `name` as just saved (`file` is what was written).
    pub fn saved(&mut self, store: &Store, name: &str, file: &ResultFile) -> Result<(), IndexError> {
        let Some(stamp) = Stamp::of(&store.path(name)) else { return self.forget(name) };
        let tx = self.conn.unchecked_transaction().map_err(self.sql())?;
        record(&tx, name, stamp, file).map_err(self.sql())?;
        changed(&tx).map_err(self.sql())?;
        tx.commit().map_err(self.sql())
    }

    /// Result `name` deleted.
    pub fn forget(&mut self, name: &str) -> Result<(), IndexError> {
        let tx = self.conn.unchecked_transaction().map_err(self.sql())?;
        forget(&tx, name).map_err(self.sql())?;
        changed(&tx).map_err(self.sql())?;
        tx.commit().map_err(self.sql())
    }

    /// A number that changes whenever anything in the index does (by any
    /// process): what was made from the index at one generation is still
    /// right while it is the same.
    pub fn generation(&self) -> Result<i64, IndexError> {
        self.conn
            .prepare_cached("SELECT generation FROM meta")
            .and_then(|mut st| st.query_row([], |r| r.get(0)))
            .map_err(self.sql())
    }

    /// Why result `name` is damaged, if the index says it is.
    pub fn damage(&self, name: &str) -> Result<Option<String>, IndexError> {
        self.conn
            .query_row("SELECT damaged FROM results WHERE name = ?1", [name], |r| r.get::<_, Option<String>>(0))
            .optional()
            .map(Option::flatten)
            .map_err(self.sql())
    }

    fn stamps(&self) -> Result<Vec<(String, Stamp)>, IndexError> {
        let mut st =
            self.conn.prepare("SELECT name, mtime, size, ino FROM results ORDER BY name").map_err(self.sql())?;
        let rows = st
            .query_map([], |r| Ok((r.get(0)?, Stamp { mtime: r.get(1)?, size: r.get(2)?, ino: r.get(3)? })))
            .map_err(self.sql())?;
        rows.collect::<Result<_, _>>().map_err(self.sql())
    }
}

/// Whether the index's files at `path` are absent or regular files (no
/// link, FIFO, device or folder in their place).
fn own_files(path: &Path) -> bool {
    ["", "-wal", "-shm"].iter().all(|suffix| match std::fs::symlink_metadata(format!("{}{suffix}", path.display())) {
        Ok(m) => m.file_type().is_file(),
        Err(_) => true,
    })
}

/// Every object of a database as SQLite lists it (type, name, table, SQL).
type Schema = Vec<(String, String, String, Option<String>)>;

fn schema_of(conn: &Connection) -> rusqlite::Result<Schema> {
    let mut st = conn.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
    rows.collect()
}

/// The objects [`SCHEMA`] makes, read from a database made in memory.
fn expected_schema() -> &'static Schema {
    static EXPECTED: std::sync::OnceLock<Schema> = std::sync::OnceLock::new();
    EXPECTED.get_or_init(|| {
        let conn = Connection::open_in_memory().expect("an in-memory database");
        conn.execute_batch(SCHEMA).expect("engine's own schema");
        schema_of(&conn).expect("its objects")
    })
}

fn changed(tx: &rusqlite::Transaction) -> rusqlite::Result<()> {
    tx.execute("UPDATE meta SET generation = generation + 1", []).map(drop)
}

/// The results named in `todo`, read on all cores; an unreadable one as why.
fn read_all(store: &Store, todo: &[(String, Stamp)]) -> Vec<Result<ResultFile, String>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = todo.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let parts: Vec<_> = todo
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter().map(|(n, _)| store.load_lean(n).map_err(|e| e.to_string())).collect::<Vec<_>>()
                })
            })
            .collect();
        parts.into_iter().flat_map(|p| p.join().unwrap_or_default()).collect()
    })
}

fn forget(tx: &rusqlite::Transaction, name: &str) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM results_text WHERE rowid = (SELECT rowid FROM results WHERE name = ?1)", [name])?;
    for table in ["tests", "systems", "fields", "tags"] {
        tx.execute(&format!("DELETE FROM {table} WHERE result = ?1"), [name])?;
    }
    tx.execute("DELETE FROM results WHERE name = ?1", [name])?;
    Ok(())
}

fn damaged(tx: &rusqlite::Transaction, name: &str, s: Stamp, why: &str) -> rusqlite::Result<()> {
    forget(tx, name)?;
    tx.execute(
        "INSERT INTO results(name, mtime, size, ino, damaged) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![name, s.mtime, s.size, s.ino, why],
    )?;
    searchable(tx, &name.to_lowercase())
}

/// The text a free search looks in, for the result just inserted (the
/// same rowid: a trigram index finds any substring of three characters or more).
fn searchable(tx: &rusqlite::Transaction, text: &str) -> rusqlite::Result<()> {
    tx.execute("INSERT INTO results_text(rowid, text) VALUES (last_insert_rowid(), ?1)", [text])?;
    Ok(())
}

/// Seconds since the epoch of an RFC 3339 time (a file may hold anything).
fn epoch(t: &crate::model::facts::Timestamp) -> Option<i64> {
    t.at().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map(|d| d.as_secs() as i64)
}

fn record(tx: &rusqlite::Transaction, name: &str, s: Stamp, f: &ResultFile) -> rusqlite::Result<()> {
    forget(tx, name)?;
    // Every distinct text a free search may match, once (a fleet's hosts
    // repeat the same hardware a thousand times).
    let mut text: BTreeSet<String> = BTreeSet::new();
    text.extend([name, f.title.as_str(), f.description.as_str()].map(str::to_lowercase));
    let mut tests = tx.prepare_cached(
        "INSERT INTO tests(result, test, profile, title, description, unit) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    let mut profiles = BTreeSet::new();
    for r in &f.results {
        tests.execute(params![name, r.test, r.profile, r.title, r.description, r.unit.to_string()])?;
        text.extend([&r.test, &r.profile, &r.title, &r.description].map(|t| t.to_lowercase()));
        profiles.insert(r.profile.as_str());
    }
    let mut systems = tx.prepare_cached("INSERT INTO systems(result, identifier, started) VALUES (?1, ?2, ?3)")?;
    let mut fields = tx.prepare_cached("INSERT INTO fields(result, kind, key, value) VALUES (?1, ?2, ?3, ?4)")?;
    let mut tags = tx.prepare_cached("INSERT INTO tags(result, key, value) VALUES (?1, ?2, ?3)")?;
    let mut seen_fields = BTreeSet::new();
    let mut seen_tags = BTreeSet::new();
    for sys in &f.systems {
        systems.execute(params![name, sys.identifier.to_string(), epoch(&sys.started)])?;
        text.insert(sys.identifier.to_string().to_lowercase());
        for (kind, map) in [("hardware", &sys.hardware), ("software", &sys.software)] {
            for (k, v) in map {
                if seen_fields.insert((kind, k.as_str(), v.as_str())) {
                    fields.execute(params![name, kind, k, v])?;
                    text.insert(v.to_lowercase());
                }
            }
        }
        for (k, v) in &sys.tags {
            if seen_tags.insert((k.as_str(), v.as_str())) {
                tags.execute(params![name, k, v])?;
                text.insert(format!("{k}={v}").to_lowercase());
            }
        }
    }
    let started = f.systems.iter().filter_map(|s| epoch(&s.started)).min();
    let finished = f.systems.iter().filter_map(|s| s.finished.as_ref().and_then(epoch)).max();
    let text = text.into_iter().collect::<Vec<_>>().join("\n");
    let profiles = profiles.into_iter().collect::<Vec<_>>().join("\n");
    tx.execute(
        "INSERT INTO results(name, mtime, size, ino, title, description, started, finished, identifiers, tests, profiles)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            name,
            s.mtime,
            s.size,
            s.ino,
            f.title,
            f.description,
            started,
            finished,
            f.systems.len() as i64,
            f.results.len() as i64,
            profiles
        ],
    )?;
    searchable(tx, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(size: i64) -> (String, Stamp) {
        (String::new(), Stamp { mtime: 0, size, ino: 0 })
    }

    #[test]
    fn results_are_read_in_batches_bounded_in_count_and_bytes() {
        let small: Vec<_> = (0..600).map(|_| stamp(1000)).collect();
        let sizes: Vec<usize> = batches(&small).iter().map(|b| b.len()).collect();
        assert_eq!(sizes, [256, 256, 88]);
        let big = vec![stamp(40 << 20), stamp(40 << 20), stamp(100 << 20), stamp(1)];
        let sizes: Vec<usize> = batches(&big).iter().map(|b| b.len()).collect();
        assert_eq!(sizes, [1, 1, 1, 1], "a file over the bytes is a batch alone");
        assert!(batches(&[]).is_empty());
    }

    #[test]
    fn the_index_follows_saves_edits_by_hand_and_deletions() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().to_path_buf());
        let mut f: ResultFile =
            serde_json::from_str(r#"{"schema_version": 1, "title": "First", "systems": [], "results": []}"#).unwrap();
        store.save("a", &mut f).unwrap();
        let mut i = Index::open(&store).unwrap();
        assert_eq!(i.refresh(&store).unwrap().read, 1);
        let g = i.generation().unwrap();
        assert_eq!(i.refresh(&store).unwrap(), Refreshed { unchanged: 1, ..Refreshed::default() });
        assert_eq!(i.generation().unwrap(), g, "nothing changed, the same generation");
        // A save by engine updates the existing index at once.
        f.title = "Second".into();
        store.save("a", &mut f).unwrap();
        assert!(i.generation().unwrap() > g);
        assert_eq!(i.refresh(&store).unwrap().unchanged, 1, "the save's stamp was taken");
        // A file damaged by hand is found at the next refresh and listed so.
        std::fs::write(store.path("a"), "{").unwrap();
        assert_eq!(i.refresh(&store).unwrap().damaged, 1);
        assert!(i.damage("a").unwrap().is_some());
        store.delete("a").unwrap();
        assert!(i.damage("a").unwrap().is_none());
        assert_eq!(i.refresh(&store).unwrap(), Refreshed::default());
    }
}
