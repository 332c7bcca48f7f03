//! What ends a command early: a message, a hint, and the exit code it means.
//! Errors of the capabilities below become failures here, each with the
//! code the book documents (book/src/reference/exit-codes.md).

use engine::catalog::ResolveError;
use engine::expand::ExpandError;
use engine::repo::RepoError;
use engine::state::sweep::SweepError;
use engine::store::{self, StoreError};
use std::fmt;

/// Exit codes (also in the book, "Exit codes").
pub mod exit {
    /// Everything asked for ran and was saved.
    pub const OK: i32 = 0;
    /// An error stopped the command (I/O, a result file that cannot be read or written).
    pub const ERROR: i32 = 1;
    /// Bad usage: unknown flag, unknown reference, bad `--option`, bad result name.
    pub const USAGE: i32 = 2;
    /// A profile or suite file is invalid (`engine validate` found errors).
    pub const INVALID: i32 = 3;
    /// Some tests failed or were skipped (missing program, not root); the others ran and were saved.
    pub(crate) const TESTS_FAILED: i32 = 4;
    /// Something could not be installed: a download, a checksum, an
    /// extraction or a build step failed (nothing partial was kept), or system
    /// packages are missing and engine is not root (the command is printed).
    pub const INSTALL_FAILED: i32 = 5;
    /// `--fail-on-regression`: a result is significantly worse than the
    /// baseline by at least the percentage given; the report was written.
    pub(crate) const REGRESSION: i32 = 6;
    /// Interrupted by Ctrl-C or SIGTERM; completed tests were saved.
    pub(crate) const INTERRUPTED: i32 = 130;

    /// Every code with its word for `--help` (the book's table says more; a
    /// test keeps the two in step).
    pub const TABLE: [(i32, &str); 8] = [
        (OK, "ok"),
        (ERROR, "error"),
        (USAGE, "usage"),
        (INVALID, "invalid profile/suite"),
        (TESTS_FAILED, "some tests failed or skipped"),
        (INSTALL_FAILED, "install failed"),
        (REGRESSION, "a regression (--fail-on-regression)"),
        (INTERRUPTED, "interrupted"),
    ];

    /// `Exit codes: 0 ok, 1 error, …`.
    pub fn summary() -> String {
        let codes: Vec<String> = TABLE.iter().map(|(c, w)| format!("{c} {w}")).collect();
        format!("Exit codes: {}.", codes.join(", "))
    }
}

/// An error that ends a command: what to print and which exit code.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    pub message: String,
    pub hint: Option<String>,
}

impl Failure {
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        Failure { code, message: message.into(), hint: None }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// An error (exit 1) that says what it is.
    pub fn error(e: impl fmt::Display) -> Self {
        Failure::new(exit::ERROR, e.to_string())
    }

    /// Bad usage (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure::new(exit::USAGE, message)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

/// A result-store error: an unknown or badly named result is bad usage; an
/// unreadable file is an error, with the way back to its last good version.
impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Self {
        let hint = match &e {
            StoreError::BadName(..) | StoreError::NotFound(_) => {
                Some("list saved results with `engine list results`".to_string())
            }
            StoreError::Invalid { path, .. } => Some(format!(
                "the last good version is kept as {}: restore it with `cp`, or remove the result with `engine result delete NAME`",
                store::backup_path(path).display()
            )),
            StoreError::Locked(_) => Some("wait for the other run to finish".to_string()),
            _ => None,
        };
        let code = match e {
            StoreError::BadName(..) | StoreError::NotFound(_) => exit::USAGE,
            _ => exit::ERROR,
        };
        Failure { code, message: e.to_string(), hint }
    }
}

/// A reference that names nothing usable: bad usage; an invalid file: exit 3.
impl From<ResolveError> for Failure {
    fn from(e: ResolveError) -> Self {
        let e = match e {
            ResolveError::Store(s) => return s.into(),
            ResolveError::Fetch(r) => return r.into(),
            e => e,
        };
        let code = match &e {
            ResolveError::Invalid(_) => exit::INVALID,
            ResolveError::Io { .. } => exit::ERROR,
            _ => exit::USAGE,
        };
        Failure { code, hint: e.hint(), message: e.to_string() }
    }
}

/// A repository error: a bad name, an unknown repository or a missing key is
/// bad usage; the rest (network, trust) is an error.
impl From<RepoError> for Failure {
    fn from(e: RepoError) -> Self {
        let code = match &e {
            RepoError::BadName { .. } | RepoError::Exists(_) | RepoError::Unknown(_) | RepoError::NoKey { .. } => {
                exit::USAGE
            }
            _ => exit::ERROR,
        };
        Failure { code, hint: e.hint(), message: e.to_string() }
    }
}

/// An option that does not select anything: bad usage; an invalid file: exit 3.
impl From<ExpandError> for Failure {
    fn from(e: ExpandError) -> Self {
        match e {
            ExpandError::AtFile(d) => Failure::new(exit::INVALID, d.to_string()),
            ExpandError::CommandLine { msg, hint } => Failure::usage(msg).hint(hint),
        }
    }
}

/// A sweep that cannot be: bad flags are usage; everything else an error.
impl From<SweepError> for Failure {
    fn from(e: SweepError) -> Self {
        let code = match &e {
            SweepError::Usage(_) => exit::USAGE,
            _ => exit::ERROR,
        };
        let f = Failure::new(code, e.to_string());
        match e {
            SweepError::NeedsRoot(_) => f.hint("run engine as root (sudo) for system-state sweeps"),
            SweepError::NotOffered { hint, .. } => f.hint(hint),
            _ => f,
        }
    }
}
