//! A page's query parameters: each page names the ones it takes; any other,
//! a single one given twice, or a value that is not what it must be is a
//! 400 that names the parameter.

use crate::reply::HttpError;

/// `path?query` as [`Params`] reads the query: blank values dropped,
/// values trimmed, every value encoded one way; the order kept (it matters
/// to a comparison).
pub(crate) fn canonical(path: &str, query: Option<&str>) -> String {
    let mut s = form_urlencoded::Serializer::new(String::new());
    for (k, v) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        if !v.trim().is_empty() {
            s.append_pair(&k, v.trim());
        }
    }
    let q = s.finish();
    if q.is_empty() { path.to_string() } else { format!("{path}?{q}") }
}

pub(crate) struct Params {
    pairs: Vec<(String, String)>,
}

/// The most parameters one request may carry (a compare of many results).
const MAX_PAIRS: usize = 1000;

impl Params {
    /// The query `raw` (without `?`), every name in `takes`.
    pub fn parse(raw: Option<&str>, takes: &[&str]) -> Result<Params, HttpError> {
        let pairs: Vec<(String, String)> = form_urlencoded::parse(raw.unwrap_or("").as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        if pairs.len() > MAX_PAIRS {
            return Err(HttpError::bad(format!("more than {MAX_PAIRS} query parameters")));
        }
        if let Some((k, _)) = pairs.iter().find(|(k, _)| !takes.contains(&k.as_str())) {
            let shown: String = k.chars().take(60).collect();
            return Err(HttpError::bad(format!(
                "unknown parameter `{}`; this page takes: {}",
                crate::page::one_line(&shown),
                takes.join(", ")
            )));
        }
        Ok(Params { pairs })
    }

    /// The one value of `name` (blank: none).
    pub fn one(&self, name: &str) -> Result<Option<&str>, HttpError> {
        let mut vals = self.all(name).into_iter();
        let first = vals.next();
        if vals.next().is_some() {
            return Err(HttpError::bad(format!("parameter `{name}` is given more than once")));
        }
        Ok(first)
    }

    /// Every non-blank value of `name`, in order.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.pairs.iter().filter(|(k, v)| k == name && !v.trim().is_empty()).map(|(_, v)| v.trim()).collect()
    }

    /// `name` as a whole number in `range`.
    pub fn number(
        &self,
        name: &str,
        default: usize,
        range: std::ops::RangeInclusive<usize>,
    ) -> Result<usize, HttpError> {
        match self.one(name)? {
            None => Ok(default),
            Some(v) => v.parse::<usize>().ok().filter(|n| range.contains(n)).ok_or_else(|| {
                HttpError::bad(format!(
                    "parameter `{name}`: `{}` is not a whole number from {} to {}",
                    crate::page::one_line(v),
                    range.start(),
                    range.end()
                ))
            }),
        }
    }

    /// Every `name=KEY=VALUE`, split.
    pub fn pairs_of(&self, name: &str) -> Result<Vec<(String, String)>, HttpError> {
        self.all(name)
            .into_iter()
            .map(|v| match v.split_once('=') {
                Some((k, val)) if !k.trim().is_empty() => Ok((k.trim().to_string(), val.trim().to_string())),
                _ => {
                    Err(HttpError::bad(format!("parameter `{name}`: `{}` is not KEY=VALUE", crate::page::one_line(v))))
                }
            })
            .collect()
    }

    /// `name` as a moment: a date (`2026-12-06`, its midnight UTC) or an
    /// RFC 3339 time; seconds since the epoch.
    pub fn time(&self, name: &str) -> Result<Option<i64>, HttpError> {
        let Some(v) = self.one(name)? else { return Ok(None) };
        let text = if v.len() == 10 { format!("{v}T00:00:00Z") } else { v.to_string() };
        humantime::parse_rfc3339_weak(&text)
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| Some(d.as_secs() as i64))
            .ok_or_else(|| {
                HttpError::bad(format!(
                    "parameter `{name}`: `{}` is not a date (YYYY-MM-DD) or an RFC 3339 time",
                    crate::page::one_line(v)
                ))
            })
    }

    /// The query again, `name` set to `value` (for paging links).
    pub fn with(&self, name: &str, value: &str) -> String {
        let mut s = form_urlencoded::Serializer::new(String::new());
        for (k, v) in self.pairs.iter().filter(|(k, _)| k != name) {
            s.append_pair(k, v);
        }
        s.append_pair(name, value);
        s.finish()
    }

    /// The query as given (for the JSON and CSV links).
    pub fn query(&self) -> String {
        let mut s = form_urlencoded::Serializer::new(String::new());
        for (k, v) in &self.pairs {
            s.append_pair(k, v);
        }
        s.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_query_are_one_page() {
        let one = canonical("/history", Some("test=io"));
        for q in ["test=io&", "test=+io", "test=%69o", "test=io&test=", "&&test=io", "test=io+"] {
            assert_eq!(canonical("/history", Some(q)), one, "{q}");
        }
        assert_ne!(canonical("/compare", Some("r=a&r=b")), canonical("/compare", Some("r=b&r=a")));
        assert_eq!(canonical("/results", Some("")), "/results");
    }
}
