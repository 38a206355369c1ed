//! netCDF-3 input (classic and 64-bit offset) for `strata import`, read with the `netcdf3`
//! crate: each numeric variable with its dimension names, shape, attributes and data converted
//! from the file's big-endian to little-endian bytes, C order.

use anyhow::{anyhow, Context, Result};
use netcdf3::{DataType, DataVector, FileReader};
use serde_json::{json, Value};
use std::path::Path;

/// One variable of a netCDF-3 file, ready to become a b2nd array.
#[derive(Debug)]
pub struct Variable {
    /// The variable's name.
    pub name: String,
    /// Its dimension names, outermost first.
    pub dims: Vec<String>,
    /// Its shape in elements, C order (the record dimension first, sized by the record count).
    pub shape: Vec<i64>,
    /// The NumPy dtype string of the data (`"|i1"`, `"<i2"`, `"<f4"`…).
    pub dtype: &'static str,
    /// The data, little-endian, C order: `shape.iter().product() * typesize` bytes.
    pub data: Vec<u8>,
    /// Its attributes (`_FillValue`, `missing_value`, `units`…) as JSON values: text as a
    /// string, one number as a number, several as a list.
    pub attrs: serde_json::Map<String, Value>,
}

/// The NumPy dtype string of a netCDF-3 type, as little-endian data (`NC_CHAR` is `|S1`).
fn dtype(data_type: &DataType) -> &'static str {
    match data_type {
        DataType::I8 => "|i1",
        DataType::U8 => "|S1",
        DataType::I16 => "<i2",
        DataType::I32 => "<i4",
        DataType::F32 => "<f4",
        DataType::F64 => "<f8",
    }
}

fn dtype_typesize(dtype: &str) -> usize {
    dtype[2..].parse().expect("dtype strings here end in their size")
}

/// The values as little-endian bytes.
fn le_bytes(values: DataVector) -> Vec<u8> {
    match values {
        DataVector::I8(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        DataVector::U8(v) => v,
        DataVector::I16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        DataVector::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        DataVector::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        DataVector::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

/// An attribute's value as JSON: text as a string (trailing NULs dropped), one number as a number, more as a list.
fn attr_value(attr: &netcdf3::Attribute) -> Value {
    fn one_or_list<T: Copy + Into<Value>>(v: &[T]) -> Value {
        match v {
            [x] => (*x).into(),
            _ => Value::Array(v.iter().map(|&x| x.into()).collect()),
        }
    }
    match attr.data_type() {
        // Text, without the NULs C writers leave at the end.
        DataType::U8 => json!(attr.get_as_string().unwrap_or_default().trim_end_matches('\0')),
        DataType::I8 => one_or_list(attr.get_i8().unwrap_or_default()),
        DataType::I16 => one_or_list(attr.get_i16().unwrap_or_default()),
        DataType::I32 => one_or_list(attr.get_i32().unwrap_or_default()),
        DataType::F32 => one_or_list(attr.get_f32().unwrap_or_default()),
        DataType::F64 => one_or_list(attr.get_f64().unwrap_or_default()),
    }
}

/// Reads every variable of the netCDF-3 file at `path` (text variables included, as `|S1`).
///
/// # Errors
/// The file cannot be opened, is not netCDF-3, or a variable's data cannot be read; the
/// message names the file (and the variable).
pub fn read(path: &Path) -> Result<Vec<Variable>> {
    let name = path.display();
    let mut reader = FileReader::open(path)
        .map_err(|e| anyhow!("{name}: not a readable netCDF-3 file: {e}"))?;
    // The header first (names, shapes, attributes), then each variable's data.
    let mut vars: Vec<Variable> = reader
        .data_set()
        .get_vars()
        .into_iter()
        .map(|var| Variable {
            name: var.name().to_owned(),
            dims: var.dim_names(),
            shape: var
                .get_dims()
                .iter()
                .map(|d| i64::try_from(d.size()).expect("netCDF-3 sizes fit in i64"))
                .collect(),
            dtype: dtype(&var.data_type()),
            data: Vec::new(),
            attrs: var
                .get_attrs()
                .into_iter()
                .map(|a| (a.name().to_owned(), attr_value(a)))
                .collect(),
        })
        .collect();
    for var in &mut vars {
        let values = reader
            .read_var(&var.name)
            .map_err(|e| anyhow!("{e}"))
            .with_context(|| format!("{name}: cannot read variable {}", var.name))?;
        var.data = le_bytes(values);
        let nitems: i64 = var.shape.iter().product();
        let expected = usize::try_from(nitems).unwrap_or(usize::MAX) * dtype_typesize(var.dtype);
        if var.data.len() != expected {
            return Err(anyhow!(
                "{name}: variable {} holds {} bytes, its shape {:?} needs {expected}",
                var.name,
                var.data.len(),
                var.shape
            ));
        }
    }
    Ok(vars)
}
