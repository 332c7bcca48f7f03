//! Where every node of a YAML document is: a map from a path (`options[1].entries[0].label`)
//! to the position of its key and of its value, so semantic checks made on the typed
//! model can point at the exact line and column.

use crate::model::diag::Pos;
use serde_saphyr::granit_parser::{Event, Parser, Span};
use std::collections::HashMap;

/// One step of a path into a YAML document.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Seg {
    Key(String),
    Index(usize),
}

impl From<&str> for Seg {
    fn from(s: &str) -> Self {
        Seg::Key(s.to_string())
    }
}
impl From<String> for Seg {
    fn from(s: String) -> Self {
        Seg::Key(s)
    }
}
impl From<usize> for Seg {
    fn from(i: usize) -> Self {
        Seg::Index(i)
    }
}

/// A path into a document, built with [`path!`](crate::path).
pub type Path = Vec<Seg>;

#[macro_export]
macro_rules! path {
    ($($seg:expr),* $(,)?) => {
        ::std::vec::Vec::<$crate::profile::yaml_index::Seg>::from([$($crate::profile::yaml_index::Seg::from($seg)),*])
    };
}

#[derive(Debug, Clone, Copy)]
struct NodeLoc {
    key: Option<Pos>,
    value: Pos,
    /// A quoted scalar: its text starts one column after `value`.
    quoted: bool,
}

/// Positions of the nodes of one document.
#[derive(Debug, Default)]
pub struct YamlIndex {
    nodes: HashMap<Path, NodeLoc>,
    /// Start and end of every mapping, to place "missing field" errors.
    maps: Vec<(Pos, Pos)>,
}

fn pos(span: &Span) -> Pos {
    Pos::new(span.start.line(), span.start.col() + 1)
}

impl YamlIndex {
    /// Indexes `text`; a syntax error stops indexing where it occurs (the
    /// deserializer reports the error itself).
    pub fn build(text: &str) -> Self {
        let mut events = Parser::new_from_str(text).filter_map(|r| r.ok()).filter(|(e, _)| {
            matches!(
                e,
                Event::Scalar(..)
                    | Event::SequenceStart(..)
                    | Event::SequenceEnd
                    | Event::MappingStart(..)
                    | Event::MappingEnd
                    | Event::Alias(..)
            )
        });
        let mut index = YamlIndex::default();
        if let Some(first) = events.next() {
            index.node(first, &mut events, Vec::new(), None);
        }
        index
    }

