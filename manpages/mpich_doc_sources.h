// Which files of an MPICH tree "make mandoc" runs doctext on: the mpi_sources of its
// Makefile.mk files (the generated C bindings in src/binding/c, the Fortran status
// conversions, MPI_Type_create_f90_*), and ROMIO's romio_mpi_sources (mpi-io/*.c); and the
// file of named blocks, maint/docnotes.
#pragma once

#include <string>
#include <vector>

// Paths relative to the tree, sorted, each once; files a Makefile.mk names that do not
// exist (not generated yet) are left out.
std::vector<std::string> mpich_doc_source_files(const std::string& tree);
std::string mpich_docnotes_file(const std::string& tree);
