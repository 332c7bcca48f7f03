//! The command line a benchmark's flags make, rendered from the typed flags
//! (never from argv again): what the host lock shows, and what an
//! interrupted run prints to resume it.

use super::args::{Logs, Progress, RunFormat};
use super::benchmark_args::BenchmarkArgs;
use super::line::{Line, value_name};
use engine_model::model::template::quote;
use engine_model::units::exact_duration;
use engine_ops::benchmark::Resume;

pub struct CommandLine<'a> {
    pub args: &'a BenchmarkArgs,
    /// `engine benchmark` (installs) rather than `engine run`.
    pub install: bool,
}

impl CommandLine<'_> {
    /// The command as given.
    pub fn given(&self) -> String {
        self.render(self.args.save.as_deref(), self.args.identifier.as_deref())
    }

    /// The command that resumes an interrupted run: saving to its result,
    /// pinned to its identifier (a sweep's come from its states).
    pub fn resume(&self, r: &Resume) -> String {
        self.render(Some(&r.name), r.identifier.as_deref().or(self.args.identifier.as_deref()))
    }

    fn render(&self, save: Option<&str>, identifier: Option<&str>) -> String {
        let a = self.args;
        let mut out = Line(vec!["engine".into(), if self.install { "benchmark" } else { "run" }.into()]);
        // A reference that looks like a flag goes last, after `--`.
        let dashed = a.refs.iter().any(|r| r.starts_with('-'));
        if !dashed {
            out.0.extend(a.refs.iter().map(|r| quote(r)));
        }
        out.opt("--save", save);
        out.opt("--identifier", identifier);
        out.each("--option", &a.options);
        out.opt("--runs", a.runs);
        out.opt("--budget", a.budget.map(exact_duration));
        out.opt("--setups", a.setups);
        out.opt("--warmup", a.warmup);
        out.flag("--only-unsettled", a.only_unsettled);
        out.flag("--dry-run", a.dry_run);
        out.flag("--yes", a.yes);
        out.opt("--target-dir", a.target_dir.as_ref().map(|p| p.display().to_string()));
        out.opt("--title", a.title.as_deref());
        out.opt("--description", a.description.as_deref());
        out.opt("--logs", (a.logs != Logs::All).then(|| value_name(&a.logs)));
        a.sweep.render(&mut out);
        a.hygiene.render(&mut out);
        a.sandbox.render(&mut out);
        a.monitor.render(&mut out);
        out.each("--tag", &a.tags.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>());
        a.compare.render(&mut out);
        let format = a.format.filter(|f| *f != RunFormat::TEXT).map(|f| value_name(&f));
        out.opt("--format", format);
        out.opt("--progress", (a.progress != Progress::Text).then(|| value_name(&a.progress)));
        if dashed {
            out.0.push("--".into());
            out.0.extend(a.refs.iter().map(|r| quote(r)));
        }
        out.0.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        args: BenchmarkArgs,
    }

    /// Every flag survives rendering: parse, render, parse again, same flags.
    #[test]
    fn a_rendered_command_reads_back_as_the_same_flags() {
        let given = [
            "engine",
            "fio",
            "suite/disk quick",
            "--save",
            "r1",
            "--identifier",
            "vda: BFQ",
            "-o",
            "block_size=4KB,2MB",
            "--runs",
            "3",
            "--budget",
            "1m 30s",
            "--setups",
            "3",
            "--warmup",
            "1",
            "-y",
            "--target-dir",
            "/mnt/x y",
            "--title=-it's",
            "--logs",
            "failed",
            "--scheduler",
            "none,BFQ:low_latency=0",
            "--filesystem",
            "ext4:noatime,nobarrier,xfs",
            "--filesystem",
            "btrfs",
            "--device",
            "loop:4G,cached",
            "--set",
            "queue/read_ahead_kb=128",
            "--no-interleave",
            "--rounds",
            "2",
            "--drop-caches",
            "--grant",
            "memory=1536MiB",
            "--grant",
            "time=90s",
            "--settle",
            "1500ms",
            "--monitor",
            "none",
            "--monitor-interval",
            "250ms",
            "--monitor-points",
            "64",
            "--tag",
            "commit=a b",
            "--compare-to",
            "base",
            "--fail-on-regression",
            "--format",
            "csv",
            "--progress",
            "json",
        ];
        let first = Cli::try_parse_from(given).unwrap().args;
        let line = CommandLine { args: &first, install: true }.given();
        let words = shell_split(&line);
        assert_eq!(&words[..2], ["engine", "benchmark"], "{line}");
        let again = Cli::try_parse_from(std::iter::once("engine").chain(words[2..].iter().map(String::as_str)))
            .unwrap_or_else(|e| panic!("{line}: {e}"))
            .args;
        assert_eq!(format!("{first:?}"), format!("{again:?}"), "{line}");
        let resume = CommandLine { args: &first, install: false }
            .resume(&Resume { name: "r2".into(), identifier: Some("vda: none".into()) });
        assert!(
            resume.starts_with("engine run fio 'suite/disk quick' --save r2 --identifier 'vda: none' "),
            "{resume}"
        );
        let mut dashed = first.clone();
        dashed.refs = vec!["-p.yaml".into()];
        let line = CommandLine { args: &dashed, install: true }.given();
        assert!(line.ends_with(" -- -p.yaml") && line.contains(" --title='-it"), "{line}");
        let words = shell_split(&line);
        let again =
            Cli::try_parse_from(std::iter::once("engine").chain(words[2..].iter().map(String::as_str))).unwrap();
        assert_eq!(again.args.refs, ["-p.yaml"]);
        assert_eq!(format!("{:?}", again.args.sweep.scheduler), format!("{:?}", dashed.sweep.scheduler));
    }

    /// Each typed flag refuses a bad value where it is given: the flag named,
    /// the grammar's own words, exit 2 (usage).
    #[test]
    fn a_bad_value_names_its_flag_and_exits_2() {
        for (flag, value, says) in [
            ("--scheduler", "bfq:low_latency", "is not `tunable=value`"),
            ("--filesystem", "zfs", "is not a file system engine can make"),
            ("--device", "loop:lots", "`lots` is not a size"),
            ("--device", "loop:1M", "too small for a file system"),
            ("--set", "queue/scheduler=bfq", "set the I/O scheduler with `--scheduler bfq`"),
            ("--budget", "soon", "`soon` is not a duration"),
            ("--budget", "0s", "longer than zero"),
            ("--settle", "400 days", "longer than engine allows"),
            ("--grant", "memory=4q", "`4q` is not a size"),
            ("--runs", "0", "0 is not in 1.."),
            ("--setups", "0", "0 is not in 1..=1000"),
            ("--monitor-interval", "20ms", "is not from 100ms to 10s"),
            ("--monitor-points", "8", "`8` is not a whole number from 16 to 1000000"),
            ("--monitor", "off", "possible values: on, none"),
            ("--tag", "novalue", "KEY=VALUE"),
            ("--option", "bs", "`--option bs` has no `=`"),
            ("--option", "bs=,", "names no option or no entry"),
            ("--save", "../up", "result name `../up` is not allowed"),
            ("--save", ".hidden", "starts with `.` or `-`"),
            ("--compare-to", "a/b", "result name `a/b` is not allowed"),
            ("--identifier", "  ", "the identifier is empty"),
            ("--fail-on-regression", "120", "is not from 0 to 100"),
        ] {
            let e = Cli::try_parse_from(["engine", "fio", flag, value]).unwrap_err();
            let text = e.to_string();
            assert!(text.contains(&format!("'{value}' for '{flag}")), "{flag} {value}: {text}");
            assert!(text.contains(says), "{flag} {value}: {text}");
            assert_eq!(e.exit_code(), engine_ops::exit::USAGE, "{flag} {value}");
        }
    }

    /// The other commands' typed flags refuse bad values the same way.
    #[test]
    fn other_commands_name_the_bad_flag_and_exit_2() {
        for (args, flag, says) in [
            (&["result", "merge", "a", "--save", "x/y"][..], "--save", "result name `x/y` is not allowed"),
            (&["result", "import", "f.xml", "--save", ".."], "--save", "result name `..` is not allowed"),
            (&["result", "history", "--by", "a b"], "--by", "is not a tag key"),
            (&["result", "show", "r", "--normalize", "median"], "--normalize", "possible values: lowest, baseline"),
            (&["result", "show", "r", "--equivalence", "0"], "--equivalence", "0 is no margin"),
            (&["result", "compare", "a", "b", "--equivalence", "100"], "--equivalence", "is not from 0 to 100"),
            (
                &["benchmark", "fio", "--compare-to", "a", "--equivalence", "250"],
                "--equivalence",
                "is not from 0 to 100",
            ),
        ] {
            let e = crate::cli::Cli::try_parse_from(std::iter::once("engine").chain(args.iter().copied())).unwrap_err();
            let text = e.to_string();
            assert!(text.contains(&format!("for '{flag}")), "{args:?}: {text}");
            assert!(text.contains(says), "{args:?}: {text}");
            assert_eq!(e.exit_code(), engine_ops::exit::USAGE, "{args:?}");
        }
    }

    /// Splits what `quote` wrote (single quotes and `'\''`).
    fn shell_split(s: &str) -> Vec<String> {
        let out = std::process::Command::new("sh")
            .args(["-c", &format!("for a in {s}; do printf '%s\\0' \"$a\"; done")])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().split('\0').filter(|w| !w.is_empty()).map(String::from).collect()
    }
}
