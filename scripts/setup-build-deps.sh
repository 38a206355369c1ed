#!/usr/bin/env bash
# Installs what the build and the tests need besides Rust:
#   cmake, libclang   the ZFP plugin (plugins/zfp) builds zfp with cmake, and zfp-sys generates
#                     its bindings with bindgen, which needs libclang;
#   gfortran          tests/fortran.rs builds and runs the Fortran module bindings/fortran;
#   libhdf5-dev       the `hdf5` feature (direct chunk reads and writes) links Debian's HDF5
#                     1.10.8, found through pkg-config;
#   hdf5-tools        h5dump and h5repack 1.10.8, the HDF5 tools the filter plugin
#                     (plugins/hdf5) is tested with;
#   nginx             tests/interop/test_remote.py reads remote frames from it (a third-party
#                     range server; the test runs its own instance, the service stays off);
#   valgrind          tests/ffi_c.rs runs a C program under memcheck.
# As root it installs the missing ones from Debian's packages (cmake, libclang-dev, gfortran,
# libhdf5-dev, hdf5-tools, nginx, valgrind); otherwise it says what to install. Does nothing when all
# are there.
set -euo pipefail

have_libclang() {
  [ -n "${LIBCLANG_PATH:-}" ] && return 0
  ldconfig -p 2>/dev/null | grep -q 'libclang\(-[0-9.]*\)\?\.so' && return 0
  compgen -G '/usr/lib/llvm-*/lib/libclang.so*' > /dev/null
}

missing=()
command -v cmake > /dev/null || missing+=(cmake)
have_libclang || missing+=(libclang-dev)
command -v gfortran > /dev/null || missing+=(gfortran)
command -v pkg-config > /dev/null || missing+=(pkg-config)
pkg-config --exists hdf5 2>/dev/null || missing+=(libhdf5-dev)
{ command -v h5dump && command -v h5repack; } > /dev/null || missing+=(hdf5-tools)
[ -x /usr/sbin/nginx ] || command -v nginx > /dev/null || missing+=(nginx)
command -v valgrind > /dev/null || missing+=(valgrind)
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-build-deps: cmake, libclang, gfortran, libhdf5-dev, hdf5-tools, nginx and valgrind are installed"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "setup-build-deps: install ${missing[*]} (cmake, libclang-dev: plugins/zfp; gfortran: bindings/fortran; libhdf5-dev, hdf5-tools: the hdf5 feature and plugins/hdf5; nginx: tests/interop/test_remote.py; valgrind: tests/ffi_c.rs)" >&2
  exit 1
fi
apt-get update -qq
# policy-rc.d keeps the nginx package from starting its service (the tests start their own).
policy=/usr/sbin/policy-rc.d
[ -e "$policy" ] || { printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod +x "$policy"; added_policy=1; }
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" > /dev/null
[ -z "${added_policy:-}" ] || rm -f "$policy"
echo "setup-build-deps: installed ${missing[*]}"
