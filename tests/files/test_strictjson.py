import math

import pytest

from pytest_infx.files.strictjson import RepeatedKeyError, loads


def test_a_repeated_key_is_an_error_at_that_key() -> None:
    with pytest.raises(RepeatedKeyError, match="key 'tput_per_gpu' appears twice") as info:
        loads('{"hw": "h100", "tput_per_gpu": 900.0, "tput_per_gpu": 5.0}')
    assert info.value.key == "tput_per_gpu"


def test_a_repeated_key_in_a_nested_object_is_found() -> None:
    with pytest.raises(RepeatedKeyError, match="'al'"):
        loads(b'[{"golden": {"al": 2.5, "al": 9.99}}]')


def test_equal_keys_in_different_objects_are_fine_and_nan_still_parses() -> None:
    data = loads('[{"a": 1}, {"a": 2, "b": NaN}]')
    assert data[0] == {"a": 1}
    assert math.isnan(data[1]["b"])
