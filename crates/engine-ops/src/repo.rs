//! Profile repositories as operations: adding one (synced and checked at
//! once), updating the copies, and publishing a folder of profiles, suites
//! and results as a signed repository.

use crate::{Context, Failure, exit};
use engine::events::Events;
use engine::repo::{self, Local, RepoConf, RepoError, Repos, describe_age, sign, sync};
use std::path::PathBuf;

/// `engine repo add`.
pub struct Add {
    pub name: String,
    /// A folder, `file:///path` or an HTTP(S) URL.
    pub url: String,
    /// `RW…` or a minisign `.pub` file.
    pub key: Option<String>,
    pub insecure_no_signature: bool,
}

/// Adds and syncs a repository; returns its configuration and how many archives were fetched.
pub fn add(cx: &Context, a: &Add, events: &dyn Events) -> Result<(RepoConf, usize), Failure> {
    repo::check_name(&a.name, &engine::catalog::builtin_ids())?;
    // A folder is stored absolute, so the repository works from anywhere.
    let url = if a.url.contains("://") {
        a.url.clone()
    } else {
        std::fs::canonicalize(&a.url).map(|p| p.display().to_string()).unwrap_or(a.url.clone())
    };
    let key = match &a.key {
        Some(k) => Some(sign::PublicKey::parse(k).map_err(|e| Failure::usage(e.to_string()))?.to_base64()),
        None => None,
    };
    let conf = RepoConf { name: a.name.clone(), url, key, insecure: a.insecure_no_signature };
    let s = sync::add(&cx.home.repos(), &conf, &cx.settings.downloads)?;
    if conf.insecure {
        events.message(&format!("WARNING: `{}` was added WITHOUT a key: nothing it serves is checked", conf.name));
    }
    Ok((conf, s.fetched.len()))
}

/// How updating one repository went.
pub enum Updated {
    Unchanged,
    /// Archives fetched and verified.
    Fetched(usize),
    /// Not reachable: the older copy stays in use.
    Unreachable(String),
    /// Refused or failed: the copy is kept unchanged.
    Failed(Failure),
}

/// Syncs `name` (or every repository); each one's outcome in order.
pub fn update(cx: &Context, name: Option<&str>, events: &dyn Events) -> Result<Vec<(Local, Updated)>, Failure> {
    let repos = Repos::load(&cx.home.repos());
    for w in &repos.warnings {
        events.message(&format!("warning: {w}"));
    }
    let targets: Vec<Local> = match name {
        Some(n) => vec![repos.get(n).cloned().ok_or_else(|| RepoError::Unknown(n.to_string()))?],
        None => repos.list.clone(),
    };
    Ok(targets
        .into_iter()
        .map(|l| {
            let u = match sync::update(&l, &cx.settings.downloads) {
                Ok(s) if s.unchanged => Updated::Unchanged,
                Ok(s) => Updated::Fetched(s.fetched.len()),
                Err(RepoError::Fetch(f)) if f.is_unreachable() => {
                    Updated::Unreachable(format!("{f}; using the copy synced {} ago", describe_age(l.state.age())))
                }
                Err(e) => Updated::Failed(e.into()),
            };
            (l, u)
        })
        .collect())
}

/// `engine repo publish`.
pub struct Publish {
    /// Holds `test-profiles/<id>/`, `suites/<id>.yaml`, `results/<name>/result.json`.
    pub dir: PathBuf,
    /// The repository folder to write.
    pub out: PathBuf,
    /// The minisign secret key.
    pub key: PathBuf,
    /// Saved results to publish too.
    pub results: Vec<String>,
    pub title: Option<String>,
}

/// What publishing wrote, and the key it signed with.
pub struct Published {
    pub changes: Vec<repo::publish::Change>,
    pub key: sign::PublicKey,
}

pub fn publish(cx: &Context, a: Publish) -> Result<Published, Failure> {
    let key = sign::SecretKey::load(&a.key, cx.settings.key_password.as_deref())
        .map_err(|e| Failure::usage(e.to_string()))?;
    let mut results = Vec::new();
    for n in &a.results {
        if !cx.store.exists(n) {
            return Err(engine::store::StoreError::NotFound(n.clone()).into());
        }
        results.push((cx.store.path(n), n.clone()));
    }
    std::fs::create_dir_all(&a.out)
        .map_err(|e| Failure::new(exit::ERROR, format!("cannot create {}: {e}", a.out.display())))?;
    let o = repo::publish::Options {
        dir: &a.dir,
        out: &a.out,
        key: &key,
        results,
        title: a.title,
        packages: cx.packages(),
    };
    let changes = repo::publish::publish(&o)?;
    Ok(Published { changes, key: key.public() })
}
