//! Requirements: programs, root, free space and run time formulas over the options.

use super::*;

/// `requirements:`: a free space that is a size (per test, when it uses
/// option values), program names and their folders, absolute file paths.
pub(super) fn check_requirements(c: &mut Checker, p: &Profile, known: &BTreeSet<String>) {
    if let Some(rt) = &p.trials.run_time {
        check_run_time(c, p, rt, known);
    }
    if let Some(fs) = &p.requirements.free_space {
        check_free_space(c, p, fs, known);
    }
    for (i, pr) in p.requirements.programs.iter().enumerate() {
        if pr.name.trim().is_empty() || pr.name.contains('/') {
            c.at_value(
                path!["requirements", "programs", i, "name"],
                format!("`{}` is not a program name", pr.name),
                Some("name the program as found on PATH, like `fio`".into()),
            );
        }
        if let Some(pkg) = &pr.package {
            install::check_package_name(c, path!["requirements", "programs", i, "package"], pkg);
        }
        for (j, d) in pr.dirs.iter().enumerate() {
            if !d.starts_with('/') || d.split('/').any(|part| part == "..") {
                c.at_value(
                    path!["requirements", "programs", i, "dirs", j],
                    format!("`{d}` is not an absolute directory"),
                    Some("write where the package installs the program: `/usr/lib/postgresql/*/bin`".into()),
                );
            }
        }
    }
    for (i, f) in p.requirements.files.iter().enumerate() {
        if !f.path.starts_with('/') {
            c.at_value(
                path!["requirements", "files", i, "path"],
                format!("`{}` is not an absolute path", f.path),
                Some("name the file where its package installs it: `/usr/src/linux-source-6.1.tar.xz`".into()),
            );
        }
    }
}

/// `trials.run_time`: seconds every test's values fill it with.
pub(super) fn check_run_time(c: &mut Checker, p: &Profile, rt: &str, known: &BTreeSet<String>) {
    c.text(path!["trials", "run_time"], rt, known);
    for combo in value_combos(p) {
        if let Ok(s) = template::render(rt, |n| combo.get(n).map(String::as_str), false)
            && let Err(e) = units::parse_seconds_expr(&s)
        {
            c.at_value(
                path!["trials", "run_time"],
                e.to_string(),
                Some("durations and numbers of seconds joined by `*` and `+`: `{{iterations}} * {{frequency}}`".into()),
            );
            break;
        }
    }
}

/// `requirements.free_space`: a size, or placeholders every entry fills with one.
pub(super) fn check_free_space(c: &mut Checker, p: &Profile, fs: &str, known: &BTreeSet<String>) {
    if template::names(fs).is_ok_and(|n| !n.is_empty()) {
        // Per-test sizes come from the entries: check each test's value.
        c.text(path!["requirements", "free_space"], fs, known);
        for combo in value_combos(p) {
            if let Ok(s) = template::render(fs, |n| combo.get(n).map(String::as_str), false)
                && let Err(e) = units::parse_size_expr(&s)
            {
                c.at_value(
                    path!["requirements", "free_space"],
                    e.to_string(),
                    Some("the entries' values must fill it with a size such as `1GiB`, or sizes and numbers joined by `*` and `+` (`{{threads}} * {{size}} + 64MiB`)".into()),
                );
                break;
            }
        }
    } else if let Err(e) = units::parse_size_expr(fs) {
        c.at_value(path!["requirements", "free_space"], e.to_string(), Some(e.hint().into()));
    }
}
