//! Checks of the `install:` section: every download verifiable (sha256) and
//! fetched over HTTPS unless the author says otherwise, generic package
//! names that the mapping knows, build steps that can run.

use super::Checker;
use crate::install::{extract, platform};
use crate::model::diag::did_you_mean;
use crate::model::profile::{BuildStep, Download, Profile};
use crate::path;
use crate::profile::yaml_index::Path;
use std::collections::{BTreeSet, HashSet};

/// Placeholders a build step may use: the install is shared by all tests of
/// the profile, so option values are not among them.
pub(crate) const BUILD_VARS: &[&str] = &["install_dir", "num_cpus", "profile_dir"];

pub(super) fn check_package_name(c: &mut Checker, at: Path, name: &str) {
    let catalog = c.packages;
    if catalog.get(name).is_none() {
        let hint = match did_you_mean(name, catalog.names()) {
            Some(s) => format!("did you mean `{s}`?"),
            None => "generic names are listed in packages.yaml (add your own in $ENGINE_HOME/packages.yaml)".into(),
        };
        c.at_value(at, format!("no generic package `{name}`"), Some(hint));
    }
}

/// The `install:` section; without one, that the executor does not use
/// `{{install_dir}}`.
pub(super) fn check(c: &mut Checker, p: &Profile, known: &BTreeSet<String>) {
    let Some(inst) = &p.install else {
        let exec = serde_json::to_string(&p.executor).unwrap_or_default();
        if exec.contains("{{install_dir}}") || exec.contains("{{ install_dir }}") {
            c.at_value(
                path!["executor"],
                "`{{install_dir}}` is used, but the profile has no `install:` section",
                Some("add `install:` with the downloads and build steps that fill the install directory".into()),
            );
        }
        return;
    };
    for (i, item) in inst.packages.iter().enumerate() {
        let at = match item.when() {
            Some(_) => path!["install", "packages", i, "name"],
            None => path!["install", "packages", i],
        };
        check_package_name(c, at, item.name());
        if let Some(w) = item.when() {
            super::check_when(c, path!["install", "packages", i, "when"], w, p, known);
        }
    }
    let mut files = HashSet::new();
    for (i, d) in inst.downloads.iter().enumerate() {
        check_download(c, i, d, &mut files);
        super::check_when(c, path!["install", "downloads", i, "when"], &d.when, p, known);
    }
    let build_known: BTreeSet<String> = BUILD_VARS.iter().map(|s| s.to_string()).collect();
    for (i, s) in inst.build.iter().enumerate() {
        check_build_step(c, i, s, &build_known);
        super::check_when(c, path!["install", "build", i, "when"], &s.when, p, known);
    }
    if inst.downloads.is_empty() && inst.build.is_empty() && inst.packages.is_empty() {
        c.at_value(
            path!["install"],
            "`install:` is empty",
            Some("list `packages`, `downloads` or `build` steps, or remove the section".into()),
        );
    }
}

/// Download `i`: a plain file name not used twice (`files`), a SHA-256,
/// mirrors engine may fetch from, a known platform, an archive when
/// `extract: true`.
fn check_download<'a>(c: &mut Checker, i: usize, d: &'a Download, files: &mut HashSet<&'a str>) {
    let at = |k: &str| path!["install", "downloads", i, k];
    let f = d.file.as_str();
    let why = match crate::model::names::check(f) {
        Err(e) => Some(e.to_string()),
        Ok(()) if f.starts_with('.') => Some("it starts with `.`".into()),
        Ok(()) if f.contains("{{") => Some("placeholders are not expanded in file names".into()),
        Ok(()) => None,
    };
    if let Some(why) = why {
        c.at_value(
            at("file"),
            format!("`{}` is not a plain file name: {why}", crate::model::names::shown(f)),
            Some("name the file as it is saved, like `tool-1.2.tar.gz` (no `/`, no leading `.`)".into()),
        );
    } else if !files.insert(f) {
        c.at_value(
            at("file"),
            format!("two downloads are named `{f}`"),
            Some("each download needs its own file name".into()),
        );
    }
    match &d.sha256 {
        None => c.at_value(
            path!["install", "downloads", i],
            format!("download `{f}` has no sha256"),
            Some("add `sha256:` with its 64 hex digits (`sha256sum FILE` prints them): engine never uses a download it cannot verify".into()),
        ),
        Some(h) if !(h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit())) => c.at_value(
            at("sha256"),
            format!("`{h}` is not a SHA-256 (64 hex digits)"),
            Some("`sha256sum FILE` prints it".into()),
        ),
        Some(_) => {}
    }
    check_urls(c, i, d);
    if let Some(pl) = &d.platform
        && let Err(bad) = platform::parse(pl)
    {
        c.at_value(
            at("platform"),
            format!("unknown platform `{}`", bad.0),
            Some(format!(
                "platforms: an OS ({}), an architecture ({}), or `os-arch`, comma-separated",
                platform::OSES.join(", "),
                platform::ARCHES.join(", ")
            )),
        );
    }
    if d.extract == Some(true) && extract::Format::of(f).is_none() {
        c.at_value(
            at("extract"),
            format!("`{f}` is not an archive engine can unpack"),
            Some(format!("archives end in {}; or set `extract: false`", extract::Format::SUFFIXES.join(", "))),
        );
    }
}

/// Download `i` has mirrors, each a URL over HTTPS (or HTTP with `insecure: true`).
fn check_urls(c: &mut Checker, i: usize, d: &Download) {
    if d.urls.is_empty() {
        c.at_value(
            path!["install", "downloads", i],
            format!("download `{}` has no urls", d.file),
            Some("list one or more mirrors: `urls: [https://…/file]`".into()),
        );
    }
    for (j, u) in d.urls.iter().enumerate() {
        let here = path!["install", "downloads", i, "urls", j];
        match reqwest::Url::parse(u) {
            Err(e) => c.at_value(here, format!("`{u}` is not a URL: {e}"), Some("write a full URL: `https://host/path/file`".into())),
            Ok(url) => match url.scheme() {
                "https" => {}
                "http" if d.insecure => {}
                "http" => c.at_value(
                    here,
                    format!("`{u}` is not HTTPS"),
                    Some("use an https:// mirror, or set `insecure: true` on this download (its sha256 still guards the content)".into()),
                ),
                s => c.at_value(here, format!("URL scheme `{s}` is not supported"), Some("use https:// (or http:// with `insecure: true`)".into())),
            },
        }
    }
}

/// Build step `i`: a program or a shell line, using only the build's placeholders.
fn check_build_step(c: &mut Checker, i: usize, s: &BuildStep, build_known: &BTreeSet<String>) {
    match (&s.program, &s.shell) {
        (Some(_), Some(_)) => c.at_key(
            path!["install", "build", i, "shell"],
            "build step sets both `program` and `shell`",
            Some("use one of them".into()),
        ),
        (None, None) => c.at_value(
            path!["install", "build", i],
            "build step has neither `program` nor `shell`",
            Some("write `- shell: \"./configure && make\"` or `- program: make`".into()),
        ),
        (None, Some(sh)) => {
            c.text(path!["install", "build", i, "shell"], sh, build_known);
            if !s.args.is_empty() {
                c.at_key(
                    path!["install", "build", i, "args"],
                    "`args` only applies to a `program` step",
                    Some("put the arguments in the shell line, or use `program:`".into()),
                );
            }
        }
        (Some(pr), None) => {
            c.text(path!["install", "build", i, "program"], pr, build_known);
            for (j, a) in s.args.iter().enumerate() {
                c.text(path!["install", "build", i, "args", j], a, build_known);
            }
        }
    }
}
