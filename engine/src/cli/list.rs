//! `engine list profiles|suites|results`.

use super::{Failure, exit};
use clap::{Args, ValueEnum};
use engine::home::Home;
use engine::profile::resolve::Catalog;
use engine::result::Store;

#[derive(Args, Debug)]
pub struct ListArgs {
    /// What to list
    pub what: What,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum What {
    Profiles,
    Suites,
    Results,
}

pub fn run(args: ListArgs) -> Result<i32, Failure> {
    let home = Home::from_env();
    let catalog = Catalog::from_env(&home.user_profiles());
    let mut out = String::new();
    let mut broken = 0;
    let mut broken_results = 0;
    match args.what {
        What::Profiles => {
            let mut rows = Vec::new();
            for p in catalog.all_profiles() {
                match p {
                    Ok(p) => {
                        let missing: Vec<String> = engine::runner::requirements::missing_programs(&p.profile)
                            .into_iter()
                            .map(|u| match u {
                                engine::runner::requirements::Unmet::Program { program, .. } => program,
                                other => other.to_string(),
                            })
                            .collect();
                        let status = if missing.is_empty() {
                            "ready".to_string()
                        } else {
                            format!("needs {}", missing.join(", "))
                        };
                        let mut title = p.profile.title.clone();
                        let hidden = catalog.shadowed(&p.profile.id);
                        if !hidden.is_empty() {
                            title.push_str(&format!(" (shadows {})", hidden.join(", ")));
                        }
                        rows.push((
                            p.reference(),
                            format!("{:?}", p.profile.test_type).to_lowercase(),
                            p.profile.executor.kind(),
                            status,
                            title,
                        ))
                    }
                    Err(d) => {
                        broken += 1;
                        eprintln!("{d}");
                    }
                }
            }
            let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
            let sw = rows.iter().map(|r| r.3.len()).max().unwrap_or(0);
            for (r, kind, exec, status, title) in rows {
                out.push_str(&format!("{r:w$}  {kind:9}  {exec:8}  {status:sw$}  {title}\n"));
            }
        }
        What::Suites => {
            let rows: Vec<(String, String)> = catalog
                .all_suites()
                .into_iter()
                .map(|(id, _)| {
                    let title = match catalog.suite(&id) {
                        Ok(s) => format!("{} ({} items)", s.suite.title, s.suite.tests.len()),
                        Err(e) => {
                            broken += 1;
                            format!("invalid: {e}")
                        }
                    };
                    (format!("suite/{id}"), title)
                })
                .collect();
            let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
            for (id, title) in rows {
                out.push_str(&format!("{id:w$}  {title}\n"));
            }
        }
        What::Results => {
            let store = Store::new(home.results());
            for name in store.list() {
                match store.load(&name) {
                    Ok(f) => out.push_str(&format!(
                        "{name}  {} identifier(s), {} result(s): {}\n",
                        f.systems.len(),
                        f.results.len(),
                        f.systems.iter().map(|s| s.identifier.as_str()).collect::<Vec<_>>().join(", ")
                    )),
                    Err(e) => {
                        broken_results += 1;
                        eprintln!("{name}: {e}");
                    }
                }
            }
        }
    }
    print!("{out}");
    // An invalid profile or suite is exit 3 (as `engine validate`); a
    // result file that cannot be read is an error like any unreadable file.
    Ok(if broken > 0 {
        exit::INVALID
    } else if broken_results > 0 {
        exit::ERROR
    } else {
        exit::OK
    })
}
