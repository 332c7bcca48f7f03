//! Parser plugin for dbench (4.x). Its output repeats progress lines with
//! the same units as the result, and ends with a table (operation, count,
//! average and maximum latency) and a `Throughput` line:
//!
//! ```text
//!  Operation      Count    AvgLat    MaxLat
//!  ----------------------------------------
//!  NTCreateX      18582     0.028    20.110
//!  Flush           1298     2.516    26.994
//!
//! Throughput 210.757 MB/sec  2 clients  2 procs  max_latency=29.021 ms
//! ```
//!
//! A regex can take the throughput, but not "the average latency of the
//! operation named in the config, from the table after the last progress
//! line, and only if dbench finished". Results: `throughput` (MB/s, as
//! dbench prints it), `max_latency` (ms), `op_latency` (ms, average of
//! `operation`), `operations` (count of all operations).

use engine_sdk::{Config, Error, Parser, Report, TrialOutput};

pub struct Dbench {
    operation: String,
}

impl Parser for Dbench {
    const KEYS: &'static [&'static str] = &["operation"];
    const RESULTS: &'static [&'static str] = &["throughput", "max_latency", "op_latency", "operations"];

    fn new(config: &Config) -> Result<Self, Error> {
        config.only(Self::KEYS)?;
        Ok(Dbench { operation: config.text("operation").unwrap_or("Flush").to_string() })
    }

    fn parse(&self, out: &TrialOutput<'_>) -> Result<Report, Error> {
        if out.exit_code != 0 {
            return Err(Error::failed(format!("dbench exited {}", out.exit_code)));
        }
        let text = out.stdout;
        // The summary follows the last table header; earlier lines are progress.
        let start =
            text.rfind(" Operation ").ok_or_else(|| Error::failed("no operation table: dbench did not finish"))?;
        let mut count = 0u64;
        let mut op_latency = None;
        let mut throughput = None;
        let mut max_latency = None;
        for line in text[start..].lines().skip(2) {
            let f: Vec<&str> = line.split_whitespace().collect();
            match f.as_slice() {
                ["Throughput", mbs, "MB/sec", rest @ ..] => {
                    throughput = Some(number(mbs)?);
                    if let Some(m) = rest.iter().find_map(|w| w.strip_prefix("max_latency=")) {
                        max_latency = Some(number(m)?);
                    }
                }
                [op, n, avg, _max] if op.chars().all(|c| c.is_ascii_alphabetic()) => {
                    count += n.parse::<u64>().map_err(|_| Error::failed(format!("bad count `{n}` for {op}")))?;
                    if op.eq_ignore_ascii_case(&self.operation) {
                        op_latency = Some(number(avg)?);
                    }
                }
                _ => {}
            }
        }
        let throughput =
            throughput.ok_or_else(|| Error::failed("no `Throughput … MB/sec` line: dbench did not finish"))?;
        // dbench measures after its first second; a shorter run prints zeros.
        if throughput == 0.0 {
            return Err(Error::failed("dbench measured nothing (`Throughput 0`): give it `-t 2` or more"));
        }
        let mut r = Report::new().value("throughput", throughput).value("operations", count as f64);
        if let Some(m) = max_latency {
            r = r.value("max_latency", m);
        }
        match op_latency {
            Some(l) => r = r.value("op_latency", l),
            None => {
                return Err(Error::config("operation", format!("dbench ran no `{}` operation", self.operation)));
            }
        }
        Ok(r.line(format!("{count} operations, {throughput} MB/sec")))
    }
}

fn number(s: &str) -> Result<f64, Error> {
    s.parse().map_err(|_| Error::failed(format!("`{s}` is not a number")))
}

engine_sdk::export_parser!(Dbench);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_real_summary() {
        let text = include_str!("../../../tests/fixtures/output/dbench-4.00-2-clients.txt");
        let p = Dbench::new(&[("operation", "Flush")].into_iter().collect()).unwrap();
        let r = p.parse(&TrialOutput { stdout: text, stderr: "", exit_code: 0 }).unwrap();
        assert_eq!(r.get("throughput"), Some(210.757));
        assert_eq!(r.get("max_latency"), Some(29.021));
        assert_eq!(r.get("op_latency"), Some(2.516));
        assert_eq!(r.get("operations"), Some(107_882.0));
        let cut = &text[..text.find("Throughput").unwrap()];
        assert!(p.parse(&TrialOutput { stdout: cut, stderr: "", exit_code: 0 }).is_err());
    }
}
