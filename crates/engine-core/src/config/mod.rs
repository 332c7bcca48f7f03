//! A person's defaults, set once: `config.toml` (`$XDG_CONFIG_HOME/engine`,
//! else `~/.config/engine`), flat `key = value` lines. This module reads the
//! file with every key's position, checks each value with the checker the
//! caller gives (the command line's own flag parsers, so a value means what
//! the flag means), and edits it keeping the person's comments and order.

use crate::model::diag::{Diagnostic, Diagnostics, Pos, did_you_mean};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use toml_edit::{Document, DocumentMut, Item, Value};

/// The most a config file may be: it is a handful of lines.
const MAX_BYTES: u64 = 64 * 1024;

/// One key the file may set.
pub struct Spec {
    pub key: &'static str,
    /// What it sets, for `engine config list` and the book.
    pub about: &'static str,
    /// The value as a flag would be given, checked as the flag checks it.
    pub check: fn(&str) -> Result<(), Refused>,
    /// Written as a TOML number by `set` (else a string).
    pub number: bool,
}

/// Why a value is refused, in the words of the flag's own check (the
/// command line's parsers say why as text).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

/// A value the file sets, with where.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    /// As a flag would take it (`2m`, `2.5`, `on`).
    pub value: String,
    pub pos: Pos,
}

/// The file's values, in the file's order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    pub path: PathBuf,
    pub entries: Vec<Entry>,
}

impl Config {
    /// The value of `key`, if the file sets it.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key == key)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{0}")]
    Invalid(Diagnostics),
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("`{key}` is not a setting")]
    UnknownKey { key: String, hint: String },
    #[error("`{key} = {value}`: {why}")]
    BadValue { key: String, value: String, why: Refused },
}

impl ConfigError {
    pub fn hint(&self) -> Option<String> {
        match self {
            ConfigError::Invalid(_) => {
                Some("fix the file, or `engine config unset KEY` (`engine config list` shows every setting)".into())
            }
            ConfigError::UnknownKey { hint, .. } => Some(hint.clone()),
            ConfigError::BadValue { key, .. } => Some(format!("`{key}` takes what `--{key}` takes")),
            _ => None,
        }
    }
}

/// Reads `path` (an absent file sets nothing); every problem at its
/// file:line:col.
pub fn load(path: &Path, specs: &[Spec]) -> Result<Config, ConfigError> {
    let Some(text) = read(path)? else { return Ok(Config { path: path.to_path_buf(), entries: vec![] }) };
    let file = path.display().to_string();
    let doc = parse(&file, &text)?;
    let mut entries = Vec::new();
    let mut diags = Diagnostics::default();
    for (key, item) in doc.as_table().iter() {
        let kpos = doc.as_table().key(key).and_then(|k| k.span()).map_or(Pos::UNKNOWN, |s| pos(&text, s.start));
        let Some(spec) = specs.iter().find(|s| s.key == key) else {
            diags.push(
                Diagnostic::new(&file, kpos, format!("`{key}` is not a setting")).with_hint(unknown_hint(key, specs)),
            );
            continue;
        };
        let vpos = item.span().map_or(kpos, |s| pos(&text, s.start));
        match scalar(item) {
            Some(value) => match (spec.check)(&value) {
                Ok(()) => entries.push(Entry { key: key.to_string(), value, pos: vpos }),
                Err(why) => diags.push(
                    Diagnostic::new(&file, vpos, format!("`{key}`: {why}"))
                        .with_hint(format!("`{key}` takes what `--{key}` takes: {}", spec.about)),
                ),
            },
            None => diags.push(
                Diagnostic::new(&file, vpos, format!("`{key}` is a {}, not a string or a number", kind(item)))
                    .with_hint(format!("write it as `{key} = \"…\"`")),
            ),
        }
    }
    if !diags.is_empty() {
        return Err(ConfigError::Invalid(diags));
    }
    Ok(Config { path: path.to_path_buf(), entries })
}

/// The spec of `key`, or what is wrong with the name.
pub fn spec<'a>(key: &str, specs: &'a [Spec]) -> Result<&'a Spec, ConfigError> {
    specs.iter().find(|s| s.key == key).ok_or_else(|| unknown(key, specs))
}

