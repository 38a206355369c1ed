# Builds and installs Strata's C library, header, pkg-config files, the strata command, the
# Fortran module and the plugin directory.
#   make                          cargo build --release of libstrata.so and libstrata.a, with
#                                 HDF5 support (FEATURES=hdf5, Debian's libhdf5; FEATURES= leaves
#                                 it out and the HDF5 functions return an error), and the
#                                 soname link libstrata.so.<ABI> beside them, so programs linked
#                                 against the build tree start
#   make cli / make fortran       the strata command; the Fortran module (FC=gfortran:
#                                 strata.mod and libstrata_fortran.a in <target>/release/fortran)
#   make install PREFIX=/opt/x    (DESTDIR honoured) installs what a build made, building only
#                                 what is missing, then:
#                                   cc prog.c $(pkg-config --cflags --libs strata)
#                                   gfortran prog.f90 $(pkg-config --cflags --libs strata-fortran)
#                                 The libraries and the command are installed stripped;
#                                 SPLIT_DEBUG=1 keeps libstrata.so's debug info in
#                                 <libdir>/.debug/libstrata.so.<version>.debug, where gdb
#                                 looks. Outside /usr and /usr/local the .pc files add
#                                 an rpath, so programs start without LD_LIBRARY_PATH.
#   make uninstall PREFIX=/opt/x
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# Strata finds plugins in <libdir>/strata/plugins beside the shared library it runs from.
PLUGINDIR ?= $(LIBDIR)/strata/plugins
FORTRANDIR ?= $(INCLUDEDIR)/strata/fortran
CARGO ?= cargo
FC ?= gfortran
STRIP ?= strip
OBJCOPY ?= objcopy
SPLIT_DEBUG ?=
TARGET_DIR ?= $(or $(CARGO_TARGET_DIR),target)
FEATURES ?= hdf5

VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
ABI := $(shell sed -n 's/^pub const STRATA_ABI_VERSION: u32 = \([0-9]*\);/\1/p' src/ffi/mod.rs)
SONAME := libstrata.so.$(ABI)
RELEASE := $(TARGET_DIR)/release
FBUILD := $(RELEASE)/fortran
# Static users of a library with HDF5 support link libhdf5 too (pkg-config --static).
REQUIRES := $(if $(findstring hdf5,$(FEATURES)),hdf5,)
# The dynamic linker searches /usr/lib and /usr/local/lib itself; any other libdir gets an
# rpath in the .pc files.
, := ,
RPATH := $(if $(filter /usr/lib /usr/local/lib /usr/lib/%-linux-gnu,$(LIBDIR)),,-Wl$(,)-rpath$(,)$${libdir})

.PHONY: all lib cli fortran install install-lib install-fortran uninstall

all: lib

lib:
	$(CARGO) build --release -p strata --lib --features "$(FEATURES)" --target-dir $(TARGET_DIR)
	ln -sf libstrata.so $(RELEASE)/$(SONAME)

cli:
	$(CARGO) build --release -p strata-cli --bin strata --target-dir $(TARGET_DIR)

fortran: $(FBUILD)/libstrata_fortran.a

# Built only when missing, so that `make install` after a build installs it as it is.
$(RELEASE)/libstrata.so $(RELEASE)/libstrata.a:
	$(MAKE) lib

$(RELEASE)/strata:
	$(MAKE) cli

$(FBUILD)/libstrata_fortran.a: bindings/fortran/strata.f90
	mkdir -p $(FBUILD)
	$(FC) -std=f2008 -O2 -fPIC -J $(FBUILD) -c $< -o $(FBUILD)/strata.o
	rm -f $@ && ar rcs $@ $(FBUILD)/strata.o

install: install-lib install-fortran

# Installs shared library $(1) as $(2), stripped; with SPLIT_DEBUG=1 its debug info is kept
# first in <libdir>/.debug/<name>.debug, which the stripped file names (.gnu_debuglink).
define install_stripped
	install -m 755 $(1) $(2)
	if [ -n "$(SPLIT_DEBUG)" ]; then \
	  install -d $(DESTDIR)$(LIBDIR)/.debug && \
	  $(OBJCOPY) --only-keep-debug $(2) $(DESTDIR)$(LIBDIR)/.debug/$(notdir $(2)).debug && \
	  $(STRIP) --strip-unneeded $(2) && \
	  $(OBJCOPY) --add-gnu-debuglink=$(DESTDIR)$(LIBDIR)/.debug/$(notdir $(2)).debug $(2); \
	else $(STRIP) --strip-unneeded $(2); fi
endef

install-lib: $(RELEASE)/libstrata.so $(RELEASE)/libstrata.a $(RELEASE)/strata
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
	    $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(PLUGINDIR)
	install -m 644 $(RELEASE)/libstrata.a $(DESTDIR)$(LIBDIR)/libstrata.a
	$(STRIP) --strip-debug $(DESTDIR)$(LIBDIR)/libstrata.a
	$(call install_stripped,$(RELEASE)/libstrata.so,$(DESTDIR)$(LIBDIR)/libstrata.so.$(VERSION))
	ln -sf libstrata.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libstrata.so
	install -m 755 $(RELEASE)/strata $(DESTDIR)$(BINDIR)/strata
	$(STRIP) $(DESTDIR)$(BINDIR)/strata
	install -m 644 include/strata.h $(DESTDIR)$(INCLUDEDIR)/strata.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@PLUGINDIR@|$(PLUGINDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@REQUIRES@|$(REQUIRES)|' -e 's|@RPATH@|$(RPATH)|' strata.pc.in \
	    > $(DESTDIR)$(PKGCONFIGDIR)/strata.pc

install-fortran: $(FBUILD)/libstrata_fortran.a install-lib
	install -d $(DESTDIR)$(FORTRANDIR)
	install -m 644 $(FBUILD)/libstrata_fortran.a $(DESTDIR)$(LIBDIR)/libstrata_fortran.a
	install -m 644 $(FBUILD)/strata.mod bindings/fortran/strata.f90 $(DESTDIR)$(FORTRANDIR)/
	sed -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@FORTRANDIR@|$(FORTRANDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    bindings/fortran/strata-fortran.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/strata-fortran.pc

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libstrata.a $(DESTDIR)$(LIBDIR)/libstrata.so \
	    $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libstrata.so.$(VERSION) \
	    $(DESTDIR)$(LIBDIR)/.debug/libstrata.so.$(VERSION).debug \
	    $(DESTDIR)$(LIBDIR)/libstrata_fortran.a $(DESTDIR)$(BINDIR)/strata \
	    $(DESTDIR)$(INCLUDEDIR)/strata.h $(DESTDIR)$(PKGCONFIGDIR)/strata.pc \
	    $(DESTDIR)$(PKGCONFIGDIR)/strata-fortran.pc \
	    $(DESTDIR)$(FORTRANDIR)/strata.mod $(DESTDIR)$(FORTRANDIR)/strata.f90
	-rmdir $(DESTDIR)$(PLUGINDIR) $(DESTDIR)$(LIBDIR)/strata $(DESTDIR)$(LIBDIR)/.debug \
	    $(DESTDIR)$(FORTRANDIR) $(DESTDIR)$(INCLUDEDIR)/strata 2>/dev/null
