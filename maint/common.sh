# Shared by the maint scripts: where things are, and pristine MPICH 4.0.2.
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MPICH_VERSION=4.0.2
UPSTREAM_TAG=mpich-$MPICH_VERSION

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

# Pristine MPICH 4.0.2 unpacked into $1 (Debian's source package, or $MPICH_SOURCE).
unpack_pristine() {
    local dest=$1
    MPICH_BUILD_DIR=$dest.pipeline "$TOP/maint/mpich-pipeline" fetch >/dev/null
    local src=${MPICH_SOURCE:-${DOWNLOAD_DIR:-$TOP/_downloads}/mpich_${MPICH_VERSION}.orig.tar.xz}
    rm -rf "$dest" "$dest.pipeline"
    mkdir -p "$dest"
    if [ -d "$src" ]; then cp -a "$src/." "$dest/"; else tar -xf "$src" -C "$dest" --strip-components=1; fi
}
