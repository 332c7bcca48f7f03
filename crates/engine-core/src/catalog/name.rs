//! A reference's text, classified once into what kind of thing it names and
//! its parts. Each kind is resolved by one function (`reference.rs` for a
//! command line's reference, `Catalog::profile_of`/`suite_of` for a
//! profile or suite): nothing below parses the text again.
//!
//! In order: `suite/ID[@V]` (also `suite/REPO/ID`), `result/NAME`,
//! `REPO/suite/ID[@V]`, `REPO/results/NAME`, `REPO/ID[@V]` (when `REPO` is
//! an added repository), a path to a profile or suite file (or a profile
//! folder), `X/…` with no repository `X`, and a bare word `ID[@V]`: a
//! profile, else a saved result, else a suite.

use crate::repo::{Local, Repos};
use std::path::Path;

#[derive(Debug, Clone, Copy)]
pub enum Name<'a> {
    /// A suite, local or in `repo`.
    Suite { repo: Option<&'a Local>, id: &'a str, want: Option<&'a str> },
    /// `REPO/ID[@V]`: a profile of an added repository.
    RepoProfile { repo: &'a Local, id: &'a str, want: Option<&'a str> },
    /// `REPO/results/NAME`: a result a repository publishes.
    SharedResult { repo: &'a Local, name: &'a str },
    /// `result/NAME`: a saved result.
    Result(&'a str),
    /// A profile or suite file, or a profile folder.
    Path(&'a Path),
    /// `X/…` where no repository `X` is added.
    NoRepo { repo: &'a str },
    /// A bare word: a profile id (with its version), a saved result's name or a suite id.
    Word { text: &'a str, id: &'a str, want: Option<&'a str> },
}

/// `fio@1.2` → (`fio`, Some(`1.2`)).
pub fn split_version(reference: &str) -> (&str, Option<&str>) {
    match reference.split_once('@') {
        Some((i, v)) => (i, Some(v)),
        None => (reference, None),
    }
}

fn looks_like_path(r: &str) -> bool {
    r.ends_with(".yaml") || r.starts_with('.') || r.starts_with('/') || (r.contains('/') && Path::new(r).exists())
}

/// What `text` names, given the repositories added here.
pub fn classify<'a>(text: &'a str, repos: &'a Repos) -> Name<'a> {
    let repo_of = |t: &'a str| t.split_once('/').and_then(|(name, rest)| repos.get(name).map(|l| (l, rest)));
    if let Some(rest) = text.strip_prefix("suite/") {
        // `suite/team/disk` is team's, as `team/suite/disk` is.
        let (repo, rest) = match repo_of(rest) {
            Some((l, r)) => (Some(l), r.strip_prefix("suite/").unwrap_or(r)),
            None => (None, rest),
        };
        let (id, want) = split_version(rest);
        return Name::Suite { repo, id, want };
    }
    if let Some(name) = text.strip_prefix("result/") {
        return Name::Result(name);
    }
    if let Some((repo, rest)) = repo_of(text) {
        if let Some(s) = rest.strip_prefix("suite/") {
            let (id, want) = split_version(s);
            return Name::Suite { repo: Some(repo), id, want };
        }
        if let Some(name) = rest.strip_prefix("results/") {
            return Name::SharedResult { repo, name };
        }
        let (id, want) = split_version(rest);
        return Name::RepoProfile { repo, id, want };
    }
    if looks_like_path(text) {
        return Name::Path(Path::new(text));
    }
    if let Some((repo, _)) = text.split_once('/') {
        return Name::NoRepo { repo };
    }
    let (id, want) = split_version(text);
    Name::Word { text, id, want }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_told_apart_once() {
        let none = Repos { root: Default::default(), list: Vec::new(), warnings: Vec::new() };
        assert!(matches!(classify("suite/disk@1.0", &none), Name::Suite { repo: None, id: "disk", want: Some("1.0") }));
        assert!(matches!(classify("result/r1", &none), Name::Result("r1")));
        assert!(matches!(classify("./p/profile.yaml", &none), Name::Path(_)));
        assert!(matches!(classify("team/fio", &none), Name::NoRepo { repo: "team" }));
        assert!(matches!(classify("fio@1", &none), Name::Word { text: "fio@1", id: "fio", want: Some("1") }));
    }
}