    fn node<'a, I>(&mut self, (event, span): (Event<'a>, Span), events: &mut I, path: Path, key: Option<Pos>)
    where
        I: Iterator<Item = (Event<'a>, Span)>,
    {
        let quoted = matches!(
            event,
            Event::Scalar(
                _,
                serde_saphyr::granit_parser::ScalarStyle::SingleQuoted
                    | serde_saphyr::granit_parser::ScalarStyle::DoubleQuoted,
                ..
            )
        );
        self.nodes.insert(path.clone(), NodeLoc { key, value: pos(&span), quoted });
        match event {
            Event::MappingStart(..) => loop {
                let Some((k, kspan)) = events.next() else { return };
                if matches!(k, Event::MappingEnd) {
                    self.maps.push((pos(&span), Pos::new(kspan.end.line(), kspan.end.col() + 1)));
                    return;
                }
                let name = match &k {
                    Event::Scalar(s, ..) => s.to_string(),
                    _ => {
                        // A complex key: skip it and its value.
                        self.skip(k, events);
                        if let Some(v) = events.next() {
                            self.skip(v.0, events);
                        }
                        continue;
                    }
                };
                let Some(v) = events.next() else { return };
                let mut child = path.clone();
                child.push(Seg::Key(name));
                self.node(v, events, child, Some(pos(&kspan)));
            },
            Event::SequenceStart(..) => {
                let mut i = 0;
                loop {
                    let Some(item) = events.next() else { return };
                    if matches!(item.0, Event::SequenceEnd) {
                        return;
                    }
                    let mut child = path.clone();
                    child.push(Seg::Index(i));
                    self.node(item, events, child, None);
                    i += 1;
                }
            }
            _ => {}
        }
    }

    fn skip<'a, I>(&mut self, event: Event<'a>, events: &mut I)
    where
        I: Iterator<Item = (Event<'a>, Span)>,
    {
        let mut depth = match event {
            Event::MappingStart(..) | Event::SequenceStart(..) => 1,
            _ => return,
        };
        for (e, _) in events.by_ref() {
            match e {
                Event::MappingStart(..) | Event::SequenceStart(..) => depth += 1,
                Event::MappingEnd | Event::SequenceEnd => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// Position of the value at `path`; falls back to the nearest ancestor
    /// that exists (a missing field is reported at its parent mapping).
    pub fn value(&self, path: &[Seg]) -> Pos {
        let mut p = path;
        loop {
            if let Some(n) = self.nodes.get(p) {
                return n.value;
            }
            if p.is_empty() {
                return Pos::new(1, 1);
            }
            p = &p[..p.len() - 1];
        }
    }

    /// Position of the key of the mapping entry at `path` (its value's
    /// position for sequence items), with the same fallback as [`Self::value`].
    pub(crate) fn key(&self, path: &[Seg]) -> Pos {
        match self.nodes.get(path) {
            Some(n) => n.key.unwrap_or(n.value),
            None => self.value(path),
        }
    }

    /// Position of byte `offset` inside the single-line scalar at `path`
    /// (exact for plain and quoted scalars without escapes).
    pub(crate) fn value_at(&self, path: &[Seg], offset: usize) -> Pos {
        match self.nodes.get(path) {
            Some(n) => Pos::new(n.value.line, n.value.col + offset + usize::from(n.quoted)),
            None => self.value(path),
        }
    }

    /// Start of the innermost mapping that holds `p` (where a missing key belongs).
    pub(crate) fn enclosing_mapping(&self, p: Pos) -> Option<Pos> {
        let key = |x: Pos| (x.line, x.col);
        self.maps
            .iter()
            .filter(|(s, e)| key(*s) <= key(p) && key(p) <= key(*e))
            .max_by_key(|(s, _)| key(*s))
            .map(|(s, _)| *s)
    }

    /// Whether the document has a node at `path`.
    pub(crate) fn has(&self, path: &[Seg]) -> bool {
        self.nodes.contains_key(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "id: fio\noptions:\n  - id: bs\n    entries:\n      - label: 4KB\n        value: 4k\n      - {label: 2MB, value: 2m}\nargs: [a, '{{bs}}']\n";

    #[test]
    fn finds_keys_and_values() {
        let ix = YamlIndex::build(DOC);
        assert_eq!(ix.key(&path!["id"]), Pos::new(1, 1));
        assert_eq!(ix.value(&path!["id"]), Pos::new(1, 5));
        assert_eq!(ix.value(&path!["options", 0usize, "id"]), Pos::new(3, 9));
        assert_eq!(ix.key(&path!["options", 0usize, "entries", 0usize, "value"]), Pos::new(6, 9));
        assert_eq!(ix.value(&path!["options", 0usize, "entries", 1usize, "label"]), Pos::new(7, 17));
        assert_eq!(ix.value(&path!["args", 1usize]), Pos::new(8, 11));
    }

    #[test]
    fn missing_paths_fall_back_to_the_parent() {
        let ix = YamlIndex::build(DOC);
        assert_eq!(ix.value(&path!["options", 0usize, "name"]), Pos::new(3, 5));
        assert!(!ix.has(&path!["options", 0usize, "name"]));
    }

    #[test]
    fn offsets_inside_scalars_and_enclosing_mappings() {
        let ix = YamlIndex::build(DOC);
        // `args: [a, '{{bs}}']`: the quote is at column 11, `{{` at 12.
        assert_eq!(ix.value_at(&path!["args", 1usize], 0), Pos::new(8, 12));
        assert_eq!(ix.value_at(&path!["id"], 2), Pos::new(1, 7));
        assert_eq!(ix.enclosing_mapping(Pos::new(6, 10)), Some(Pos::new(5, 9)));
        // A block mapping ends where the next key starts: a missing key noticed
        // there belongs to the mapping that just ended.
        assert_eq!(ix.enclosing_mapping(Pos::new(8, 1)), Some(Pos::new(3, 5)));
        assert_eq!(ix.enclosing_mapping(Pos::new(1, 3)), Some(Pos::new(1, 1)));
    }

    #[test]
    fn broken_yaml_does_not_panic() {
        let ix = YamlIndex::build("a: [\n  b: {\n");
        let _ = ix.value(&path!["a", 0usize]);
    }
}