/// Sets `key` to `value` in `path` (made with its folder when absent),
/// keeping the rest of the file as it was; the value checked first.
pub fn set(path: &Path, specs: &[Spec], key: &str, value: &str) -> Result<(), ConfigError> {
    let spec = spec(key, specs)?;
    (spec.check)(value).map_err(|why| ConfigError::BadValue { key: key.into(), value: value.into(), why })?;
    let mut doc = editable(path)?;
    let number = spec.number.then(|| value.trim_end_matches('%').trim().parse::<f64>().ok()).flatten();
    let new = match number {
        Some(n) if n.fract() == 0.0 && n.abs() < 1e15 => Value::from(n as i64),
        Some(n) => Value::from(n),
        None => Value::from(value),
    };
    match doc.get_mut(key).and_then(Item::as_value_mut) {
        // Keeps the comment after the old value.
        Some(old) => {
            let decor = old.decor().clone();
            *old = new;
            *old.decor_mut() = decor;
        }
        None => doc[key] = Item::Value(new),
    }
    store(path, &doc)
}

/// Removes `key` from `path`; true when it was there.
pub fn unset(path: &Path, specs: &[Spec], key: &str) -> Result<bool, ConfigError> {
    spec(key, specs)?;
    if read(path)?.is_none() {
        return Ok(false);
    }
    let mut doc = editable(path)?;
    let above =
        doc.as_table().key(key).and_then(|k| k.leaf_decor().prefix()).and_then(|p| p.as_str()).map(str::to_string);
    let next = doc.as_table().iter().map(|(k, _)| k.to_string()).skip_while(|k| k != key).nth(1);
    if doc.remove(key).is_none() {
        return Ok(false);
    }
    // The comments above the key stay (a file's header often sits there).
    if let Some(above) = above.filter(|p| p.contains('#')) {
        match next.and_then(|n| doc.as_table_mut().key_mut(&n)) {
            Some(mut n) => {
                let d = n.leaf_decor_mut();
                let old = d.prefix().and_then(|p| p.as_str()).unwrap_or("").to_string();
                d.set_prefix(format!("{above}{old}"));
            }
            None => {
                let old = doc.trailing().as_str().unwrap_or("").to_string();
                doc.set_trailing(format!("{above}{old}"));
            }
        }
    }
    store(path, &doc)?;
    Ok(true)
}

/// The file's text, `None` when it does not exist; bounded and regular.
fn read(path: &Path) -> Result<Option<String>, ConfigError> {
    let err = |source| ConfigError::Read { path: path.to_path_buf(), source };
    // The person's own file: a link (dotfiles kept elsewhere) is followed;
    // a FIFO or a folder is not waited on.
    let opened =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC).open(path).and_then(
            |f| match f.metadata()?.is_file() {
                true => Ok(f),
                false => Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file")),
            },
        );
    let file = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(e)),
    };
    let len = file.metadata().map_err(err)?.len();
    if len > MAX_BYTES {
        let why = format!("{len} bytes; a config file is at most {MAX_BYTES}");
        return Err(err(std::io::Error::new(std::io::ErrorKind::InvalidData, why)));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_BYTES), &mut bytes).map_err(err)?;
    String::from_utf8(bytes).map(Some).map_err(|e| {
        let (line, col) = crate::sys::fs::line_col(e.as_bytes(), e.utf8_error().valid_up_to());
        let d = Diagnostic::new(path.display().to_string(), Pos::new(line, col), "the file is not UTF-8");
        ConfigError::Invalid(Diagnostics(vec![d]))
    })
}

fn parse(file: &str, text: &str) -> Result<Document<String>, ConfigError> {
    Document::parse(text.to_string()).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        let message = format!("not TOML: {}", e.message().trim_end());
        let d = Diagnostic::new(file, pos(text, at), message)
            .with_hint("each line is `key = value`, e.g. `budget = \"2m\"`");
        ConfigError::Invalid(Diagnostics(vec![d]))
    })
}

/// The file as it is, to edit (an absent file is empty; a file that is not
/// TOML is refused rather than overwritten).
fn editable(path: &Path) -> Result<DocumentMut, ConfigError> {
    match read(path)? {
        Some(text) => Ok(parse(&path.display().to_string(), &text)?.into_mut()),
        None => Ok(DocumentMut::new()),
    }
}

fn store(path: &Path, doc: &DocumentMut) -> Result<(), ConfigError> {
    crate::sys::fs::write_atomic(path, doc.to_string().as_bytes())
        .map_err(|source| ConfigError::Write { path: path.to_path_buf(), source })
}

