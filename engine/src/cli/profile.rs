//! `engine profile new|import-pts`: writing profiles.

use super::{Failure, exit};
use clap::{Args, Subcommand};
use engine_ops::Context;
use engine_ops::vocab::authoring::{pts_import, scaffold};
use std::path::{Path, PathBuf};

#[derive(Subcommand, Debug)]
pub enum ProfileCommand {
    /// Scaffold ROOT/test-profiles/NAME/profile.yaml from a command line
    New(NewArgs),
    /// Convert PTS test-profile folders into `ROOT/test-profiles/<id>/` and say what did not convert
    ImportPts(ImportArgs),
}

#[derive(Args, Debug)]
pub struct NewArgs {
    /// The profile id (lower case, digits, `-`)
    pub name: String,
    /// The command the test runs, as one string: "dd if=/dev/zero of=out bs=1M count=64"
    #[arg(long, value_name = "CMD")]
    pub from_command: String,
    /// Run the command once (at most 60 s, in a temporary folder) to make a parser from its output
    #[arg(long)]
    pub run: bool,
    /// Folder to write test-profiles/NAME/ into
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// PTS test-profile folders (each holding test-definition.xml)
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Folder to write `test-profiles/<id>/` into
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
}

pub fn run(cx: &Context, c: ProfileCommand) -> Result<i32, Failure> {
    match c {
        ProfileCommand::New(a) => new(cx, a),
        ProfileCommand::ImportPts(a) => import(cx, a),
    }
}

/// Writes `files` into ROOT/test-profiles/ID/ (refusing to replace a profile),
/// then validates it; returns the profile file.
fn write_profile(root: &Path, id: &str, yaml: &str, files: &[(String, Vec<u8>)]) -> Result<PathBuf, Failure> {
    let dir = root.join("test-profiles").join(id);
    let file = dir.join("profile.yaml");
    if file.exists() {
        return Err(Failure::new(exit::USAGE, format!("{} exists; engine never replaces a profile", file.display()))
            .hint("remove it, or pick another --root"));
    }
    let werr = |p: &Path, e: std::io::Error| Failure::new(exit::ERROR, format!("cannot write {}: {e}", p.display()));
    std::fs::create_dir_all(&dir).map_err(|e| werr(&dir, e))?;
    for (name, bytes) in files {
        let p = dir.join(name);
        engine_ops::vocab::store::write_atomic(&p, bytes).map_err(Failure::from)?;
    }
    engine_ops::vocab::store::write_atomic(&file, yaml.as_bytes())
        .map_err(|e| Failure::new(exit::ERROR, e.to_string()))?;
    Ok(file)
}

fn validate(cx: &Context, file: &Path) -> Result<(), String> {
    engine_ops::vocab::profile::load::profile_from_path(file, cx.packages()).map(|_| ()).map_err(|e| e.to_string())
}

fn new(cx: &Context, a: NewArgs) -> Result<i32, Failure> {
    if !engine_ops::vocab::profile::validate::is_valid_id(&a.name) {
        return Err(Failure::new(exit::USAGE, format!("`{}` is not a profile id", a.name))
            .hint("use lower-case letters, digits and `-`, like `dd-write`"));
    }
    let words: Vec<String> = a.from_command.split_whitespace().map(str::to_string).collect();
    if words.is_empty() {
        return Err(Failure::new(exit::USAGE, "--from-command is empty")
            .hint("give the command: --from-command \"dd if=/dev/zero of=out bs=1M count=64\""));
    }
    let output = if a.run {
        // A profile made from a failing run would measure its error message.
        let o = scaffold::run_once(&words, std::time::Duration::from_secs(60)).map_err(|e| {
            Failure::error(e.to_string())
                .hint("make the command work first, or leave out --run (the wall time is then the result)")
        })?;
        if scaffold::parser_for(&o.stdout).or_else(|| scaffold::parser_for(&o.stderr)).is_none() {
            return Err(Failure::error(format!(
                "the sample run of `{}` printed no number to read a result from",
                words.join(" ")
            ))
            .hint("leave out --run: the profile then times the command (its wall time)"));
        }
        Some(o)
    } else {
        None
    };
    // The editor line points at the schema this engine installs (absolute:
    // the profile may be written anywhere).
    let schema = match engine_ops::vocab::schema::install(&cx.home.schemas()) {
        Ok(p) => format!("file://{}", std::path::absolute(&p).unwrap_or(p).display()),
        Err(e) => {
            errln!("warning: cannot write the schemas into {}: {e}", cx.home.schemas().display());
            format!("file://{}/profile.schema.json", cx.home.schemas().display())
        }
    };
    let yaml = scaffold::profile_yaml(&a.name, &words, output.as_ref(), &schema);
    let file = write_profile(&a.root, &a.name, &yaml, &[])?;
    outln!("wrote {}", file.display());
    match validate(cx, &file) {
        Ok(()) => {
            outln!("it validates; edit the title, unit and options, then `engine benchmark {}`", file.display());
            Ok(exit::OK)
        }
        Err(e) => {
            errln!("{e}");
            Ok(exit::INVALID)
        }
    }
}

fn import(cx: &Context, a: ImportArgs) -> Result<i32, Failure> {
    let mut code = exit::OK;
    for d in &a.dirs {
        let imp = pts_import::import(d, cx.packages()).map_err(|e| Failure::new(exit::USAGE, e.to_string()))?;
        let file = write_profile(&a.root, &imp.id, &imp.yaml, &imp.files)?;
        let valid = validate(cx, &file);
        outln!(
            "{} → {}: {}",
            d.display(),
            file.display(),
            if valid.is_ok() { "converted, validates" } else { "converted, INVALID" }
        );
        if let Err(e) = valid {
            errln!("{e}");
            code = exit::INVALID;
        }
        if imp.not_converted.is_empty() {
            outln!("  everything converted");
        } else {
            outln!("  not converted:");
            for n in &imp.not_converted {
                outln!("    - {n}");
            }
        }
    }
    Ok(code)
}
