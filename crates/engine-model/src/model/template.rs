//! `{{name}}` placeholders: found, checked and filled by name, never by position.

use thiserror::Error;

/// A piece of a template string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'a> {
    Text(&'a str),
    /// A placeholder and the byte offset of its `{{` in the string.
    Var(&'a str, usize),
    /// `{{@name}}`: the value's words as separate arguments (a whole argument only).
    Splice(&'a str, usize),
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TemplateError {
    #[error("`{{{{` at byte {0} is never closed with `}}}}`")]
    Unclosed(usize),
    #[error(
        "placeholder `{{{{{name}}}}}` is not a valid name (letters, digits, `_` and `-`, starting with a letter or `_`)"
    )]
    BadName { name: String, offset: usize },
    #[error("no value for placeholder `{{{{{0}}}}}`")]
    Missing(String),
    #[error("`{{{{@{0}}}}}` splices words into arguments, so it must be a whole argument of `args`")]
    SpliceNotAlone(String),
}

/// Whether `name` can be a placeholder (and so an option id or value name).
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Splits `s` into text and placeholders.
pub fn parse(s: &str) -> Result<Vec<Piece<'_>>, TemplateError> {
    let mut out = Vec::new();
    let mut rest = s;
    let mut base = 0;
    while let Some(start) = rest.find("{{") {
        if start > 0 {
            out.push(Piece::Text(&rest[..start]));
        }
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            return Err(TemplateError::Unclosed(base + start));
        };
        let inner = after[..end].trim();
        let (splice, name) = match inner.strip_prefix('@') {
            Some(n) => (true, n.trim()),
            None => (false, inner),
        };
        if !valid_name(name) {
            return Err(TemplateError::BadName { name: name.to_string(), offset: base + start });
        }
        out.push(if splice { Piece::Splice(name, base + start) } else { Piece::Var(name, base + start) });
        let consumed = start + 2 + end + 2;
        rest = &rest[consumed..];
        base += consumed;
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    Ok(out)
}

/// The placeholder names in `s`, in order.
pub fn names(s: &str) -> Result<Vec<&str>, TemplateError> {
    Ok(parse(s)?
        .into_iter()
        .filter_map(|p| match p {
            Piece::Var(n, _) | Piece::Splice(n, _) => Some(n),
            Piece::Text(_) => None,
        })
        .collect())
}

/// Fills the placeholders of `s` from `lookup`; with `shell_quote`, each value
/// is quoted so a shell sees it as one word.
pub fn render<'v>(
    s: &str,
    lookup: impl Fn(&str) -> Option<&'v str>,
    shell_quote: bool,
) -> Result<String, TemplateError> {
    let mut out = String::with_capacity(s.len());
    for piece in parse(s)? {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Splice(n, _) => return Err(TemplateError::SpliceNotAlone(n.to_string())),
            Piece::Var(n, _) => {
                let v = lookup(n).ok_or_else(|| TemplateError::Missing(n.to_string()))?;
                if shell_quote {
                    out.push_str(&quote(v));
                } else {
                    out.push_str(v);
                }
            }
        }
    }
    Ok(out)
}

/// The splice name when `s` is exactly one `{{@name}}`.
pub fn whole_splice(s: &str) -> Option<&str> {
    match parse(s.trim()).ok()?.as_slice() {
        [Piece::Splice(n, _)] => Some(n),
        _ => None,
    }
}

/// Whether `s` holds a `{{@name}}` anywhere.
pub fn has_splice(s: &str) -> bool {
    parse(s).is_ok_and(|p| p.iter().any(|x| matches!(x, Piece::Splice(..))))
}

/// Renders an argument list: a whole `{{@name}}` argument becomes the
/// whitespace-separated words of its value (none when it is empty).
pub fn render_args<'v>(
    args: &[String],
    lookup: impl Fn(&str) -> Option<&'v str>,
) -> Result<Vec<String>, TemplateError> {
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        if let Some(n) = whole_splice(a) {
            let v = lookup(n).ok_or_else(|| TemplateError::Missing(n.to_string()))?;
            out.extend(v.split_whitespace().map(str::to_string));
        } else {
            out.push(render(a, &lookup, false)?);
        }
    }
    Ok(out)
}

/// Single-quotes `v` for a POSIX shell unless it is plainly safe. By hand:
/// `shell_words::quote` lists the unsafe characters instead, so `{a,b}`
/// (brace expansion), `!` and control characters would pass unquoted.
pub fn quote(v: &str) -> String {
    if !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c)) {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_text_and_placeholders() {
        assert_eq!(
            parse("--bs={{ bs }}k{{x}}").unwrap(),
            vec![Piece::Text("--bs="), Piece::Var("bs", 5), Piece::Text("k"), Piece::Var("x", 14)]
        );
        assert_eq!(names("a {{b}} {{c_d}}").unwrap(), vec!["b", "c_d"]);
    }

    #[test]
    fn rejects_unclosed_and_bad_names() {
        assert_eq!(parse("x {{bs").unwrap_err(), TemplateError::Unclosed(2));
        assert!(matches!(parse("{{1x}}").unwrap_err(), TemplateError::BadName { .. }));
        assert!(matches!(parse("{{}}").unwrap_err(), TemplateError::BadName { .. }));
    }

    #[test]
    fn renders_by_name_and_quotes_for_the_shell() {
        let lookup = |n: &str| match n {
            "dir" => Some("/tmp/a b"),
            "n" => Some("5"),
            _ => None,
        };
        assert_eq!(render("-n {{n}} -d {{dir}}", lookup, false).unwrap(), "-n 5 -d /tmp/a b");
        assert_eq!(render("ls {{dir}}", lookup, true).unwrap(), "ls '/tmp/a b'");
        assert_eq!(render("{{zz}}", lookup, false).unwrap_err(), TemplateError::Missing("zz".into()));
        assert_eq!(quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn splices_whole_arguments_only() {
        let lookup = |n: &str| match n {
            "extra" => Some("-D 32  -N 5"),
            "none" => Some(""),
            "n" => Some("7"),
            _ => None,
        };
        let args: Vec<String> =
            ["-n", "{{n}}", "{{@extra}}", "{{ @none }}", "x"].iter().map(|s| s.to_string()).collect();
        assert_eq!(render_args(&args, lookup).unwrap(), vec!["-n", "7", "-D", "32", "-N", "5", "x"]);
        assert_eq!(render("a{{@extra}}", lookup, false).unwrap_err(), TemplateError::SpliceNotAlone("extra".into()));
        assert!(has_splice("a{{@extra}}") && whole_splice("a{{@extra}}").is_none());
    }
}
