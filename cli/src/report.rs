//! How commands print: a command first builds a report (what it read or measured, a serde
//! `Serialize` value), then one renderer prints it, as text for people or as JSON for
//! programs. JSON is one object per line with its keys in sorted order, the order
//! `serde_json`'s maps keep.

use anyhow::Result;
use serde::Serialize;
use std::io::Write;

/// A command's result, printable as text or JSON.
pub trait Report: Serialize {
    /// Writes the report for people.
    ///
    /// # Errors
    /// `out` cannot be written.
    fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()>;

    /// Writes the report for programs: by default the report as one JSON object on one line.
    ///
    /// # Errors
    /// `out` cannot be written.
    fn write_json(&self, out: &mut dyn Write) -> Result<()> {
        json_line(out, self)
    }
}

/// Writes `value` as one line of JSON, keys sorted.
///
/// # Errors
/// `value` does not serialise (a map with non-text keys), or `out` cannot be written.
pub fn json_line(out: &mut dyn Write, value: &(impl Serialize + ?Sized)) -> Result<()> {
    let value = serde_json::to_value(value)?;
    writeln!(out, "{value}")?;
    Ok(())
}

/// Prints `report` on stdout, as JSON when `json`, else as text.
///
/// # Errors
/// Stdout cannot be written.
pub fn print(report: &impl Report, json: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        report.write_json(&mut out)
    } else {
        Ok(report.write_text(&mut out)?)
    }
}

/// Prints `report` as text on stderr: the summary of a command whose output is a file. A
/// summary that cannot be written is dropped; the file is written all the same.
pub fn summary(report: &impl Report) {
    let _ = report.write_text(&mut std::io::stderr().lock());
}

#[cfg(test)]
mod tests {
    use super::{json_line, Report};
    use serde::Serialize;

    #[derive(Serialize)]
    struct Example {
        zeta: u8,
        alpha: Vec<&'static str>,
        ratio: f64,
        missing: Option<u8>,
    }

    impl Report for Example {
        fn write_text(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
            writeln!(out, "zeta {}", self.zeta)
        }
    }

    #[test]
    fn json_is_one_line_with_sorted_keys() {
        let report = Example {
            zeta: 1,
            alpha: vec!["a", "b"],
            ratio: 2.5,
            missing: None,
        };
        let mut out = Vec::new();
        report.write_json(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"alpha\":[\"a\",\"b\"],\"missing\":null,\"ratio\":2.5,\"zeta\":1}\n"
        );
        let mut text = Vec::new();
        report.write_text(&mut text).unwrap();
        assert_eq!(text, b"zeta 1\n");
    }

    #[test]
    fn numbers_json_cannot_hold_are_null() {
        let mut out = Vec::new();
        json_line(&mut out, &[f64::NAN, f64::INFINITY, 1.0]).unwrap();
        assert_eq!(out, b"[null,null,1.0]\n");
    }
}
