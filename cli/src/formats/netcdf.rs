//! netCDF-3 input (classic and 64-bit offset) for `strata import`, read with the `netcdf3`
//! crate: each numeric variable with its dimension names, shape, attributes and data converted
//! from the file's big-endian to little-endian bytes, C order, and the file's global
//! attributes. Attributes keep their netCDF type as a NumPy dtype beside their values.

use anyhow::{anyhow, bail, Context, Result};
use netcdf3::{DataType, DataVector, FileReader};
use serde_json::{json, Value};
use std::path::Path;

/// The first bytes of a netCDF-3 file (classic: version 1; 64-bit offset: version 2).
pub const MAGIC: [&[u8]; 2] = [b"CDF\x01", b"CDF\x02"];

/// The attributes of a variable or of the file.
#[derive(Debug, Default)]
pub struct Attributes {
    /// The values as JSON, in the file's order: text as a string, one number as a number,
    /// several as a list.
    pub values: serde_json::Map<String, Value>,
    /// The NumPy dtype string (`"<f4"`, `"<i2"`…) of each numeric attribute, by name: what its
    /// values were in the file (a JSON number has no width). Text attributes have none.
    pub dtypes: serde_json::Map<String, Value>,
}

impl Attributes {
    fn of(attrs: Vec<&netcdf3::Attribute>) -> Attributes {
        let mut out = Attributes::default();
        for a in attrs {
            let name = a.name().to_owned();
            if a.data_type() != DataType::U8 {
                out.dtypes
                    .insert(name.clone(), Value::from(dtype(&a.data_type())));
            }
            out.values.insert(name, attr_value(a));
        }
        out
    }
}

/// A netCDF-3 file: its variables and its global attributes.
#[derive(Debug)]
pub struct NetCdf {
    /// The variables, in the file's order.
    pub vars: Vec<Variable>,
    /// The attributes of the file itself (`title`, `history`, `Conventions`…).
    pub global_attrs: Attributes,
}

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
    /// Its attributes (`_FillValue`, `missing_value`, `units`…).
    pub attrs: Attributes,
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
    dtype[2..]
        .parse()
        .expect("dtype strings here end in their size")
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
        DataType::U8 => json!(attr
            .get_as_string()
            .unwrap_or_default()
            .trim_end_matches('\0')),
        DataType::I8 => one_or_list(attr.get_i8().unwrap_or_default()),
        DataType::I16 => one_or_list(attr.get_i16().unwrap_or_default()),
        DataType::I32 => one_or_list(attr.get_i32().unwrap_or_default()),
        DataType::F32 => one_or_list(attr.get_f32().unwrap_or_default()),
        DataType::F64 => one_or_list(attr.get_f64().unwrap_or_default()),
    }
}

/// A bounds-checked walk over a netCDF-3 header, before the reader (which trusts counts and
/// lengths) sees it: every count must fit in the bytes left, every type and dimension ID must
/// exist, and every variable's data must fit in the file.
/// Format: the NetCDF Classic and 64-bit Offset Format specification (header grammar).
struct HeaderCheck<'a> {
    b: &'a [u8],
    pos: usize,
}

