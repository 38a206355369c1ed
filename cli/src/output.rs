//! Where commands write: outputs are checked first (an existing file is kept unless
//! `--force`; an output that is one of the inputs is refused), then written under a temporary
//! name beside the final one and renamed into place only when complete — so a failed or killed
//! command never leaves a partial file under the final name, and never damages what was there.

use anyhow::{bail, Context, Result};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Refuses `output` when it exists and `force` is not given, or when it is `input` itself
/// (the same file through any name or link).
///
/// # Errors
/// As above; the message names the file.
pub fn check(output: &Path, input: &Path, force: bool) -> Result<()> {
    if let (Ok(o), Ok(i)) = (std::fs::metadata(output), std::fs::metadata(input)) {
        if o.dev() == i.dev() && o.ino() == i.ino() {
            bail!(
                "{} is the input {}; write to another file",
                output.display(),
                input.display()
            );
        }
    }
    if !force && std::fs::symlink_metadata(output).is_ok() {
        bail!("{} exists; pass --force to replace it", output.display());
    }
    Ok(())
}

/// A file or directory being written under a temporary name beside its final path.
#[derive(Debug)]
pub struct Staged {
    temp: PathBuf,
    dest: PathBuf,
    done: bool,
}

impl Staged {
    /// A temporary name beside `dest` (`.NAME.partial-PID`), free of any old leftover.
    ///
    /// # Errors
    /// `dest` has no file name.
    pub fn new(dest: &Path) -> Result<Staged> {
        let name = dest
            .file_name()
            .with_context(|| format!("{} names no file", dest.display()))?;
        let temp = dest.with_file_name(format!(
            ".{}.partial-{}",
            name.to_string_lossy(),
            std::process::id()
        ));
        remove(&temp);
        Ok(Staged {
            temp,
            dest: dest.to_owned(),
            done: false,
        })
    }

    /// Where to write.
    pub fn path(&self) -> &Path {
        &self.temp
    }

    /// Moves the finished output to its final name, replacing what was there.
    ///
    /// # Errors
    /// The rename fails; the message names both paths.
    pub fn commit(mut self) -> Result<()> {
        // A directory (sparse frame) cannot be renamed over a non-empty one.
        if self.temp.is_dir() && self.dest.is_dir() {
            std::fs::remove_dir_all(&self.dest)
                .with_context(|| format!("cannot replace {}", self.dest.display()))?;
        }
        std::fs::rename(&self.temp, &self.dest).with_context(|| {
            format!(
                "cannot move {} to {}",
                self.temp.display(),
                self.dest.display()
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

/// Removes a file or directory if it exists; a leftover that cannot be removed is left alone.
fn remove(path: &Path) {
    let _ = if path.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    };
}
