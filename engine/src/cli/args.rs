//! Typed values of flags that several commands share.

use clap::ValueEnum;
use clap::builder::PossibleValue;
use engine_model::model::facts::Identifier;
use engine_ops::present::Format;
use std::sync::LazyLock;
use std::time::Duration;

/// A report format on the command line (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatArg(pub Format);

static ALL: LazyLock<Vec<FormatArg>> = LazyLock::new(|| Format::ALL.into_iter().map(FormatArg).collect());

impl ValueEnum for FormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        &ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()))
    }
}

/// A report format that is text, for what is printed after a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextFormatArg(pub Format);

static TEXT: LazyLock<Vec<TextFormatArg>> =
    LazyLock::new(|| Format::ALL.into_iter().filter(|f| !f.exporter(80).binary()).map(TextFormatArg).collect());

impl ValueEnum for TextFormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        &TEXT
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()))
    }
}

/// What `engine benchmark` prints: `text` (a compact table per test as it
/// finishes on a terminal, the whole report once at the end when piped),
/// `bars` (the bar charts of each test as it finishes), or a report format
/// printed at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunFormat {
    Bars,
    Report(Format),
}

impl RunFormat {
    /// The default: a compact table per test, the report at the end.
    pub const TEXT: RunFormat = RunFormat::Report(Format::Text);
}

static RUN: LazyLock<Vec<RunFormat>> = LazyLock::new(|| {
    let mut v: Vec<RunFormat> = TEXT.iter().map(|f| RunFormat::Report(f.0)).collect();
    v.insert(1, RunFormat::Bars);
    v
});

impl ValueEnum for RunFormat {
    fn value_variants<'a>() -> &'a [Self] {
        &RUN
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            RunFormat::Bars => PossibleValue::new("bars"),
            RunFormat::Report(f) => PossibleValue::new(f.name()),
        })
    }
}

/// Which trial logs are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Logs {
    All,
    Failed,
}

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Progress {
    Text,
    Json,
}

/// A duration as profiles write it (`5s`, `1500ms`, `2m`).
pub fn duration(s: &str) -> Result<Duration, String> {
    engine_model::units::parse_duration(s).map_err(|e| e.to_string())
}

/// A duration longer than zero (`--budget`).
pub fn positive_duration(s: &str) -> Result<Duration, String> {
    match duration(s)? {
        d if d.is_zero() => Err("must be longer than zero (e.g. `30s`, `5m`)".into()),
        d => Ok(d),
    }
}

/// `KEY=VALUE` of `--tag`: a key of letters, digits, `_`, `-` and `.`.
pub fn tag(s: &str) -> Result<(String, String), String> {
    let (k, v) = s.split_once('=').ok_or_else(|| format!("`{s}` is not KEY=VALUE (e.g. kernel=6.18)"))?;
    Ok((tag_key(k)?, v.to_string()))
}

/// A tag key (`--by KEY`): letters, digits, `_`, `-` and `.`.
pub fn tag_key(k: &str) -> Result<String, String> {
    if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) {
        return Err(format!("`{k}` is not a tag key: use letters, digits, `_`, `-` and `.`"));
    }
    Ok(k.to_string())
}

/// `--monitor`: sample around every trial, or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Monitor {
    /// The devices under test and the system, every `--monitor-interval`.
    On,
    /// No sampler.
    None,
}

/// A sampling interval from 100ms to 10s (`--monitor-interval`).
pub fn monitor_interval(s: &str) -> Result<Duration, String> {
    let d = duration(s)?;
    let (lo, hi) = engine_ops::benchmark::INTERVALS;
    if d < lo || d > hi {
        return Err(format!("{} is not from 100ms to 10s", engine_model::units::exact_duration(d)));
    }
    Ok(d)
}

/// Rows a trial keeps, from 16 to 1,000,000 (`--monitor-points`).
pub fn monitor_points(s: &str) -> Result<usize, String> {
    let (lo, hi) = engine_ops::benchmark::POINTS_RANGE;
    match s.trim().parse::<usize>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(format!("`{s}` is not a whole number from {lo} to {hi}")),
    }
}

/// What `--normalize` makes 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NormalizeTo {
    /// The worst value of each result.
    Lowest,
    /// The baseline's value.
    Baseline,
}

/// One `--grant KEY=VALUE`.
pub fn grant(s: &str) -> Result<engine_model::model::grant::Grants, String> {
    engine_model::model::grant::Grants::parse(&[s.to_string()]).map_err(|e| format!("{e} ({})", e.hint()))
}

/// A result name (`--save`, `--compare-to`): one plain file name.
pub fn result_name(s: &str) -> Result<engine_ops::benchmark::ResultName, String> {
    s.parse().map_err(|e| format!("{e}; use a plain name such as `disk-2026-11`"))
}

/// An identifier (`--identifier`): any text but blank.
pub fn identifier(s: &str) -> Result<Identifier, String> {
    s.parse().map_err(|e: engine_model::model::facts::FactError| e.to_string())
}

/// A percentage from 0 to 100 (`--fail-on-regression 5`).
/// An equivalence margin: a percentage above 0 and below 100.
pub fn margin(s: &str) -> Result<f64, String> {
    let p = percent(s)?;
    if p <= 0.0 {
        return Err(format!("{p} is no margin: use a percentage above 0 and below 100 (e.g. 2)"));
    }
    Ok(p)
}

pub fn percent(s: &str) -> Result<f64, String> {
    let p: f64 = s.trim_end_matches('%').trim().parse().map_err(|_| format!("`{s}` is not a percentage (e.g. 5)"))?;
    if !(0.0..100.0).contains(&p) {
        return Err(format!("{p} is not from 0 to 100"));
    }
    Ok(p)
}
