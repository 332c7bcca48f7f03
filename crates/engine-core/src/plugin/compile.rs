//! Compiling a plugin, bounded. Compiling runs on the host before any limit
//! of the plugin's own applies, and Cranelift's time and memory grow with a
//! function's size and nesting (one function of 2.3 M nested blocks, 7 MB,
//! took 8 s and 1.9 GB). So the component is read first — each core
//! function's body size and block nesting, the file's size — and refused
//! past limits no compiled Rust, C or Go plugin comes near; then it is
//! compiled on a pool of at most [`THREADS`] threads, so a bigger machine
//! does not compile more of a hostile plugin at once.
//! (Compiling in a child process under rlimits was the other way; the
//! limits here bound the same costs before any of them is spent, with no
//! second process to start. `scripts/bench-wasm.sh` measures both sides.)

use thiserror::Error;

/// Largest `.wasm` engine compiles.
pub(crate) const MAX_WASM_BYTES: usize = 16 << 20;
/// Largest body of one function.
pub(crate) const MAX_FUNCTION_BYTES: usize = 1 << 20;
/// Deepest nesting of blocks, loops and ifs in one function.
pub(crate) const MAX_NESTING: usize = 1024;
/// Threads that compile one plugin's functions.
pub(crate) const THREADS: usize = 2;

#[derive(Debug, Error)]
pub enum CompileError {
    #[error("it is {size} bytes, more than the {MAX_WASM_BYTES} bytes engine compiles for a plugin")]
    TooLarge { size: usize },
    #[error(
        "its function {index} has a body of {size} bytes, more than the {MAX_FUNCTION_BYTES} engine compiles (a compile bomb, or generated code to split)"
    )]
    Function { index: usize, size: usize },
    #[error("its function {index} nests blocks {depth} deep, more than the {MAX_NESTING} engine compiles")]
    Nesting { index: usize, depth: usize },
    #[error("truncated or corrupt WebAssembly: {0}")]
    Invalid(String),
    #[error("compiling it was interrupted")]
    Interrupted,
    #[error("compiling it took more than {} s, the most engine waits for a plugin's code", COMPILE_TIME.as_secs())]
    TimeUp,
}

/// The longest engine waits for a plugin to compile (a plugin of the usual
/// size takes about a second; one built to be slow is given up on).
pub(crate) const COMPILE_TIME: std::time::Duration = std::time::Duration::from_secs(60);

/// Reads every core function of the component (nested modules included)
/// and refuses one past the limits; nothing is compiled.
pub(crate) fn check(bytes: &[u8]) -> Result<(), CompileError> {
    use wasmparser::{Operator, Parser, Payload};
    if bytes.len() > MAX_WASM_BYTES {
        return Err(CompileError::TooLarge { size: bytes.len() });
    }
    let invalid = |e: wasmparser::BinaryReaderError| CompileError::Invalid(e.to_string());
    // Functions are numbered within their core module, as tools show them.
    let mut index = 0;
    for payload in Parser::new(0).parse_all(bytes) {
        let body = match payload.map_err(invalid)? {
            Payload::Version { .. } => {
                index = 0;
                continue;
            }
            Payload::CodeSectionEntry(body) => body,
            _ => continue,
        };
        index += 1;
        let size = body.range().len();
        if size > MAX_FUNCTION_BYTES {
            return Err(CompileError::Function { index, size });
        }
        let mut ops = body.get_operators_reader().map_err(invalid)?;
        let (mut depth, mut deepest) = (0usize, 0usize);
        while !ops.eof() {
            match ops.read().map_err(invalid)? {
                Operator::Block { .. } | Operator::Loop { .. } | Operator::If { .. } | Operator::TryTable { .. } => {
                    depth += 1;
                    deepest = deepest.max(depth);
                    if deepest > MAX_NESTING {
                        return Err(CompileError::Nesting { index, depth: deepest });
                    }
                }
                Operator::End => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
    }
    Ok(())
}

/// Compiles `bytes` (already [`check`]ed) on the bounded pool.
/// Engine waits on it, not in it: Ctrl-C and [`COMPILE_TIME`] end the
/// wait (a compile cannot be cut short; one given up on finishes on its
/// own threads, its result dropped).
pub(crate) fn compile(
    engine: &wasmtime::Engine,
    bytes: &[u8],
) -> Result<wasmtime::component::Component, wasmtime::Error> {
    use std::sync::mpsc::RecvTimeoutError;
    let (tx, rx) = std::sync::mpsc::channel();
    let (engine, bytes) = (engine.clone(), bytes.to_vec());
    let job = move || {
        let _ = tx.send(wasmtime::component::Component::new(&engine, &bytes));
    };
    match pool() {
        Some(p) => p.spawn(job),
        None => drop(std::thread::spawn(job)),
    }
    let deadline = std::time::Instant::now() + COMPILE_TIME;
    loop {
        match rx.recv_timeout(std::time::Duration::from_millis(50)) {
            Ok(r) => return r,
            Err(RecvTimeoutError::Disconnected) => return Err(wasmtime::Error::msg("the compiler stopped")),
            Err(RecvTimeoutError::Timeout) if crate::sys::interrupt::requested() => {
                return Err(CompileError::Interrupted.into());
            }
            Err(RecvTimeoutError::Timeout) if std::time::Instant::now() > deadline => {
                return Err(CompileError::TimeUp.into());
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
}

fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new().num_threads(THREADS).thread_name(|i| format!("wasm-compile-{i}")).build().ok()
    })
    .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A core module with one function of `depth` nested blocks.
    fn nested(depth: usize) -> Vec<u8> {
        use wasm_encoder::{CodeSection, Function, FunctionSection, Instruction, Module, TypeSection};
        let mut m = Module::new();
        let mut types = TypeSection::new();
        types.ty().function([], []);
        m.section(&types);
        let mut funcs = FunctionSection::new();
        funcs.function(0);
        m.section(&funcs);
        let mut f = Function::new([]);
        for _ in 0..depth {
            f.instruction(&Instruction::Block(wasm_encoder::BlockType::Empty));
        }
        for _ in 0..depth {
            f.instruction(&Instruction::End);
        }
        f.instruction(&Instruction::End);
        let mut code = CodeSection::new();
        code.function(&f);
        m.section(&code);
        m.finish()
    }

    #[test]
    fn compile_bombs_are_refused_before_compiling() {
        assert!(check(&nested(100)).is_ok());
        assert!(matches!(check(&nested(MAX_NESTING + 1)), Err(CompileError::Nesting { .. })));
        // 2.3 M nested blocks: 4.6 MB of code, refused for its size.
        assert!(matches!(check(&nested(2_300_000)), Err(CompileError::Function { .. })));
        assert!(matches!(check(&vec![0u8; MAX_WASM_BYTES + 1]), Err(CompileError::TooLarge { .. })));
        assert!(matches!(check(b"\0asm\x01\0\0\0\x0a\xff"), Err(CompileError::Invalid(_))));
    }
}
