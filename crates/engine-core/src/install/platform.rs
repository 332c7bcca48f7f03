//! Which downloads apply here: a download's `platform` names operating
//! systems, architectures, or `os-arch` pairs (`linux`, `x86_64`,
//! `linux-aarch64`), comma-separated.

/// Operating systems a profile may name (Rust's `std::env::consts::OS` spelling).
pub(crate) const OSES: &[&str] = &["linux", "macos", "freebsd", "windows"];
/// Architectures a profile may name (`std::env::consts::ARCH` spelling).
pub(crate) const ARCHES: &[&str] = &["x86_64", "aarch64", "x86", "arm", "riscv64", "powerpc64", "s390x", "loongarch64"];

/// One platform item: an OS, an architecture, or both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub os: Option<String>,
    pub arch: Option<String>,
}

/// Parses `linux, x86_64, linux-aarch64`; the unknown word on error.
/// A word of a `platform:` list that names no OS or architecture.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a platform")]
pub(crate) struct UnknownPlatform(pub String);

pub(crate) fn parse(s: &str) -> Result<Vec<Item>, UnknownPlatform> {
    let mut out = Vec::new();
    for raw in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let w = raw.to_ascii_lowercase();
        let item = if OSES.contains(&w.as_str()) {
            Item { os: Some(w), arch: None }
        } else if ARCHES.contains(&w.as_str()) {
            Item { os: None, arch: Some(w) }
        } else if let Some((o, a)) = w.split_once('-')
            && OSES.contains(&o)
            && ARCHES.contains(&a)
        {
            Item { os: Some(o.to_string()), arch: Some(a.to_string()) }
        } else {
            return Err(UnknownPlatform(raw.to_string()));
        };
        out.push(item);
    }
    if out.is_empty() {
        return Err(UnknownPlatform(s.to_string()));
    }
    Ok(out)
}

/// Whether `platform` (absent: everywhere) includes the machine engine runs on.
pub(crate) fn matches_here(platform: Option<&str>) -> bool {
    matches(platform, std::env::consts::OS, std::env::consts::ARCH)
}

pub(crate) fn matches(platform: Option<&str>, os: &str, arch: &str) -> bool {
    let Some(p) = platform else { return true };
    let Ok(items) = parse(p) else { return false };
    items.iter().any(|i| i.os.as_deref().is_none_or(|o| o == os) && i.arch.as_deref().is_none_or(|a| a == arch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platforms_match_os_arch_and_pairs() {
        assert!(matches(None, "linux", "x86_64"));
        assert!(matches(Some("linux"), "linux", "aarch64"));
        assert!(matches(Some("x86_64, aarch64"), "linux", "aarch64"));
        assert!(!matches(Some("linux-aarch64"), "linux", "x86_64"));
        assert!(!matches(Some("windows"), "linux", "x86_64"));
        assert_eq!(parse("linux, sparc").unwrap_err(), UnknownPlatform("sparc".into()));
    }
}
