//! Detached Ed25519 signatures of repository indexes, in minisign's format:
//! a publisher can check them with `minisign -Vm index.json -p repo.pub`,
//! and an index signed with `minisign -S` verifies here. Keys are minisign
//! keys too (`repo.pub` holds `RW…`; `repo.key` the secret key, without a
//! password unless the publisher's minisign gave it one).

use std::io::Cursor;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Environment variable holding the password of an encrypted secret key.
use crate::env::ENGINE_REPO_KEY_PASSWORD as KEY_PASSWORD_ENV;

#[derive(Debug, Error)]
pub enum SignError {
    #[error("`{0}` is not a minisign public key (`RW…`, 56 characters) nor a file holding one")]
    BadPublicKey(String),
    #[error("{path}: not a minisign secret key: {msg}")]
    BadSecretKey { path: PathBuf, msg: String },
    #[error("{path}: the secret key is encrypted; set {KEY_PASSWORD_ENV} to its password")]
    NeedsPassword { path: PathBuf },
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("the signature is not in minisign's format: {0}")]
    BadSignature(String),
    #[error("the index is signed by key {found}, not by the repository's key {expected}")]
    WrongKey { expected: String, found: String },
    #[error("the signature does not verify with key {key}: the index was changed after it was signed")]
    Mismatch { key: String },
    #[error("cannot sign: {0}")]
    Sign(String),
}

/// A minisign public key.
#[derive(Clone)]
pub struct PublicKey(minisign::PublicKey);

impl PublicKey {
    /// From `RW…`, the text of a `.pub` file, or the path of one.
    pub fn parse(s: &str) -> Result<PublicKey, SignError> {
        let from_text = |t: &str| {
            t.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with("untrusted comment:"))
                .find_map(|l| minisign::PublicKey::from_base64(l).ok())
        };
        if let Some(k) = from_text(s) {
            return Ok(PublicKey(k));
        }
        let p = Path::new(s);
        if p.is_file()
            && let Ok(t) = std::fs::read_to_string(p)
            && let Some(k) = from_text(&t)
        {
            return Ok(PublicKey(k));
        }
        Err(SignError::BadPublicKey(s.chars().take(80).collect()))
    }

    /// `RW…`: what `--key` takes and `repo list` shows.
    pub fn to_base64(&self) -> String {
        self.0.to_base64()
    }

    /// The key id as minisign prints it (16 hex digits).
    pub fn id(&self) -> String {
        key_id(self.0.keynum())
    }

    /// The text of a `.pub` file (minisign's).
    pub(crate) fn to_file_text(&self) -> String {
        self.0.to_box().map(|b| b.into_string()).unwrap_or_else(|_| format!("{}\n", self.to_base64()))
    }
}

/// `minisign -G -W` (0.11) writes an unencrypted key with an all-zero
/// checksum, which the crate refuses as corrupted; such a key is read as it is
/// (a wrong key still cannot sign anything the public key verifies).
fn unencrypted_without_checksum(text: &str) -> Option<minisign::SecretKey> {
    use ct_codecs::{Base64, Decoder};
    let line = text.lines().nth(1)?.trim();
    let bytes = Base64::decode_to_vec(line, None).ok()?;
    // sig_alg(2) kdf_alg(2) chk_alg(2) salt(32) ops(8) mem(8) keynum(8) sk(64) chk(32)
    let unencrypted = bytes.len() == 158 && bytes[2..4] == [0, 0];
    let zero_checksum = bytes.get(126..158).is_some_and(|c| c.iter().all(|b| *b == 0));
    (unencrypted && zero_checksum).then(|| minisign::SecretKey::from_bytes(&bytes).ok()).flatten()
}

fn key_id(keynum: &[u8]) -> String {
    let mut b = [0u8; 8];
    b.copy_from_slice(&keynum[..8]);
    format!("{:016X}", u64::from_le_bytes(b))
}

/// A secret key ready to sign.
pub struct SecretKey {
    sk: minisign::SecretKey,
    pk: minisign::PublicKey,
}

