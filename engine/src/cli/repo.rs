//! `engine repo add|list|update|remove|keygen|publish`: profile repositories.

use super::term::{Shown, TermEvents};
use super::ui::{self, Prompts};
use super::{Failure, exit};
use clap::{Args, Subcommand};
use engine_ops::vocab::repo::{self, Repos, describe_age, sign};
use engine_ops::{self as ops, Context, repo::Updated};
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
    /// Folder holding `test-profiles/<id>/`, `suites/<id>.yaml` and `results/<name>/result.json`
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

pub fn run(cx: &Context, c: RepoCommand) -> Result<i32, Failure> {
    let events = TermEvents::new(false, Shown::Nothing, ui::width(), Prompts::new());
    match c {
        RepoCommand::Add(a) => {
            let add =
                ops::repo::Add { name: a.name, url: a.url, key: a.key, insecure_no_signature: a.insecure_no_signature };
            let (conf, fetched) = ops::repo::add(cx, &add, &events)?;
            outln!("added `{}` ({}): {fetched} archive(s) fetched and verified", conf.name, conf.url);
            Ok(exit::OK)
        }
        RepoCommand::List => list(cx),
        RepoCommand::Update(a) => update(cx, a, &events),
        RepoCommand::Remove(a) => {
            repo::remove(&cx.home.repos(), &a.name)?;
            outln!("removed repository `{}` and its synced copy", a.name);
            Ok(exit::OK)
        }
        RepoCommand::Keygen(a) => {
            let (pubp, keyp, pk) = sign::keygen(&a.out).map_err(Failure::error)?;
            outln!("public key: {}", pk.to_base64());
            outln!("wrote {} (give it to users: `engine repo add NAME URL --key {}`)", pubp.display(), pk.to_base64());
            outln!("wrote {} (secret, mode 0600: keep it off the server)", keyp.display());
            Ok(exit::OK)
        }
        RepoCommand::Publish(a) => publish(cx, a),
    }
}

fn list(cx: &Context) -> Result<i32, Failure> {
    let repos = Repos::load(&cx.home.repos());
    for w in &repos.warnings {
        errln!("warning: {w}");
    }
    if repos.list.is_empty() && repos.warnings.is_empty() {
        outln!("no repositories; add one with `engine repo add NAME URL --key PUBKEY`");
    }
    for l in &repos.list {
        let trust = match &l.conf.key {
            Some(k) => format!("key {k}"),
            None => "UNSIGNED: added with --insecure-no-signature, NOTHING IS CHECKED".to_string(),
        };
        outln!("{}  {}", l.conf.name, l.conf.url);
        outln!("  {trust}");
        outln!(
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

fn update(cx: &Context, a: UpdateArgs, events: &TermEvents) -> Result<i32, Failure> {
    let mut code = exit::OK;
    for (l, u) in ops::repo::update(cx, a.name.as_deref(), events)? {
        match u {
            Updated::Unchanged => outln!("{}: unchanged", l.conf.name),
            Updated::Fetched(n) => outln!("{}: updated ({n} archive(s) fetched and verified)", l.conf.name),
            Updated::Unreachable(why) => errln!("warning: {}: {why}", l.conf.name),
            Updated::Failed(f) => {
                errln!("{}: {}", l.conf.name, f.message);
                if let Some(h) = f.hint {
                    errln!("  hint: {h}");
                }
                errln!("  the copy synced {} ago is kept unchanged", describe_age(l.state.age()));
                code = exit::ERROR;
            }
        }
    }
    Ok(code)
}

fn publish(cx: &Context, a: PublishArgs) -> Result<i32, Failure> {
    let out = a.out.clone();
    let p = ops::repo::publish(
        cx,
        ops::repo::Publish { dir: a.dir, out: a.out, key: a.key, results: a.results, title: a.title },
    )?;
    for c in &p.changes {
        outln!("{:9}  {}", c.status, c.what);
    }
    outln!(
        "signed {} with key {} ({}); serve {} as it is",
        out.join("index.json").display(),
        p.key.id(),
        p.key.to_base64(),
        out.display()
    );
    Ok(exit::OK)
}
