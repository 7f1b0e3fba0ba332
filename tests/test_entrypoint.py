"""runners/entrypoint.sh, run for real in a copy of examples/seed whose launchers are stubs that print the
environment they were started with. No network; python3 is this venv's (it has PyYAML)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLE, ROOT, copy_repo

ENTRYPOINT = ROOT / "runners" / "entrypoint.sh"
MTP_ENTRY = "kimik2.5-int4-mi325x-vllm-mtp"
SHOWN = ("IMAGE", "MODEL", "MODEL_PREFIX", "PRECISION", "FRAMEWORK", "SPEC_DECODING", "DISAGG", "EXP_NAME", "ISL",
         "OSL", "SCENARIO_TYPE", "SCENARIO_SUBDIR", "IS_AGENTIC", "CONC", "TP", "EP_SIZE", "DP_ATTENTION", "PP_SIZE",
         "RUNNER_NAME", "RUNNER_TYPE")
RAN = "stub launcher ran: "
STUB = "#!/usr/bin/env bash\nprintf '" + RAN + "%s\\n' \"$0\"\nfor v in " + " ".join(SHOWN) + """; do
    printf '%s=%s\\n' "$v" "${!v-<unset>}"
done
"""
BASH = shutil.which("bash") or "/bin/bash"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The seed repo with this entrypoint, and every launcher replaced by the stub."""
    root = copy_repo(EXAMPLE, tmp_path / "seed")
    shutil.copy(ENTRYPOINT, root / "runners" / "entrypoint.sh")
    for launcher in (root / "runners").glob("launch_*.sh"):
        launcher.write_text(STUB, encoding="utf-8")
    return root


