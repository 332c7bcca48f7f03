//! `engine repo add|list|update|remove|keygen|publish`: profile repositories.

use super::{Failure, exit};
use clap::{Args, Subcommand};
use engine::home::Home;
use engine::repo::{self, RepoConf, RepoError, Repos, describe_age, sign, sync};
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum RepoCommand {
    /// Add a repository (a folder or an HTTP(S) URL holding index.json) under NAME and sync it
    Add(AddArgs),
    /// List the added repositories: URL, key, last sync, what they hold
    List,
    /// Sync one repository or all (one conditional request when nothing changed)
    Update(UpdateArgs),
    /// Remove a repository and its synced copy
    Remove(RemoveArgs),
    /// Make a minisign key pair for publishing: PREFIX.pub (give it to users) and PREFIX.key (keep it)
    Keygen(KeygenArgs),
    /// Pack DIR's profiles, suites and results reproducibly into OUT and write and sign its index
    Publish(PublishArgs),
}

#[derive(Args, Debug)]
pub struct AddArgs {
    /// What to call it: `NAME/fio`, `NAME/suite/disk`
    pub name: String,
    /// A folder, `file:///path`, or `https://host/path` holding index.json
    pub url: String,
    /// The publisher's public key: `RW…` or a minisign .pub file
    #[arg(long, value_name = "PUBKEY")]
    pub key: Option<String>,
    /// Add it without a key: its index is not checked (repo list says so)
    #[arg(long, conflicts_with = "key")]
    pub insecure_no_signature: bool,
}

#[derive(Args, Debug)]
pub struct UpdateArgs {
    /// The repository (default: all)
    pub name: Option<String>,
}

#[derive(Args, Debug)]
pub struct RemoveArgs {
    pub name: String,
}

#[derive(Args, Debug)]
pub struct KeygenArgs {
    /// Where to write the keys: PREFIX.pub and PREFIX.key (never replaced)
    #[arg(long, value_name = "PREFIX", default_value = "repo")]
    pub out: PathBuf,
}

#[derive(Args, Debug)]
pub struct PublishArgs {
    /// Folder holding test-profiles/<id>/, suites/<id>.yaml and results/<name>/result.json
    pub dir: PathBuf,
    /// The repository folder to write (archives, index.json, index.json.minisig); upload it as it is
    #[arg(long, value_name = "OUT")]
    pub out: PathBuf,
    /// The minisign secret key (from `engine repo keygen`, or minisign's own)
    #[arg(long, value_name = "SECRET")]
    pub key: PathBuf,
    /// Also publish this saved result (repeatable): users run `engine benchmark REPO/results/NAME`
    #[arg(long = "result", value_name = "NAME")]
    pub results: Vec<String>,
    /// The repository's title, in its index
    #[arg(long)]
    pub title: Option<String>,
}

pub fn run(c: RepoCommand) -> Result<i32, Failure> {
    let home = Home::from_env();
    match c {
        RepoCommand::Add(a) => add(&home, a),
        RepoCommand::List => list(&home),
        RepoCommand::Update(a) => update(&home, a),
        RepoCommand::Remove(a) => {
            repo::remove(&home.repos(), &a.name).map_err(failure)?;
            println!("removed repository `{}` and its synced copy", a.name);
            Ok(exit::OK)
        }
        RepoCommand::Keygen(a) => {
            let (pubp, keyp, pk) = sign::keygen(&a.out).map_err(|e| Failure::new(exit::ERROR, e.to_string()))?;
            println!("public key: {}", pk.to_base64());
            println!(
                "wrote {} (give it to users: `engine repo add NAME URL --key {}`)",
                pubp.display(),
                pk.to_base64()
            );
            println!("wrote {} (secret, mode 0600: keep it off the server)", keyp.display());
            Ok(exit::OK)
        }
        RepoCommand::Publish(a) => publish(&home, a),
    }
}

/// A repository error as the command line reports it.
pub fn failure(e: RepoError) -> Failure {
    let code = match &e {
        RepoError::BadName { .. } | RepoError::Exists(_) | RepoError::Unknown(_) | RepoError::NoKey { .. } => {
            exit::USAGE
        }
        _ => exit::ERROR,
    };
    let f = Failure::new(code, e.to_string());
    match e.hint() {
        Some(h) => f.hint(h),
        None => f,
    }
}

