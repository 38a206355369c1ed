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

/// Most bytes a `.npy` header may have here (NumPy writes a few hundred).
const MAX_NPY_HEADER: usize = 1 << 20;

/// Reads a `.npy` header (magic, version, length and text) after checking what the `.npy`
/// reader would trust blindly: a header length within [`MAX_NPY_HEADER`] and a shape whose
/// item count fits in 64 bits.
fn npy_header_bytes(reader: &mut impl Read) -> Result<Vec<u8>> {
    let mut bytes = vec![0u8; 10];
    reader.read_exact(&mut bytes)?;
    let len = match bytes[6] {
        1 => usize::from(u16::from_le_bytes([bytes[8], bytes[9]])),
        2 | 3 => {
            let mut more = [0u8; 2];
            reader.read_exact(&mut more)?;
            bytes.extend_from_slice(&more);
            u32::from_le_bytes([bytes[8], bytes[9], more[0], more[1]]) as usize
        }
        v => bail!("unknown .npy format version {v}"),
    };
    if len > MAX_NPY_HEADER {
        bail!("the header claims {len} bytes, more than {MAX_NPY_HEADER}");
    }
    let start = bytes.len();
    bytes.resize(start + len, 0);
    reader.read_exact(&mut bytes[start..])?;
    let text = String::from_utf8_lossy(&bytes[start..]);
    if let Some(at) = text.find("'shape'") {
        let dims = text[at..]
            .split_once('(')
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(dims, _)| dims)
            .unwrap_or_default();
        let count = dims
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .try_fold(1u64, |acc, d| {
                d.parse::<u64>().ok().and_then(|d| acc.checked_mul(d))
            });
        if count.is_none() {
            bail!("the shape ({dims}) is not a count of items that fits in 64 bits");
        }
    }
    Ok(bytes)
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
    let header_bytes =
        npy_header_bytes(&mut reader).with_context(|| format!("{name}: bad .npy header"))?;
    let header = NpyHeader::from_reader(&mut &header_bytes[..])
        .with_context(|| format!("{name}: bad .npy header"))?;
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
