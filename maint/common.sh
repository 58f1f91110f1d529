# Shared by the maint scripts: where things are, which MPICH base, pristine MPICH.
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# MPICH_BASE: the MPICH release the series is for. 4.0.2 (the default) is Debian bookworm's,
# from Debian's source package; 5.0.1 is upstream's release, from ../shared/mpich (doc/bases.md).
MPICH_BASE=${MPICH_BASE:-4.0.2}
case $MPICH_BASE in
    4.0.2) UPSTREAM_TAG=mpich-4.0.2 ORIG_TARBALL=mpich_4.0.2.orig.tar.xz ;;
    5.0.1) UPSTREAM_TAG=v5.0.1 ORIG_TARBALL=mpich-5.0.1-git.tar.xz ;;
    *) printf 'MPICH_BASE is 4.0.2 or 5.0.1, not %s\n' "$MPICH_BASE" >&2; exit 1 ;;
esac
MPICH_VERSION=$MPICH_BASE
SERIES_DIR=$TOP/patches/$MPICH_BASE
DOWNLOAD_DIR=${DOWNLOAD_DIR:-$TOP/_downloads}
SHARED_MPICH_DIR=${SHARED_MPICH_DIR:-$TOP/../shared/mpich}
MPICH_SOURCE=${MPICH_SOURCE:-}

die() { printf '%s: error: %s\n' "$(basename "$0")" "$*" >&2; exit 1; }

# Files the pipeline regenerates (binding generator, extracterrmsgs, extractcvars, autotools):
# they never belong in a patch.
GENERATED_PATHSPECS=(
    ':(exclude,glob)src/binding/c/*/*.c' ':(exclude)src/binding/c/Makefile.mk'
    ':(exclude)src/binding/c/errnames.txt' ':(exclude)src/include/mpi_proto.h'
    ':(exclude)src/include/mpir_impl.h' ':(exclude)src/mpi_t/qmpi_register.h'
    ':(exclude)test/mpi/include/mtest_mpix.h' ':(exclude)src/mpi/errhan/defmsg.h'
    ':(exclude)src/util/mpir_cvars.c' ':(exclude)src/include/mpir_cvars.h' ':(exclude)README.envvar'
    ':(exclude,glob)**/Makefile.in' ':(exclude,glob)**/configure' ':(exclude,glob)**/aclocal.m4'
    ':(exclude,glob)**/confdb/*' ':(exclude,glob)**/autom4te.cache/**'
)

# The series' patch names, in order, from $SERIES_DIR/series.
series_names() {
    sed -e 's/[[:space:]].*//' -e '/^#/d' -e '/^$/d' "$SERIES_DIR/series"
}

# The default source of the base, checked against maint/mpich-source.sha256: 4.0.2 is fetched
# once with apt-get source into $DOWNLOAD_DIR; 5.0.1 is read where ../shared/mpich holds it.
# MPICH_SOURCE, when set, is used as it is.
fetch_source() {
    [ -z "$MPICH_SOURCE" ] || return 0
    local dir=$DOWNLOAD_DIR
    if [ "$MPICH_BASE" = 4.0.2 ]; then
        mkdir -p "$DOWNLOAD_DIR"
        if [ ! -f "$DOWNLOAD_DIR/$ORIG_TARBALL" ]; then
            echo "fetching Debian's source package of mpich" >&2
            (cd "$DOWNLOAD_DIR" && apt-get source --download-only mpich) >&2 ||
                die "apt-get source mpich failed: is there a deb-src entry for bookworm? (maint/install-deps adds one)"
        fi
    else
        dir=$SHARED_MPICH_DIR
        [ -f "$dir/$ORIG_TARBALL" ] ||
            die "no $ORIG_TARBALL in $dir: give its path with --with-mpich-source (MPICH_SOURCE)"
    fi
    (cd "$dir" && grep " $ORIG_TARBALL\$" "$TOP/maint/mpich-source.sha256" | sha256sum -c --quiet) ||
        die "$dir/$ORIG_TARBALL does not match maint/mpich-source.sha256"
}

source_path() {
    if [ -n "$MPICH_SOURCE" ]; then echo "$MPICH_SOURCE"
    elif [ "$MPICH_BASE" = 4.0.2 ]; then echo "$DOWNLOAD_DIR/$ORIG_TARBALL"
    else echo "$SHARED_MPICH_DIR/$ORIG_TARBALL"; fi
}

# Pristine MPICH of the base unpacked into $1 (emptied first). A 5.0.1 git tree gets what
# upstream's release script (maint/release.pl) sets: the library version 18:1:6, the date.
unpack_pristine() {
    local dest=$1 src
    fetch_source
    src=$(source_path)
    rm -rf "$dest"
    mkdir -p "$dest"
    if [ -d "$src" ]; then
        cp -a "$src/." "$dest/"
    elif [ -f "$src" ]; then
        tar -xf "$src" -C "$dest" --strip-components=1
    else
        die "no MPICH source at $src"
    fi
    case $MPICH_BASE in
        4.0.2) grep -qx "MPICH_VERSION=$MPICH_VERSION" "$dest/maint/Version" 2>/dev/null ;;
        *) grep -q "^m4_define(\[MPICH_VERSION_m4\],\[$MPICH_VERSION\])" "$dest/maint/version.m4" 2>/dev/null ;;
    esac || die "$src is not MPICH $MPICH_VERSION"
    if [ "$MPICH_BASE" = 5.0.1 ]; then
        sed -i -e 's/^m4_define(\[libmpi_so_version_m4\],\[0:0:0\])/m4_define([libmpi_so_version_m4],[18:1:6])/' \
            -e 's/^\(m4_define(\[MPICH_RELEASE_DATE_m4\],\)\[unreleased development copy\]/\1[Fri Apr 10 14:43:50 UTC 2026]/' \
            "$dest/maint/version.m4"
    fi
}
