"""Stand-ins that run an inner command: docker/podman/nerdctl, enroot, srun/salloc/sbatch and
the other Slurm tools, mpirun/mpiexec, numactl, trtllm-llmapi-launch.

Imported by ``standin.main`` only (which puts this folder on ``sys.path`` and registers
itself as ``standin``). A launcher records its call, then replaces itself by the inner command,
with the env and the folder the real one would give it: docker passes only its ``-e``
variables, srun follows ``--export``, and a path under a container mount is the host path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from standin import NAMES, has, longs, opt, parse, record, reset_signals, say

JOB_ID = "4242"
Mounts = list[tuple[str, str]]

# --- running an inner command --------------------------------------------------------------


def _trace_dir() -> str | None:
    return os.environ.get("BENCHBOT_TRACE_DIR") or None


def path_first(path: str) -> str:
    """``path`` with the wrappers folder first."""
    d = _trace_dir()
    if d is None:
        return path
    parts = [p for p in path.split(":") if p and p != d]
    return ":".join([d, *parts])


def base_env() -> dict[str, str]:
    """What crosses any container boundary: PATH (wrappers first), HOME, TERM, BENCHBOT_TRACE_*."""
    env = {k: v for k, v in os.environ.items() if k in ("HOME", "TERM") or k.startswith("BENCHBOT_TRACE_")}
    env["PATH"] = path_first(os.environ.get("PATH", "/usr/bin:/bin"))
    return env


def seal(env: dict[str, str]) -> dict[str, str]:
    """Keep the stand-ins reachable whatever the caller set."""
    env.update({k: v for k, v in os.environ.items() if k.startswith("BENCHBOT_TRACE_")})
    env["PATH"] = path_first(env.get("PATH") or os.environ.get("PATH", "/usr/bin:/bin"))
    return env


def _strip(p: str) -> str:
    return p.rstrip("/") or "/"


def to_host(path: str, mounts: Mounts) -> str:
    """A container path as the host sees it, through the longest mount whose target holds it."""
    for src, dst in sorted(mounts, key=lambda m: -len(_strip(m[1]))):
        d = _strip(dst)
        if d == "/" or not src.startswith(("/", ".")):
            continue
        if path == d or path.startswith(d + "/"):
            return (_strip(src).rstrip("/") + path[len(d):]) or "/"
    return path


def resolve(cmd0: str) -> str:
    """``/bin/bash`` inside a container is the image's bash: the stand-in's, here."""
    d = _trace_dir()
    base = cmd0.rsplit("/", 1)[-1]
    if "/" in cmd0 and base in NAMES and d is not None and os.path.exists(os.path.join(d, base)):
        return os.path.join(d, base)
    return cmd0


def run_inner(name: str, cmd: Sequence[str], env: dict[str, str], cwd: str | None = None,
              mounts: Mounts | None = None, detach: bool = False) -> int:
    """Replace this process by ``cmd`` (or start it in the background: ``detach``)."""
    cmd = [to_host(a, mounts or []) for a in cmd]
    cmd[0] = resolve(cmd[0])
    if cwd:
        try:
            os.chdir(cwd)
        except OSError as exc:
            say(f"{name}: cannot enter {cwd}: {exc.strerror}", err=True)
            return 1
        if "PWD" in env:
            env["PWD"] = os.getcwd()
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        if detach:
            subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
            say("0" * 52 + "be4c4b1c7ace")
            return 0
        reset_signals()
        os.execvpe(cmd[0], cmd, env)
    except FileNotFoundError:
        say(f"{name}: {cmd[0]}: command not found", err=True)
        return 127
    except OSError as exc:
        say(f"{name}: {cmd[0]}: {exc.strerror}", err=True)
        return 126
    return 0  # not reached: execvpe does not return


def workdir(path: str | None, mounts: Mounts) -> tuple[str | None, str | None]:
    """(the host folder to run in, or None: stay) for a container workdir."""
    if not path:
        return None, None
    host = to_host(path, mounts)
    return (host if os.path.isdir(host) else None), host


# --- containers ------------------------------------------------------------------------------

DOCKER_GLOBAL = longs("--config -c --context -H --host -l --log-level --tlscacert --tlscert --tlskey")
DOCKER_VALUED = longs("""
-e --env --env-file -v --volume --mount -w --workdir --entrypoint --name --network --net --ipc --shm-size
--device --cap-add --cap-drop --security-opt --ulimit -u --user --gpus -p --publish -l --label --label-file
-h --hostname --group-add --runtime --pid -m --memory --memory-swap --memory-reservation --cpus --cpuset-cpus
--cpuset-mems --cpu-shares -c --platform --pull --restart --add-host --dns --dns-search --dns-option
--log-driver --log-opt --tmpfs --volumes-from --stop-signal --stop-timeout --health-cmd --health-interval
--health-retries --health-timeout --health-start-period --cgroupns --cgroup-parent --uts --userns --expose
--link --mac-address --ip --ip6 --oom-score-adj --storage-opt --sysctl --device-cgroup-rule --cidfile -a
--attach --blkio-weight --pids-limit --network-alias --annotation --detach-keys --isolation --hooks-dir
--cpu-period --cpu-quota --kernel-memory --gidfile --group-entry --passwd-entry --arch --os --variant
""")


def _bind(spec: str) -> tuple[str, str] | None:
    """``SRC:DST[:mode]`` -> (SRC, DST); an anonymous volume (no DST) is None."""
    parts = spec.split(":")
    if len(parts) < 2 or not parts[1]:
        return None
    return parts[0], parts[1]


def _mount(spec: str) -> tuple[str, str] | None:
    """``--mount type=bind,src=A,dst=B,...`` -> (A, B)."""
    kv = dict(p.partition("=")[::2] for p in spec.split(","))
    src = kv.get("src") or kv.get("source")
    dst = kv.get("dst") or kv.get("destination") or kv.get("target")
    return (src or "", dst) if dst else None


def do_docker(name: str, args: list[str]) -> int:
    gopts, rest = parse(args, DOCKER_GLOBAL)
    sub = rest[0] if rest else ""
    sub_args = rest[1:]
    if sub == "container" and sub_args:
        sub, sub_args = sub_args[0], sub_args[1:]
    if sub not in ("run", "create"):
        record(name, args, "other", {"subcommand": sub})
        if sub == "inspect":
            say("[]")
        return 0
    opts, rest = parse(sub_args, DOCKER_VALUED)
    if not rest:
        record(name, args, "container", {"error": "no image"})
        say(f"{name}: 'run' requires at least 1 argument", err=True)
        return 125
    image, cmd = rest[0], rest[1:]
    env = base_env()
    passed: dict[str, str | None] = {}
    env_files: list[str] = []
    mounts: Mounts = []
    entry: str | None = None
    wd: str | None = None
    for key, val in opts:
        if val is None:
            continue
        if key in ("-e", "--env"):
            k, eq, v = val.partition("=")
            passed[k] = v if eq else os.environ.get(k)
        elif key == "--env-file":
            env_files.append(val)
        elif key in ("-v", "--volume"):
            m = _bind(val)
            mounts += [m] if m else []
        elif key == "--mount":
            m = _mount(val)
            mounts += [m] if m else []
        elif key in ("-w", "--workdir"):
            wd = val
        elif key == "--entrypoint":
            entry = val
    env.update({k: v for k, v in passed.items() if v is not None})
    inner = ([entry] if entry else []) + cmd
    host_wd, mapped = workdir(wd, mounts)
    detach = has(opts, "-d", "--detach")
    detail = {"image": image, "inner": inner, "env_passed": passed, "env_files": env_files, "workdir": wd,
              "host_workdir": mapped, "entered": host_wd is not None, "mounts": [list(m) for m in mounts],
              "entrypoint": entry,
              "detached": detach, "options": [[k, v] for k, v in gopts + opts]}
    if sub == "create":
        record(name, args, "container", {**detail, "ran": False})
        return 0
    record(name, args, "container", detail)
    if not inner:
        return 0
    return run_inner(name, inner, seal(env), host_wd, mounts, detach)


ENROOT_VALUED = longs("-c --conf -m --mount -e --env -o --output -n --name -a --arch")


def do_enroot(name: str, args: list[str]) -> int:
    sub = args[0] if args else ""
    opts, rest = parse(args[1:], ENROOT_VALUED)
    if sub != "start":
        detail: dict[str, Any] = {"subcommand": sub}
        out = opt(opts, "-o", "--output")
        if sub == "import" and out:
            detail["output"] = out
            try:
                open(out, "a").close()
            except OSError as exc:
                detail["error"] = exc.strerror
        record(name, args, "other", detail)
        return 0
    mounts = [m for m in (_bind(v) for k, v in opts if k in ("-m", "--mount") and v) if m]
    envs = [v for k, v in opts if k in ("-e", "--env") and v]
    if envs:
        env = base_env()
        for e in envs:
            k, eq, v = e.partition("=")
            if eq or k in os.environ:
                env[k] = v if eq else os.environ[k]
    else:
        env = dict(os.environ)
    image, cmd = (rest[0], rest[1:]) if rest else ("", [])
    record(name, args, "container", {"image": image, "inner": cmd, "env_passed": envs or "ALL",
                                     "mounts": [list(m) for m in mounts], "options": [[k, v] for k, v in opts]})
    return run_inner(name, cmd, seal(env), None, mounts) if cmd else 0


# --- slurm -----------------------------------------------------------------------------------

SLURM_VALUED = longs("""
-A --account --jobid --job-name -J -p --partition -t --time -N --nodes -n --ntasks --ntasks-per-node
-c --cpus-per-task --gres -G --gpus --gpus-per-node --gpus-per-task --mem --mem-per-cpu --mem-per-gpu --mpi
-w --nodelist -x --exclude -o --output -e --error -i --input -D --chdir --container-image --container-mounts
--container-workdir --container-name --container-env --container-save --export -C --constraint -q --qos
--reservation -d --dependency -m --distribution --cpu-bind --gpu-bind --het-group --signal --begin --comment
--wckey -M --cluster --clusters --ntasks-per-gpu --threads-per-core --hint -L --licenses --network --switches
--time-min --tmp --uid --gid -W --wait --cores-per-socket --sockets-per-node -B --extra-node-info --mcs-label
--prolog --epilog --task-prolog --task-epilog --power --profile --slurmd-debug --core-spec -S --thread-spec
--delay-boot --deadline --accel-bind --cpu-freq --mem-bind --mail-type --mail-user --open-mode -r --relative
--tres-per-task --tres-bind --gres-flags --segment -T -a --array --wrap --chdir --kill-command --bb
--bbf --container --export-file --priority -F --nodefile
""")


def slurm_env(export: str | None, jobid: str | None) -> tuple[dict[str, str], str]:
    """The env srun gives its task: ``--export`` ALL (default), NONE, [ALL|NONE,]X[=v],..."""
    tokens = (export or "ALL").split(",")
    mode = tokens[0].upper() if tokens[0].upper() in ("ALL", "NONE") else "LIST"
    if mode != "LIST":
        tokens = tokens[1:]
    if mode == "ALL":
        env = dict(os.environ)
    else:
        env = base_env() | {k: v for k, v in os.environ.items() if k.startswith("SLURM")}
    for t in tokens:
        k, eq, v = t.partition("=")
        if eq:
            env[k] = v
        elif k in os.environ:
            env[k] = os.environ[k]
    job = jobid or os.environ.get("SLURM_JOB_ID") or JOB_ID
    env.update({"SLURM_JOB_ID": job, "SLURM_JOBID": job, "SLURM_PROCID": "0", "SLURM_LOCALID": "0",
                "SLURM_NODEID": "0", "SLURMD_NODENAME": env.get("SLURMD_NODENAME", "trace-node")})
    return seal(env), mode


def do_srun(name: str, args: list[str]) -> int:
    opts, cmd = parse(args, SLURM_VALUED)
    image = opt(opts, "--container-image")
    mounts: Mounts = []
    for spec in (opt(opts, "--container-mounts") or "").split(","):
        if spec:
            m = _bind(spec) if ":" in spec else (spec, spec)
            mounts += [m] if m else []
    wd = opt(opts, "--container-workdir") if image else opt(opts, "-D", "--chdir")
    host_wd, mapped = workdir(wd, mounts) if image else (wd, wd)
    export = opt(opts, "--export")
    env, mode = slurm_env(export, opt(opts, "--jobid"))
    listed = [t for t in (export or "").split(",")[(0 if mode == "LIST" else 1):] if t]
    detail = {"image": image, "inner": cmd, "export": export or "ALL", "export_mode": mode,
              "env_passed": {t.partition("=")[0]: (t.partition("=")[2] if "=" in t else os.environ.get(t))
                             for t in listed},
              "workdir": wd, "host_workdir": mapped, "mounts": [list(m) for m in mounts],
              "jobid": opt(opts, "--jobid"), "options": [[k, v] for k, v in opts]}
    record(name, args, "container" if image else "scheduler", detail)
    if not cmd:
        say("srun: fatal: No command given to execute.", err=True)
        return 1
    return run_inner(name, cmd, env, host_wd, mounts)


def do_salloc(name: str, args: list[str]) -> int:
    opts, cmd = parse(args, SLURM_VALUED)
    record(name, args, "scheduler", {"inner": cmd, "job_id": JOB_ID, "options": [[k, v] for k, v in opts]})
    say(f"salloc: Granted job allocation {JOB_ID}", err=True)
    if not cmd:
        return 0
    env = dict(os.environ) | {"SLURM_JOB_ID": JOB_ID, "SLURM_JOBID": JOB_ID}
    return run_inner(name, cmd, seal(env))


def do_sbatch(name: str, args: list[str]) -> int:
    opts, rest = parse(args, SLURM_VALUED - {"-W", "--wait"})
    script = rest[0] if rest else None
    record(name, args, "scheduler", {
        "script": script, "script_args": rest[1:], "wrap": opt(opts, "--wrap"), "ran": False,
        "script_exists": bool(script and os.path.isfile(script)), "job_id": JOB_ID,
        "options": [[k, v] for k, v in opts]})
    say(JOB_ID if has(opts, "--parsable") else f"Submitted batch job {JOB_ID}")
    return 0


def do_slurm_query(name: str, args: list[str]) -> int:
    opts, rest = parse(args, SLURM_VALUED | longs("-o --format -O --Format -u --user -j --jobs -s --states"),
                       stop=False)
    detail: dict[str, Any] = {"positional": rest}
    if name == "sbcast" and len(rest) == 2:  # the job's node is this machine: the copy is the broadcast
        try:
            shutil.copyfile(rest[0], rest[1])
            detail["copied"] = True
        except OSError as exc:
            detail.update(copied=False, error=exc.strerror)
    record(name, args, "scheduler", detail)
    if name == "squeue" and not has(opts, "-h", "--noheader"):
        say("             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)")
    fmt = " ".join(str(v) for k, v in opts if k in ("-o", "--format", "-O", "--Format") and v is not None)
    if name == "squeue" and fmt:
        # the allocation just granted (salloc says 4242): ``squeue --name=X -h -o %A`` finds its id
        fields = {"%A": "4242", "%i": "4242", "%j": "trace-job", "%T": "RUNNING", "%t": "R", "%N": "trace-node",
                  "%R": "trace-node", "%u": os.environ.get("USER", "trace")}
        line = fmt
        for key, value in fields.items():
            line = line.replace(key, value)
        say(line)
    return 0


# --- launchers that run their command on the spot -------------------------------------------

MPI_VALUED = longs("""
-n -np -c -N --n --np -npernode --npernode -npersocket --npersocket -H -host --host -hostfile --hostfile
-machinefile --machinefile --bind-to -bind-to --map-by -map-by --rank-by -rank-by -x --prefix -wdir --wdir -wd
--cpus-per-proc --cpus-per-rank -output-filename --output-filename -am --app --personality -ppn -f -hosts
--launch-agent -bootstrap -iface -envlist -genvlist
""")
MPI_PAIR = longs("--mca -mca --gmca -gmca -genv -env")


def do_mpirun(name: str, args: list[str]) -> int:
    env = dict(os.environ)
    exported: dict[str, str | None] = {}
    flat: list[str] = []
    i = 0
    while i < len(args):  # the two-value options first, the rest by the common parser
        if args[i] in MPI_PAIR and i + 2 < len(args):
            if args[i] in ("-genv", "-env"):
                env[args[i + 1]] = exported[args[i + 1]] = args[i + 2]
            i += 3
            continue
        flat.append(args[i])
        i += 1
        if flat[-1] in MPI_VALUED and i < len(args):
            flat.append(args[i])
            i += 1
        elif not flat[-1].startswith("-"):
            flat.extend(args[i:])
            break
    opts, cmd = parse(flat, MPI_VALUED, frozenset(a for a in flat if a.startswith("-")))
    for key, val in opts:
        if key == "-x" and val:
            k, eq, v = val.partition("=")
            exported[k] = v if eq else os.environ.get(k)
            if eq:
                env[k] = v
    record(name, args, "other", {"inner": cmd, "np": opt(opts, "-n", "-np", "--n", "--np", "-c"),
                                 "exported": exported, "options": [[k, v] for k, v in opts]})
    if not cmd:
        say(f"{name}: no executable given", err=True)
        return 1
    return run_inner(name, cmd, seal(env), opt(opts, "-wdir", "--wdir", "-wd"))


NUMA_VALUED = longs("""
-N --cpunodebind -m --membind -i --interleave -C --physcpubind -p --preferred -P --preferred-many
-w --weighted-interleave -o --offset -L --length -M --shmmode -S --shm -f --file -I --shmid
""")


def do_numactl(name: str, args: list[str]) -> int:
    opts, cmd = parse(args, NUMA_VALUED)
    record(name, args, "other", {"inner": cmd, "options": [[k, v] for k, v in opts]})
    if has(opts, "-s", "--show"):
        say("policy: default\npreferred node: current\nphyscpubind: 0\ncpubind: 0\nnodebind: 0\nmembind: 0")
        return 0
    if has(opts, "-H", "--hardware"):
        say("available: 1 nodes (0)\nnode 0 cpus: 0\nnode 0 size: 1024 MB\nnode 0 free: 1024 MB")
        return 0
    return run_inner(name, cmd, seal(dict(os.environ))) if cmd else 0


def do_passthrough(name: str, args: list[str]) -> int:
    """``trtllm-llmapi-launch CMD...``: runs CMD."""
    record(name, args, "other", {"inner": args})
    return run_inner(name, args, seal(dict(os.environ))) if args else 0

