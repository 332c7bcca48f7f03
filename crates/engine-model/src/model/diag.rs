//! Diagnostics for profile and suite files: where (file:line:col), what, and a hint.

use std::fmt;

/// One problem found in a YAML file, pointing at the node that causes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    /// 1-based line; 0 when the position is unknown.
    pub line: usize,
    /// 1-based column; 0 when the position is unknown.
    pub col: usize,
    pub message: String,
    pub hint: Option<String>,
}

impl Diagnostic {
    pub fn new(file: impl Into<String>, pos: Pos, message: impl Into<String>) -> Self {
        Diagnostic { file: file.into(), line: pos.line, col: pos.col, message: message.into(), hint: None }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file, self.line, self.col, self.message)?;
        if let Some(h) = &self.hint {
            write!(f, "\n  hint: {h}")?;
        }
        Ok(())
    }
}

/// A 1-based position in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

impl Pos {
    pub const UNKNOWN: Pos = Pos { line: 0, col: 0 };
    pub fn new(line: usize, col: usize) -> Self {
        Pos { line, col }
    }
}

/// All diagnostics of one or more files; the error type of loading.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.0.iter()
    }
    pub fn extend(&mut self, other: Diagnostics) {
        self.0.extend(other.0);
    }
    /// Sorted by file and position, so output reads top to bottom.
    pub fn sorted(mut self) -> Self {
        self.0.sort_by(|a, b| (&a.file, a.line, a.col).cmp(&(&b.file, b.line, b.col)));
        self
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// The closest of `candidates` to `word`, when it is close enough to be a
/// plausible typo.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.to_ascii_lowercase();
    let mut best: Option<(&str, usize, f64)> = None;
    for c in candidates {
        let lc = c.to_ascii_lowercase();
        let dist = strsim::damerau_levenshtein(&w, &lc);
        let jw = strsim::jaro_winkler(&w, &lc);
        let close = dist <= (w.chars().count() / 3).max(1) || jw >= 0.85;
        // Fewest edits first, then the most similar.
        if close && best.is_none_or(|(_, d, j)| dist < d || (dist == d && jw > j)) {
            best = Some((c, dist, jw));
        }
    }
    best.map(|(c, _, _)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(did_you_mean("valuez", ["label", "values"]), Some("values"));
        assert_eq!(did_you_mean("bz", ["type", "bs"]), Some("bs"));
        assert_eq!(did_you_mean("blocksize", ["type", "block_size"]), Some("block_size"));
        assert_eq!(did_you_mean("programm", ["program", "args"]), Some("program"));
        assert_eq!(did_you_mean("zzz", ["program", "args"]), None);
    }

    #[test]
    fn renders_position_and_hint() {
        let d = Diagnostic::new("p.yaml", Pos::new(3, 5), "unknown field `x`").with_hint("did you mean `y`?");
        assert_eq!(d.to_string(), "p.yaml:3:5: unknown field `x`\n  hint: did you mean `y`?");
    }
}
