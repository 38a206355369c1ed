//! Input files: raw bytes, or a C-order `.npy` array (recognised by its magic bytes, not its
//! name), whose dtype gives the typesize. The array's bytes are used as stored.

use anyhow::{anyhow, bail, Context, Result};
use npyz::{NpyHeader, Order};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek};
use std::path::Path;

/// The first bytes of every `.npy` file.
const NPY_MAGIC: &[u8] = b"\x93NUMPY";

/// What a `.npy` header says about its array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyInfo {
    /// Shape in elements, C order.
    pub shape: Vec<u64>,
    /// The NumPy dtype string (`"<f4"`, `"|u1"`, or a record's list of fields).
    pub dtype: String,
    /// Bytes per element.
    pub typesize: usize,
}

/// An opened input file positioned at its data: raw bytes, or a C-order `.npy` array.
pub struct InputFile {
    /// Reads the data bytes (after the `.npy` header), `nbytes` of them.
    pub reader: BufReader<File>,
    /// Bytes of data to read.
    pub nbytes: u64,
    /// The array's description when the file is a `.npy`.
    pub npy: Option<NpyInfo>,
}

/// The NumPy dtype string of a `.npy` dtype: `"<f4"` for a plain type, the list of fields
/// as NumPy prints a record dtype otherwise.
fn dtype_string(dtype: &npyz::DType) -> String {
    match dtype {
        npyz::DType::Plain(ty) => ty.to_string(),
        other => other.descr().replace(", ]", "]"),
    }
}

/// Opens `path` as raw bytes or `.npy` (by its magic bytes) and checks that a `.npy` file
/// holds as many bytes as its header announces.
///
/// # Errors
/// The file cannot be read; a malformed, Fortran-order or truncated `.npy`.
pub fn open_input(path: &Path) -> Result<InputFile> {
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
    if !is_npy {
        return Ok(InputFile {
            reader,
            nbytes: file_len,
            npy: None,
        });
    }
    let header =
        NpyHeader::from_reader(&mut reader).with_context(|| format!("{name}: bad .npy header"))?;
    if header.order() == Order::Fortran {
        bail!("{name}: the array is in Fortran order; only C-order .npy files are supported");
    }
    let typesize = header.dtype().num_bytes().filter(|&n| n > 0);
    let typesize = typesize.ok_or_else(|| anyhow!("{name}: the .npy dtype has no item size"))?;
    let nbytes = u64::try_from(typesize)
        .ok()
        .and_then(|t| header.len().checked_mul(t))
        .ok_or_else(|| anyhow!("{name}: the .npy shape {:?} overflows", header.shape()))?;
    let header_len = reader
        .stream_position()
        .with_context(|| format!("cannot read {name}"))?;
    if file_len < nbytes.saturating_add(header_len) {
        bail!(
            "{name}: the .npy header announces {nbytes} data bytes, the file holds {}",
            file_len.saturating_sub(header_len)
        );
    }
    Ok(InputFile {
        reader,
        nbytes,
        npy: Some(NpyInfo {
            shape: header.shape().to_vec(),
            dtype: dtype_string(&header.dtype()),
            typesize,
        }),
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
