//! `engine:plugin/files`: bulk file I/O for workload plugins, inside the
//! scratch directory only.
//!
//! WASI's file streams move at most 64 KiB per call, through a zeroed
//! buffer of their own, and hand writes to a blocking thread: a plugin
//! reading 1 MiB blocks ran at 0.12× native. These calls move a whole block
//! per call. They are defined on the linker by hand rather than through
//! bindgen's trait so that a write reads the plugin's memory in place and a
//! read reuses one host buffer (no allocation, no page faults per call).
//!
//! Paths resolve with `openat2(RESOLVE_BENEATH)` from the scratch
//! directory, so no absolute path, `..` or symbolic link leads out of it.

use super::bindings::wit;
use crate::sys::safepath::{Links, openat2_beneath, regular_only};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::Arc;
use wasmtime::component::{Linker, Resource, ResourceTable, ResourceType, WasmList};

/// The interface's name in the linker.
const INTERFACE: &str = "engine:plugin/files@0.1.0";
/// Most bytes one `read-at` moves; the host buffer grows to it at most.
pub(crate) const MAX_READ: i64 = 64 << 20;
/// Most files a plugin may hold open at once.
pub(crate) const MAX_OPEN: usize = 256;
/// What the escape classifier looks for (`plugin::ESCAPE_SIGNS`).
pub(crate) const ESCAPE: &str = "leaves the scratch directory";

/// An open file of a plugin: a `files.file` resource.
#[derive(Debug)]
pub(crate) struct OpenFile {
    fd: OwnedFd,
    path: String,
}

/// The calls' side of a store: the scratch directory, open-file count and
/// the read buffer.
#[derive(Default)]
pub struct Files {
    dir: Option<OwnedFd>,
    open: usize,
    buf: Arc<Vec<u8>>,
}

impl Files {
    /// A descriptor of `scratch` for the calls to resolve from (the
    /// directory engine made, whatever its path names now); `None` leaves a
    /// plugin without files (parsers).
    pub(crate) fn new(scratch: Option<&crate::sys::safepath::Dir>) -> std::io::Result<Files> {
        let dir = match scratch {
            None => None,
            Some(d) => Some(d.fd().try_clone_to_owned()?),
        };
        Ok(Files { dir, ..Files::default() })
    }

    /// `files.file.open`.
    pub(crate) fn open(&mut self, path: &str, create: bool) -> Result<OpenFile, CallError> {
        let call = |fault| CallError { call: format!("files.open({path:?})"), fault };
        let dir = self.dir.as_ref().ok_or_else(|| call(Fault::NoScratch))?;
        if self.open >= MAX_OPEN {
            return Err(call(Fault::TooMany));
        }
        if path.contains('\0') {
            return Err(call(Fault::Nul));
        }
        let flags = if create { libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC } else { libc::O_RDONLY };
        // Without waiting: a FIFO (a test's own step can make one in the
        // scratch) would hold the host call past the plugin's deadline.
        let flags = flags | libc::O_NONBLOCK | libc::O_NOCTTY;
        let fd = openat2_beneath(dir.as_fd(), std::path::Path::new(path), flags, 0o644, Links::Beneath).map_err(
            |e| match e.raw_os_error() {
                Some(libc::EXDEV) => call(Fault::Escape),
                _ => call(Fault::Io(e, "")),
            },
        )?;
        regular_only(&fd).map_err(|e| call(Fault::Io(e, "")))?;
        self.open += 1;
        Ok(OpenFile { fd, path: path.to_string() })
    }

