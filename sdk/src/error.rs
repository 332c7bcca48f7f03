//! What can go wrong in a workload, as text that crosses a sandbox.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A configuration value is wrong (the key is named).
    Config,
    /// A system call failed (the error names the operation and errno).
    Io,
    /// The environment cannot do what was asked (O_DIRECT on tmpfs, not root).
    Unsupported,
    /// The user asked to stop.
    Cancelled,
    /// Anything else the workload reports.
    Failed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    /// The configuration key at fault, for [`ErrorKind::Config`].
    pub key: Option<String>,
    pub message: String,
}

impl Error {
    pub fn config(key: &str, message: impl Into<String>) -> Self {
        Error { kind: ErrorKind::Config, key: Some(key.to_string()), message: message.into() }
    }

    /// `what` failed with `e`: `write data: No space left on device (ENOSPC)`.
    pub fn io(what: &str, e: &std::io::Error) -> Self {
        let errno = e.raw_os_error().and_then(errno_name).map(|n| format!(" ({n})")).unwrap_or_default();
        let text = e.to_string();
        let text = text.split(" (os error").next().unwrap_or(&text).to_string();
        Error { kind: ErrorKind::Io, key: None, message: format!("{what}: {text}{errno}") }
    }

    pub fn unsupported(message: impl Into<String>) -> Self {
        Error { kind: ErrorKind::Unsupported, key: None, message: message.into() }
    }

    pub fn failed(message: impl Into<String>) -> Self {
        Error { kind: ErrorKind::Failed, key: None, message: message.into() }
    }

    pub fn cancelled() -> Self {
        Error { kind: ErrorKind::Cancelled, key: None, message: "cancelled".into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(k) => write!(f, "config `{k}`: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {}

/// Names of the errno values a storage workload meets.
fn errno_name(n: i32) -> Option<&'static str> {
    Some(match n {
        1 => "EPERM",
        2 => "ENOENT",
        5 => "EIO",
        9 => "EBADF",
        12 => "ENOMEM",
        13 => "EACCES",
        17 => "EEXIST",
        20 => "ENOTDIR",
        21 => "EISDIR",
        22 => "EINVAL",
        24 => "EMFILE",
        27 => "EFBIG",
        28 => "ENOSPC",
        30 => "EROFS",
        95 => "EOPNOTSUPP",
        122 => "EDQUOT",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_name_the_errno() {
        let e = Error::io("write data", &std::io::Error::from_raw_os_error(28));
        assert_eq!(e.to_string(), "write data: No space left on device (ENOSPC)");
        assert_eq!(e.kind, ErrorKind::Io);
    }
}
