"""Core pieces the file operators rely on: which files a selection reads, and errors that say why."""

from __future__ import annotations

import errno
import os

import pytest

from mocap_addon.core import MocapFormatError, load, save
from mocap_addon.core.formats import files_to_read
from tests.conftest import SAMPLES


def touch(folder, *names: str) -> list[str]:
    for name in names:
        (folder / name).write_text("")
    return [str(folder / name) for name in names]


def test_an_asf_selected_with_its_amc_files_is_their_skeleton(tmp_path):
    asf, walk, run = touch(tmp_path, "01.asf", "01_01.amc", "01_02.amc")
    assert files_to_read([asf, walk, run]) == [(walk, asf), (run, asf)]


def test_vicon_names_pair_and_an_unused_asf_is_read_alone(tmp_path):
    vicon, take, other = touch(tmp_path, "X.ASF", "X.walk.AMC", "Y.asf")
    assert files_to_read([vicon, take, other]) == [(take, vicon), (other, None)]


def test_the_only_selected_asf_serves_amc_files_with_other_names(tmp_path):
    asf, take = touch(tmp_path, "subject.asf", "take.amc")
    assert files_to_read([take, asf]) == [(take, asf)]


def test_several_asf_without_a_match_leave_the_amc_to_its_reader(tmp_path):
    first, second, take = touch(tmp_path, "a.asf", "b.asf", "take.amc")
    assert files_to_read([first, second, take]) == [(first, None), (second, None), (take, None)]


def test_other_formats_pass_through_in_order(tmp_path):
    paths = touch(tmp_path, "a.bvh", "b.htr", "c.asf", "d.txt")
    assert files_to_read(paths) == [(p, None) for p in paths]


def test_a_missing_file_gives_the_system_reason(tmp_path):
    with pytest.raises(FileNotFoundError) as caught:
        load(tmp_path / "absent.bvh")
    assert caught.value.errno == errno.ENOENT
    assert str(caught.value).endswith(f"No such file or directory: '{tmp_path / 'absent.bvh'}'")
    with pytest.raises(IsADirectoryError):
        load(tmp_path)


def test_writing_into_a_missing_folder_names_the_target(tmp_path):
    target = tmp_path / "missing" / "walk.bvh"
    with pytest.raises(FileNotFoundError) as caught:
        save(load(SAMPLES / "walk_turn.bvh"), target)
    assert caught.value.filename == str(target)
    assert ".tmp-" not in str(caught.value)


def test_no_skeleton_message_lists_each_candidate_once(tmp_path):
    (tmp_path / "01_01.amc").write_text(":FULLY-SPECIFIED\n:DEGREES\n")
    (tmp_path / "walk.amc").write_text(":FULLY-SPECIFIED\n:DEGREES\n")
    for name, tried in (("01_01.amc", "01_01.asf, 01.asf"), ("walk.amc", "walk.asf")):
        with pytest.raises(MocapFormatError) as caught:
            load(tmp_path / name)
        message = str(caught.value)
        assert message.endswith(f"tried {tried}"), message
        listed = message.rsplit("tried ", 1)[1].split(", ")
        assert len(listed) == len(set(listed))
    assert not os.path.exists(tmp_path / "01.asf")