    /// `files.file.read-at`: up to `len` bytes at `offset`, in the reused
    /// buffer (the caller lowers it into the plugin's memory).
    pub(crate) fn read_at(&mut self, f: &OpenFile, offset: i64, len: i64) -> Result<Arc<Vec<u8>>, CallError> {
        let call =
            |fault| CallError { call: format!("files.read-at({:?}, offset {offset}, length {len})", f.path), fault };
        if offset < 0 {
            return Err(call(Fault::NegativeOffset));
        }
        if len < 0 {
            return Err(call(Fault::NegativeLength));
        }
        if len > MAX_READ {
            return Err(call(Fault::TooLong));
        }
        // The last read's buffer is back (the lowering dropped its clone)
        // unless this is the first read.
        let buf = match Arc::get_mut(&mut self.buf) {
            Some(b) => b,
            None => {
                self.buf = Arc::new(Vec::new());
                Arc::get_mut(&mut self.buf).expect("a new Arc is unique")
            }
        };
        buf.clear();
        buf.reserve(len as usize);
        let mut got = 0usize;
        while got < len as usize {
            // SAFETY: the spare capacity holds at least len - got bytes.
            let n = unsafe {
                libc::pread(f.fd.as_raw_fd(), buf.as_mut_ptr().add(got).cast(), len as usize - got, offset + got as i64)
            };
            match n {
                0 => break,
                n if n > 0 => got += n as usize,
                _ => {
                    let e = std::io::Error::last_os_error();
                    if e.kind() != std::io::ErrorKind::Interrupted {
                        return Err(call(Fault::Io(e, "")));
                    }
                }
            }
        }
        // SAFETY: pread initialised the first `got` bytes.
        unsafe { buf.set_len(got) };
        if got == 0 && len > 0 {
            let size = size(f).map_err(|e| call(Fault::Io(e, "")))?;
            if offset as u64 > size {
                return Err(call(Fault::PastEnd(size)));
            }
        }
        Ok(Arc::clone(&self.buf))
    }

    /// `files.file.write-at`: all of `data` (the plugin's memory) at `offset`.
    pub(crate) fn write_at(f: &OpenFile, offset: i64, data: &[u8]) -> Result<(), CallError> {
        let call = |fault| CallError {
            call: format!("files.write-at({:?}, offset {offset}, {} bytes)", f.path, data.len()),
            fault,
        };
        if offset < 0 {
            return Err(call(Fault::NegativeOffset));
        }
        let mut done = 0usize;
        while done < data.len() {
            // SAFETY: the slice is valid for its length.
            let n = unsafe {
                libc::pwrite(f.fd.as_raw_fd(), data[done..].as_ptr().cast(), data.len() - done, offset + done as i64)
            };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                let hint =
                    if e.raw_os_error() == Some(libc::EBADF) { " (opened without `create`: read-only)" } else { "" };
                return Err(call(Fault::Io(e, hint)));
            }
            done += n as usize;
        }
        Ok(())
    }

    /// `files.file.sync`.
    pub(crate) fn sync(f: &OpenFile) -> Result<(), CallError> {
        // SAFETY: a plain fsync of a descriptor we own.
        if unsafe { libc::fsync(f.fd.as_raw_fd()) } != 0 {
            let fault = Fault::Io(std::io::Error::last_os_error(), "");
            return Err(CallError { call: format!("files.sync({:?})", f.path), fault });
        }
        Ok(())
    }

    /// `files.file.size`.
    pub(crate) fn size(f: &OpenFile) -> Result<u64, CallError> {
        size(f).map_err(|e| CallError { call: format!("files.size({:?})", f.path), fault: Fault::Io(e, "") })
    }

    fn closed(&mut self) {
        self.open = self.open.saturating_sub(1);
    }
}