impl SecretKey {
    /// Reads a minisign secret key file; an encrypted one needs its
    /// `password` (`ENGINE_REPO_KEY_PASSWORD`).
    pub fn load(path: &Path, password: Option<&str>) -> Result<SecretKey, SignError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| SignError::Read { path: path.to_path_buf(), source })?;
        let bad = |msg: String| SignError::BadSecretKey { path: path.to_path_buf(), msg };
        let boxed = minisign::SecretKeyBox::from_string(&text).map_err(|e| bad(e.to_string()))?;
        let sk = match boxed.clone().into_unencrypted_secret_key() {
            Ok(sk) => sk,
            Err(_) if let Some(sk) = unencrypted_without_checksum(&text) => sk,
            Err(e) if !e.to_string().contains("encrypted") => return Err(bad(e.to_string())),
            Err(_) => {
                let Some(pw) = password else {
                    return Err(SignError::NeedsPassword { path: path.to_path_buf() });
                };
                boxed.into_secret_key(Some(pw.to_string())).map_err(|e| bad(e.to_string()))?
            }
        };
        let pk = minisign::PublicKey::from_secret_key(&sk).map_err(|e| bad(e.to_string()))?;
        Ok(SecretKey { sk, pk })
    }

    pub fn public(&self) -> PublicKey {
        PublicKey(self.pk.clone())
    }

    /// The `.minisig` text for `data`.
    pub fn sign(&self, data: &[u8], trusted_comment: &str) -> Result<String, SignError> {
        let sig = minisign::sign(
            Some(&self.pk),
            &self.sk,
            Cursor::new(data),
            Some(trusted_comment),
            Some("signature of an engine repository index"),
        )
        .map_err(|e| SignError::Sign(e.to_string()))?;
        Ok(sig.into_string())
    }
}

/// Writes a new key pair: `PREFIX.pub` and `PREFIX.key` (mode 0600, no
/// password). Refuses to replace either file.
pub fn keygen(prefix: &Path) -> Result<(PathBuf, PathBuf, PublicKey), SignError> {
    let pub_path = with_suffix(prefix, "pub");
    let key_path = with_suffix(prefix, "key");
    for p in [&pub_path, &key_path] {
        if std::fs::symlink_metadata(p).is_ok() {
            return Err(SignError::Write {
                path: p.clone(),
                source: std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "it exists; engine never replaces a key",
                ),
            });
        }
    }
    let kp = minisign::KeyPair::generate_unencrypted_keypair().map_err(|e| SignError::Sign(e.to_string()))?;
    let pk = PublicKey(kp.pk.clone());
    let sk_text = kp
        .sk
        .to_box(Some("engine repository secret key (no password)"))
        .map_err(|e| SignError::Sign(e.to_string()))?
        .into_string();
    {
        use std::io::Write;
        let mut f = crate::sys::fs::create_exclusive(&key_path)
            .map_err(|source| SignError::Write { path: key_path.clone(), source })?;
        f.write_all(sk_text.as_bytes()).map_err(|source| SignError::Write { path: key_path.clone(), source })?;
    }
    std::fs::write(&pub_path, pk.to_file_text())
        .map_err(|source| SignError::Write { path: pub_path.clone(), source })?;
    Ok((pub_path, key_path, pk))
}

fn with_suffix(prefix: &Path, ext: &str) -> PathBuf {
    let mut s = prefix.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

/// Verifies the `.minisig` text `sig` of `data` with `key` (prehashed and
/// legacy signatures both, as `minisign -V` does).
pub fn verify(key: &PublicKey, data: &[u8], sig: &str) -> Result<(), SignError> {
    let sbox = minisign::SignatureBox::from_string(sig).map_err(|e| SignError::BadSignature(e.to_string()))?;
    let found = key_id(sbox.keynum());
    if found != key.id() {
        return Err(SignError::WrongKey { expected: key.id(), found });
    }
    minisign::verify(&key.0, &sbox, Cursor::new(data), true, false, true)
        .map_err(|_| SignError::Mismatch { key: key.id() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_verify_tamper_and_wrong_key() {
        let d = tempfile::tempdir().unwrap();
        let (pubp, keyp, pk) = keygen(&d.path().join("repo")).unwrap();
        assert!(keygen(&d.path().join("repo")).is_err(), "never replaces a key");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&keyp).unwrap().permissions().mode() & 0o777, 0o600);
        let sk = SecretKey::load(&keyp, None).unwrap();
        let sig = sk.sign(b"index", "engine repository index").unwrap();
        let from_file = PublicKey::parse(pubp.to_str().unwrap()).unwrap();
        assert_eq!(from_file.to_base64(), pk.to_base64());
        verify(&pk, b"index", &sig).unwrap();
        assert!(matches!(verify(&pk, b"indeX", &sig), Err(SignError::Mismatch { .. })));
        let (_, _, other) = keygen(&d.path().join("other")).unwrap();
        assert!(matches!(verify(&other, b"index", &sig), Err(SignError::WrongKey { .. })));
        assert!(matches!(verify(&pk, b"index", "garbage"), Err(SignError::BadSignature(_))));
        assert!(PublicKey::parse("RWQnope").is_err());
    }
}
