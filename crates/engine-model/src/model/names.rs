//! The one grammar of names engine reads from outside — profile and suite
//! ids, versions, result names, download file names, the entries of a
//! repository index — checked before any of them becomes part of a path:
//! a name is a single path component. The stricter rules of one kind of
//! name (a profile id's letters, a result name's first character) are
//! checked on top of this one, never instead of it.

use std::path::{Path, PathBuf};
use thiserror::Error;

/// Longest name, in bytes: two names joined (`<id>@<version>`) under a
/// temporary prefix stay below the 255 bytes a file name may have.
pub const MAX_LEN: usize = 100;

/// What the grammar asks, for hints.
pub const HINT: &str = "a name is one folder or file name: not empty, not `.` or `..`, \
    without `/`, `\\` or control characters, at most 100 bytes";

/// Why a string is not a name.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NameError {
    #[error("it is empty")]
    Empty,
    #[error("it is `{0}`, which names a folder itself or its parent")]
    Dots(&'static str),
    #[error("it contains `/`, which separates folders")]
    Slash,
    #[error("it contains `\\`")]
    Backslash,
    #[error("it contains the control character {0}")]
    Control(String),
    #[error("it is {0} bytes long, more than {MAX_LEN}")]
    TooLong(usize),
}

impl NameError {
    pub fn hint(&self) -> &'static str {
        HINT
    }
}

/// Checks that `name` is one plain path component.
pub fn check(name: &str) -> Result<(), NameError> {
    match name {
        "" => return Err(NameError::Empty),
        "." => return Err(NameError::Dots(".")),
        ".." => return Err(NameError::Dots("..")),
        _ => {}
    }
    if name.contains('/') {
        return Err(NameError::Slash);
    }
    if name.contains('\\') {
        return Err(NameError::Backslash);
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(NameError::Control(format!("U+{:04X}", c as u32)));
    }
    if name.len() > MAX_LEN {
        return Err(NameError::TooLong(name.len()));
    }
    Ok(())
}

/// `dir/name`, only when `name` is a name: the way a name from outside
/// becomes a path.
pub fn join(dir: &Path, name: &str) -> Result<PathBuf, NameError> {
    check(name)?;
    Ok(dir.join(name))
}

/// `name` as a message may show it: control characters escaped, cut at
/// twice [`MAX_LEN`] characters (a hostile index may hold anything).
pub fn shown(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if i == 2 * MAX_LEN {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_component_and_nothing_else() {
        for good in ["fio", "1.2.0", "my result", "x@1", ".hidden", "a..b", &"x".repeat(MAX_LEN)] {
            assert_eq!(check(good), Ok(()), "{good:?}");
        }
        assert_eq!(check(""), Err(NameError::Empty));
        assert_eq!(check("."), Err(NameError::Dots(".")));
        assert_eq!(check(".."), Err(NameError::Dots("..")));
        for slash in ["a/b", "/etc", "x/../../../../var/tmp/bait", "a/"] {
            assert_eq!(check(slash), Err(NameError::Slash), "{slash:?}");
        }
        assert_eq!(check("..\\x"), Err(NameError::Backslash));
        assert_eq!(check("a\0b"), Err(NameError::Control("U+0000".into())));
        assert_eq!(check("a\u{1b}]0;x"), Err(NameError::Control("U+001B".into())));
        assert_eq!(check("a\nb"), Err(NameError::Control("U+000A".into())));
        assert_eq!(check("a\u{9b}b"), Err(NameError::Control("U+009B".into())));
        assert_eq!(check(&"x".repeat(MAX_LEN + 1)), Err(NameError::TooLong(MAX_LEN + 1)));
        // Bytes, not characters: 34 three-byte characters are 102 bytes.
        assert_eq!(check(&"€".repeat(34)), Err(NameError::TooLong(102)));
    }

    #[test]
    fn join_only_joins_names_and_shown_escapes() {
        let d = Path::new("/home/e/repos");
        assert_eq!(join(d, "fio@1.0.0").unwrap(), d.join("fio@1.0.0"));
        assert!(join(d, "../../etc").is_err());
        assert!(join(d, "/etc").is_err());
        assert_eq!(shown("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(shown(&"y".repeat(500)).chars().count(), 2 * MAX_LEN + 1);
    }
}