/// A string, integer or float, as a flag would be given.
fn scalar(item: &Item) -> Option<String> {
    match item.as_value()? {
        Value::String(s) => Some(s.value().clone()),
        Value::Integer(i) => Some(i.value().to_string()),
        Value::Float(f) => Some(f.value().to_string()),
        _ => None,
    }
}

fn kind(item: &Item) -> &'static str {
    match item {
        Item::Table(_) | Item::Value(Value::InlineTable(_)) => "table",
        Item::ArrayOfTables(_) | Item::Value(Value::Array(_)) => "list",
        Item::Value(Value::Boolean(_)) => "boolean",
        Item::Value(Value::Datetime(_)) => "date",
        _ => "value",
    }
}

fn unknown(key: &str, specs: &[Spec]) -> ConfigError {
    ConfigError::UnknownKey { key: key.to_string(), hint: unknown_hint(key, specs) }
}

fn unknown_hint(key: &str, specs: &[Spec]) -> String {
    match did_you_mean(key, specs.iter().map(|s| s.key)) {
        Some(k) => format!("did you mean `{k}`?"),
        None => format!("settings: {}", specs.iter().map(|s| s.key).collect::<Vec<_>>().join(", ")),
    }
}

fn pos(text: &str, at: usize) -> Pos {
    let (line, col) = crate::sys::fs::line_col(text.as_bytes(), at.min(text.len()));
    Pos::new(line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn duration(s: &str) -> Result<(), Refused> {
        crate::units::parse_duration(s).map(drop).map_err(|e| Refused(e.to_string()))
    }

    fn number(s: &str) -> Result<(), Refused> {
        s.parse::<f64>().map(drop).map_err(|_| Refused(format!("`{s}` is not a number")))
    }

    const SPECS: [Spec; 2] = [
        Spec { key: "budget", about: "a duration", check: duration, number: false },
        Spec { key: "equivalence", about: "a percentage", check: number, number: true },
    ];

    #[test]
    fn every_problem_is_at_its_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "# mine\nbudjet = \"2m\"\nbudget = \"soon\"\nequivalence = [1]\n").unwrap();
        let ConfigError::Invalid(d) = load(&path, &SPECS).unwrap_err() else { panic!() };
        let text = d.to_string();
        assert!(text.contains("config.toml:2:1: `budjet` is not a setting\n  hint: did you mean `budget`?"), "{text}");
        assert!(text.contains("config.toml:3:10: `budget`: "), "{text}");
        assert!(text.contains("config.toml:4:15: `equivalence` is a list"), "{text}");
        std::fs::write(&path, "budget = \"2m\n").unwrap();
        let ConfigError::Invalid(d) = load(&path, &SPECS).unwrap_err() else { panic!() };
        assert!(d.to_string().contains("config.toml:1:"), "{d}");
    }

    #[test]
    fn set_keeps_comments_and_checks_the_value() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/config.toml");
        set(&path, &SPECS, "budget", "2m").unwrap();
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.insert_str(0, "# my defaults\n");
        text.push_str("equivalence = 3 # agreed with the team\n");
        std::fs::write(&path, &text).unwrap();
        set(&path, &SPECS, "equivalence", "2.5").unwrap();
        set(&path, &SPECS, "budget", "90s").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "# my defaults\nbudget = \"90s\"\nequivalence = 2.5 # agreed with the team\n");
        assert!(matches!(set(&path, &SPECS, "budget", "x"), Err(ConfigError::BadValue { .. })));
        assert!(matches!(set(&path, &SPECS, "budjet", "2m"), Err(ConfigError::UnknownKey { .. })));
        let c = load(&path, &SPECS).unwrap();
        assert_eq!(c.get("equivalence").unwrap().value, "2.5");
        assert_eq!(c.get("budget").unwrap().pos, Pos::new(2, 10));
        assert!(unset(&path, &SPECS, "budget").unwrap());
        assert!(!unset(&path, &SPECS, "budget").unwrap());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# my defaults\nequivalence = 2.5 # agreed with the team\n"
        );
    }

    #[test]
    fn an_absent_file_sets_nothing_and_a_huge_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        assert!(load(&path, &SPECS).unwrap().entries.is_empty());
        std::fs::write(&path, vec![b'#'; MAX_BYTES as usize + 1]).unwrap();
        assert!(matches!(load(&path, &SPECS), Err(ConfigError::Read { .. })));
    }
}
