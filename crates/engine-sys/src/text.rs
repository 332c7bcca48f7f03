//! Outside text made inert where it lands. Profiles, repositories, shared
//! results, plugins and the output of the commands a test runs are written
//! by someone else; what they say reaches terminals, spreadsheets, Markdown
//! viewers and XML readers. Each function here is the one rule for one of
//! those places (the book, "Sandbox"):
//!
//! - [`terminal`]: control characters other than newline and tab shown as
//!   visible escapes (`\e`, `\x07`, `\u{9b}`), never sent; [`one_line`]
//!   escapes newline and tab too, for a title, a label or a progress line.
//! - [`csv_cell`]: the same escapes, a cell that a spreadsheet would read
//!   as a formula neutralized (OWASP); [`csv_row`] joins and quotes cells.
//! - [`markdown`]: HTML, link and table syntax escaped; one line.
//! - [`xml`] / [`write_xml_char`]: markup escaped and nothing XML 1.0 forbids.
//! - [`json`]: serialized JSON with the controls serde_json leaves raw escaped.

use std::borrow::Cow;
use std::fmt::{self, Write};

/// Whether `c` must not reach a reader raw: the C0 controls (ESC starts
/// every terminal escape sequence; BEL, CR and backspace overwrite and
/// ring), DEL, the C1 controls U+0080–U+009F (U+009B and U+009D are CSI
/// and OSC to many terminals), and the bidi embeddings, overrides and
/// isolates that make text read in another order than it is stored.
pub fn is_control(c: char) -> bool {
    matches!(c, '\0'..='\x1f' | '\x7f'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Writes `c` as a visible escape: `\e`, `\r`, `\n`, `\t`, `\xNN` for the
/// other ASCII controls, `\u{NNNN}` beyond ASCII.
pub fn write_escape(out: &mut impl Write, c: char) -> fmt::Result {
    match c {
        '\x1b' => out.write_str("\\e"),
        '\r' => out.write_str("\\r"),
        '\n' => out.write_str("\\n"),
        '\t' => out.write_str("\\t"),
        c if c.is_ascii() => write!(out, "\\x{:02x}", c as u32),
        c => write!(out, "\\u{{{:x}}}", c as u32),
    }
}

/// `s` with every character `escape` picks written by [`write_escape`];
/// borrowed when there is none (the common case costs one scan).
fn escape_where(s: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(&escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if escape(c) {
            write_escape(&mut out, c).expect("a String takes any text");
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Text for a terminal: controls other than newline and tab shown as
/// escapes. Idempotent, and a no-op on what the other functions here return.
pub fn terminal(s: &str) -> Cow<'_, str> {
    escape_where(s, |c| is_control(c) && c != '\n' && c != '\t')
}

/// Text for one line of a terminal (a title, a label, a progress line):
/// newline and tab escaped too, so it cannot start a line of its own.
pub fn one_line(s: &str) -> Cow<'_, str> {
    escape_where(s, is_control)
}

/// Whether a CSV cell is a number as engine writes them (`-3.5`, `1e308`),
/// or a list of them joined by `:` (a result's trials): a spreadsheet reads
/// those as numbers, not formulas, so a leading `-` stays.
fn is_number_cell(s: &str) -> bool {
    s.split(':').all(|n| {
        n.bytes().any(|b| b.is_ascii_digit())
            && n.bytes().all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
            && n.parse::<f64>().is_ok()
    })
}

/// One CSV cell's text: controls other than newline escaped as for a
/// terminal; a cell starting with `=`, `+`, `-`, `@`, tab or CR (OWASP's
/// list of what spreadsheets run as a formula) prefixed with `'` unless it
/// is a number. [`csv_row`] quotes it.
pub fn csv_cell(s: &str) -> Cow<'_, str> {
    let cell = escape_where(s, |c| is_control(c) && c != '\n');
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) && !is_number_cell(&cell) {
        return Cow::Owned(format!("'{cell}"));
    }
    cell
}

/// One CSV line (RFC 4180 quoting, by the `csv` crate) of `cells`, each
/// through [`csv_cell`].
pub fn csv_row<S: AsRef<str>>(cells: &[S]) -> String {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new());
    // Writing to memory cannot fail.
    w.write_record(cells.iter().map(|c| csv_cell(c.as_ref()).into_owned())).expect("CSV to memory");
    String::from_utf8(w.into_inner().expect("CSV to memory")).expect("CSV of UTF-8 cells")
}

