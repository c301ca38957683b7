# Environment for running PetNN's tests built with -fsanitize=address,undefined (`make sanitize`).
# Sourced by config/petnn_runtest.sh when PETNN_SANITIZE=1; mpiexec passes it on to every rank.
#
#   ASAN_OPTIONS  fast_unwind_on_malloc=0: Open MPI, OpenBLAS and HDF5 are built without frame
#                 pointers, so only the slow unwinder gives the full allocation stacks the leak
#                 suppressions match on; detect_leaks=1 (LeakSanitizer at exit);
#                 verify_asan_link_order=0: python3 (requires: torch tests) and mpiexec are not
#                 instrumented and start instrumented programs, which is fine.
#   LSAN_OPTIONS  config/sanitize/lsan.supp: allocations inside Open MPI, OpenBLAS and HDF5 only.
#   UBSAN_OPTIONS every report is an error (the build also uses -fno-sanitize-recover=undefined).
#   OMPI_MCA_mca_base_component_disable_dlclose=1: Open MPI keeps its components loaded, so leak
#                 stacks through them can be symbolized (and suppressed by library name).
_petnn_san_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export ASAN_OPTIONS="fast_unwind_on_malloc=0:detect_leaks=1:verify_asan_link_order=0:check_initialization_order=1:strict_init_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$_petnn_san_dir/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="suppressions=$_petnn_san_dir/ubsan.supp:print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export OMPI_MCA_mca_base_component_disable_dlclose=1
unset _petnn_san_dir
