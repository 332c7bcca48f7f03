//! Searching the saved results through their [`Index`]: by free text, test
//! or profile, identifier, tag, hardware or software field and date; sorted
//! and paged. Every value given is a bound parameter, never SQL text.

use super::index::{Index, IndexError};
use rusqlite::types::Value;

/// How the results found are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sort {
    #[default]
    Newest,
    Oldest,
    Name,
    /// Most tests first.
    Tests,
    /// Most identifiers (hosts, configurations) first.
    Identifiers,
}

impl Sort {
    pub const ALL: [(&'static str, Sort); 5] = [
        ("newest", Sort::Newest),
        ("oldest", Sort::Oldest),
        ("name", Sort::Name),
        ("tests", Sort::Tests),
        ("identifiers", Sort::Identifiers),
    ];

    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, s)| *s == self).map_or("newest", |(n, _)| n)
    }

    fn order_by(self) -> &'static str {
        match self {
            // NULL (a damaged result) sorts last going down: the index on `started` serves it.
            Sort::Newest => "started DESC, name",
            Sort::Oldest => "started IS NULL, started, name",
            Sort::Name => "name",
            Sort::Tests => "tests DESC, name",
            Sort::Identifiers => "identifiers DESC, name",
        }
    }
}

/// A search; every condition given must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Search {
    /// Found anywhere: name, title, description, tests, profiles,
    /// identifiers, field values, `key=value` of tags (case ignored).
    pub text: Option<String>,
    /// A test identity, profile id or test title.
    pub test: Option<String>,
    pub identifier: Option<String>,
    /// `key`, `value`: a system tagged so.
    pub tags: Vec<(String, String)>,
    /// A hardware or software field `key` whose value contains `value`
    /// (case ignored).
    pub fields: Vec<(String, String)>,
    /// Started at or after / before, seconds since the epoch.
    pub from: Option<i64>,
    pub until: Option<i64>,
    pub sort: Sort,
    /// From 1.
    pub page: usize,
    pub per_page: usize,
}

/// A result found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Row {
    pub name: String,
    pub title: String,
    /// The first system's start, seconds since the epoch.
    pub started: Option<i64>,
    pub identifiers: i64,
    pub tests: i64,
    /// The distinct profiles of its tests.
    pub profiles: Vec<String>,
    /// Why its file cannot be read (it is listed, never served half).
    pub damaged: Option<String>,
}

/// One page of what a search found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Found {
    pub total: usize,
    pub page: usize,
    pub per_page: usize,
    pub rows: Vec<Row>,
}

impl Search {
    /// The WHERE clause and its parameters.
    fn clause(&self) -> (String, Vec<Value>) {
        let mut w = vec!["1".to_string()];
        let mut p: Vec<Value> = Vec::new();
        let mut add = |sql: &str, values: Vec<String>| {
            w.push(sql.to_string());
            p.extend(values.into_iter().map(Value::Text));
        };
        if let Some(t) = self.text.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            let t = t.to_lowercase();
            // The trigram index finds three characters or more; fewer are looked for row by row.
            if t.chars().count() >= 3 {
                let phrase = format!("\"{}\"", t.replace('"', "\"\""));
                add("rowid IN (SELECT rowid FROM results_text WHERE results_text MATCH ?)", vec![phrase]);
            } else {
                add("rowid IN (SELECT rowid FROM results_text WHERE instr(text, ?) > 0)", vec![t]);
            }
        }
        // Each condition a set of names made once (not a lookup per result).
        if let Some(t) = &self.test {
            add(
                "name IN (SELECT result FROM tests WHERE test = ? UNION SELECT result FROM tests WHERE profile = ?
                 UNION SELECT result FROM tests WHERE title = ?)",
                vec![t.clone(), t.clone(), t.clone()],
            );
        }
        if let Some(i) = &self.identifier {
            add("name IN (SELECT result FROM systems WHERE identifier = ?)", vec![i.clone()]);
        }
        for (k, v) in &self.tags {
            add("name IN (SELECT result FROM tags WHERE key = ? AND value = ?)", vec![k.clone(), v.clone()]);
        }
        for (k, v) in &self.fields {
            add(
                "name IN (SELECT result FROM fields WHERE key = ? AND instr(lower(value), ?) > 0)",
                vec![k.clone(), v.to_lowercase()],
            );
        }
        let mut w_int = |sql: &str, v: i64| {
            w.push(sql.to_string());
            p.push(Value::Integer(v));
        };
        if let Some(f) = self.from {
            w_int("started >= ?", f);
        }
        if let Some(u) = self.until {
            w_int("started < ?", u);
        }
        (w.join(" AND "), p)
    }
}