fn size(f: &OpenFile) -> std::io::Result<u64> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat fills `st` when it returns 0.
    if unsafe { libc::fstat(f.fd.as_raw_fd(), st.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fstat succeeded.
    Ok(unsafe { st.assume_init() }.st_size as u64)
}

/// A `files` call the host refused or that failed: the call as the plugin
/// made it, and why (the plugin gets it as text).
#[derive(Debug, thiserror::Error)]
#[error("{call}: {fault}")]
pub(crate) struct CallError {
    call: String,
    fault: Fault,
}

#[derive(Debug, thiserror::Error)]
enum Fault {
    #[error("this plugin has no scratch directory")]
    NoScratch,
    #[error("{MAX_OPEN} files are open already; drop some first")]
    TooMany,
    #[error("the path holds a NUL byte")]
    Nul,
    #[error("the path {ESCAPE}")]
    Escape,
    /// The system's error, and a hint after it.
    #[error("{0}{1}")]
    Io(std::io::Error, &'static str),
    #[error("the offset is negative")]
    NegativeOffset,
    #[error("the length is negative")]
    NegativeLength,
    #[error("a call reads at most {} MiB", MAX_READ >> 20)]
    TooLong,
    #[error("the offset is past the end of the file ({0} bytes)")]
    PastEnd(u64),
}

fn error(e: CallError) -> wit::Error {
    let kind = if matches!(e.fault, Fault::Escape) { wit::ErrorKind::Io } else { wit::ErrorKind::Failed };
    wit::Error { kind, key: None, message: e.to_string() }
}

type Res<T> = wasmtime::Result<(Result<T, wit::Error>,)>;

/// What the `files` interface needs of a store's data: its resource table
/// and the scratch directory's files.
pub(crate) trait FilesView: Send + 'static {
    fn table(&self) -> &ResourceTable;
    fn files_mut(&mut self) -> (&mut ResourceTable, &mut Files);
}

/// Defines `engine:plugin/files` in `l`.
pub(crate) fn add_to_linker<T: FilesView>(l: &mut Linker<T>) -> wasmtime::Result<()> {
    let mut i = l.instance(INTERFACE)?;
    i.resource("file", ResourceType::host::<OpenFile>(), |mut store, rep| {
        let (table, files) = store.data_mut().files_mut();
        table.delete(Resource::<OpenFile>::new_own(rep))?;
        files.closed();
        Ok(())
    })?;
    i.func_wrap("[static]file.open", |mut store, (path, create): (String, bool)| -> Res<Resource<OpenFile>> {
        let (table, files) = store.data_mut().files_mut();
        Ok((match files.open(&path, create) {
            Ok(f) => Ok(table.push(f)?),
            Err(e) => Err(error(e)),
        },))
    })?;
    i.func_wrap(
        "[method]file.read-at",
        |mut store, (file, offset, len): (Resource<OpenFile>, i64, i64)| -> Res<Arc<Vec<u8>>> {
            let (table, files) = store.data_mut().files_mut();
            let f = table.get(&file)?;
            Ok((files.read_at(f, offset, len).map_err(error),))
        },
    )?;
    i.func_wrap(
        "[method]file.write-at",
        |store, (file, offset, data): (Resource<OpenFile>, i64, WasmList<u8>)| -> Res<()> {
            let f = store.data().table().get(&file)?;
            Ok((Files::write_at(f, offset, data.as_le_slice(&store)).map_err(error),))
        },
    )?;
    i.func_wrap("[method]file.sync", |store, (file,): (Resource<OpenFile>,)| -> Res<()> {
        Ok((Files::sync(store.data().table().get(&file)?).map_err(error),))
    })?;
    i.func_wrap("[method]file.size", |store, (file,): (Resource<OpenFile>,)| -> Res<u64> {
        Ok((Files::size(store.data().table().get(&file)?).map_err(error),))
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch() -> (tempfile::TempDir, Files) {
        let d = tempfile::tempdir().unwrap();
        let f = Files::new(Some(&crate::sys::safepath::Dir::open(d.path()).unwrap())).unwrap();
        (d, f)
    }

    #[test]
    fn a_block_written_reads_back_and_the_buffer_is_reused() {
        let (_d, mut fs) = scratch();
        let f = fs.open("data", true).unwrap();
        let block: Vec<u8> = (0..3 << 20).map(|i| (i % 251) as u8).collect();
        Files::write_at(&f, 0, &block).unwrap();
        Files::write_at(&f, block.len() as i64, &block[..10]).unwrap();
        assert_eq!(Files::size(&f).unwrap(), block.len() as u64 + 10);
        let got = fs.read_at(&f, 0, block.len() as i64).unwrap();
        assert!(*got == block);
        let ptr = got.as_ptr();
        drop(got);
        let tail = fs.read_at(&f, block.len() as i64 - 5, 100).unwrap();
        assert_eq!(tail.len(), 15, "a short read only at the end");
        assert_eq!(tail.as_ptr(), ptr, "the buffer is reused");
        assert_eq!(fs.read_at(&f, block.len() as i64 + 10, 1).unwrap().len(), 0, "at the end: EOF");
        Files::sync(&f).unwrap();
    }

    #[test]
    fn paths_out_of_the_scratch_directory_are_refused() {
        let (d, mut fs) = scratch();
        std::os::unix::fs::symlink("/etc", d.path().join("out")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", d.path().join("pw")).unwrap();
        std::fs::create_dir(d.path().join("a")).unwrap();
        for p in ["../x", "/etc/passwd", "out/passwd", "pw", "a/../../x"] {
            let e = fs.open(p, false).err().unwrap_or_else(|| panic!("{p} opened")).to_string();
            assert!(e.starts_with(&format!("files.open({p:?}): ")), "{e}");
            assert!(e.contains(ESCAPE), "{p}: {e}");
        }
        let e = fs.open("missing", false).err().unwrap().to_string();
        assert!(e.contains("No such file"), "{e}");
        assert!(Files::new(None).unwrap().open("x", true).unwrap_err().to_string().contains("no scratch directory"));
    }

    #[test]
    fn bad_offsets_and_lengths_name_the_call() {
        let (_d, mut fs) = scratch();
        let f = fs.open("data", true).unwrap();
        Files::write_at(&f, 0, b"hello").unwrap();
        let e = fs.read_at(&f, 0, -1).unwrap_err().to_string();
        assert_eq!(e, "files.read-at(\"data\", offset 0, length -1): the length is negative");
        let e = fs.read_at(&f, -3, 1).unwrap_err().to_string();
        assert!(e.ends_with("the offset is negative"), "{e}");
        let e = fs.read_at(&f, 6, 1).unwrap_err().to_string();
        assert!(e.ends_with("the offset is past the end of the file (5 bytes)"), "{e}");
        let e = fs.read_at(&f, 0, MAX_READ + 1).unwrap_err().to_string();
        assert!(e.ends_with("a call reads at most 64 MiB"), "{e}");
        let e = Files::write_at(&f, -1, b"x").unwrap_err().to_string();
        assert!(e.starts_with("files.write-at(\"data\", offset -1, 1 bytes)"), "{e}");
        let ro = fs.open("data", false).unwrap();
        let e = Files::write_at(&ro, 0, b"x").unwrap_err().to_string();
        assert!(e.contains("read-only"), "{e}");
    }

    #[test]
    fn a_fifo_in_the_scratch_is_refused_without_waiting() {
        let t = tempfile::tempdir().unwrap();
        let fifo = std::ffi::CString::new(t.path().join("fifo").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let dir = crate::sys::safepath::Dir::open(t.path()).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut files = Files::new(Some(&dir)).unwrap();
            let got: Vec<Result<(), String>> = [("fifo", false), ("fifo", true)]
                .into_iter()
                .map(|(p, create)| files.open(p, create).map(|_| ()).map_err(|e| e.to_string()))
                .collect();
            let _ = tx.send(got);
        });
        // A blocking open of a FIFO without a writer never returns.
        let got = rx.recv_timeout(std::time::Duration::from_secs(10)).expect("files.open returned");
        for r in &got {
            assert!(r.as_ref().unwrap_err().contains("not a regular file"), "{got:?}");
        }
        // And a regular file still opens, for reading and for writing.
        std::fs::write(t.path().join("plain"), b"x").unwrap();
        let dir = crate::sys::safepath::Dir::open(t.path()).unwrap();
        let mut files = Files::new(Some(&dir)).unwrap();
        let f = files.open("plain", false).unwrap();
        assert_eq!(Files::size(&f).unwrap(), 1);
        assert!(files.open("new", true).is_ok());
    }

    #[test]
    fn open_files_are_capped() {
        let (_d, mut fs) = scratch();
        let mut keep = Vec::new();
        for _ in 0..MAX_OPEN {
            keep.push(fs.open("f", true).unwrap());
        }
        assert!(fs.open("f", true).unwrap_err().to_string().contains("open already"));
        fs.closed();
        drop(keep.pop());
        fs.open("f", false).unwrap();
    }
}
