//! Sizes in bytes as people write them (`4096`, `48K`, `8M`, `1 GiB`), in one grammar for
//! every place Strata reads one: the `STRATA_L1D` / `STRATA_L2` / `STRATA_L3` overrides, the
//! cache sizes of Linux sysfs, and the `strata` command's size arguments (`--chunksize 8M`).
#![forbid(unsafe_code)]

/// Why a text is not a size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// What follows the digits is not one of the units.
    #[error("not a size (use a number with K, M or G)")]
    Unit,
    /// No digits, 0, or more bytes than a `usize` holds.
    #[error("not a positive size in bytes")]
    NotPositive,
}

/// Parses a size in bytes: optional blanks, decimal digits, optional blanks, an optional
/// unit, optional blanks. Units are binary multiples, in any case: `B` (×1), `K` / `KB` /
/// `KiB` (×2¹⁰), `M` / `MB` / `MiB` (×2²⁰), `G` / `GB` / `GiB` (×2³⁰). The size must be
/// positive and fit in a `usize`.
///
/// ```
/// use strata::scheduler::{parse_size, SizeError};
/// assert_eq!(parse_size("8M"), Ok(8 << 20));
/// assert_eq!(parse_size("48 KiB"), Ok(48 << 10));
/// assert_eq!(parse_size("12X"), Err(SizeError::Unit));
/// assert_eq!(parse_size("0"), Err(SizeError::NotPositive));
/// ```
///
/// # Errors
/// [`SizeError::Unit`] for an unknown unit (whatever the digits), else
/// [`SizeError::NotPositive`] for missing digits, 0 or overflow.
pub fn parse_size(text: &str) -> Result<usize, SizeError> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return Err(SizeError::Unit),
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .filter(|&n| n > 0)
        .ok_or(SizeError::NotPositive)
}

#[cfg(test)]
mod tests {
    use super::{parse_size, SizeError};

    #[test]
    fn plain_numbers_and_every_unit() {
        assert_eq!(parse_size("32768"), Ok(32768));
        assert_eq!(parse_size("7B"), Ok(7));
        for (unit, shift) in [("K", 10), ("M", 20), ("G", 30)] {
            for spelling in [unit.to_owned(), format!("{unit}B"), format!("{unit}iB")] {
                assert_eq!(
                    parse_size(&format!("3{spelling}")),
                    Ok(3 << shift),
                    "{spelling}"
                );
                let lower = spelling.to_ascii_lowercase();
                assert_eq!(parse_size(&format!("3{lower}")), Ok(3 << shift), "{lower}");
            }
        }
    }

    #[test]
    fn blanks_around_the_number_and_the_unit() {
        assert_eq!(parse_size(" 2048K\n"), Ok(2 << 20));
        assert_eq!(parse_size("1 MiB"), Ok(1 << 20));
        assert_eq!(parse_size("\t64\t"), Ok(64));
    }

    #[test]
    fn an_unknown_unit_is_said_before_the_digits() {
        assert_eq!(parse_size("12X"), Err(SizeError::Unit));
        assert_eq!(parse_size("1T"), Err(SizeError::Unit));
        assert_eq!(parse_size("-1"), Err(SizeError::Unit));
        assert_eq!(parse_size("abc"), Err(SizeError::Unit));
        assert_eq!(parse_size("1.5M"), Err(SizeError::Unit));
    }

    #[test]
    fn empty_zero_and_overflow_are_not_positive() {
        assert_eq!(parse_size(""), Err(SizeError::NotPositive));
        assert_eq!(parse_size("K"), Err(SizeError::NotPositive));
        assert_eq!(parse_size("0"), Err(SizeError::NotPositive));
        assert_eq!(parse_size("0G"), Err(SizeError::NotPositive));
        assert_eq!(
            parse_size("99999999999999999999"),
            Err(SizeError::NotPositive)
        );
        let max_g = (usize::MAX >> 30).to_string();
        assert_eq!(
            parse_size(&format!("{max_g}G")),
            Ok((usize::MAX >> 30) << 30)
        );
        let over_g = ((usize::MAX >> 30) + 1).to_string();
        assert_eq!(
            parse_size(&format!("{over_g}G")),
            Err(SizeError::NotPositive)
        );
    }

    #[test]
    fn errors_read_as_the_command_line_prints_them() {
        assert_eq!(
            SizeError::Unit.to_string(),
            "not a size (use a number with K, M or G)"
        );
        assert_eq!(
            SizeError::NotPositive.to_string(),
            "not a positive size in bytes"
        );
    }
}
