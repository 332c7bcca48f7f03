//! The system table of a result file: one row per field (hardware, software,
//! notes), one value per identifier, and the "Changed X to Y" lines that say
//! what differs from one identifier to the next.

use crate::model::result::ResultFile;
use crate::sys::text::{one_line, pad, width};

/// One field of the system table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub key: String,
    /// One value per system, in the file's order (`None`: not recorded).
    pub values: Vec<Option<String>>,
}

impl Row {
    /// Whether every system has the same value.
    pub(crate) fn uniform(&self) -> bool {
        self.values.windows(2).all(|w| w[0] == w[1])
    }
}

/// Rows in the order they first appear: hardware, software, notes.
pub(crate) fn table(r: &ResultFile) -> Vec<Row> {
    let mut keys: Vec<String> = Vec::new();
    for s in &r.systems {
        for k in s.hardware.keys().chain(s.software.keys()).chain(s.notes.keys()) {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let mut rows: Vec<Row> = keys
        .into_iter()
        .map(|k| {
            let values = r
                .systems
                .iter()
                .map(|s| s.hardware.get(&k).or_else(|| s.software.get(&k)).or_else(|| s.notes.get(&k)).cloned())
                .collect();
            Row { key: k, values }
        })
        .collect();
    // The run's labels (`--tag`, and the kernel and engine recorded by themselves).
    if r.systems.iter().any(|s| !s.tags.is_empty()) {
        let values = r
            .systems
            .iter()
            .map(|s| {
                (!s.tags.is_empty())
                    .then(|| s.tags.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", "))
            })
            .collect();
        rows.push(Row { key: "Tags".into(), values });
    }
    rows
}

/// For each system after the first: the fields whose value differs from the
/// previous system's, as `Changed Disk Notes to BFQ / relatime,rw.`
pub(crate) fn changes(r: &ResultFile) -> Vec<(String, Vec<String>)> {
    let rows = table(r);
    (1..r.systems.len())
        .map(|i| {
            let lines = rows
                .iter()
                .filter(|row| row.values[i] != row.values[i - 1])
                .map(|row| match &row.values[i] {
                    Some(v) => format!("Changed {} to {v}.", row.key),
                    None => format!("Removed {}.", row.key),
                })
                .collect();
            (r.systems[i].identifier.to_string(), lines)
        })
        .collect()
}

/// The table as text: shared values once, differing ones per identifier,
/// then the changes; every field one line (a shared result's fields are
/// anyone's text).
pub(crate) fn text(r: &ResultFile, cut_to: Option<usize>) -> String {
    let mut out = String::new();
    if r.systems.is_empty() {
        return out;
    }
    let ids: Vec<String> = r.systems.iter().map(|s| one_line(&s.identifier).into_owned()).collect();
    out.push_str(&format!("Systems: {}\n\n", ids.join(" | ")));
    let rows = table(r);
    let kw = rows.iter().map(|row| width(&one_line(&row.key))).max().unwrap_or(0);
    let iw = ids.iter().map(|i| width(i)).max().unwrap_or(0);
    let mut cut = false;
    // A value on one line, cut to what the width leaves (`--detail`: whole).
    // The long lists only: what a storage reader compares (Disk Notes) stays whole.
    const LONG: [&str; 4] = ["Compiler Notes", "Kernel Notes", "Security Notes", "Environment Notes"];
    let mut fit = |key: &str, v: &str, used: usize| -> String {
        let v = one_line(v);
        match cut_to {
            Some(w) if LONG.contains(&key) && width(&v) > w.saturating_sub(used).max(20) => {
                cut = true;
                crate::sys::text::fit(&v, w.saturating_sub(used).max(20)).into_owned()
            }
            _ => v.into_owned(),
        }
    };
    for row in &rows {
        let key = one_line(&row.key);
        if row.uniform() {
            let v = fit(&row.key, row.values[0].as_deref().unwrap_or("unknown"), kw + 4);
            out.push_str(&format!("  {}  {v}\n", pad(&key, kw)));
        } else {
            for (j, (id, v)) in ids.iter().zip(&row.values).enumerate() {
                let key = if j == 0 { key.as_ref() } else { "" };
                let v = fit(&row.key, v.as_deref().unwrap_or("not recorded"), kw + iw + 6);
                out.push_str(&format!("  {}  {}  {v}\n", pad(key, kw), pad(id, iw)));
            }
        }
    }
    if cut {
        out.push_str("  (long fields cut to a line: `engine result show NAME --detail` prints them whole)\n");
    }
    for (id, lines) in changes(r) {
        for l in lines {
            out.push_str(&format!("\n{}: {}", one_line(&id), one_line(&l)));
        }
    }
    out.push('\n');
    out
}

/// The few lines a run prints about the system an identifier ran on; the
/// rest (compiler flags, kernel command line, security notes) is in
/// `engine system-info` and the result file.
pub fn brief(s: &crate::model::result::System, width: usize) -> String {
    const KEYS: [&str; 7] = ["Processor", "Memory", "Disk", "OS", "Kernel", "File-System", "Disk Notes"];
    let mut out = format!("{}\n", one_line(&s.identifier));
    for k in KEYS {
        if let Some(v) = s.hardware.get(k).or_else(|| s.software.get(k)).or_else(|| s.notes.get(k)) {
            // A line each, cut to the width: the whole is in the result.
            let line = format!("  {k:12} {}", one_line(v));
            out.push_str(&crate::sys::text::fit(&line, width.max(40)));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::System;

    fn sys(id: &str, disk_notes: &str) -> System {
        let mut s = System { identifier: id.into(), ..Default::default() };
        s.hardware.insert("Processor".into(), "AMD EPYC (2 Cores)".into());
        s.software.insert("OS".into(), "Debian 12".into());
        s.notes.insert("Disk Notes".into(), disk_notes.into());
        s
    }

    #[test]
    fn shared_rows_once_and_changes_per_identifier() {
        let mut r = ResultFile::new("t");
        r.systems =
            vec![sys("loop0: NONE", "NONE / rw"), sys("loop0: BFQ", "BFQ / rw"), sys("loop0: KYBER", "KYBER / rw")];
        let rows = table(&r);
        assert_eq!(rows.iter().map(|r| r.key.as_str()).collect::<Vec<_>>(), ["Processor", "OS", "Disk Notes"]);
        assert!(rows[0].uniform() && !rows[2].uniform());
        let ch = changes(&r);
        assert_eq!(ch[0], ("loop0: BFQ".to_string(), vec!["Changed Disk Notes to BFQ / rw.".to_string()]));
        assert_eq!(ch[1].1, vec!["Changed Disk Notes to KYBER / rw.".to_string()]);
        let t = text(&r, None);
        assert!(t.contains("  Processor   AMD EPYC (2 Cores)\n"), "{t}");
        assert!(t.contains("  Disk Notes  loop0: NONE   NONE / rw\n              loop0: BFQ    BFQ / rw\n"), "{t}");
        assert!(t.contains("loop0: BFQ: Changed Disk Notes to BFQ / rw."), "{t}");
    }
}
