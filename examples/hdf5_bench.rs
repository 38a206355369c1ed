//! Strata's side of `benches/hdf5.py`: reads of an HDF5 dataset through the direct-chunk path,
//! and writes of one, timed in-process (feature `hdf5`).
//!
//! ```text
//! hdf5_bench read FILE.h5 /DATASET --select SPEC [--select SPEC...] [--runs N] [--nthreads N] [--reopen]
//! hdf5_bench write RAW OUT.h5 /DATASET --shape S --dtype D --chunks C [--blocks B]
//!            [--codec ID] [--clevel L] [--filter ID] [--nthreads N]
//! ```
//!
//! `read` opens the dataset once (with `--reopen`, once per read, inside the timing), makes one
//! untimed read of each selection, then reads each selection `--runs` times (default 9), each
//! read timed alone from the call to a filled, newly allocated output. A SPEC is NumPy's
//! selection, one comma-separated entry per dimension: `a:b`, `a:b:c`, `i` (keeps the
//! dimension, of length 1) or `:`. One JSON line per selection: `{"select", "times_s",
//! "cpu_s", "median_s", "nbytes", "blocks_decompressed", "chunks_read"}`.
//!
//! `write` reads RAW (C-order items of `--shape`/`--dtype`) into memory, then times
//! `strata::hdf5::write_array` into OUT.h5 (created, or replaced) with those chunks and
//! blocks and compression: one JSON line `{"seconds", "cpu_seconds", "nbytes",
//! "stored_bytes", "chunks"}`.
//!
//! `cpu_s`/`cpu_seconds`: the process's CPU time (user + system, all its threads) over the
//! same span as the wall time: the work done, which a loaded machine does not change as it
//! changes the wall time. Errors: a message on stderr and exit status 1.

use serde_json::json;
use std::time::Instant;
use strata::hdf5::{write_array, H5Dataset};
use strata::ndarray::{ArrayParams, Slice};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn list<T: std::str::FromStr>(s: &str) -> Res<Vec<T>>
where
    T::Err: std::error::Error + 'static,
{
    Ok(s.split(',').map(str::parse).collect::<Result<_, _>>()?)
}

/// One dimension of a SPEC: `a:b[:c]`, `i` or `:` (missing bounds are open).
fn slice(part: &str) -> Res<Slice> {
    let bound =
        |s: &str| -> Res<Option<i64>> { Ok(if s.is_empty() { None } else { Some(s.parse()?) }) };
    let pieces: Vec<&str> = part.split(':').collect();
    Ok(match pieces[..] {
        [i] => Slice::index(i.parse()?),
        [a, b] => Slice::new(bound(a)?, bound(b)?, 1),
        [a, b, c] => Slice::new(bound(a)?, bound(b)?, bound(c)?.unwrap_or(1)),
        _ => return Err(format!("bad selection {part:?}").into()),
    })
}

/// CPU seconds (user + system) the process has used so far, all threads.
fn cpu_seconds() -> f64 {
    // SAFETY: `getrusage` fills the zeroed `rusage` it is given and reads nothing else.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len().is_multiple_of(2) {
        (v[m - 1] + v[m]) / 2.0
    } else {
        v[m]
    }
}

fn read(args: &[String]) -> Res<()> {
    let [file, name, rest @ ..] = args else {
        return Err("read FILE.h5 /DATASET --select SPEC ...".into());
    };
    let (mut specs, mut runs, mut nthreads, mut reopen) = (Vec::new(), 9usize, 0usize, false);
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--select" => specs.push(value()?.clone()),
            "--runs" => runs = value()?.parse()?,
            "--nthreads" => nthreads = value()?.parse()?,
            "--reopen" => reopen = true,
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    let open = || -> Res<H5Dataset> {
        let mut ds = H5Dataset::open(file, name)?;
        ds.set_nthreads(nthreads);
        Ok(ds)
    };
    let mut ds = open()?;
    for spec in &specs {
        let slices: Vec<Slice> = spec.split(',').map(slice).collect::<Res<_>>()?;
        let (first, _) = ds.get_slice_vec(&slices)?;
        let (mut times, mut cpu, mut stats) = (Vec::new(), Vec::new(), None);
        for _ in 0..runs.max(1) {
            let (start, cpu_start) = (Instant::now(), cpu_seconds());
            if reopen {
                ds = open()?;
            }
            let mut out = vec![0u8; first.len()];
            let s = ds.get_slice(&slices, &mut out)?;
            times.push(start.elapsed().as_secs_f64());
            cpu.push(cpu_seconds() - cpu_start);
            if out != first {
                return Err(format!("{spec}: two reads differ").into());
            }
            stats = Some(s);
        }
        let s = stats.unwrap_or_default();
        println!(
            "{}",
            json!({
                "select": spec,
                "median_s": median(times.clone()),
                "times_s": times,
                "cpu_s": cpu,
                "nbytes": first.len(),
                "blocks_decompressed": s.blocks_decompressed,
                "chunks_read": s.chunks_read,
            })
        );
    }
    Ok(())
}

fn write(args: &[String]) -> Res<()> {
    let [raw, file, name, rest @ ..] = args else {
        return Err("write RAW OUT.h5 /DATASET --shape S --dtype D --chunks C ...".into());
    };
    let (mut shape, mut dtype, mut chunks, mut blocks) =
        (Vec::new(), String::new(), Vec::new(), None);
    let mut cparams = strata::chunk::CParams::default();
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--shape" => shape = list(value()?)?,
            "--dtype" => dtype = value()?.clone(),
            "--chunks" => chunks = list(value()?)?,
            "--blocks" => blocks = Some(list::<usize>(value()?)?),
            "--codec" => cparams.codec = value()?.parse()?,
            "--clevel" => cparams.clevel = value()?.parse()?,
            "--filter" => cparams.filters[5] = value()?.parse()?,
            "--nthreads" => cparams.nthreads = value()?.parse()?,
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    let data = std::fs::read(raw)?;
    let mut params = ArrayParams::from_dtype(&shape, &dtype)?
        .with_chunkshape(&chunks)
        .with_overwrite(true);
    cparams.typesize = strata::ndarray::dtype::itemsize(&dtype)?;
    params = params.with_cparams(&cparams);
    if let Some(b) = &blocks {
        params = params.with_blockshape(b);
    }
    if cparams.nthreads > 0 {
        strata::scheduler::Runtime::global().set_nthreads(cparams.nthreads);
    }
    let _ = std::fs::remove_file(file);
    let (start, cpu_start) = (Instant::now(), cpu_seconds());
    let stats = write_array(file, name, &params, &data)?;
    let seconds = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_start;
    println!(
        "{}",
        json!({"seconds": seconds, "cpu_seconds": cpu, "nbytes": data.len(), "stored_bytes": stats.stored_bytes, "chunks": stats.chunks})
    );
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.split_first() {
        Some((cmd, rest)) if cmd == "read" => read(rest),
        Some((cmd, rest)) if cmd == "write" => write(rest),
        _ => Err("usage: hdf5_bench read|write ... (see the source's header)".into()),
    };
    if let Err(e) = result {
        eprintln!("hdf5_bench: {e}");
        std::process::exit(1);
    }
}
