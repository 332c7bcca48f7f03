//! Hashes: sha256 for everything that is verified (downloads, archives,
//! plugins, indexes), FNV-1a for short stable names.

use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// sha256 of `bytes`, as lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// sha256 of the file at `p`, read in 1 MiB blocks.
pub fn sha256_file(p: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(p)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

/// FNV-1a over `parts`, each followed by a NUL: stable across versions and
/// builds, for keys and short folder names (not for anything verified).
pub fn fnv1a<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for p in parts {
        for b in p.iter().chain(std::iter::once(&0u8)) {
            h ^= *b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    h
}

/// A folder name's hash of `s`: the first 128 bits of its sha256, as 32
/// hex digits. Folder names come from what a publisher writes (a test's
/// options), so two strings must not be made to share one: 32 bits of
/// FNV-1a were matched by brute force in seconds.
pub fn name_hash(s: &str) -> String {
    hex(&Sha256::digest(s.as_bytes())[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, b"abc").unwrap();
        assert_eq!(sha256_file(&p).unwrap(), sha256_hex(b"abc"));
        assert_eq!(name_hash("abc"), "ba7816bf8f01cfea414140de5dae2223");
        assert_ne!(fnv1a([b"a".as_slice(), b"b"]), fnv1a([b"ab".as_slice()]));
    }
}
