//! The guest side of WASM plugins (feature `guest`, target `wasm32-wasip2`):
//! what [`export_workload!`](crate::export_workload) and
//! [`export_parser!`](crate::export_parser) expand to.
//!
//! The macros generate the WIT bindings in the plugin's own crate (so a
//! component carries exactly one world) and forward them to the plain Rust
//! types here; everything that is not tied to generated types lives in this
//! module, where it can be read and tested.

use crate::{Config, Context, Error, ErrorKind, Report, ScratchFile};
use std::cell::RefCell;
use std::marker::PhantomData;
use std::path::Path;
use std::time::Duration;

#[doc(hidden)]
pub use wit_bindgen;

/// The interface file the macros compile in (`sdk/wit/plugin.wit`).
pub const WIT: &str = include_str!("../wit/plugin.wit");
/// The version of the `engine:plugin` package this SDK speaks.
pub const INTERFACE_VERSION: &str = "0.1.0";
/// Where the host preopens the trial's scratch directory.
pub const SCRATCH: &str = "/scratch";

/// The host imports, as the generated bindings offer them.
pub trait Host {
    fn elapsed_ns() -> u64;
    fn cancelled() -> bool;
    fn progress(fraction: f64, note: &str);
    fn log(line: &str);
    fn interval_ms() -> u32;
    fn interval(at_ns: u64, figures: &[crate::Figure]);
    /// `files.file.open`; only workloads import it (a parser has no files).
    fn open_file(name: &str, _create: bool) -> Result<Box<dyn ScratchFile>, Error> {
        Err(Error::unsupported(format!("cannot open {name}: a parser plugin has no files")))
    }
}

/// The `files.file` resource, as the generated bindings offer it.
pub trait RawFile {
    fn read_at(&self, offset: i64, len: i64) -> Result<Vec<u8>, Error>;
    fn write_at(&self, offset: i64, data: &[u8]) -> Result<(), Error>;
    fn sync(&self) -> Result<(), Error>;
    fn size(&self) -> Result<u64, Error>;
}

/// Most bytes asked of the host per `read-at` call. The host reads into a
/// buffer of its own, which is then copied into the plugin's memory: in
/// pieces this size both stay in the CPU's cache.
pub const READ_CHUNK: usize = 256 << 10;

/// A plugin's [`ScratchFile`]: each write is one host call, each read one
/// call per [`READ_CHUNK`].
pub struct GuestFile<R: RawFile> {
    raw: R,
    /// What the last `read_block` returned.
    last: Vec<u8>,
}

impl<R: RawFile> GuestFile<R> {
    pub fn new(raw: R) -> Self {
        GuestFile { raw, last: Vec::new() }
    }
}

fn offset(what: &str, o: u64) -> Result<i64, Error> {
    i64::try_from(o).map_err(|_| Error::failed(format!("{what}: offset {o} is past the largest file offset")))
}

impl<R: RawFile> ScratchFile for GuestFile<R> {
    fn read_block(&mut self, at: u64, max: usize) -> Result<&[u8], Error> {
        // Freed first, so the host's bytes land in the same (cached) memory.
        self.last = Vec::new();
        self.last = self.raw.read_at(offset("read", at)?, max.min(READ_CHUNK) as i64)?;
        Ok(&self.last)
    }
    fn write_at(&mut self, at: u64, data: &[u8]) -> Result<(), Error> {
        self.raw.write_at(offset("write", at)?, data)
    }
    fn sync(&mut self) -> Result<(), Error> {
        self.raw.sync()
    }
    fn size(&self) -> Result<u64, Error> {
        self.raw.size()
    }
}

/// An error the host returned, from its parts (kind as [`kind_index`]).
pub fn error_from(kind: u8, key: Option<String>, message: String) -> Error {
    let kind = match kind {
        0 => ErrorKind::Config,
        1 => ErrorKind::Io,
        2 => ErrorKind::Unsupported,
        3 => ErrorKind::Cancelled,
        _ => ErrorKind::Failed,
    };
    Error { kind, key, message }
}