/// Text for a Markdown cell or line: HTML (`<`, `>`, `&`) escaped so no tag
/// reaches a renderer, `|` so no cell ends early, a `]` that would close a
/// link, an image or a link definition (`](`, `][`, `]:`) so none is made,
/// `\` so none of those escapes is undone; newlines become spaces and other
/// controls visible escapes. (`[0.9, 1.2]` stays as it is.)
pub fn markdown(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            ']' if matches!(chars.peek(), Some('(' | '[' | ':')) => out.push_str("\\]"),
            '|' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push(' '),
            c if is_control(c) => write_escape(&mut out, c).expect("a String takes any text"),
            c => out.push(c),
        }
    }
    out
}

/// Writes `c` for XML element content or a quoted attribute: markup
/// escaped, and what XML 1.0 forbids (controls other than tab and newline,
/// U+FFFE, U+FFFF) or a terminal would act on as a visible escape, so any
/// text yields a well-formed document.
pub fn write_xml_char(out: &mut impl Write, c: char) -> fmt::Result {
    match c {
        '&' => out.write_str("&amp;"),
        '<' => out.write_str("&lt;"),
        '>' => out.write_str("&gt;"),
        '"' => out.write_str("&quot;"),
        '\n' | '\t' => out.write_char(c),
        c if is_control(c) || c == '\u{fffe}' || c == '\u{ffff}' => write_escape(out, c),
        c => out.write_char(c),
    }
}

/// [`write_xml_char`] over `s`.
pub fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        write_xml_char(&mut out, c).expect("a String takes any text");
    }
    out
}

/// Columns `s` takes on a terminal: wide characters (CJK) count two,
/// combining marks none — not `chars().count()`, which misaligns tables
/// of such identifiers.
pub fn width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// `s` and spaces to `w` columns (left-aligned).
pub fn pad(s: &str, w: usize) -> String {
    format!("{s}{}", " ".repeat(w.saturating_sub(width(s))))
}

/// Spaces and `s` to `w` columns (right-aligned).
pub fn pad_left(s: &str, w: usize) -> String {
    format!("{}{s}", " ".repeat(w.saturating_sub(width(s))))
}

/// `s` cut to at most `max` bytes (at a character boundary), saying how
/// many bytes were left out: text from outside kept at a bounded size.
pub fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let end = s.floor_char_boundary(max);
    format!("{}… [{} more bytes not kept]", &s[..end], s.len() - end)
}

/// `s` cut to at most `max` columns, with "…" when cut.
pub fn fit(s: &str, max: usize) -> Cow<'_, str> {
    if width(s) <= max {
        return Cow::Borrowed(s);
    }
    // Whole-string widths (a variation selector can widen the character
    // before it): keep adding while the text and "…" fit.
    let mut out = String::new();
    for c in s.chars() {
        out.push(c);
        if width(&out) + 1 > max {
            out.pop();
            break;
        }
    }
    out.push('…');
    Cow::Owned(out)
}

/// [`xml`] on one line: line breaks and tabs as spaces (a chart's text is
/// one line), written without a string of its own (charts of a thousand
/// identifiers are written bar by bar).
pub struct XmlLine<'a>(pub &'a str);

impl fmt::Display for XmlLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            match c {
                '\t' | '\n' | '\r' => f.write_char(' ')?,
                c => write_xml_char(f, c)?,
            }
        }
        Ok(())
    }
}

/// [`XmlLine`] as a string.
pub fn xml_line(s: &str) -> String {
    XmlLine(s).to_string()
}

