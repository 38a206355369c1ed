//! NumPy's `.npy` files (format 1.0, 2.0 and 3.0 read; 1.0 written, or 2.0 for headers over
//! 64 KiB), C order: the header is read after checking what the `npyz` parser would trust
//! blindly, and written as NumPy writes it; the data bytes follow the header as stored.

use anyhow::{anyhow, bail, Context, Result};
use npyz::{NpyHeader, Order};
use std::io::{Read, Seek, Write};
use std::path::Path;

/// The first bytes of every `.npy` file.
pub const MAGIC: &[u8] = b"\x93NUMPY";

/// What a `.npy` header says about its array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyInfo {
    /// Shape in elements, C order.
    pub shape: Vec<u64>,
    /// The NumPy dtype string (`"<f4"`, `"|u1"`, or a record's list of fields).
    pub dtype: String,
    /// Bytes per element.
    pub typesize: usize,
    /// Bytes of data after the header: the item count times `typesize`.
    pub nbytes: u64,
}

/// Most bytes a `.npy` header may have here (NumPy writes a few hundred).
const MAX_HEADER: usize = 1 << 20;

/// Reads a `.npy` header (magic, version, length and text) after checking what the `.npy`
/// reader would trust blindly: a header length within [`MAX_HEADER`] and a shape whose
/// item count fits in 64 bits.
fn header_bytes(reader: &mut impl Read) -> Result<Vec<u8>> {
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
    if len > MAX_HEADER {
        bail!("the header claims {len} bytes, more than {MAX_HEADER}");
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

/// Reads the header of the `.npy` file `path` from `reader` (at the file's start, which holds
/// `file_len` bytes), leaving `reader` at the first data byte, and checks that the file holds
/// as many data bytes as the header announces.
///
/// # Errors
/// A malformed, Fortran-order or truncated `.npy`, or a read error; the message names `path`.
pub fn read_header(reader: &mut (impl Read + Seek), path: &Path, file_len: u64) -> Result<NpyInfo> {
    let name = path.display();
    let bytes = header_bytes(reader).with_context(|| format!("{name}: bad .npy header"))?;
    let header = NpyHeader::from_reader(&mut &bytes[..])
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
    Ok(NpyInfo {
        shape: header.shape().to_vec(),
        dtype: dtype_string(&header.dtype()),
        typesize,
        nbytes,
    })
}

/// The header of a C-order `.npy` file holding `shape` items of NumPy dtype `dtype` (a type
/// string such as `<f4`, or a record dtype's list of fields as NumPy prints it).
pub fn header(dtype: &str, shape: &[usize]) -> Vec<u8> {
    let descr = if dtype.starts_with('[') {
        dtype.to_owned()
    } else {
        format!("'{dtype}'")
    };
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}");
    // Version 1.0 has a 2-byte header length; the whole header is padded to 64 bytes.
    let (version, len_bytes) = if dict.len() + 12 < 65_536 {
        (1u8, 2)
    } else {
        (2u8, 4)
    };
    let prefix = 6 + 2 + len_bytes;
    while (prefix + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(dict.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out
}

/// Writes the header of a `.npy` file of `dtype` and `shape` to `w`; the caller writes the
/// data bytes after it.
///
/// # Errors
/// The writer fails.
pub fn write_header(w: &mut impl Write, dtype: &str, shape: &[usize]) -> std::io::Result<()> {
    w.write_all(&header(dtype, shape))
}

/// A whole `.npy` file: the header, then `data`.
#[cfg(test)]
pub(crate) fn file(dtype: &str, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let mut bytes = header(dtype, shape);
    bytes.extend_from_slice(data);
    bytes
}

#[cfg(test)]
mod tests {
    use super::{file, header, read_header, NpyInfo};
    use std::io::{Cursor, Read};
    use std::path::Path;

    /// Reads `bytes` as a whole `.npy` file.
    fn read(bytes: &[u8]) -> anyhow::Result<(NpyInfo, Vec<u8>)> {
        let mut cursor = Cursor::new(bytes);
        let info = read_header(&mut cursor, Path::new("a.npy"), bytes.len() as u64)?;
        let mut data = Vec::new();
        cursor.read_to_end(&mut data)?;
        Ok((info, data))
    }

    #[test]
    fn headers_as_numpy_writes_them() {
        let h = header("<f4", &[2161, 4320]);
        assert_eq!(h.len() % 64, 0);
        assert_eq!(&h[..8], b"\x93NUMPY\x01\x00");
        let text = std::str::from_utf8(&h[10..]).unwrap();
        assert_eq!(
            text.trim_end(),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2161, 4320), }"
        );
        assert!(text.ends_with('\n'));
        let one = header("|u1", &[7]);
        assert!(std::str::from_utf8(&one[10..])
            .unwrap()
            .contains("'shape': (7,)"));
        let rec = header("[('a', '<i4'), ('b', '<f8')]", &[]);
        assert!(std::str::from_utf8(&rec[10..]).unwrap().contains(
            "'descr': [('a', '<i4'), ('b', '<f8')], 'fortran_order': False, 'shape': ()"
        ));
    }

    #[test]
    fn what_is_written_reads_back() {
        for (dtype, shape, typesize) in [
            ("<f4", vec![3, 2], 4),
            ("|u1", vec![5], 1),
            ("<i8", vec![], 8),
            ("[('a', '<i4'), ('b', '<f8')]", vec![2], 12),
        ] {
            let nitems: usize = shape.iter().product();
            let data: Vec<u8> = (0..nitems * typesize).map(|i| i as u8).collect();
            let (info, back) = read(&file(dtype, &shape, &data)).unwrap();
            assert_eq!(info.dtype, dtype);
            assert_eq!(
                info.shape,
                shape.iter().map(|&d| d as u64).collect::<Vec<_>>()
            );
            assert_eq!(info.typesize, typesize);
            assert_eq!(info.nbytes, data.len() as u64);
            assert_eq!(back, data);
        }
    }

    #[test]
    fn a_long_header_is_version_2_and_reads_back() {
        let shape = vec![1; 30_000];
        let mut file = header("<u2", &shape);
        assert_eq!(&file[6..8], b"\x02\x00");
        file.extend_from_slice(&[1, 2]);
        let (info, data) = read(&file).unwrap();
        assert_eq!(info.shape.len(), 30_000);
        assert_eq!(data, [1, 2]);
    }

    #[test]
    fn lying_headers_are_errors_naming_the_file() {
        let message = |bytes: &[u8]| format!("{:#}", read(bytes).unwrap_err());
        // Fewer data bytes than the shape needs.
        let short = file("<f8", &[4], &[0; 31]);
        assert_eq!(
            message(&short),
            "a.npy: the .npy header announces 32 data bytes, the file holds 31"
        );
        // Fortran order.
        let mut fortran = header("<f8", &[1]);
        let at = fortran.windows(5).position(|w| w == b"False").unwrap();
        fortran[at..at + 5].copy_from_slice(b"True ");
        fortran.extend_from_slice(&[0; 8]);
        assert_eq!(
            message(&fortran),
            "a.npy: the array is in Fortran order; only C-order .npy files are supported"
        );
        // A shape whose item count overflows 64 bits.
        let huge = header("<f8", &[1 << 40, 1 << 40]);
        assert!(message(&huge).starts_with("a.npy: bad .npy header: the shape (1099511627776"));
        // A header length over the limit, and an unknown version.
        let mut long = header("<f8", &[1]);
        long[6] = 2;
        long[8..12].copy_from_slice(&(2u32 << 20).to_le_bytes());
        assert!(message(&long).contains("more than 1048576"));
        let mut v9 = header("<f8", &[1]);
        v9[6] = 9;
        assert!(message(&v9).contains("unknown .npy format version 9"));
    }
}
