//! Data files: raw bytes, or a C-order `.npy` array (recognised by its magic bytes, not its
//! name), whose dtype gives the typesize. The data bytes are used as stored.

use super::npy::{self, NpyInfo};
use crate::input;
use anyhow::{anyhow, bail, Context, Result};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// An opened input file positioned at its data: raw bytes, or a C-order `.npy` array.
pub struct InputFile {
    /// Reads the data bytes (after the `.npy` header), `nbytes` of them.
    pub reader: BufReader<File>,
    /// Bytes of data to read.
    pub nbytes: u64,
    /// The array's description when the file is a `.npy`.
    pub npy: Option<NpyInfo>,
}

/// Opens `path` as raw bytes or `.npy` (by its magic bytes) and checks that a `.npy` file
/// holds as many bytes as its header announces.
///
/// # Errors
/// The file cannot be read or is not a regular file ([`input::regular_file`]); a malformed,
/// Fortran-order or truncated `.npy`.
pub fn open_input(path: &Path) -> Result<InputFile> {
    let name = path.display();
    let file_len = input::regular_file(path)?;
    let file = File::open(path).with_context(|| format!("cannot open {name}"))?;
    let mut reader = BufReader::new(file);
    let is_npy = reader
        .fill_buf()
        .with_context(|| format!("cannot read {name}"))?
        .starts_with(npy::MAGIC);
    if !is_npy {
        return Ok(InputFile {
            reader,
            nbytes: file_len,
            npy: None,
        });
    }
    let info = npy::read_header(&mut reader, path, file_len)?;
    Ok(InputFile {
        reader,
        nbytes: info.nbytes,
        npy: Some(info),
    })
}

/// The bytes to compress and, for a `.npy` file, the item size of its dtype.
#[derive(Debug)]
pub struct Input {
    /// The data: the whole raw file, or the array bytes of a `.npy`.
    pub data: Vec<u8>,
    /// Item size in bytes of the `.npy` dtype; `None` for raw input.
    pub typesize: Option<usize>,
}

/// Reads `path` as raw bytes or `.npy`. Data larger than `limit` bytes (the Blosc2 chunk
/// limit, for one chunk) is refused before it is read.
///
/// # Errors
/// The file cannot be read; a malformed, Fortran-order or truncated `.npy`; data over `limit`.
pub fn read_input(path: &Path, limit: u64) -> Result<Input> {
    let name = path.display();
    let input = open_input(path)?;
    if input.nbytes > limit {
        let (size, limit) = (
            usize::try_from(input.nbytes).unwrap_or(usize::MAX),
            usize::try_from(limit).unwrap_or(usize::MAX),
        );
        bail!(
            "{name}: {}",
            strata::Error::MaxBufsizeExceeded { size, limit }
        );
    }
    let nbytes = usize::try_from(input.nbytes).unwrap_or(usize::MAX);
    let mut data = Vec::new();
    data.try_reserve_exact(nbytes)
        .map_err(|_| anyhow!("{name}: cannot allocate {nbytes} bytes"))?;
    input
        .reader
        .take(input.nbytes)
        .read_to_end(&mut data)
        .with_context(|| format!("cannot read {name}"))?;
    Ok(Input {
        data,
        typesize: input.npy.map(|n| n.typesize),
    })
}

#[cfg(test)]
mod tests {
    use super::{open_input, read_input};
    use crate::formats::npy;

    #[test]
    fn raw_files_are_their_bytes_and_npy_files_their_data() {
        let dir = tempfile::tempdir().unwrap();
        let raw = dir.path().join("in.raw");
        std::fs::write(&raw, b"\x93NUMP but not quite").unwrap();
        let input = read_input(&raw, 1 << 20).unwrap();
        assert_eq!(input.data, b"\x93NUMP but not quite");
        assert_eq!(input.typesize, None);

        let arr = dir.path().join("a.bin");
        std::fs::write(&arr, npy::file("<i2", &[3], &[1, 0, 2, 0, 3, 0, 99])).unwrap();
        let opened = open_input(&arr).unwrap();
        assert_eq!(opened.nbytes, 6);
        assert_eq!(opened.npy.unwrap().shape, [3]);
        // Only the announced data bytes, not what trails them.
        let input = read_input(&arr, 1 << 20).unwrap();
        assert_eq!(input.data, [1, 0, 2, 0, 3, 0]);
        assert_eq!(input.typesize, Some(2));
    }

    #[test]
    fn data_over_the_limit_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let raw = dir.path().join("big.raw");
        std::fs::write(&raw, [0u8; 100]).unwrap();
        let e = format!("{:#}", read_input(&raw, 99).unwrap_err());
        assert!(e.starts_with(&format!("{}: ", raw.display())), "{e}");
        assert!(e.contains("100"), "{e}");
        assert_eq!(read_input(&raw, 100).unwrap().data.len(), 100);
        let missing = dir.path().join("missing.raw");
        let e = format!("{:#}", read_input(&missing, 100).unwrap_err());
        assert!(
            e.starts_with(&format!("cannot open {}", missing.display())),
            "{e}"
        );
    }
}
