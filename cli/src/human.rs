//! Sizes, speeds and ratios in units people read: binary prefixes for bytes (KiB, MiB, GiB),
//! decimal GB/s for speeds.

/// `n` bytes with a binary prefix and three significant digits: `512 B`, `1.50 KiB`, `37.6 MiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let digits = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.digits$} {}", UNITS[unit])
}

/// A throughput of `nbytes` bytes in `seconds`, in GB/s (10^9 bytes per second).
pub fn speed(nbytes: u64, seconds: f64) -> String {
    if seconds <= 0.0 {
        return "-".into();
    }
    format!("{:.2} GB/s", nbytes as f64 / seconds / 1e9)
}

/// A duration in the unit that reads best: `850 µs`, `12.3 ms`, `4.56 s`.
pub fn duration(seconds: f64) -> String {
    if seconds < 1e-3 {
        format!("{:.0} µs", seconds * 1e6)
    } else if seconds < 1.0 {
        format!("{:.1} ms", seconds * 1e3)
    } else {
        format!("{seconds:.2} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_sizes() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1536), "1.50 KiB");
        assert_eq!(bytes(37_342_208), "35.6 MiB");
        assert_eq!(bytes(5 << 30), "5.00 GiB");
        assert_eq!(bytes(u64::MAX), "16.0 EiB");
    }

    #[test]
    fn speeds_and_durations() {
        assert_eq!(speed(2_000_000_000, 1.0), "2.00 GB/s");
        assert_eq!(speed(1, 0.0), "-");
        assert_eq!(duration(0.000_85), "850 µs");
        assert_eq!(duration(0.0123), "12.3 ms");
        assert_eq!(duration(4.561), "4.56 s");
    }
}
