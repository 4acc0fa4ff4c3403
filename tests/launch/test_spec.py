from __future__ import annotations

import pytest

from pytest_infx.launch.spec import DockerRuntime, LocalRuntime, ServerSpec, SpecError

DIGEST = "sha256:" + "c1" * 32
IMAGE = f"vllm/vllm-openai:v0.31.0@{DIGEST}"


def _spec(**kw: object) -> ServerSpec:
    base: dict[str, object] = {
        "key": "k1",
        "label": "vllm-tp2",
        "argv": ("vllm", "serve", "m", "--port", "{port}", "--url=http://x:{port}/v1"),
        "env": {"VLLM_LOG": "1"},
        "gpus": 2,
    }
    base.update(kw)
    return ServerSpec(**base)  # type: ignore[arg-type]


def test_port_token_is_replaced_inside_elements() -> None:
    argv, env = _spec().command(port=41000, gpu_ids=(2, 3), container_name="c")
    assert argv == ("vllm", "serve", "m", "--port", "41000", "--url=http://x:41000/v1")
    assert env == {"VLLM_LOG": "1", "CUDA_VISIBLE_DEVICES": "2,3"}


def test_local_without_gpus_sets_no_device_list() -> None:
    _, env = _spec(gpus=0).command(port=1, gpu_ids=(), container_name="c")
    assert "CUDA_VISIBLE_DEVICES" not in env


def test_docker_argv_is_a_list_with_devices_mounts_and_env() -> None:
    runtime = DockerRuntime(
        image=IMAGE, mounts=(("/data/models", "/models"),), extra_args=("--shm-size", "16g")
    )
    spec = _spec(runtime=runtime, env={"B": "2", "A": "x y"})
    argv, env = spec.command(port=8888, gpu_ids=(4, 5), container_name="infx-abc")
    assert env == {}
    assert argv == (
        "docker", "run", "--rm", "--init", "--name", "infx-abc",
        "--network", "host", "--ipc", "host",
        "--gpus", '"device=4,5"',
        "-v", "/data/models:/models",
        "-e", "A=x y", "-e", "B=2",
        "--shm-size", "16g",
        IMAGE,
        "vllm", "serve", "m", "--port", "8888", "--url=http://x:8888/v1",
    )  # fmt: skip
    assert spec.cleanup_argv("infx-abc") == ("docker", "rm", "--force", "infx-abc")
    assert _spec().cleanup_argv("infx-abc") == ()


def test_an_amd_server_gets_its_node_devices_through_rocr_and_hip_indexes_them() -> None:
    _, env = _spec(gpu_vendor="amd").command(port=1, gpu_ids=(4, 5), container_name="c")
    assert env == {"VLLM_LOG": "1", "ROCR_VISIBLE_DEVICES": "4,5", "HIP_VISIBLE_DEVICES": "0,1"}
    runtime = DockerRuntime(image=IMAGE)
    argv, env = _spec(gpu_vendor="amd", runtime=runtime).command(
        port=1, gpu_ids=(6, 7), container_name="c"
    )
    assert env == {}
    assert "--gpus" not in argv
    assert argv[argv.index("--group-add") - 4 : argv.index("--group-add") + 2] == (
        "--device", "/dev/kfd", "--device", "/dev/dri", "--group-add", "video"
    )  # fmt: skip
    assert "ROCR_VISIBLE_DEVICES=6,7" in argv and "HIP_VISIBLE_DEVICES=0,1" in argv


@pytest.mark.parametrize(
    "image", ["vllm/vllm-openai:v0.31.0", "vllm/vllm-openai@sha256:abc", "x:latest"]
)
def test_docker_image_must_be_pinned_by_digest(image: str) -> None:
    with pytest.raises(SpecError, match="not pinned by digest"):
        DockerRuntime(image=image)


def test_docker_image_by_its_tag_with_a_reason() -> None:
    runtime = DockerRuntime(image="vllm/vllm-openai:nightly", unpinned="no digest published")
    assert runtime.image == "vllm/vllm-openai:nightly"
    with pytest.raises(SpecError, match="not pinned by digest"):
        DockerRuntime(image="vllm/vllm-openai:nightly", unpinned="")


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"key": ""}, "empty key"),
        ({"argv": ()}, "argv must be"),
        ({"label": "a b/c"}, "names log files"),
        ({"preferred_port": 0}, "preferred_port"),
        ({"health_path": "health"}, "must start with '/'"),
        ({"ready_timeout_s": 0}, "ready_timeout_s"),
        ({"gpus": -1}, "gpus must be"),
    ],
)
def test_bad_specs_are_refused_clearly(kw: dict[str, object], needle: str) -> None:
    with pytest.raises(SpecError, match=needle):
        _spec(**kw)


def test_specs_are_frozen_hashable_values() -> None:
    a, b = _spec(), _spec()
    assert a == b and hash(a) == hash(b)
    assert a.runtime == LocalRuntime()
    with pytest.raises(TypeError):
        a.env["X"] = "1"  # type: ignore[index]


def test_files_token_names_the_folder_the_launch_wrote_them_to() -> None:
    spec = _spec(
        argv=("trtllm-serve", "m", "--config", "{files}/options.yaml"),
        files={"options.yaml": "a: 1\n"},
    )
    argv, _ = spec.command(port=1, gpu_ids=(0, 1), container_name="c", files_dir="/run/s.files")
    assert argv == ("trtllm-serve", "m", "--config", "/run/s.files/options.yaml")
    with pytest.raises(SpecError, match="has files: give the folder"):
        spec.command(port=1, gpu_ids=(0, 1), container_name="c")
    docker = _spec(
        argv=("trtllm-serve", "--config", "{files}/options.yaml"),
        files={"options.yaml": "a: 1\n"},
        runtime=DockerRuntime(image=IMAGE),
    )
    argv, _ = docker.command(port=1, gpu_ids=(0,), container_name="c", files_dir="/run/s.files")
    assert argv[argv.index("-v") + 1] == "/run/s.files:/run/s.files"
    assert argv[-1] == "/run/s.files/options.yaml"


@pytest.mark.parametrize("name", ["../escape.yaml", ".hidden", "a/b", ""])
def test_a_file_name_that_is_not_one_plain_name_is_refused(name: str) -> None:
    with pytest.raises(SpecError, match="file name"):
        _spec(files={name: "x"})