/// The [`Context`] of a plugin: the scratch directory is `/scratch`, the
/// only directory the sandbox has; everything else goes to the host.
pub struct GuestContext<H: Host> {
    _host: PhantomData<H>,
}

impl<H: Host> Default for GuestContext<H> {
    fn default() -> Self {
        GuestContext { _host: PhantomData }
    }
}

impl<H: Host> Context for GuestContext<H> {
    fn scratch_dir(&self) -> &Path {
        Path::new(SCRATCH)
    }
    /// The device under test is where the scratch directory is; a plugin
    /// sees no other directory.
    fn target_dir(&self) -> &Path {
        Path::new(SCRATCH)
    }
    fn elapsed(&self) -> Duration {
        Duration::from_nanos(H::elapsed_ns())
    }
    fn cancelled(&self) -> bool {
        H::cancelled()
    }
    fn progress(&self, fraction: f64, note: &str) {
        H::progress(fraction, note)
    }
    fn log(&self, line: &str) {
        H::log(line)
    }
    fn interval_every(&self) -> Option<Duration> {
        Some(Duration::from_millis(u64::from(H::interval_ms()))).filter(|d| !d.is_zero())
    }
    fn interval(&self, at: Duration, figures: &[crate::Figure]) {
        H::interval(u64::try_from(at.as_nanos()).unwrap_or(u64::MAX), figures)
    }
    fn open_file(&self, name: &str, create: bool) -> Result<Box<dyn ScratchFile>, Error> {
        // `cx.scratch_dir().join(name)` names the same file (a whole
        // component: `/scratchy` is not in it).
        let rel = Path::new(name).strip_prefix(SCRATCH).ok().and_then(Path::to_str).unwrap_or(name);
        H::open_file(rel, create)
    }
}

/// The configuration as the host passes it.
pub fn config(pairs: Vec<(String, String)>) -> Config {
    pairs.into_iter().collect()
}

/// Names of a trait's constants, as lists of owned strings.
pub fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// A report as (result, value) pairs and its log.
pub fn report_parts(r: Report) -> (Vec<(String, f64)>, String) {
    (r.measurements.into_iter().map(|m| (m.result, m.value)).collect(), r.log)
}

/// The slot holding the one workload or parser of an instance (plugins run
/// one thread; each trial gets a fresh instance).
pub struct Slot<T>(RefCell<Option<T>>);

impl<T> Slot<T> {
    pub const fn new() -> Self {
        Slot(RefCell::new(None))
    }
    pub fn set(&self, t: T) {
        *self.0.borrow_mut() = Some(t);
    }
    /// Runs `f` on the configured value; an error when `configure` was not called.
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> Result<R, Error>) -> Result<R, Error> {
        match self.0.borrow_mut().as_mut() {
            Some(t) => f(t),
            None => Err(Error::failed("the host called the plugin before `configure`")),
        }
    }
}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// [`ErrorKind`] as a small number, for the macro's match on the generated enum.
pub fn kind_index(k: ErrorKind) -> u8 {
    match k {
        ErrorKind::Config => 0,
        ErrorKind::Io => 1,
        ErrorKind::Unsupported => 2,
        ErrorKind::Cancelled => 3,
        ErrorKind::Failed => 4,
    }
}

