"""Writes one variable of a netCDF-3 file as a C-order little-endian .npy file.

Usage: nc_to_npy.py FILE.nc VARIABLE OUT.npy

Values are kept as stored (missing values included); only the byte order changes.
"""

import sys

import numpy as np
from scipy.io import netcdf_file


def main(path: str, variable: str, out: str) -> None:
    with netcdf_file(path, "r", mmap=False) as nc:
        if variable not in nc.variables:
            sys.exit(f"nc_to_npy: {path} has no variable {variable!r} (has: {', '.join(nc.variables)})")
        data = nc.variables[variable].data
        little = np.ascontiguousarray(data, dtype=data.dtype.newbyteorder("<"))
    np.save(out, little)
    print(f"nc_to_npy: {out}: {variable} {little.dtype} {little.shape}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip())
    main(*sys.argv[1:])
