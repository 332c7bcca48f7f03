//! `sqlite`: timed insertions through SQLite linked into engine (rusqlite,
//! bundled), with the statements and counts of the external `sqlite`
//! profile — each INSERT its own transaction, rollback journal,
//! synchronous=FULL — so the two can stand side by side in one result.
//! The time covers the inserts only, not starting a shell.

use engine_sdk::{Config, Context, Error, Report, Workload};

pub struct Sqlite {
    inserts: u64,
    synchronous: &'static str,
    journal: &'static str,
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
    const KEYS: &'static [&'static str] = &["inserts", "synchronous", "journal_mode"];
    const RESULTS: &'static [&'static str] = &["seconds", "inserts_per_second"];

    fn new(config: &Config) -> Result<Self, Error> {
        config.only(Self::KEYS)?;
        let inserts = config.parse_or::<u64>("inserts", 12_500)?;
        if inserts == 0 {
            return Err(Error::config("inserts", "must be at least 1"));
        }
        Ok(Sqlite {
            inserts,
            synchronous: config.choice_or("synchronous", &["OFF", "NORMAL", "FULL", "EXTRA"], "FULL")?,
            journal: config.choice_or("journal_mode", &["DELETE", "TRUNCATE", "PERSIST", "WAL", "MEMORY"], "DELETE")?,
        })
    }

    fn run(&mut self, cx: &dyn Context) -> Result<Report, Error> {
        let path = cx.scratch_dir().join("bench.db");
        let conn = rusqlite::Connection::open(&path).map_err(|e| db("open bench.db", e))?;
        conn.execute_batch(&format!(
            "PRAGMA journal_mode={}; PRAGMA synchronous={}; CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT);",
            self.journal, self.synchronous
        ))
        .map_err(|e| db("create the table", e))?;
        let t0 = cx.elapsed();
        for i in 1..=self.inserts {
            if i % 256 == 0 && cx.cancelled() {
                return Err(Error::cancelled());
            }
            // The statement as text, as the sqlite3 shell reads it.
            let sql = format!("INSERT INTO t(a, b) VALUES({i}, 'row {i:08} of the timed insert test');");
            conn.execute(&sql, []).map_err(|e| db(&format!("insert {i}"), e))?;
        }
        let secs = (cx.elapsed() - t0).as_secs_f64();
        let rows: u64 = conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).map_err(|e| db("count", e))?;
        if rows != self.inserts {
            return Err(Error::failed(format!("{rows} rows after {} inserts", self.inserts)));
        }
        Ok(Report::new().value("seconds", secs).value("inserts_per_second", self.inserts as f64 / secs).line(format!(
            "{} inserts, each its own transaction, in {secs:.6} s (journal_mode={}, synchronous={})",
            self.inserts, self.journal, self.synchronous
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::testing::Cx;

    #[test]
    fn inserts_every_row_in_its_own_transaction() {
        let d = tempfile::tempdir().unwrap();
        let cfg: Config = [("inserts", "50")].into_iter().collect();
        let mut w = Sqlite::new(&cfg).unwrap();
        let r = w.run(&Cx::new(d.path())).unwrap();
        assert!(r.get("seconds").unwrap() > 0.0);
        let conn = rusqlite::Connection::open(d.path().join("bench.db")).unwrap();
        let (n, last): (u64, String) =
            conn.query_row("SELECT count(*), max(b) FROM t", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        assert_eq!((n, last.as_str()), (50, "row 00000050 of the timed insert test"));
        let e = Sqlite::new(&[("inserts", "many")].into_iter().collect()).err().unwrap();
        assert_eq!(e.to_string(), "config `inserts`: `many` is not a whole number");
        let e = Sqlite::new(&[("journal", "wal")].into_iter().collect()).err().unwrap();
        assert!(e.to_string().contains("did you mean `journal_mode`"), "{e}");
    }
}
