//! Profile versions: semver order, and the prefixes users write (`fio@1.2`).

/// `1` matches 1.x.y, `1.2` matches 1.2.y, `1.2.3` only itself.
pub fn matches(version: &str, want: &str) -> bool {
    let have: Vec<&str> = version.split(['.', '-', '+']).collect();
    let want: Vec<&str> = want.split('.').collect();
    want.len() <= have.len() && want.iter().zip(&have).all(|(w, h)| w == h)
}

/// The newest of `versions` matching `want` (`None`: any; `1`, `1.2`, `1.2.3`).
pub fn newest<'a, T>(versions: &'a [T], version_of: impl Fn(&T) -> &str, want: Option<&str>) -> Option<&'a T> {
    versions
        .iter()
        .filter(|v| want.is_none_or(|w| matches(version_of(v), w)))
        .max_by(|a, b| compare(version_of(a), version_of(b)))
}

/// Semver order; a version that does not parse sorts first.
pub fn compare(a: &str, b: &str) -> std::cmp::Ordering {
    match (semver::Version::parse(a), semver::Version::parse(b)) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        (Ok(_), Err(_)) => std::cmp::Ordering::Greater,
        (Err(_), Ok(_)) => std::cmp::Ordering::Less,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_by_semver() {
        let v = ["1.2.0", "1.10.0", "1.2.3", "2.0.0"];
        assert_eq!(newest(&v, |s| s, None), Some(&"2.0.0"));
        assert_eq!(newest(&v, |s| s, Some("1")), Some(&"1.10.0"));
        assert_eq!(newest(&v, |s| s, Some("1.2")), Some(&"1.2.3"));
        assert_eq!(newest(&v, |s| s, Some("1.2.0")), Some(&"1.2.0"));
        assert_eq!(newest(&v, |s| s, Some("3")), None);
    }
}
