//! Remote arrays on stratad slice on the server: a selection of an array opened by its
//! `/api/fetch/…` (Caterva2's route) or `/v1/raw/…` URL comes back as one compressed frame of
//! just the selection, never the blocks it touches; whole reads, steps, a block cache, an
//! option turned off and a server refusing (its slice limit) read blocks as before, and
//! every read equals the local file.

mod common;

use common::Daemon;
use strata::frame::{OpenMode, RemoteOptions};
use strata::ndarray::{NdArray, Slice};
use strata::schunk::{OpenOptions, SChunk};

fn all() -> Slice {
    Slice::new(None, None, 1)
}

/// Bytes and requests `arr` moved while `read` ran.
fn moved<T>(arr: &NdArray, read: impl FnOnce() -> T) -> (T, u64, u64) {
    let before = arr.store().traffic().unwrap();
    let r = read();
    let after = arr.store().traffic().unwrap();
    (
        r,
        after.bytes - before.bytes,
        after.requests - before.requests,
    )
}

fn open(url: &str, server_slices: bool) -> NdArray {
    let remote = RemoteOptions {
        server_slices,
        ..RemoteOptions::default()
    };
    NdArray::from_schunk(
        SChunk::open_remote(url, &OpenOptions::new(OpenMode::Read), &remote).unwrap(),
    )
    .unwrap()
}

#[test]
fn selections_are_cut_by_the_server() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("cube.b2nd");
    // Noise, so that blocks do not compress to nothing: 96 × 128 × 160 f32, 7.5 MiB.
    common::make_noise(&path, &[96, 128, 160], &[48, 64, 80], &[16, 32, 40]);
    let local = NdArray::open(&path, OpenMode::Read).unwrap();
    let d = Daemon::start(&[
        "--root",
        &format!("@public={}", root.path().display()),
        "--max-slice-bytes",
        "1M",
    ]);
    let base = format!("http://{}", d.addr);
    for url in [
        format!("{base}/api/fetch/@public/cube.b2nd"),
        format!("{base}/v1/raw/@public/cube.b2nd"),
    ] {
        let arr = open(&url, true);
        let block_bytes = 16 * 32 * 40 * 4;
        for (what, sel) in [
            ("a row", vec![Slice::index(5), Slice::index(70), all()]),
            (
                "a box across chunks",
                vec![
                    Slice::range(40, 60),
                    Slice::range(60, 70),
                    Slice::range(70, 90),
                ],
            ),
            ("a pencil", vec![all(), Slice::index(3), Slice::index(150)]),
            (
                "one item",
                vec![Slice::index(95), Slice::index(0), Slice::index(159)],
            ),
            (
                "a plane of one-item ranges",
                vec![Slice::range(2, 3), all(), Slice::range(9, 10)],
            ),
        ] {
            let want = local.get_slice_vec(&sel).unwrap();
            let (n, shape) = (want.0.len(), want.1.clone());
            let mut got = vec![0u8; n];
            let (stats, bytes, requests) = moved(&arr, || arr.get_slice(&sel, &mut got).unwrap());
            assert_eq!(got, want.0, "{url}: {what}");
            assert_eq!((stats.requests, requests), (1, 1), "{url}: {what}");
            assert_eq!(stats.bytes_read, bytes, "{url}: {what}");
            // Noise does not compress: the selection's bytes plus a frame's few headers,
            // where the touched blocks are at least one whole block.
            assert!(
                bytes < n as u64 + 4096 && bytes < block_bytes,
                "{url}: {what} ({shape:?}) moved {bytes} bytes"
            );
        }
        // Whole, stepped, and past the server's 1 MiB slice limit (413): blocks, as before.
        for (what, sel) in [
            ("the whole array", vec![]),
            ("a stepped plane", vec![Slice::index(7), all().step_by(2)]),
            ("5 MiB", vec![Slice::range(0, 64)]),
        ] {
            let want = local.get_slice_vec(&sel).unwrap().0;
            let (got, _, requests) = moved(&arr, || arr.get_slice_vec(&sel).unwrap().0);
            assert_eq!(got, want, "{url}: {what}");
            assert!(requests >= 1, "{url}: {what}");
        }
        // After the 413 the server is not asked again: a thin row reads its blocks.
        let sel = [Slice::index(5), Slice::index(70), all()];
        let mut got = vec![0u8; 160 * 4];
        let stats = arr.get_slice(&sel, &mut got).unwrap();
        assert_eq!(got, local.get_slice_vec(&sel).unwrap().0);
        assert!(stats.blocks_decompressed >= 1, "{url}: {stats:?}");

        // With the option off, blocks from the start.
        let arr = open(&url, false);
        let mut got = vec![0u8; 160 * 4];
        let stats = arr.get_slice(&sel, &mut got).unwrap();
        assert_eq!(got, local.get_slice_vec(&sel).unwrap().0);
        assert!(stats.blocks_decompressed >= 1 && stats.bytes_read >= block_bytes / 2);
    }
}