/// Exports a [`Workload`](crate::Workload) as a WASM plugin (a component of
/// the `engine:plugin/workload-plugin` world). Build the crate as a `cdylib`
/// for `wasm32-wasip2`; on other targets the macro expands to nothing, so
/// the same crate can also be linked natively.
///
/// ```ignore
/// engine_sdk::export_workload!(MyWorkload);
/// ```
#[macro_export]
macro_rules! export_workload {
    ($w:ty) => {
        #[cfg(target_arch = "wasm32")]
        #[doc(hidden)]
        mod __engine_plugin_workload {
            #[allow(unused_imports)]
            use super::*;
            $crate::__plugin_bindings!("workload-plugin", files);
            use exports::engine::plugin::workload::Guest;
            type __Plugin = $w;

            thread_local! {
                static SLOT: $crate::guest::Slot<__Plugin> = const { $crate::guest::Slot::new() };
            }

            struct Export;
            impl Guest for Export {
                fn keys() -> Vec<String> {
                    $crate::guest::names(<__Plugin as $crate::Workload>::KEYS)
                }
                fn results() -> Vec<String> {
                    $crate::guest::names(<__Plugin as $crate::Workload>::RESULTS)
                }
                fn configure(config: Vec<(String, String)>) -> Result<(), engine::plugin::types::Error> {
                    let w = <__Plugin as $crate::Workload>::new(&$crate::guest::config(config)).map_err(__error)?;
                    SLOT.with(|s| s.set(w));
                    Ok(())
                }
                fn run() -> Result<engine::plugin::types::Report, engine::plugin::types::Error> {
                    let cx = $crate::guest::GuestContext::<HostImports>::default();
                    let r = SLOT.with(|s| s.with(|w| $crate::Workload::run(w, &cx))).map_err(__error)?;
                    Ok(__report(r))
                }
            }
            export!(Export);
        }
    };
}

/// Exports a [`Parser`](crate::Parser) as a WASM plugin (a component of the
/// `engine:plugin/parser-plugin` world). See [`export_workload!`].
#[macro_export]
macro_rules! export_parser {
    ($p:ty) => {
        #[cfg(target_arch = "wasm32")]
        #[doc(hidden)]
        mod __engine_plugin_parser {
            #[allow(unused_imports)]
            use super::*;
            $crate::__plugin_bindings!("parser-plugin");
            use exports::engine::plugin::parser::Guest;
            type __Plugin = $p;

            thread_local! {
                static SLOT: $crate::guest::Slot<__Plugin> = const { $crate::guest::Slot::new() };
            }

            struct Export;
            impl Guest for Export {
                fn keys() -> Vec<String> {
                    $crate::guest::names(<__Plugin as $crate::Parser>::KEYS)
                }
                fn results() -> Vec<String> {
                    $crate::guest::names(<__Plugin as $crate::Parser>::RESULTS)
                }
                fn configure(config: Vec<(String, String)>) -> Result<(), engine::plugin::types::Error> {
                    let p = <__Plugin as $crate::Parser>::new(&$crate::guest::config(config)).map_err(__error)?;
                    SLOT.with(|s| s.set(p));
                    Ok(())
                }
                fn parse(
                    output: engine::plugin::types::TrialOutput,
                ) -> Result<engine::plugin::types::Report, engine::plugin::types::Error> {
                    let out = $crate::TrialOutput {
                        stdout: &output.stdout,
                        stderr: &output.stderr,
                        exit_code: output.exit_code,
                    };
                    let r = SLOT.with(|s| s.with(|p| $crate::Parser::parse(p, &out))).map_err(__error)?;
                    Ok(__report(r))
                }
            }
            export!(Export);
        }
    };
}