impl Index {
    /// The page of results `s` asks for.
    pub fn search(&self, s: &Search) -> Result<Found, IndexError> {
        let (conn, path) = self.conn();
        let sql = |source| IndexError::Sql { path: path.to_path_buf(), source };
        let (clause, params) = s.clause();
        let per_page = s.per_page.clamp(1, 1000);
        let page = s.page.max(1);
        // The conditions are worked out once: the page and the count are both
        // read from the rows they found.
        let query = format!(
            "WITH hit AS MATERIALIZED (SELECT rowid AS id FROM results WHERE {clause})
             SELECT (SELECT count(*) FROM hit), name, title, started, identifiers, tests, damaged, profiles
             FROM results WHERE rowid IN (SELECT id FROM hit) ORDER BY {} LIMIT ? OFFSET ?",
            s.sort.order_by()
        );
        let mut all = params.clone();
        all.push(Value::Integer(per_page as i64));
        all.push(Value::Integer((page - 1).saturating_mul(per_page) as i64));
        let mut total = 0i64;
        let mut st = conn.prepare_cached(&query).map_err(sql)?;
        let rows = st
            .query_map(rusqlite::params_from_iter(all.iter()), |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    Row {
                        name: r.get(1)?,
                        title: r.get(2)?,
                        started: r.get(3)?,
                        identifiers: r.get(4)?,
                        tests: r.get(5)?,
                        damaged: r.get(6)?,
                        profiles: r
                            .get::<_, String>(7)?
                            .split('\n')
                            .filter(|p| !p.is_empty())
                            .map(str::to_string)
                            .collect(),
                    },
                ))
            })
            .map_err(sql)?
            .map(|r| {
                r.map(|(n, row)| {
                    total = n;
                    row
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(sql)?;
        // A page past the end has no row to carry the count.
        if rows.is_empty() && page > 1 {
            total = conn
                .prepare_cached(&format!("SELECT count(*) FROM results WHERE {clause}"))
                .and_then(|mut st| st.query_row(rusqlite::params_from_iter(params.iter()), |r| r.get(0)))
                .map_err(sql)?;
        }
        Ok(Found { total: total as usize, page, per_page, rows })
    }

    /// The readable results that hold test `test` (identity, profile or
    /// title), oldest first.
    pub fn holding(&self, test: &str) -> Result<Vec<String>, IndexError> {
        let (conn, path) = self.conn();
        let sql = |source| IndexError::Sql { path: path.to_path_buf(), source };
        let mut st = conn
            .prepare_cached(
                "SELECT name FROM results WHERE damaged IS NULL AND name IN (SELECT result FROM tests WHERE test = ?1
                 UNION SELECT result FROM tests WHERE profile = ?1 UNION SELECT result FROM tests WHERE title = ?1)
                 ORDER BY started IS NULL, started, name",
            )
            .map_err(sql)?;
        let names = st.query_map([test], |r| r.get(0)).map_err(sql)?;
        names.collect::<Result<_, _>>().map_err(sql)
    }

    /// Every distinct test identity with its profile and title, for the
    /// pages that pick one.
    pub fn tests(&self) -> Result<Vec<(String, String, String)>, IndexError> {
        let (conn, path) = self.conn();
        let sql = |source| IndexError::Sql { path: path.to_path_buf(), source };
        let mut st = conn
            .prepare_cached("SELECT test, min(profile), min(title) FROM tests GROUP BY test ORDER BY test")
            .map_err(sql)?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).map_err(sql)?;
        rows.collect::<Result<_, _>>().map_err(sql)
    }
}