/// Serialized JSON with DEL, the C1 and the bidi controls written as
/// `\uXXXX` (serde_json escapes those below U+0020 in strings; outside them
/// it writes only whitespace, kept): the same value, inert on a terminal.
/// These characters can only stand inside strings, where the escape means
/// the same character.
pub fn json(s: &str) -> Cow<'_, str> {
    let escaped = |c: char| is_control(c) && c >= '\x7f';
    if !s.chars().any(escaped) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if escaped(c) {
            write!(out, "\\u{:04x}", c as u32).expect("a String takes any text");
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cut_keeps_whole_characters_and_counts_the_rest() {
        assert_eq!(super::cut("abc", 3), "abc");
        assert_eq!(super::cut("aé€z", 4), "aé… [4 more bytes not kept]");
    }

    use super::*;

    #[test]
    fn columns_count_wide_and_combining_characters_as_a_terminal_does() {
        assert_eq!(width("ssd-日本"), 8);
        assert_eq!(width("cafe\u{301}"), 4, "e and a combining acute are one column");
        assert_eq!(pad("日本", 6), "日本  ");
        assert_eq!(pad_left("x", 3), "  x");
        assert_eq!(fit("日本語のディスク", 7), "日本語…");
        assert_eq!(width(&fit("日本語のディスク", 7)), 7);
        assert_eq!(fit("short", 7), "short");
        assert!(width(&fit("ab\u{2600}\u{fe0f}cd", 4)) <= 4, "{}", fit("ab\u{2600}\u{fe0f}cd", 4));
    }

    const HOSTILE: &str = "\x1b]0;pwned\x07\x1b[2J\r\x1b[32mall tests passed\u{9b}31m\u{202e}gnp.exe\x7f\0";

    fn raw_controls(s: &str) -> Vec<char> {
        s.chars().filter(|c| is_control(*c) && *c != '\n' && *c != '\t').collect()
    }

    #[test]
    fn terminal_shows_controls_and_keeps_lines() {
        let t = terminal(HOSTILE);
        assert_eq!(t, "\\e]0;pwned\\x07\\e[2J\\r\\e[32mall tests passed\\u{9b}31m\\u{202e}gnp.exe\\x7f\\x00");
        assert_eq!(terminal("a\n\tb"), "a\n\tb");
        assert!(matches!(terminal("plain ✓ text"), Cow::Borrowed(_)));
        assert_eq!(terminal(&t), t, "idempotent");
        assert_eq!(one_line("a\nb\tc\r\n"), "a\\nb\\tc\\r\\n");
    }

    #[test]
    fn csv_cells_are_no_formulas() {
        for (input, cell) in [
            ("=HYPERLINK(\"http://x\",\"y\")", "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""),
            ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
            ("\t=1", "\\t=1"),
            ("\r=1", "\\r=1"),
            ("a,b", "\"a,b\""),
            ("two\nlines", "\"two\nlines\""),
            ("\x1b[2Jx", "\\e[2Jx"),
            ("plain", "plain"),
            // Numbers stay numbers.
            ("-3.5", "-3.5"),
            ("+1", "+1"),
            ("-1e308", "-1e308"),
            ("-1:-2.5:3", "-1:-2.5:3"),
            ("-", "'-"),
            ("-inf", "'-inf"),
            ("-1:=2", "'-1:=2"),
        ] {
            assert_eq!(csv_row(&[input]), format!("{cell}\n"), "{input:?}");
        }
        assert_eq!(csv_row(&["a", "", "b\"c"]), "a,,\"b\"\"c\"\n");
    }

    #[test]
    fn markdown_has_no_markup() {
        let m = markdown("<img src=x onerror=alert(1)> | <script>a&b</script>\n# h [l](javascript:x) \\| \x1b");
        assert_eq!(
            m,
            "&lt;img src=x onerror=alert(1)&gt; \\| &lt;script&gt;a&amp;b&lt;/script&gt; # h [l\\](javascript:x) \\\\\\| \\e"
        );
        assert_eq!(
            markdown("![x](http://t/p.gif) [a][b] [d]: http://e [0.9, 1.2]"),
            "![x\\](http://t/p.gif) [a\\][b] [d\\]: http://e [0.9, 1.2]"
        );
        assert!(!m.contains('<') && !m.contains('\n'));
        // Every `|` left is escaped by an odd number of backslashes.
        assert!(m.match_indices('|').all(|(i, _)| m[..i].chars().rev().take_while(|c| *c == '\\').count() % 2 == 1));
    }

    #[test]
    fn xml_is_well_formed_whatever_the_text() {
        let x = xml(&format!("{HOSTILE}<a href=\"&\">\u{fffe}\u{ffff}\u{1}\n\t"));
        assert!(raw_controls(&x).is_empty(), "{x:?}");
        let doc = format!("<r a=\"{x}\">{x}</r>");
        let parsed = roxmltree::Document::parse(&doc).unwrap();
        let text = parsed.root_element().text().unwrap();
        assert!(text.starts_with("\\e]0;pwned\\x07") && text.contains("<a href=\"&\">\\u{fffe}\\u{ffff}\\x01\n\t"));
    }

    #[test]
    fn json_stays_the_same_value() {
        let v = serde_json::json!({ "t": HOSTILE, "list": [1, 2] });
        for s in [serde_json::to_string(&v).unwrap(), serde_json::to_string_pretty(&v).unwrap()] {
            let inert = json(&s);
            assert!(raw_controls(&inert).is_empty(), "{inert}");
            assert_eq!(serde_json::from_str::<serde_json::Value>(&inert).unwrap(), v);
            assert_eq!(terminal(&inert), inert);
        }
    }
}
