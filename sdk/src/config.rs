//! A workload's configuration: the profile's `config:` map with the chosen
//! option values filled in, as text, read through typed accessors that name
//! the key in every error.

use crate::Error;
use crate::units::{parse_duration, parse_size};
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    values: BTreeMap<String, String>,
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Config {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Config { values: iter.into_iter().map(|(k, v)| (k.into(), v.into())).collect() }
    }
}

impl Config {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.values.insert(key.into(), value.into());
        self
    }

    /// Every key and its text.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Fails on a key outside `known`, suggesting the closest known one.
    pub fn only(&self, known: &[&str]) -> Result<(), Error> {
        for k in self.values.keys() {
            if !known.contains(&k.as_str()) {
                let hint = closest(k, known).map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
                return Err(Error::config(k, format!("unknown key{hint} (known: {})", known.join(", "))));
            }
        }
        Ok(())
    }

    /// The text of `key`, if set.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(|s| s.trim())
    }

    /// The text of `key`; an error when it is missing.
    pub fn required(&self, key: &str) -> Result<&str, Error> {
        self.text(key).ok_or_else(|| Error::config(key, "is required"))
    }

    /// `key` parsed as `T`, or `default` when it is not set (or empty).
    pub fn parse_or<T: std::str::FromStr>(&self, key: &str, default: T) -> Result<T, Error> {
        match self.text(key).filter(|s| !s.is_empty()) {
            None => Ok(default),
            Some(s) => s.parse().map_err(|_| Error::config(key, format!("`{s}` is not a {}", short_type::<T>()))),
        }
    }

    /// A yes/no value: `true`/`false`, `yes`/`no`, `1`/`0`, `on`/`off`.
    pub fn bool_or(&self, key: &str, default: bool) -> Result<bool, Error> {
        match self.text(key).map(str::to_ascii_lowercase).as_deref() {
            None | Some("") => Ok(default),
            Some("true" | "yes" | "1" | "on") => Ok(true),
            Some("false" | "no" | "0" | "off") => Ok(false),
            Some(s) => Err(Error::config(key, format!("`{s}` is not yes or no"))),
        }
    }

    /// One of `choices` (case-insensitive), or `default`.
    pub fn choice_or<'a>(&self, key: &str, choices: &[&'a str], default: &'a str) -> Result<&'a str, Error> {
        match self.text(key).filter(|s| !s.is_empty()) {
            None => Ok(default),
            Some(s) => choices
                .iter()
                .find(|c| c.eq_ignore_ascii_case(s))
                .copied()
                .ok_or_else(|| Error::config(key, format!("`{s}` is not one of {}", choices.join(", ")))),
        }
    }

    /// A size in bytes: `4096`, `4k` / `2m` / `1g` (powers of 2, as fio reads
    /// them), or exact units `KiB`, `MiB`, `GiB`, `TiB` (powers of 2) and
    /// `kB`, `MB`, `GB`, `TB` (powers of 10).
    pub fn size_or(&self, key: &str, default: u64) -> Result<u64, Error> {
        match self.text(key).filter(|s| !s.is_empty()) {
            None => Ok(default),
            Some(s) => parse_size(s).map_err(|_| {
                Error::config(
                    key,
                    format!("`{s}` is not a size; write 4096, 4k, 2MiB or 1GB (k, m, g are powers of 2)"),
                )
            }),
        }
    }

    /// A duration: `500ms`, `20s`, `2m`, `1h`, or plain seconds.
    pub fn duration_or(&self, key: &str, default: Duration) -> Result<Duration, Error> {
        match self.text(key).filter(|s| !s.is_empty()) {
            None => Ok(default),
            Some(s) => parse_duration(s)
                .map_err(|_| Error::config(key, format!("`{s}` is not a duration; write 500ms, 20s or 2m"))),
        }
    }
}

fn short_type<T>() -> &'static str {
    let n = std::any::type_name::<T>();
    match n {
        "u8" | "u16" | "u32" | "u64" | "usize" => "whole number",
        "i8" | "i16" | "i32" | "i64" | "isize" => "whole number",
        "f32" | "f64" => "number",
        _ => n.rsplit("::").next().unwrap_or(n),
    }
}

/// The known key closest to `word` (edit distance at most a third of its length).
fn closest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    let d = |a: &str, b: &str| {
        let b: Vec<char> = b.chars().collect();
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut cur = vec![i + 1];
            for (j, cb) in b.iter().enumerate() {
                cur.push((prev[j] + (ca != *cb) as usize).min(prev[j + 1] + 1).min(cur[j] + 1));
            }
            prev = cur;
        }
        prev[b.len()]
    };
    // A key that starts like the word (`journal` for `journal_mode`) counts too.
    if let Some(k) = known.iter().find(|k| k.starts_with(word) || word.starts_with(**k)) {
        return Some(k);
    }
    known.iter().map(|k| (d(word, k), *k)).filter(|(n, _)| *n <= word.len().max(3) / 3 + 1).min().map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(pairs: &[(&str, &str)]) -> Config {
        pairs.iter().map(|(k, v)| (*k, *v)).collect()
    }

    #[test]
    fn typed_access_names_the_key() {
        let c = cfg(&[("bs", "4k"), ("depth", "32"), ("direct", "yes"), ("rw", "RandRead"), ("time", "2s")]);
        assert_eq!(c.size_or("bs", 0).unwrap(), 4096);
        assert_eq!(c.parse_or::<u32>("depth", 1).unwrap(), 32);
        assert!(c.bool_or("direct", false).unwrap());
        assert_eq!(c.choice_or("rw", &["read", "randread"], "read").unwrap(), "randread");
        assert_eq!(c.duration_or("time", Duration::ZERO).unwrap(), Duration::from_secs(2));
        assert_eq!(c.parse_or::<u32>("missing", 7).unwrap(), 7);
        let e = cfg(&[("depth", "deep")]).parse_or::<u32>("depth", 1).unwrap_err();
        assert_eq!(e.to_string(), "config `depth`: `deep` is not a whole number");
        let e = cfg(&[("bs", "4q")]).size_or("bs", 0).unwrap_err();
        assert!(e.to_string().starts_with("config `bs`: `4q` is not a size"), "{e}");
        let e = cfg(&[("rw", "sideways")]).choice_or("rw", &["read", "write"], "read").unwrap_err();
        assert_eq!(e.to_string(), "config `rw`: `sideways` is not one of read, write");
        assert_eq!(e.key.as_deref(), Some("rw"));
    }

    #[test]
    fn unknown_keys_get_a_suggestion() {
        let e = cfg(&[("blocksize", "4k")]).only(&["block_size", "depth"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "config `blocksize`: unknown key; did you mean `block_size`? (known: block_size, depth)"
        );
        assert!(cfg(&[("depth", "1")]).only(&["block_size", "depth"]).is_ok());
    }

    #[test]
    fn sizes_and_durations_follow_the_shared_grammar() {
        for (text, want) in crate::units::SIZE_CASES {
            assert_eq!(
                cfg(&[("k", text)]).size_or("k", 7).ok(),
                want.or(if text.is_empty() { Some(7) } else { None }),
                "{text:?}"
            );
        }
        for (text, want) in crate::units::DURATION_CASES {
            let got = cfg(&[("k", text)]).duration_or("k", Duration::from_millis(7)).ok();
            let want = want.or(if text.is_empty() { Some(7) } else { None });
            assert_eq!(got.map(|d| d.as_millis() as u64), want, "{text:?}");
        }
    }
}
