//! Options: unique ids and labels, entries whose value names agree, defaults that exist.

use super::*;

/// Options: unique ids, unique labels, consistent value names. Returns the
/// placeholder names the profile knows: the built-ins and the options' values.
pub(super) fn check_options(c: &mut Checker, p: &Profile) -> BTreeSet<String> {
    let mut known: BTreeSet<String> = BUILTIN_VARS.iter().map(|s| s.to_string()).collect();
    let mut option_ids = HashSet::new();
    // Which option sets each value name.
    let mut owner: HashMap<String, String> = HashMap::new();
    for (i, o) in p.options.iter().enumerate() {
        if !template::valid_name(&o.id) {
            c.at_value(
                path!["options", i, "id"],
                format!("option id `{}` is not a valid name", o.id),
                Some("use letters, digits, `_` and `-`, starting with a letter".into()),
            );
        }
        if !option_ids.insert(o.id.as_str()) {
            c.at_value(
                path!["options", i, "id"],
                format!("duplicate option id `{}`", o.id),
                Some("each option needs its own id".into()),
            );
            continue;
        }
        if o.entries.is_empty() {
            c.at_value(
                path!["options", i, "entries"],
                format!("option `{}` has no entries", o.id),
                Some("add at least one `- label: …` entry".into()),
            );
        }
        let names = option_value_names(o);
        check_entries(c, i, o, &names);
        check_defaults(c, i, o);
        for n in names {
            if BUILTIN_VARS.contains(&n.as_str()) {
                c.at_value(
                    path!["options", i, "id"],
                    format!("value name `{n}` hides the built-in placeholder of that name"),
                    Some("rename the option or value".into()),
                );
            } else if let Some(prev) = owner.insert(n.clone(), o.id.clone()) {
                c.at_value(
                    path!["options", i, "id"],
                    format!("value name `{n}` is set by both option `{prev}` and option `{}`", o.id),
                    Some("each placeholder must come from one option".into()),
                );
            }
            known.insert(n);
        }
    }
    known
}

/// The entries of option `i`: labels set and unique, value names valid and
/// the same as the first entry's (`names`).
pub(super) fn check_entries(c: &mut Checker, i: usize, o: &OptionDef, names: &BTreeSet<String>) {
    let mut labels = HashSet::new();
    for (j, e) in o.entries.iter().enumerate() {
        if e.label.trim().is_empty() {
            c.at_value(
                path!["options", i, "entries", j, "label"],
                "entry label is empty",
                Some("give the entry the text people should see, like `4KB`".into()),
            );
        }
        if !labels.insert(e.label.to_lowercase()) {
            c.at_value(
                path!["options", i, "entries", j, "label"],
                format!("duplicate entry label `{}` in option `{}`", e.label, o.id),
                Some("labels pick entries on the command line, so each must be unique (case does not count)".into()),
            );
        }
        let mut mine = BTreeSet::new();
        if e.value.is_some() {
            mine.insert(o.id.clone());
        }
        mine.extend(e.values.keys().cloned());
        for k in e.values.keys() {
            if !template::valid_name(k) {
                c.at_key(
                    path!["options", i, "entries", j, "values", k.as_str()],
                    format!("value name `{k}` is not a valid placeholder name"),
                    Some("names use letters, digits, `_` and `-`, starting with a letter or `_`".into()),
                );
            }
        }
        if j > 0 && mine != *names {
            c.at_value(
                path!["options", i, "entries", j],
                value_names_differ(&e.label, names, &mine),
                Some("every entry of an option must set the same named values".into()),
            );
        }
    }
}

/// What an entry (`label`, setting `mine`) lacks or adds against the first entry's `names`.
pub(super) fn value_names_differ(label: &str, names: &BTreeSet<String>, mine: &BTreeSet<String>) -> String {
    let ticked = |v: Vec<&String>| v.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ");
    let missing: Vec<_> = names.difference(mine).collect();
    if !missing.is_empty() {
        format!("entry `{label}` has no value for {}", ticked(missing))
    } else {
        format!("entry `{label}` sets {} that the first entry does not", ticked(mine.difference(names).collect()))
    }
}

/// Each `default:` of option `i` names one of its entries.
pub(super) fn check_defaults(c: &mut Checker, i: usize, o: &OptionDef) {
    for (k, d) in o.default.iter().enumerate() {
        if !o.entries.iter().any(|e| e.label.eq_ignore_ascii_case(d)) {
            let hint = did_you_mean(d, o.entries.iter().map(|e| e.label.as_str()))
                .map(|s| format!("did you mean `{s}`?"))
                .unwrap_or_else(|| {
                    format!(
                        "entries are: {}",
                        o.entries.iter().map(|e| format!("`{}`", e.label)).collect::<Vec<_>>().join(", ")
                    )
                });
            c.at_value(
                path!["options", i, "default", k],
                format!("default `{d}` is not an entry of option `{}`", o.id),
                Some(hint),
            );
        }
    }
}
