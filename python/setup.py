"""Builds stoker._stoker with the project's CMake (in ../build-python) and installs it with the
pure-Python package. Extra CMake arguments: STOKER_CMAKE_ARGS="-D..."."""
import os
import pathlib
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent.parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = pathlib.Path(os.environ.get("STOKER_PYTHON_BUILD_DIR", ROOT / "build-python"))
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja",
            f"-DPython_EXECUTABLE={sys.executable}",
            "-DSTOKER_BUILD_PYTHON=ON", "-DSTOKER_WITH_TORCH=OFF",
            "-DSTOKER_BUILD_TESTS=OFF", "-DSTOKER_BUILD_BENCH=OFF",
        ] + shlex.split(os.environ.get("STOKER_CMAKE_ARGS", ""))
        subprocess.run(configure, check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", str(build), "--target", "_stoker"], check=True)
        built = sorted((build / "python").glob("_stoker*.so"))
        if not built:
            raise RuntimeError(f"the build left no _stoker*.so in {build / 'python'}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[-1], target)


setup(ext_modules=[Extension("stoker._stoker", sources=[])], cmdclass={"build_ext": CMakeBuild})
