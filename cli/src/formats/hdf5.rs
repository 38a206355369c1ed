//! HDF5 files: how to tell one (its signature, at the start of the file or after a user block
//! of 512, 1024, 2048… bytes). The library reads and writes their datasets.

use anyhow::{Context, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// The 8 bytes an HDF5 superblock starts with.
pub const SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// Whether the file `path` is an HDF5 file: the signature at byte 0, 512, 1024, 2048…
/// Only a regular file can be one: anything else (a directory, a FIFO, a device) is not
/// opened, so that its own rules apply where it is refused.
///
/// # Errors
/// The file cannot be reached, opened or read.
pub fn is_hdf5(path: &Path) -> Result<bool> {
    let is_file = std::fs::metadata(path)
        .with_context(|| format!("cannot open {}", path.display()))?
        .is_file();
    if !is_file {
        return Ok(false);
    }
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let len = file.metadata()?.len();
    let mut head = [0u8; 8];
    let mut at = 0u64;
    while at + 8 <= len {
        file.read_exact_at(&mut head, at)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if head == *SIGNATURE {
            return Ok(true);
        }
        at = if at == 0 { 512 } else { at * 2 };
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::{is_hdf5, SIGNATURE};

    #[test]
    fn the_signature_at_the_start_or_after_a_user_block() {
        let dir = tempfile::tempdir().unwrap();
        let at_start = dir.path().join("a.h5");
        std::fs::write(&at_start, [&SIGNATURE[..], &[0; 100]].concat()).unwrap();
        let after = dir.path().join("b.h5");
        std::fs::write(&after, [&[7u8; 2048][..], &SIGNATURE[..], &[0; 8]].concat()).unwrap();
        let other = dir.path().join("c.b2nd");
        std::fs::write(&other, [&[0u8; 1024][..], b"\x89HDF"].concat()).unwrap();
        assert!(is_hdf5(&at_start).unwrap() && is_hdf5(&after).unwrap());
        assert!(!is_hdf5(&other).unwrap() && !is_hdf5(dir.path()).unwrap());
        // A FIFO is not opened (that would wait for a writer).
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        assert!(!is_hdf5(&fifo).unwrap());
    }
}
