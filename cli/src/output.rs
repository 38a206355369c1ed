//! Where commands write. An output is checked first ([`check`]):
//!
//! * a symbolic link is followed (through every link) to its target, which is what is
//!   written; the link stays;
//! * a missing file is created; an existing regular file is kept unless `--force`; an output
//!   that is one of the inputs (the same file through any name or link) is refused;
//! * a character device or FIFO (`/dev/null`, a pipe) takes the bytes of a raw or `.npy`
//!   output as a stream, written in place (a FIFO must have a reader); a frame, written with
//!   random access, goes to regular files only;
//! * anything else that exists (a directory where a file goes, a block device, a socket) is
//!   refused, never replaced.
//!
//! A file or sparse directory is then written under a temporary name beside its final one and
//! renamed into place only when complete ([`Staged`]) — so a failed or killed command never
//! leaves a partial file under the final name, and never damages what was there; only regular
//! files and directories are ever replaced.

use anyhow::{bail, Context, Result};
use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use strata::frame::file_kind;

/// What a command writes at an output path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Bytes written in order (raw, `.npy`): a character device or FIFO takes them as a stream.
    Bytes,
    /// A frame file, written with random access: a regular file only.
    Frame,
    /// A sparse frame directory.
    Dir,
}

/// An output path that [`check`] accepted.
#[derive(Debug, Clone)]
pub struct Output {
    /// The path as given, for messages.
    shown: PathBuf,
    /// Where the bytes go: the path with its symbolic links followed.
    dest: PathBuf,
    /// Whether `dest` is a device or FIFO written in place.
    stream: bool,
}

impl Output {
    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.shown
    }
}

/// Most symbolic links followed from an output, as the kernel's own limit.
const MAX_LINKS: usize = 40;

/// `path` with its symbolic links followed to a path that is not one (which may not exist).
fn resolve(path: &Path) -> Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&p)
                    .with_context(|| format!("cannot read the link {}", p.display()))?;
                p = match p.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(p),
        }
    }
    bail!(
        "{}: more than {MAX_LINKS} symbolic links (a loop?)",
        path.display()
    )
}

/// Checks `output` for a command writing `form` from `input` (see the module docs).
///
/// # Errors
/// As the module docs say; the message names the file and what it is.
pub fn check(output: &Path, input: &Path, force: bool, form: Form) -> Result<Output> {
    let shown = output.display();
    let dest = resolve(output)?;
    if let (Ok(o), Ok(i)) = (std::fs::metadata(&dest), std::fs::metadata(input)) {
        if o.dev() == i.dev() && o.ino() == i.ino() {
            bail!(
                "{shown} is the input {}; write to another file",
                input.display()
            );
        }
    }
    let kind = match std::fs::symlink_metadata(&dest) {
        Ok(m) => m.file_type(),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Ok(Output {
                shown: output.to_owned(),
                dest,
                stream: false,
            })
        }
        Err(e) => return Err(e).with_context(|| format!("cannot write {shown}")),
    };
    let what = file_kind(kind);
    let replaceable = match form {
        Form::Bytes | Form::Frame => kind.is_file(),
        Form::Dir => kind.is_dir(),
    };
    if replaceable {
        if !force {
            bail!("{shown} exists; pass --force to replace it");
        }
        return Ok(Output {
            shown: output.to_owned(),
            dest,
            stream: false,
        });
    }
    if kind.is_char_device() || kind.is_fifo() {
        if form == Form::Bytes {
            return Ok(Output {
                shown: output.to_owned(),
                dest,
                stream: true,
            });
        }
        bail!("{shown} is {what}: a frame is written in place, give a regular file or a new name");
    }
    let wanted = if form == Form::Dir {
        "a directory"
    } else {
        "a regular file"
    };
    bail!("{shown} is {what}, not {wanted}: strata does not replace it");
}

/// A file or directory being written under a temporary name beside its final path, or a
/// device or FIFO written in place.
#[derive(Debug)]
pub struct Staged {
    temp: PathBuf,
    output: Output,
    done: bool,
}

impl Staged {
    /// A temporary name beside `output`'s destination (`.NAME.partial-PID`), free of any old
    /// leftover; for a device or FIFO, the device itself.
    ///
    /// # Errors
    /// The output names no file.
    pub fn new(output: &Output) -> Result<Staged> {
        if output.stream {
            return Ok(Staged {
                temp: output.dest.clone(),
                output: output.clone(),
                done: true,
            });
        }
        let dest = &output.dest;
        let name = dest
            .file_name()
            .with_context(|| format!("{} names no file", output.shown.display()))?;
        let temp = dest.with_file_name(format!(
            ".{}.partial-{}",
            name.to_string_lossy(),
            std::process::id()
        ));
        remove(&temp);
        Ok(Staged {
            temp,
            output: output.clone(),
            done: false,
        })
    }

    /// Where to write (a frame file or sparse directory; byte outputs open [`Staged::file`]).
    pub fn path(&self) -> &Path {
        &self.temp
    }

    /// Opens the file to write bytes into: the temporary file (created new), or the device or
    /// FIFO (a FIFO that no process reads is an error, not a wait).
    ///
    /// # Errors
    /// The file cannot be opened; the message names the output.
    pub fn file(&self) -> Result<File> {
        let shown = self.output.shown.display();
        if !self.output.stream {
            return OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&self.temp)
                .with_context(|| format!("cannot write {shown}"));
        }
        let file = OpenOptions::new()
            .write(true)
            .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
            .open(&self.temp)
            .map_err(|e| match e.raw_os_error() {
                Some(code) if code == rustix::io::Errno::NXIO.raw_os_error() => {
                    anyhow::anyhow!("cannot write {shown}: no process reads this FIFO")
                }
                _ => anyhow::Error::new(e).context(format!("cannot write {shown}")),
            })?;
        // Blocking writes from here on: a FIFO's reader sets the pace.
        rustix::fs::fcntl_setfl(&file, rustix::fs::OFlags::empty())
            .with_context(|| format!("cannot write {shown}"))?;
        Ok(file)
    }

    /// Moves the finished output to its final name, replacing what was there (nothing to do
    /// for a device or FIFO).
    ///
    /// # Errors
    /// The rename fails; the message names both paths.
    pub fn commit(mut self) -> Result<()> {
        if self.output.stream {
            return Ok(());
        }
        let dest = &self.output.dest;
        // A directory (sparse frame) cannot be renamed over a non-empty one.
        if self.temp.is_dir() && dest.is_dir() {
            std::fs::remove_dir_all(dest)
                .with_context(|| format!("cannot replace {}", self.output.shown.display()))?;
        }
        std::fs::rename(&self.temp, dest).with_context(|| {
            format!(
                "cannot move {} to {}",
                self.temp.display(),
                self.output.shown.display()
            )
        })?;
        self.done = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.done {
            remove(&self.temp);
        }
    }
}

/// Removes a file or directory if it exists (a link itself, not its target); a leftover that
/// cannot be removed is left alone.
fn remove(path: &Path) {
    let _ = match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(_) => return,
    };
}