impl HeaderCheck<'_> {
    fn u32(&mut self, what: &str) -> Result<u32> {
        let end = self.pos + 4;
        let v = self
            .b
            .get(self.pos..end)
            .ok_or_else(|| anyhow!("the header ends inside {what}"))?;
        self.pos = end;
        Ok(u32::from_be_bytes([v[0], v[1], v[2], v[3]]))
    }

    fn skip(&mut self, n: u64, what: &str) -> Result<()> {
        let padded = n
            .checked_add(3)
            .map(|n| n & !3)
            .ok_or_else(|| anyhow!("{what} overflows"))?;
        let end = (self.pos as u64)
            .checked_add(padded)
            .filter(|&e| e <= self.b.len() as u64);
        self.pos = end
            .ok_or_else(|| anyhow!("{what} of {n} bytes runs past the end of the file"))?
            as usize;
        Ok(())
    }

    /// A list header: `tag` (or 0 for an absent list) and its count, which must leave at least
    /// `min_item` bytes per item.
    fn list(&mut self, tag: u32, min_item: u64, what: &str) -> Result<u32> {
        let (t, n) = (self.u32(what)?, self.u32(what)?);
        if (t != tag && t != 0) || (t == 0 && n != 0) {
            bail!("the {what} list has tag {t:#x} and {n} items");
        }
        if u64::from(n) * min_item > (self.b.len() - self.pos) as u64 {
            bail!("the {what} list claims {n} items, more than the file can hold");
        }
        Ok(n)
    }

    fn name(&mut self, what: &str) -> Result<()> {
        let n = self.u32(what)?;
        self.skip(u64::from(n), what)
    }

    /// Bytes of one value of netCDF type `t`.
    fn type_size(t: u32) -> Result<u64> {
        Ok(match t {
            1 | 2 => 1,
            3 => 2,
            4 | 5 => 4,
            6 => 8,
            _ => bail!("unknown netCDF type {t}"),
        })
    }

    fn attrs(&mut self, what: &str) -> Result<()> {
        for _ in 0..self.list(0x0C, 12, what)? {
            self.name("an attribute name")?;
            let size = Self::type_size(self.u32("an attribute type")?)?;
            let n = self.u32("an attribute length")?;
            self.skip(size * u64::from(n), "an attribute's values")?;
        }
        Ok(())
    }

    fn run(&mut self) -> Result<()> {
        let version = match self.b.get(..4) {
            Some(b"CDF\x01") => 1,
            Some(b"CDF\x02") => 2,
            _ => bail!("not a netCDF-3 classic or 64-bit offset file"),
        };
        self.pos = 4;
        let numrecs = self.u32("the record count")?;
        let ndims = self.list(0x0A, 8, "dimension")?;
        let mut dims = Vec::with_capacity(ndims as usize);
        for _ in 0..ndims {
            self.name("a dimension name")?;
            dims.push(self.u32("a dimension length")?);
        }
        self.attrs("global attribute")?;
        for _ in 0..self.list(0x0B, 24, "variable")? {
            self.name("a variable name")?;
            let nd = self.u32("a variable's rank")?;
            if u64::from(nd) * 4 > (self.b.len() - self.pos) as u64 {
                bail!("a variable claims {nd} dimensions");
            }
            let mut bytes: u64 = 1;
            for _ in 0..nd {
                let id = self.u32("a dimension ID")? as usize;
                let len = match dims.get(id) {
                    Some(0) => numrecs, // the record dimension
                    Some(&len) => len,
                    None => bail!(
                        "a variable uses dimension {id}, the file has {}",
                        dims.len()
                    ),
                };
                bytes = bytes.saturating_mul(u64::from(len));
            }
            self.attrs("variable attribute")?;
            let size = Self::type_size(self.u32("a variable type")?)?;
            let _vsize = self.u32("a variable size")?;
            let _begin = if version == 1 {
                u64::from(self.u32("a variable offset")?)
            } else {
                (u64::from(self.u32("a variable offset")?) << 32)
                    | u64::from(self.u32("a variable offset")?)
            };
            if bytes.saturating_mul(size) > self.b.len() as u64 {
                bail!(
                    "a variable claims {} bytes, more than the file holds",
                    bytes.saturating_mul(size)
                );
            }
        }
        Ok(())
    }
}

/// Reads every variable of the netCDF-3 file at `path` (text variables included, as `|S1`)
/// and its global attributes.
///
/// # Errors
/// The file cannot be opened, is not netCDF-3 (its header is checked before it is trusted),
/// or a variable's data cannot be read; the message names the file (and the variable).
pub fn read(path: &Path) -> Result<NetCdf> {
    let name = path.display();
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {name}"))?;
    HeaderCheck { b: &bytes, pos: 0 }
        .run()
        .with_context(|| format!("{name}: not a readable netCDF-3 file"))?;
    drop(bytes);
    let mut reader =
        FileReader::open(path).map_err(|e| anyhow!("{name}: not a readable netCDF-3 file: {e}"))?;
    // The header first (names, shapes, attributes), then each variable's data.
    let global_attrs = Attributes::of(reader.data_set().get_global_attrs());
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
            attrs: Attributes::of(var.get_attrs()),
        })
        .collect();
    for var in &mut vars {
        let values = reader
            .read_var(&var.name)
            .map_err(|e| anyhow!("{e}"))
            .with_context(|| format!("{name}: cannot read variable {}", var.name))?;
        var.data = le_bytes(values);
        let expected = var
            .shape
            .iter()
            .try_fold(dtype_typesize(var.dtype), |acc, &d| {
                usize::try_from(d).ok().and_then(|d| acc.checked_mul(d))
            });
        if expected != Some(var.data.len()) {
            let expected = expected.map_or_else(|| "more than 2^64".to_owned(), |n| n.to_string());
            return Err(anyhow!(
                "{name}: variable {} holds {} bytes, its shape {:?} needs {expected}",
                var.name,
                var.data.len(),
                var.shape
            ));
        }
    }
    Ok(NetCdf { vars, global_attrs })
}

#[cfg(test)]
mod tests {
    use super::{read, HeaderCheck};
    use netcdf3::{DataSet, FileWriter, Version};
    use serde_json::{json, Value};

