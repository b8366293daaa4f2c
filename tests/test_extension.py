"""The extension package: Blender's own tool builds and validates it, Blender installs and runs it."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

import pytest

from tests.conftest import REPO, SAMPLES

pytestmark = pytest.mark.blender

INSTALL_AND_IMPORT = """
import os, sys, bpy
bpy.ops.wm.read_homefile(use_empty=True)
result = bpy.ops.extensions.package_install_files(filepath=sys.argv[1], repo="user_default",
                                                  enable_on_install=True)
assert result == {"FINISHED"}, result
assert "bl_ext.user_default.mocap_io.mocap_addon.blender.files.base" in sys.modules
bpy.ops.import_anim.mocap_bvh(filepath=sys.argv[2])
obj = bpy.context.object
print("IMPORTED", obj.name, len(obj.data.bones), obj.animation_data.action.frame_range[1], flush=True)
os._exit(0)  # the bpy 4.5 wheel can hang tearing down at interpreter exit
"""


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    pytest.importorskip("bpy")
    folder = tmp_path_factory.mktemp("dist")
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "build_extension.py"), "--output-dir",
                             str(folder)], capture_output=True, text=True, check=True)
    return folder / result.stdout.strip().rsplit("/", 1)[-1]


def test_package_holds_the_addon_and_nothing_else(package):
    assert package.name == "mocap_io-0.1.0.zip"
    names = zipfile.ZipFile(package).namelist()
    assert {"blender_manifest.toml", "__init__.py", "LICENSE", "mocap_addon/core/formats/bvh.py",
            "mocap_addon/blender/files/base.py"} <= set(names)
    assert not [n for n in names if n.startswith(("tests/", "scripts/", "samples/", ".")) or "__pycache__" in n]


def test_installed_package_imports_a_bvh(package, tmp_path):
    environment = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path))
    result = subprocess.run([sys.executable, "-c", INSTALL_AND_IMPORT, str(package), str(SAMPLES / "walk_turn.bvh")],
                            capture_output=True, text=True, env=environment, cwd=tmp_path, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "IMPORTED walk_turn 23 120.0" in result.stdout
    assert (tmp_path / "extensions" / "user_default" / "mocap_io" / "blender_manifest.toml").is_file()


def test_build_runs_from_a_python_without_the_wheel(tmp_path):
    """Issue 21, item 10: `python scripts/build_extension.py` with a Python that has no bpy (-S: no
    site-packages) hands over to the project's venv."""
    result = subprocess.run([sys.executable, "-S", str(REPO / "scripts" / "build_extension.py"), "--output-dir",
                             str(tmp_path)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(tmp_path / "mocap_io-0.1.0.zip") and zipfile.is_zipfile(result.stdout.strip())
    handed_over = dict(os.environ, MOCAP_BUILD_HANDED_OVER="1")  # as if the venv had no wheel either
    result = subprocess.run([sys.executable, "-S", str(REPO / "scripts" / "build_extension.py")],
                            capture_output=True, text=True, check=False, env=handed_over)
    assert result.returncode == 1 and result.stderr.strip() == (
        "the bpy wheel is not installed in this Python: run `bash scripts/env.sh`, then "
        "`.venv/bin/python scripts/build_extension.py`")
