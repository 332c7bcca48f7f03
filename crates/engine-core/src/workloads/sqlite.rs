//! `sqlite`: PTS's SQLite insertion test (pts/sqlite-2.3.x) through SQLite
//! linked into engine (rusqlite, bundled 3.50). Per copy, on threads that
//! start together: CREATE TABLE pts1, `PRAGMA journal_mode='wal'`, then the
//! inserts `passes` times, each INSERT its own transaction — every step on
//! a connection of its own, as PTS's script runs a fresh sqlite3 shell for
//! each. The whole is timed, as PTS times its script. The rows are the ones
//! the external `sqlite` profile writes (the same MINSTD sequence), so the
//! two stand side by side; only the shell processes are missing here.

use engine_sdk::{Config, Context, Error, Report, Workload};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

pub(crate) struct Sqlite {
    copies: u32,
    inserts: u64,
    passes: u32,
    synchronous: &'static str,
    journal: &'static str,
}

/// PTS's table (sqlite-benchmark's CREATE, verbatim).
const CREATE: &str = "CREATE TABLE pts1 ('I' SMALLINT NOT NULL, 'DT' TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, \
                      'F1' VARCHAR(4) NOT NULL, 'F2' VARCHAR(16) NOT NULL);";

/// The `n` INSERT statements, in the shape of PTS's sqlite-2500-insertions.txt:
/// row number, CURRENT_TIMESTAMP, 4 digits, 16 digits. The digits come from
/// MINSTD (x ← 48271·x mod 2³¹−1, from 1), which awk computes exactly too:
/// the external profile's pre_test writes the same lines.
pub(crate) fn statements(n: u64) -> Vec<String> {
    let mut x: u64 = 1;
    let mut next = || {
        x = x * 48271 % 2_147_483_647;
        x
    };
    (1..=n)
        .map(|i| {
            let f1 = 1000 + next() % 9000;
            let hi = 10_000_000 + next() % 90_000_000;
            let lo = next() % 100_000_000;
            format!(
                "INSERT INTO 'pts1' ('I', 'DT', 'F1', 'F2') VALUES ('{i}', CURRENT_TIMESTAMP, '{f1}', '{hi}{lo:08}');"
            )
        })
        .collect()
}

fn db(what: &str, e: rusqlite::Error) -> Error {
    match e {
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::DiskFull => {
            Error::io(what, &std::io::Error::from_raw_os_error(libc::ENOSPC))
        }
        e => Error::failed(format!("{what}: {e}")),
    }
}

impl Workload for Sqlite {
    const KEYS: &'static [&'static str] = &["copies", "inserts", "passes", "synchronous", "journal_mode"];
    const RESULTS: &'static [&'static str] = &["seconds", "inserts_per_second"];

    fn new(config: &Config) -> Result<Self, Error> {
        config.only(Self::KEYS)?;
        let inserts = config.parse_or::<u64>("inserts", 2500)?;
        let passes = config.parse_or::<u32>("passes", 3)?;
        let copies = config.parse_or::<u32>("copies", 1)?;
        for (key, v) in [("inserts", inserts), ("passes", passes as u64), ("copies", copies as u64)] {
            if v == 0 {
                return Err(Error::config(key, "must be at least 1"));
            }
        }
        if copies > 1024 {
            return Err(Error::config("copies", format!("{copies}: use 1 to 1024")));
        }
        Ok(Sqlite {
            copies,
            inserts,
            passes,
            synchronous: config.choice_or("synchronous", &["OFF", "NORMAL", "FULL", "EXTRA"], "FULL")?,
            journal: config.choice_or("journal_mode", &["DELETE", "TRUNCATE", "PERSIST", "WAL", "MEMORY"], "WAL")?,
        })
    }

    fn run(&mut self, cx: &dyn Context) -> Result<Report, Error> {
        let sql = statements(self.inserts);
        let stop = AtomicBool::new(false);
        let this = &*self;
        let t0 = Instant::now();
        let ops = super::Ops::new(&[("inserts_s", "1/s", 1.0)]);
        let ends: Vec<Result<Instant, Error>> = std::thread::scope(|s| {
            let handles: Vec<_> = (1..=this.copies)
                .map(|i| {
                    let path = cx.scratch_dir().join(format!("benchmark-{i}.db"));
                    let (sql, stop, ops) = (&sql, &stop, &ops);
                    s.spawn(move || this.copy(&path, sql, stop, ops).map(|()| Instant::now()))
                })
                .collect();
            super::join_watching(cx, &stop, handles, "an SQLite copy", Some(&ops))
        });
        if cx.cancelled() {
            return Err(Error::cancelled());
        }
        // The last copy's end, not when the watcher noticed it (it polls).
        let mut end = t0;
        for e in ends {
            end = end.max(e?);
        }
        let secs = (end - t0).as_secs_f64();
        let rows = self.copies as u64 * self.passes as u64 * self.inserts;
        Ok(Report::new().value("seconds", secs).value("inserts_per_second", rows as f64 / secs).line(format!(
            "{} copies × {} passes × {} inserts, each its own transaction, in {secs:.6} s \
             (journal_mode={}, synchronous={})",
            self.copies, self.passes, self.inserts, self.journal, self.synchronous
        )))
    }
}

