//! Parsers: each names a result, has one kind, a regex that compiles, modifiers that fit, `when:` over known options.

use super::*;

/// Parser `i`: it names a declared result, reads one way, and each of its
/// settings is valid for that way.
pub(super) fn check_parser(c: &mut Checker, i: usize, pd: &ParserDef, p: &Profile, known: &BTreeSet<String>) {
    if !p.results.iter().any(|r| r.id == pd.result) {
        let hint = match did_you_mean(&pd.result, p.results.iter().map(|r| r.id.as_str())) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!(
                "declared results: {}",
                p.results.iter().map(|r| format!("`{}`", r.id)).collect::<Vec<_>>().join(", ")
            ),
        };
        c.at_value(
            path!["parsers", i, "result"],
            format!("parser names no declared result: `{}`", pd.result),
            Some(hint),
        );
    }
    check_parser_kind(c, i, pd);
    if let Some(re) = &pd.regex {
        check_regex(c, i, re);
    }
    if let Some(ptr) = &pd.json_pointer {
        c.text(path!["parsers", i, "json_pointer"], ptr, known);
        if !ptr.is_empty() && !ptr.starts_with('/') {
            c.at_value(
                path!["parsers", i, "json_pointer"],
                format!("JSON pointer `{ptr}` must start with `/`"),
                Some(format!("write `/{}`", ptr.replace('.', "/"))),
            );
        }
    }
    if let Some(t) = &pd.template
        && !t.contains("#_RESULT_#")
    {
        c.at_value(
            path!["parsers", i, "template"],
            "template has no `#_RESULT_#` marker",
            Some("copy a sample output line and put `#_RESULT_#` where the value is".into()),
        );
    }
    if let Some(r) = &pd.rate {
        c.text(path!["parsers", i, "rate", "amount"], &r.amount, known);
        let unit = p.results.iter().find(|x| x.id == pd.result).map(|x| x.unit.as_str());
        check_rate_amount(c, i, &r.amount, unit);
    }
    if let Some(pl) = &pd.plugin {
        c.plugin_path(path!["parsers", i, "plugin", "path"], &pl.path);
        for (k, v) in &pl.config {
            c.text(path!["parsers", i, "plugin", "config", k.as_str()], v.as_str(), known);
        }
    }
    check_parser_modifiers(c, i, pd);
    check_when(c, path!["parsers", i, "when"], &pd.when, p, known);
}

/// A parser sets exactly one of its kinds (`regex`, `template` …).
pub(super) fn check_parser_kind(c: &mut Checker, i: usize, pd: &ParserDef) {
    let kinds: Vec<&str> = [
        pd.regex.as_ref().map(|_| "regex"),
        pd.json_pointer.as_ref().map(|_| "json_pointer"),
        pd.template.as_ref().map(|_| "template"),
        pd.wall_time.then_some("wall_time"),
        pd.rate.as_ref().map(|_| "rate"),
        pd.plugin.as_ref().map(|_| "plugin"),
    ]
    .into_iter()
    .flatten()
    .collect();
    match kinds.len() {
        0 => c.at_value(
            path!["parsers", i],
            "parser has no kind",
            Some("set one of `regex`, `json_pointer`, `template`, `wall_time: true`, `rate` or `plugin`".into()),
        ),
        1 => {}
        _ => c.at_key(
            path!["parsers", i, kinds[1]],
            format!("parser sets both `{}` and `{}`", kinds[0], kinds[1]),
            Some("a parser reads one way; split it into two parsers".into()),
        ),
    }
}