    /// A netCDF-3 file with a record variable `r(time, x)` int16 (2 records), a fixed
    /// `f(x)` float32 with attributes, and a text variable.
    fn sample(path: &std::path::Path, version: Version) {
        let mut ds = DataSet::new();
        ds.set_unlimited_dim("time", 2).unwrap();
        ds.add_fixed_dim("x", 3).unwrap();
        ds.add_fixed_dim("len", 4).unwrap();
        ds.add_var_i16("r", &["time", "x"]).unwrap();
        ds.add_var_f32("f", &["x"]).unwrap();
        ds.add_var_attr_f64("f", "scale", vec![0.5, 2.0]).unwrap();
        ds.add_var_attr_string("f", "units", "m\0").unwrap();
        ds.add_var_u8("name", &["len"]).unwrap();
        ds.add_var_attr_f32("r", "scale_factor", vec![0.01])
            .unwrap();
        ds.add_var_attr_i16("r", "valid_range", vec![-5, 5])
            .unwrap();
        ds.add_global_attr_string("title", "a sample").unwrap();
        ds.add_global_attr_i32("version", vec![3]).unwrap();
        // Four bytes: the netcdf3 crate pads shorter byte lists with fill values, which its
        // own reader refuses.
        ds.add_global_attr_i8("flags", vec![-1, 2, 3, -4]).unwrap();
        let mut w = FileWriter::create_new(path).unwrap();
        w.set_def(&ds, version, 0).unwrap();
        w.write_var_i16("r", &[1, -2, 3, 4, 5, -6]).unwrap();
        w.write_var_f32("f", &[1.5, 0.0, -2.0]).unwrap();
        w.write_var_u8("name", b"abcd").unwrap();
        w.close().unwrap();
    }

    #[test]
    fn variables_become_little_endian_c_order_arrays() {
        let dir = tempfile::tempdir().unwrap();
        for (file, version) in [("c.nc", Version::Classic), ("o.nc", Version::Offset64Bit)] {
            let path = dir.path().join(file);
            sample(&path, version);
            let file = read(&path).unwrap();
            let vars = &file.vars;
            let names: Vec<&str> = vars.iter().map(|v| v.name.as_str()).collect();
            assert_eq!(names, ["r", "f", "name"]);
            let (r, f, text) = (&vars[0], &vars[1], &vars[2]);
            assert_eq!(r.dims, ["time", "x"]);
            assert_eq!(r.shape, [2, 3]);
            assert_eq!(r.dtype, "<i2");
            let r_items: Vec<u8> = [1i16, -2, 3, 4, 5, -6]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect();
            assert_eq!(r.data, r_items);
            assert_eq!(f.dtype, "<f4");
            assert_eq!(f.data[..4], 1.5f32.to_le_bytes());
            assert_eq!(f.attrs.values["scale"], json!([0.5, 2.0]));
            assert_eq!(f.attrs.values["units"], "m");
            assert_eq!(
                Value::Object(f.attrs.dtypes.clone()),
                json!({"scale": "<f8"})
            );
            // A float32 keeps its exact value (a float32 again once cast back).
            assert_eq!(r.attrs.values["scale_factor"], json!(f64::from(0.01f32)));
            assert_eq!(r.attrs.values["valid_range"], json!([-5, 5]));
            assert_eq!(
                Value::Object(r.attrs.dtypes.clone()),
                json!({"scale_factor": "<f4", "valid_range": "<i2"})
            );
            let g = &file.global_attrs;
            assert_eq!(
                Value::Object(g.values.clone()),
                json!({"title": "a sample", "version": 3, "flags": [-1, 2, 3, -4]})
            );
            assert_eq!(
                Value::Object(g.dtypes.clone()),
                json!({"version": "<i4", "flags": "|i1"})
            );
            assert_eq!((text.dtype, &text.data[..]), ("|S1", &b"abcd"[..]));
        }
    }

    #[test]
    fn lying_headers_are_refused_before_the_reader_sees_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.nc");
        sample(&path, Version::Classic);
        let good = std::fs::read(&path).unwrap();
        assert!(HeaderCheck { b: &good, pos: 0 }.run().is_ok());
        let check = |bytes: &[u8]| {
            HeaderCheck { b: bytes, pos: 0 }
                .run()
                .unwrap_err()
                .to_string()
        };
        // The dimension list claims 2^31 dimensions.
        let mut many = good.clone();
        many[12..16].copy_from_slice(&0x8000_0000u32.to_be_bytes());
        assert!(
            check(&many).contains("more than the file can hold"),
            "{}",
            check(&many)
        );
        // Every truncation is an error, never a read past the end.
        for len in 0..64 {
            assert!(
                HeaderCheck {
                    b: &good[..len],
                    pos: 0
                }
                .run()
                .is_err(),
                "{len}"
            );
        }
        assert!(check(b"HDF\x01").contains("not a netCDF-3"));
        std::fs::write(&path, &many).unwrap();
        let e = format!("{:#}", read(&path).unwrap_err());
        assert!(
            e.starts_with(&format!("{}: not a readable netCDF-3 file", path.display())),
            "{e}"
        );
    }
}