impl Sqlite {
    /// One connection, as one sqlite3 shell: open, run `sql`, close.
    /// Each statement of `sql` counts one operation in `ops`, when given.
    fn session(&self, path: &Path, sql: &[String], stop: &AtomicBool, ops: Option<&super::Ops>) -> Result<(), Error> {
        let conn = rusqlite::Connection::open(path).map_err(|e| db(&format!("open {}", path.display()), e))?;
        conn.pragma_update(None, "synchronous", self.synchronous).map_err(|e| db("PRAGMA synchronous", e))?;
        for (k, s) in sql.iter().enumerate() {
            if k % 256 == 255 && stop.load(Ordering::Relaxed) {
                return Err(Error::cancelled());
            }
            conn.execute_batch(s).map_err(|e| db(&format!("statement {}", k + 1), e))?;
            if let Some(o) = ops {
                o.add(0, 1);
            }
        }
        conn.close().map_err(|(_, e)| db("close", e))
    }

    /// One copy: the table, the journal mode, then the passes.
    fn copy(&self, path: &Path, sql: &[String], stop: &AtomicBool, ops: &super::Ops) -> Result<(), Error> {
        self.session(path, &[CREATE.to_string()], stop, None)?;
        self.session(path, &[format!("PRAGMA journal_mode='{}';", self.journal.to_lowercase())], stop, None)?;
        for _ in 0..self.passes {
            self.session(path, sql, stop, Some(ops))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::testing::Cx;

    #[test]
    fn every_copy_inserts_every_row_in_wal_mode() {
        let d = tempfile::tempdir().unwrap();
        let cfg: Config = [("inserts", "20"), ("copies", "2")].into_iter().collect();
        let mut w = Sqlite::new(&cfg).unwrap();
        let r = w.run(&Cx::new(d.path())).unwrap();
        assert!(r.get("seconds").unwrap() > 0.0);
        for i in 1..=2 {
            let conn = rusqlite::Connection::open(d.path().join(format!("benchmark-{i}.db"))).unwrap();
            let (n, mode): (u64, String) = conn
                .query_row("SELECT count(*), (SELECT journal_mode FROM pragma_journal_mode) FROM pts1", [], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .unwrap();
            assert_eq!((n, mode.as_str()), (60, "wal"), "3 passes of 20 rows in copy {i}");
        }
        let e = Sqlite::new(&[("inserts", "many")].into_iter().collect()).err().unwrap();
        assert_eq!(e.to_string(), "config `inserts`: `many` is not a whole number");
        let e = Sqlite::new(&[("journal", "wal")].into_iter().collect()).err().unwrap();
        assert!(e.to_string().contains("did you mean `journal_mode`"), "{e}");
    }

    #[test]
    fn statements_have_pts_shape_and_a_fixed_sequence() {
        let s = statements(2500);
        assert_eq!(s.len(), 2500);
        let shape = regex::Regex::new(
            r"^INSERT INTO 'pts1' \('I', 'DT', 'F1', 'F2'\) VALUES \('\d+', CURRENT_TIMESTAMP, '[1-9]\d{3}', '[1-9]\d{15}'\);$",
        )
        .unwrap();
        assert!(s.iter().all(|l| shape.is_match(l)), "{}", s[0]);
        // MINSTD from 1 is 48271, 182605794, 1291394886: 4271, 12605794 and 91394886.
        assert_eq!(
            s[0],
            "INSERT INTO 'pts1' ('I', 'DT', 'F1', 'F2') VALUES ('1', CURRENT_TIMESTAMP, '4271', '1260579491394886');"
        );
    }
}
