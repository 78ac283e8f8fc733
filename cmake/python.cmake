# Finds what the Python module needs: an interpreter with its headers, and pybind11. Where either is
# missing PTDSIM_PYTHON turns off with a message, and the rest of ptdsim builds as before.
#
# The interpreter: -DPython_EXECUTABLE=... when given, else /usr/bin/python3 where it exists: the
# interpreter Debian's python3-pybind11 and python3-pytest serve (an interpreter earlier on PATH, a
# pyenv or a venv, does not see them), else the first python3 on PATH.
if(NOT Python_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "The Python interpreter the module is built for")
endif()
find_package(Python 3.8 COMPONENTS Interpreter Development.Module QUIET)
if(Python_FOUND)
  # pybind11's CMake files: Debian's pybind11-dev (/usr/lib/cmake/pybind11), or the interpreter's own
  execute_process(COMMAND ${Python_EXECUTABLE} -c "import pybind11; print(pybind11.get_cmake_dir())"
                  OUTPUT_VARIABLE _pybind11_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  set(PYBIND11_FINDPYTHON ON)  # pybind11 uses the interpreter found above
  find_package(pybind11 2.6 CONFIG QUIET HINTS ${_pybind11_dir})
endif()
if(NOT Python_FOUND OR NOT pybind11_FOUND)
  message(STATUS "ptdsim Python module: skipped (needs Python 3 with its headers and pybind11: "
                 "Debian's python3-dev and pybind11-dev)")
  set(PTDSIM_PYTHON OFF)
  return()
endif()

# Where `cmake --install` puts the package: the interpreter's own layout under the prefix
# (Debian: lib/python3.X/dist-packages, on its path for /usr/local; elsewhere site-packages).
execute_process(
  COMMAND ${Python_EXECUTABLE} -c [=[
import os, sysconfig
scheme = sysconfig.get_default_scheme() if hasattr(sysconfig, "get_default_scheme") else "posix_prefix"
path = sysconfig.get_path("platlib", scheme, vars={"platbase": "/P", "base": "/P"})
print(os.path.relpath(path, "/P/local" if scheme == "posix_local" else "/P"))
]=]
  OUTPUT_VARIABLE _python_dir OUTPUT_STRIP_TRAILING_WHITESPACE)
set(PTDSIM_PYTHON_INSTALL_DIR "${_python_dir}" CACHE STRING
    "Where cmake --install puts the Python package, relative to the prefix")
message(STATUS "ptdsim Python module: for ${Python_EXECUTABLE} (Python ${Python_VERSION}, pybind11 ${pybind11_VERSION}), "
               "installed to <prefix>/${PTDSIM_PYTHON_INSTALL_DIR}")
