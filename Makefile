# Builds and installs Strata's C library, header, pkg-config file and plugin directory.
#   make                          cargo build --release of libstrata.so and libstrata.a, with
#                                 HDF5 support (FEATURES=hdf5, Debian's libhdf5; FEATURES= leaves
#                                 it out and the HDF5 functions return an error), and the
#                                 soname link libstrata.so.<ABI> beside them, so programs linked
#                                 against the build tree start
#   make install PREFIX=/opt/x    (DESTDIR honoured), then: cc prog.c $(pkg-config --cflags --libs strata)
#   make uninstall PREFIX=/opt/x
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
PLUGINDIR ?= $(LIBDIR)/strata/plugins
CARGO ?= cargo
TARGET_DIR ?= $(or $(CARGO_TARGET_DIR),target)
FEATURES ?= hdf5

VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
ABI := $(shell sed -n 's/^pub const STRATA_ABI_VERSION: u32 = \([0-9]*\);/\1/p' src/ffi/mod.rs)
SONAME := libstrata.so.$(ABI)
RELEASE := $(TARGET_DIR)/release
# Static users of a library with HDF5 support link libhdf5 too (pkg-config --static).
REQUIRES := $(if $(findstring hdf5,$(FEATURES)),hdf5,)

.PHONY: all install uninstall

all:
	$(CARGO) build --release -p strata --lib --features "$(FEATURES)" --target-dir $(TARGET_DIR)
	ln -sf libstrata.so $(RELEASE)/$(SONAME)

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(PLUGINDIR)
	install -m 644 $(RELEASE)/libstrata.a $(DESTDIR)$(LIBDIR)/libstrata.a
	install -m 755 $(RELEASE)/libstrata.so $(DESTDIR)$(LIBDIR)/libstrata.so.$(VERSION)
	ln -sf libstrata.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libstrata.so
	install -m 644 include/strata.h $(DESTDIR)$(INCLUDEDIR)/strata.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@PLUGINDIR@|$(PLUGINDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@REQUIRES@|$(REQUIRES)|' strata.pc.in \
	    > $(DESTDIR)$(PKGCONFIGDIR)/strata.pc

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libstrata.a $(DESTDIR)$(LIBDIR)/libstrata.so \
	    $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libstrata.so.$(VERSION) \
	    $(DESTDIR)$(INCLUDEDIR)/strata.h $(DESTDIR)$(PKGCONFIGDIR)/strata.pc
	-rmdir $(DESTDIR)$(PLUGINDIR) $(DESTDIR)$(LIBDIR)/strata 2>/dev/null