/// A literal rate amount is a positive number or a size, and a size goes
/// with a byte-rate unit (one from placeholders is checked when it is filled).
pub(super) fn check_rate_amount(c: &mut Checker, i: usize, amount: &str, unit: Option<&str>) {
    if amount.contains("{{") || amount.trim().parse::<f64>().is_ok_and(|n| n.is_finite() && n > 0.0) {
        return;
    }
    let at = path!["parsers", i, "rate", "amount"];
    match units::parse_size(amount) {
        Err(e) => c.at_value(at, e.to_string(), Some("a size (`1GiB`, `{{size}}`) or a count (`2500`)".into())),
        Ok(_) if unit.is_some_and(|u| units::byte_rate(u).is_none()) => c.at_value(
            at,
            format!("`{amount}` is a size, but the result's unit `{}` is not a byte rate", unit.unwrap_or_default()),
            Some("give the result a byte-rate unit (MB/s = 10^6 B/s, MiB/s = 2^20 B/s)".into()),
        ),
        Ok(_) => {}
    }
}

/// A parser's regex compiles and captures `value`.
pub(super) fn check_regex(c: &mut Checker, i: usize, re: &str) {
    match Regex::new(re) {
        Err(e) => {
            let first = e.to_string().lines().last().unwrap_or("").trim().to_string();
            c.at_value(
                path!["parsers", i, "regex"],
                format!("regex does not compile: {}", first.trim_start_matches("error: ")),
                Some("the syntax is that of Rust's regex crate (https://docs.rs/regex); in YAML, single quotes keep backslashes as written".into()),
            )
        }
        Ok(r) if !r.capture_names().flatten().any(|n| n == "value") => c.at_value(
            path!["parsers", i, "regex"],
            "regex has no named capture `value`",
            Some("wrap the number in `(?P<value>…)`, e.g. `Files/sec:\\s+(?P<value>[0-9.]+)`".into()),
        ),
        Ok(_) => {}
    }
}

/// Line hints only on a template parser; `multiply_by` and `divide_by` non-zero numbers.
pub(super) fn check_parser_modifiers(c: &mut Checker, i: usize, pd: &ParserDef) {
    for hint_key in ["line_hint", "line_before_hint", "line_after_hint"] {
        let set = match hint_key {
            "line_hint" => pd.line_hint.is_some(),
            "line_before_hint" => pd.line_before_hint.is_some(),
            _ => pd.line_after_hint.is_some(),
        };
        if set && pd.template.is_none() {
            c.at_key(
                path!["parsers", i, hint_key],
                format!("`{hint_key}` only applies to a `template` parser"),
                Some("remove it, or add a `template:` line".into()),
            );
        }
    }
    for (key, v) in [("multiply_by", pd.multiply_by), ("divide_by", pd.divide_by)] {
        if let Some(v) = v
            && (!v.is_finite() || v == 0.0)
        {
            c.at_value(
                path!["parsers", i, key],
                format!("{key} must be a non-zero number"),
                Some("1000000 turns bytes/s into MB/s (10^6); 1048576 into MiB/s (2^20)".into()),
            );
        }
    }
}

/// Checks a `when:` map: every key an option value, every value one an entry sets.
pub(super) fn check_when(
    c: &mut Checker,
    at: Path,
    when: &IndexMap<String, Scalar>,
    p: &Profile,
    known: &BTreeSet<String>,
) {
    for (k, v) in when {
        let mut here = at.clone();
        here.push(k.as_str().into());
        let values: Vec<&str> = p
            .options
            .iter()
            .flat_map(|o| o.entries.iter().map(move |e| (o, e)))
            .flat_map(|(o, e)| e.values.get(k).into_iter().chain(e.value.as_ref().filter(|_| &o.id == k)))
            .map(|s| s.as_str())
            .collect();
        if !known.contains(k) || BUILTIN_VARS.contains(&k.as_str()) {
            let names: BTreeSet<String> =
                known.iter().filter(|n| !BUILTIN_VARS.contains(&n.as_str())).cloned().collect();
            c.at_key(
                here,
                format!("`when` names `{k}`, which no option sets"),
                Some(format!("option values are: {}", list(&names))),
            );
        } else if !values.contains(&v.as_str()) {
            c.at_value(
                here,
                format!("no entry sets `{k}` to `{v}`"),
                Some("compare with the entries' `values:`".into()),
            );
        }
    }
}
