//! PTS's common command names, answered with the engine command that does
//! the job: a PTS user's fingers type `phoronix-test-suite` verbs.

/// (PTS's command, engine's, what differs when something does).
pub(crate) const TABLE: &[(&str, &str, &str)] = &[
    ("batch-benchmark", "engine benchmark -y TEST…", "-y answers every question with its default"),
    ("batch-run", "engine run -y TEST…", ""),
    ("default-benchmark", "engine benchmark -y TEST…", ""),
    ("default-run", "engine run -y TEST…", ""),
    ("list-available-tests", "engine list profiles", ""),
    ("list-tests", "engine list profiles", ""),
    ("list-available-suites", "engine list suites", ""),
    ("list-suites", "engine list suites", ""),
    ("list-saved-results", "engine list results", ""),
    ("list-results", "engine list results", ""),
    ("list-installed-tests", "engine list profiles", "`engine info TEST` says whether it is installed"),
    ("show-result", "engine result show NAME", ""),
    ("result-file-to-text", "engine result show NAME", ""),
    ("result-file-to-csv", "engine result show NAME --format csv", ""),
    ("result-file-to-json", "engine result show NAME --format json", ""),
    ("result-file-to-pdf", "engine result show NAME --format html", "engine writes HTML (print it to PDF)"),
    ("result-file-raw-to-csv", "engine result show NAME --format csv-trials", ""),
    ("compare-results", "engine result compare A B", ""),
    ("compare-results-to-baseline", "engine result compare BASELINE NEW", ""),
    ("merge-results", "engine result merge A B --save NAME", ""),
    ("remove-result", "engine result delete NAME", ""),
    ("remove-result-from-result-file", "engine result remove-result NAME TEST", ""),
    ("rename-identifier-in-result-file", "engine result rename-identifier NAME OLD NEW", ""),
    ("remove-identifier-from-result-file", "engine result remove-identifier NAME ID", ""),
    ("edit-result-file", "engine result edit NAME --title T --description D", ""),
    ("rename-result-file", "engine result edit NAME --title T", ""),
    ("detailed-system-info", "engine system-info", ""),
    ("system-properties", "engine system-info", ""),
    ("estimate-run-time", "engine benchmark --dry-run TEST…", ""),
    ("finish-run", "engine benchmark TEST… --save NAME", "the same command again resumes an interrupted run"),
    ("make-download-cache", "engine cache fill TEST…", ""),
    ("install-dependencies", "engine install-deps TEST…", ""),
    ("force-install", "engine install --force TEST…", ""),
    ("debug-run", "engine benchmark TEST… --logs all", ""),
    ("debug-benchmark", "engine benchmark TEST… --logs all", ""),
    ("stress-run", "", "engine measures one test at a time; run several engines on separate targets"),
    ("upload-result", "engine repo publish", "results are shared through a profile repository"),
    ("openbenchmarking-launcher", "engine repo add", ""),
    ("clone-result", "engine result import composite.xml", "PTS result files import with `result import`"),
    ("user-config-set", "engine config set KEY VALUE", "your defaults for benchmark's flags, in config.toml"),
    ("user-config-reset", "engine config unset KEY", ""),
    ("user-config-get", "engine config get KEY", ""),
];

/// What to tell someone who typed PTS's `word`, when it is PTS's and not
/// one of engine's own commands.
pub(crate) fn answer(word: &str) -> Option<String> {
    let (pts, engine, note) = TABLE.iter().find(|(p, _, _)| *p == word)?;
    let mut out = match engine.is_empty() {
        true => format!("`{pts}` is a Phoronix Test Suite command, and engine has none like it"),
        false => format!("`{pts}` is a Phoronix Test Suite command; in engine: {engine}"),
    };
    if !note.is_empty() {
        out.push_str(&format!(" ({note})"));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every engine command the table names exists: its words parse.
    #[test]
    fn every_answer_names_a_real_command() {
        use clap::CommandFactory;
        let cli = super::super::Cli::command();
        for (pts, engine, _) in TABLE.iter().filter(|(_, e, _)| !e.is_empty()) {
            let words: Vec<&str> = engine
                .split_whitespace()
                .skip(1)
                .take_while(|w| !w.starts_with('-') && w.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
                .collect();
            let mut cmd = &cli;
            for w in &words {
                if let Some(sub) = cmd.find_subcommand(w) {
                    cmd = sub;
                    continue;
                }
                // `list profiles`: a value the command takes.
                let takes = cmd.get_positionals().any(|a| a.get_possible_values().iter().any(|v| v.matches(w, false)));
                assert!(takes, "{pts}: `{engine}`: no command or value `{w}`");
                break;
            }
            assert!(!words.is_empty(), "{pts}: `{engine}`");
            for flag in engine.split_whitespace().filter(|w| w.starts_with('-')) {
                let known = cmd.get_arguments().any(|a| match flag.strip_prefix("--") {
                    Some(long) => a.get_long() == Some(long),
                    None => a.get_short().is_some_and(|c| flag == format!("-{c}")),
                });
                assert!(known, "{pts}: `{engine}`: no flag {flag}");
            }
        }
        assert!(answer("benchmark").is_none(), "engine's own commands are not PTS's");
        assert!(answer("compare-results").unwrap().contains("engine result compare A B"));
    }
}