fn add(home: &Home, a: AddArgs) -> Result<i32, Failure> {
    repo::check_name(&a.name, &engine::profile::resolve::builtin_ids()).map_err(failure)?;
    // A folder is stored absolute, so the repository works from anywhere.
    let url = if a.url.contains("://") {
        a.url.clone()
    } else {
        std::fs::canonicalize(&a.url).map(|p| p.display().to_string()).unwrap_or(a.url.clone())
    };
    let key = match &a.key {
        Some(k) => Some(sign::PublicKey::parse(k).map_err(|e| Failure::new(exit::USAGE, e.to_string()))?.to_base64()),
        None => None,
    };
    let conf = RepoConf { name: a.name.clone(), url, key, insecure: a.insecure_no_signature };
    let s = sync::add(&home.repos(), &conf).map_err(failure)?;
    if conf.insecure {
        eprintln!("WARNING: `{}` was added WITHOUT a key: nothing it serves is checked", conf.name);
    }
    println!("added `{}` ({}): {} archive(s) fetched and verified", conf.name, conf.url, s.fetched.len());
    Ok(exit::OK)
}

fn list(home: &Home) -> Result<i32, Failure> {
    let repos = Repos::load(&home.repos());
    for w in &repos.warnings {
        eprintln!("warning: {w}");
    }
    if repos.list.is_empty() && repos.warnings.is_empty() {
        println!("no repositories; add one with `engine repo add NAME URL --key PUBKEY`");
    }
    for l in &repos.list {
        let trust = match &l.conf.key {
            Some(k) => format!("key {k}"),
            None => "UNSIGNED: added with --insecure-no-signature, NOTHING IS CHECKED".to_string(),
        };
        println!("{}  {}", l.conf.name, l.conf.url);
        println!("  {trust}");
        println!(
            "  synced {} ago; index sha256 {}; {} profile(s), {} suite(s), {} result(s)",
            describe_age(l.state.age()),
            l.state.index_sha256,
            l.index.profiles.len(),
            l.index.suites.len(),
            l.index.results.len()
        );
    }
    Ok(if repos.warnings.is_empty() { exit::OK } else { exit::ERROR })
}

fn update(home: &Home, a: UpdateArgs) -> Result<i32, Failure> {
    let repos = Repos::load(&home.repos());
    for w in &repos.warnings {
        eprintln!("warning: {w}");
    }
    let targets: Vec<&repo::Local> = match &a.name {
        Some(n) => vec![repos.get(n).ok_or_else(|| failure(RepoError::Unknown(n.clone())))?],
        None => repos.list.iter().collect(),
    };
    let mut code = exit::OK;
    for l in targets {
        match sync::update(l) {
            Ok(s) if s.unchanged => println!("{}: unchanged", l.conf.name),
            Ok(s) => println!("{}: updated ({} archive(s) fetched and verified)", l.conf.name, s.fetched.len()),
            Err(RepoError::Fetch(f)) if f.is_unreachable() => {
                eprintln!("warning: {}: {f}; using the copy synced {} ago", l.conf.name, describe_age(l.state.age()))
            }
            Err(e) => {
                let f = failure(e);
                eprintln!("{}: {}", l.conf.name, f.message);
                if let Some(h) = f.hint {
                    eprintln!("  hint: {h}");
                }
                eprintln!("  the copy synced {} ago is kept unchanged", describe_age(l.state.age()));
                code = exit::ERROR;
            }
        }
    }
    Ok(code)
}

fn publish(home: &Home, a: PublishArgs) -> Result<i32, Failure> {
    let key = sign::SecretKey::load(&a.key).map_err(|e| Failure::new(exit::USAGE, e.to_string()))?;
    let store = engine::result::Store::new(home.results());
    let mut results = Vec::new();
    for n in &a.results {
        if !store.exists(n) {
            return Err(super::store_failure(engine::result::StoreError::NotFound(n.clone())));
        }
        results.push((store.dir(n).join("result.json"), n.clone()));
    }
    std::fs::create_dir_all(&a.out)
        .map_err(|e| Failure::new(exit::ERROR, format!("cannot create {}: {e}", a.out.display())))?;
    let o = engine::repo::publish::Options { dir: &a.dir, out: &a.out, key: &key, results, title: a.title };
    let changes = engine::repo::publish::publish(&o).map_err(failure)?;
    for c in &changes {
        println!("{:9}  {}", c.status, c.what);
    }
    println!(
        "signed {} with key {} ({}); serve {} as it is",
        a.out.join("index.json").display(),
        key.public().id(),
        key.public().to_base64(),
        a.out.display()
    );
    Ok(exit::OK)
}