/// The bindings of one world of `sdk/wit/plugin.wit`, generated in the
/// plugin's crate, plus the glue shared by both export macros.
#[doc(hidden)]
#[macro_export]
macro_rules! __plugin_bindings {
    ($world:literal $(, $files:ident)?) => {
        $crate::guest::wit_bindgen::generate!({
            // A copy of sdk/wit/plugin.wit (a test keeps them equal): the
            // bindings must be generated in the plugin's crate, and a macro
            // cannot hand a file of this crate to `generate!`.
            inline: r#"/// The interface between engine and its WASM plugins (component model,
/// guest target `wasm32-wasip2`). A plugin is one component that targets
/// either the `workload-plugin` or the `parser-plugin` world.
///
/// Versioning: engine refuses a plugin built for another major version of
/// this package (for 0.x, another minor version), naming both versions.
package engine:plugin@0.1.0;

/// Types shared by workloads and parsers; they mirror `engine-sdk`'s Rust
/// types of the same names.
interface types {
    /// The profile's `config:` map with the chosen option values filled in,
    /// as text (key, value).
    type config = list<tuple<string, string>>;

    enum error-kind {
        /// A configuration value is wrong (`key` names it).
        config,
        /// A system call failed (the message names the operation and errno).
        io,
        /// The environment cannot do what was asked.
        unsupported,
        /// The host asked to stop (`host.cancelled` returned true).
        cancelled,
        /// Anything else.
        failed,
    }

    record error {
        kind: error-kind,
        /// The configuration key at fault, for `error-kind.config`.
        key: option<string>,
        message: string,
    }

    /// One value for one result id of the profile; unit and proportion are
    /// the profile's.
    record measurement {
        %result: string,
        value: f64,
    }

    record report {
        measurements: list<measurement>,
        /// Text for the trial's log.
        log: string,
    }

    /// One of a workload's own figures over an interval (`iops` 1/s,
    /// `lat_p99` µs). A name is 1 to 40 letters, digits and `_`.
    record figure {
        name: string,
        unit: string,
        value: f64,
    }

    /// One trial of an external program, as a parser plugin reads it.
    record trial-output {
        stdout: string,
        stderr: string,
        /// The exit code; -1 when a signal ended the program.
        exit-code: s32,
    }
}

/// What engine offers a running plugin, besides WASI: the plugin's only
/// directory is its scratch directory, preopened as `/scratch`.
interface host {
    use types.{figure};

    /// Nanoseconds since the trial started, from a monotonic clock.
    elapsed-ns: func() -> u64;
    /// Whether the user asked to stop, or the trial's time is up: return
    /// soon with a `cancelled` error.
    cancelled: func() -> bool;
    /// How far the trial is (0 to 1), with a short note.
    progress: func(fraction: f64, note: string);
    /// A line for the trial's log.
    log: func(line: string);
    /// How often engine records the workload's own figures, milliseconds;
    /// 0 when it does not.
    interval-ms: func() -> u32;
    /// The workload's own figures over the interval that ended AT-NS after
    /// the trial started (as `elapsed-ns`). At most 32 figures a call.
    interval: func(at-ns: u64, figures: list<figure>);
}

/// Bulk file I/O in the scratch directory, for workloads that measure the
/// disk: one call moves a whole block between the file and the plugin's
/// memory (WASI's file streams move at most 64 KiB a call, through a buffer
/// of their own). A path is relative to the scratch directory and cannot
/// leave it: absolute paths, `..` above it and symbolic links out of it are
/// refused. Every error names the call, the path and what is wrong.
interface files {
    use types.{error};

    resource file {
        /// Opens PATH in the scratch directory. With `create`, it is made
        /// (or emptied) and opened for reading and writing; without, an
        /// existing file is opened for reading only.
        open: static func(path: string, create: bool) -> result<file, error>;
        /// Reads up to LEN bytes (at most 64 MiB) at OFFSET; fewer only at
        /// the end of the file. An offset past the end is an error.
        read-at: func(offset: s64, len: s64) -> result<list<u8>, error>;
        /// Writes all of DATA at OFFSET.
        write-at: func(offset: s64, data: list<u8>) -> result<_, error>;
        /// Flushes the file's data and metadata to the device (fsync).
        sync: func() -> result<_, error>;
        /// The file's size in bytes.
        size: func() -> result<u64, error>;
    }
}

/// A workload: made from its configuration, run once per trial. Each trial
/// gets a fresh instance: `configure`, then `run`.
interface workload {
    use types.{config, error, report};

    /// The configuration keys it reads.
    keys: func() -> list<string>;
    /// The result ids it can return.
    results: func() -> list<string>;
    /// Checks and takes the configuration (engine also calls it once before
    /// the first trial, so a bad value fails the test early, naming the key).
    configure: func(config: config) -> result<_, error>;
    /// One trial in `/scratch`: a value per result id.
    run: func() -> result<report, error>;
}

/// A parser for a tool's output that is awkward for a regex.
interface parser {
    use types.{config, error, report, trial-output};

    keys: func() -> list<string>;
    results: func() -> list<string>;
    configure: func(config: config) -> result<_, error>;
    /// Reads one trial's output: a value per result id.
    parse: func(output: trial-output) -> result<report, error>;
}

world workload-plugin {
    import host;
    import files;
    export workload;
}

world parser-plugin {
    import host;
    export parser;
}
"#,
            world: $world,
            runtime_path: "::engine_sdk::guest::wit_bindgen::rt",
        });

        struct HostImports;
        impl $crate::guest::Host for HostImports {
            fn elapsed_ns() -> u64 {
                engine::plugin::host::elapsed_ns()
            }
            fn cancelled() -> bool {
                engine::plugin::host::cancelled()
            }
            fn progress(fraction: f64, note: &str) {
                engine::plugin::host::progress(fraction, note)
            }
            fn log(line: &str) {
                engine::plugin::host::log(line)
            }
            fn interval_ms() -> u32 {
                engine::plugin::host::interval_ms()
            }
            fn interval(at_ns: u64, figures: &[$crate::Figure]) {
                let figures: Vec<engine::plugin::types::Figure> = figures
                    .iter()
                    .map(|f| engine::plugin::types::Figure {
                        name: f.name.to_string(),
                        unit: f.unit.to_string(),
                        value: f.value,
                    })
                    .collect();
                engine::plugin::host::interval(at_ns, &figures)
            }
            $(
                fn open_file(
                    name: &str,
                    create: bool,
                ) -> Result<Box<dyn $crate::ScratchFile>, $crate::Error> {
                    let f = engine::plugin::$files::File::open(name, create).map_err(__from_wit)?;
                    Ok(Box::new($crate::guest::GuestFile::new(__File(f))))
                }
            )?
        }

        $(
            struct __File(engine::plugin::$files::File);
            impl $crate::guest::RawFile for __File {
                fn read_at(&self, offset: i64, len: i64) -> Result<Vec<u8>, $crate::Error> {
                    self.0.read_at(offset, len).map_err(__from_wit)
                }
                fn write_at(&self, offset: i64, data: &[u8]) -> Result<(), $crate::Error> {
                    self.0.write_at(offset, data).map_err(__from_wit)
                }
                fn sync(&self) -> Result<(), $crate::Error> {
                    self.0.sync().map_err(__from_wit)
                }
                fn size(&self) -> Result<u64, $crate::Error> {
                    self.0.size().map_err(__from_wit)
                }
            }

            fn __from_wit(e: engine::plugin::types::Error) -> $crate::Error {
                $crate::guest::error_from(e.kind as u8, e.key, e.message)
            }
        )?

        fn __error(e: $crate::Error) -> engine::plugin::types::Error {
            use engine::plugin::types::ErrorKind as K;
            let kind = match $crate::guest::kind_index(e.kind) {
                0 => K::Config,
                1 => K::Io,
                2 => K::Unsupported,
                3 => K::Cancelled,
                _ => K::Failed,
            };
            engine::plugin::types::Error { kind, key: e.key, message: e.message }
        }

        fn __report(r: $crate::Report) -> engine::plugin::types::Report {
            let (values, log) = $crate::guest::report_parts(r);
            engine::plugin::types::Report {
                measurements: values
                    .into_iter()
                    .map(|(result, value)| engine::plugin::types::Measurement { result, value })
                    .collect(),
                log,
            }
        }
    };
}
