# SPDX-License-Identifier: MIT
#
# The C++ extension torch_spyre._C, built against the installed torch and
# linked with libspyre. LIBSPYRE_DIR points at a built libspyre
# (default: ../build/libspyre of this checkout); its headers come from
# ../libspyre/include.
import glob
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, include_paths

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(here)
libdir = os.path.abspath(os.environ.get("LIBSPYRE_DIR", os.path.join(top, "build", "libspyre")))
incdir = os.path.join(top, "libspyre", "include")
hwdir = os.path.join(top, "hw")  # the hardware contract (version macros)
if not os.path.exists(os.path.join(libdir, "libspyre.so")):
    raise SystemExit(f"torch_spyre: libspyre.so not found in {libdir} (run `make libspyre` first "
                     "or set LIBSPYRE_DIR)")

# Kineto's headers (csrc/profiler.cpp: the card's work in torch.profiler)
# ship in the torch wheel under include/kineto.
kineto = [os.path.join(p, "kineto") for p in include_paths()
          if os.path.exists(os.path.join(p, "kineto", "IActivityProfiler.h"))]
if not kineto:
    raise SystemExit("torch_spyre: torch's Kineto headers (include/kineto) are missing")

sources = sorted(os.path.relpath(p, here) for p in glob.glob(os.path.join(here, "csrc", "*.cpp")))

setup(
    ext_modules=[
        CppExtension(
            "torch_spyre._C",
            sources,
            include_dirs=[incdir, hwdir, os.path.join(here, "csrc"), kineto[0]],
            library_dirs=[libdir],
            libraries=["spyre"],
            runtime_library_dirs=[libdir],
            extra_compile_args=["-O2", "-g0", "-Wall", "-Wno-unused-parameter",
                                "-Wno-interference-size"],
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
