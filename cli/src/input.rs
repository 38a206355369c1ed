//! Input files: raw bytes, or a C-order `.npy` array (recognised by its magic bytes, not its
//! name), whose dtype gives the typesize. The array's bytes are used as stored.

use anyhow::{anyhow, bail, Context, Result};
use npyz::{NpyHeader, Order};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The first bytes of every `.npy` file.
const NPY_MAGIC: &[u8] = b"\x93NUMPY";

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
    let file = File::open(path).with_context(|| format!("cannot open {name}"))?;
    let file_len = file
        .metadata()
        .with_context(|| format!("cannot read {name}"))?
        .len();
    let mut reader = BufReader::new(file);
    let is_npy = reader
        .fill_buf()
        .with_context(|| format!("cannot read {name}"))?
        .starts_with(NPY_MAGIC);
    let (nbytes, typesize) = if is_npy {
        let header = NpyHeader::from_reader(&mut reader)
            .with_context(|| format!("{name}: bad .npy header"))?;
        if header.order() == Order::Fortran {
            bail!("{name}: the array is in Fortran order; only C-order .npy files are supported");
        }
        let typesize = header.dtype().num_bytes().filter(|&n| n > 0);
        let typesize =
            typesize.ok_or_else(|| anyhow!("{name}: the .npy dtype has no item size"))?;
        let nbytes = u64::try_from(typesize)
            .ok()
            .and_then(|t| header.len().checked_mul(t))
            .ok_or_else(|| anyhow!("{name}: the .npy shape {:?} overflows", header.shape()))?;
        (nbytes, Some(typesize))
    } else {
        (file_len, None)
    };
    if nbytes > limit {
        let (size, limit) = (
            usize::try_from(nbytes).unwrap_or(usize::MAX),
            usize::try_from(limit).unwrap_or(usize::MAX),
        );
        bail!(
            "{name}: {}",
            strata::Error::MaxBufsizeExceeded { size, limit }
        );
    }
    let capacity = usize::try_from(nbytes.min(file_len)).unwrap_or(usize::MAX);
    let mut data = Vec::new();
    data.try_reserve_exact(capacity)
        .map_err(|_| anyhow!("{name}: cannot allocate {capacity} bytes"))?;
    reader
        .take(nbytes)
        .read_to_end(&mut data)
        .with_context(|| format!("cannot read {name}"))?;
    if is_npy && (data.len() as u64) < nbytes {
        bail!(
            "{name}: the .npy header announces {nbytes} data bytes, the file holds {}",
            data.len()
        );
    }
    Ok(Input { data, typesize })
}