def run(repo: Path, *, path_first: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """``bash runners/entrypoint.sh`` in ``repo`` with only PATH, HOME and ``env`` set."""
    dirs = [str(Path(sys.executable).parent), os.environ.get("PATH", "/usr/bin:/bin")]
    if path_first is not None:
        dirs.insert(0, str(path_first))
    full = {"PATH": os.pathsep.join(dirs), "HOME": str(repo), **env}
    return subprocess.run([BASH, "runners/entrypoint.sh"], cwd=repo, env=full, capture_output=True, text=True,
                          timeout=30, check=False)


def launched(proc: subprocess.CompletedProcess[str]) -> tuple[str, dict[str, str]]:
    """(the launcher that ran, the environment it printed)."""
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _, marker, rest = proc.stdout.partition(RAN)
    assert marker, f"the launcher did not run:\n{proc.stdout}{proc.stderr}"
    launcher, *lines = rest.splitlines()
    return launcher, dict(line.split("=", 1) for line in lines)


def test_runs_the_launcher_of_the_label_with_the_entry_env(repo: Path) -> None:
    proc = run(repo, ENTRY=MTP_ENTRY, RUNNER_LABEL="mi325x")
    launcher, env = launched(proc)
    assert launcher == "runners/launch_mi325x-amds.sh"
    assert env == {
        "IMAGE": "vllm/vllm-openai-rocm:v0.14.1", "MODEL": "moonshotai/Kimi-K2.5", "MODEL_PREFIX": "kimik2.5",
        "PRECISION": "int4", "FRAMEWORK": "vllm", "SPEC_DECODING": "mtp", "DISAGG": "false",
        "EXP_NAME": "kimik2.5_1k1k", "ISL": "1024", "OSL": "1024", "SCENARIO_TYPE": "fixed-seq-len",
        "SCENARIO_SUBDIR": "fixed_seq_len/", "IS_AGENTIC": "0", "CONC": "4", "TP": "8", "EP_SIZE": "1",
        "DP_ATTENTION": "false", "PP_SIZE": "1",
        # RUNNER_NAME is the node (what the GitHub runner sets it to), RUNNER_TYPE the label.
        "RUNNER_NAME": "mi325x-amds_0", "RUNNER_TYPE": "mi325x",
    }
    # What it does is printed before the launcher starts.
    before = proc.stdout.partition(RAN)[0]
    for text in (f"entry {MTP_ENTRY} from configs/amd-master.yaml", "launcher runners/launch_mi325x-amds.sh",
                 "EXP_NAME=kimik2.5_1k1k", "SPEC_DECODING=mtp"):
        assert text in before, before


def test_the_runner_s_own_name_is_kept_when_the_label_lists_it(repo: Path) -> None:
    _, env = launched(run(repo, ENTRY=MTP_ENTRY, RUNNER_LABEL="mi325x", RUNNER_NAME="mi325x-amds_1"))
    assert env["RUNNER_NAME"] == "mi325x-amds_1"

    proc = run(repo, ENTRY=MTP_ENTRY, RUNNER_LABEL="mi325x", RUNNER_NAME="GitHub Actions 7")
    _, env = launched(proc)
    assert env["RUNNER_NAME"] == "mi325x-amds_0"
    assert "not listed under 'mi325x'" in proc.stderr


def test_config_file_given_or_found(repo: Path) -> None:
    _, given = launched(run(repo, ENTRY=MTP_ENTRY, RUNNER_LABEL="mi325x", CONFIG_FILE="configs/amd-master.yaml"))
    _, searched = launched(run(repo, ENTRY=MTP_ENTRY, RUNNER_LABEL="mi325x", CONFIG_FILE=""))
    assert given == searched

    (repo / ".github" / "configs").mkdir(parents=True)
    (repo / "configs" / "amd-master.yaml").rename(repo / ".github" / "configs" / "amd-master.yaml")
    proc = run(repo, ENTRY=MTP_ENTRY, RUNNER_LABEL="mi325x")
    assert launched(proc)[1] == searched
    assert "from .github/configs/amd-master.yaml" in proc.stdout

    missing = run(repo, ENTRY=MTP_ENTRY, RUNNER_LABEL="mi325x", CONFIG_FILE="configs/amd-master.yaml")
    assert missing.returncode == 2 and "cannot read configs/amd-master.yaml" in missing.stderr


def test_older_seq_len_configs_and_yaml_booleans(repo: Path) -> None:
    (repo / "configs" / "nv-master.yaml").write_text(
        "dsr1-fp8-mi355x-sglang:\n"
        "  image: lmsysorg/sglang:v0.5\n  model: deepseek-ai/DeepSeek-R1\n  model-prefix: dsr1\n"
        "  runner: mi355x\n  precision: fp8\n  framework: sglang\n"
        "  seq-len-configs:\n"
        "  - isl: 8192\n    osl: 1024\n    search-space:\n"
        "    - { tp: 8, ep: 8, dp-attn: true, conc-list: [16, 32] }\n"
        "    - { tp: 4, conc-start: 1 }\n",
        encoding="utf-8",
    )
    launcher, env = launched(run(repo, ENTRY="dsr1-fp8-mi355x-sglang", RUNNER_LABEL="mi355x"))
    assert launcher == "runners/launch_mi355x-amds.sh"
    assert (env["EXP_NAME"], env["ISL"], env["OSL"], env["TP"], env["EP_SIZE"], env["DP_ATTENTION"], env["CONC"],
            env["SPEC_DECODING"]) == ("dsr1_8k1k", "8192", "1024", "8", "8", "true", "16", "none")


def test_config_values_are_data_not_shell(repo: Path) -> None:
    config = repo / "configs" / "amd-master.yaml"
    hostile = "img$(touch pwned)`touch pwned2`'\"; touch pwned3\nexport TP=1"
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data[MTP_ENTRY]["image"] = hostile
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    _, env = launched(run(repo, ENTRY=MTP_ENTRY, RUNNER_LABEL="mi325x"))
    assert env["IMAGE"] == hostile.partition("\n")[0]  # the stub prints one line per variable
    assert env["TP"] == "8"
    assert not any((repo / name).exists() for name in ("pwned", "pwned2", "pwned3"))


def test_unknown_entry_label_or_launcher_exits_2(repo: Path) -> None:
    proc = run(repo, ENTRY="no-such-entry", RUNNER_LABEL="mi325x")
    assert proc.returncode == 2 and RAN not in proc.stdout
    assert "no entry 'no-such-entry' in the master configs" in proc.stderr

    proc = run(repo, ENTRY=MTP_ENTRY, RUNNER_LABEL="h200")
    assert proc.returncode == 2 and RAN not in proc.stdout
    assert "runner label 'h200' is not in configs/runners.yaml" in proc.stderr

    (repo / "runners" / "launch_mi325x-amds.sh").unlink()
    proc = run(repo, ENTRY=MTP_ENTRY, RUNNER_LABEL="mi325x")
    assert proc.returncode == 2 and RAN not in proc.stdout
    assert "no launcher runners/launch_mi325x-amds.sh for node mi325x-amds_0" in proc.stderr


@pytest.mark.parametrize("field, value", [
    ("ENTRY", "kimik2.5;touch pwned"),
    ("ENTRY", "$(touch pwned)"),
    ("ENTRY", "`touch pwned`"),
    ("ENTRY", "kimik2.5\ntouch pwned"),
    ("ENTRY", "kimik2.5-\u00e9"),
    ("ENTRY", ""),
    ("RUNNER_LABEL", "mi325x;touch pwned"),
    ("RUNNER_LABEL", "$(touch pwned)"),
    ("CONFIG_FILE", "../configs/amd-master.yaml"),
    ("CONFIG_FILE", "/etc/passwd.yaml"),
    ("CONFIG_FILE", "configs/$(touch pwned).yaml"),
])
def test_malformed_input_exits_2_before_anything_runs(repo: Path, tmp_path: Path, field: str, value: str) -> None:
    # A python3 that leaves a mark: the input check must come before the script runs anything.
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "python3").write_text(f"#!/bin/sh\ntouch '{tmp_path / 'python-ran'}'\n", encoding="utf-8")
    (fake / "python3").chmod(0o755)
    env = {"ENTRY": MTP_ENTRY, "RUNNER_LABEL": "mi325x", "CONFIG_FILE": "", field: value}
    proc = run(repo, path_first=fake, **env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith(f"entrypoint: {field} must be"), proc.stderr
    assert len(proc.stderr.splitlines()) == 1  # the bad value is quoted onto the same line
    assert proc.stdout == ""
    assert not (tmp_path / "python-ran").exists()
    assert not (repo / "pwned").exists()
