//! Writing `.npy` files (NumPy format 1.0, or 2.0 for headers over 64 KiB) whose data the
//! caller streams after the header: any dtype string, C order.

use anyhow::{Context, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// The header of a C-order `.npy` file holding `shape` items of NumPy dtype `dtype` (a type
/// string such as `<f4`, or a record dtype's list of fields as NumPy prints it).
pub fn header(dtype: &str, shape: &[i64]) -> Vec<u8> {
    let descr = if dtype.starts_with('[') {
        dtype.to_owned()
    } else {
        format!("'{dtype}'")
    };
    let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
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
    let mut out = b"\x93NUMPY".to_vec();
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(dict.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out
}

/// Creates `path` and writes the header; the caller writes the data bytes after it.
///
/// # Errors
/// The file cannot be created or written; the message names it.
pub fn create(path: &Path, dtype: &str, shape: &[i64]) -> Result<BufWriter<File>> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut w = BufWriter::new(file);
    w.write_all(&header(dtype, shape))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::header;

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
}
