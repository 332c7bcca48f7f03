#!/usr/bin/env bash
# Orchestration overhead of the Ansible collection (deploy/ansible): the
# wall time of `ansible-playbook engine.fleet.benchmark` on N test hosts
# (each its own sshd on 127.0.0.x, as in tests/integration/orchestration.rs) minus
# the wall time of the same engine command run locally, for N = 3 and 10
# (or the counts given). Hosts run in parallel (forks >= N), so the overhead
# is what a fleet run costs over one local run; per host is that over N.
# Two playbook runs per N: "fresh" copies the binary and runs the suite;
# "again" finds everything done (what a resume of a finished run costs).
# Usage: scripts/bench-fleet.sh [N...]   (default 3 10; needs root)
# ENGINE=path uses that binary (default: target/release/engine, built).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "needs root (sshd, root logins on 127.0.0.x)"; exit 1; }
COUNTS=("$@"); [ ${#COUNTS[@]} -gt 0 ] || COUNTS=(3 10)
TOOLS=${ENGINE_TOOLS:-/opt/engine-tools}
[ -x "$TOOLS/bin/ansible-playbook" ] || { echo "needs ansible-core in $TOOLS: run scripts/install-deps.sh"; exit 1; }
if [ -z "${ENGINE:-}" ]; then
  cargo build --release --quiet -p engine
  ENGINE=${CARGO_TARGET_DIR:-$PWD/target}/release/engine
fi
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
strip -o "$work/engine" "$ENGINE"
mkdir -p /run/sshd "$work/profiles/test-profiles/quick" "$work/profiles/suites"
cat >"$work/profiles/test-profiles/quick/profile.yaml" <<'EOF'
id: quick
version: 1.0.0
title: Quick
test_type: other
options:
  - id: v
    name: Value
    entries:
      - {label: One, value: "1"}
      - {label: Two, value: "2"}
executor:
  external:
    program: sh
    args: ["-c", "echo value: {{v}}"]
results:
  - {id: number, unit: Items, proportion: HIB}
parsers:
  - {result: number, regex: 'value: (?P<value>[0-9.]+)'}
EOF
printf 'title: Quick\ntests:\n  - profile: quick\n    options:\n      v: [One, Two]\n' >"$work/profiles/suites/quick.yaml"
ssh-keygen -q -t ed25519 -N '' -f "$work/id"
export ANSIBLE_HOME=$work/ansible ANSIBLE_COLLECTIONS_PATH=$work/collections ANSIBLE_LOCAL_TEMP=$work/ansible-local
export ANSIBLE_HOST_KEY_CHECKING=False ANSIBLE_PIPELINING=True ANSIBLE_NOCOLOR=1 LC_ALL=C.UTF-8
export ANSIBLE_SSH_ARGS="-o ControlMaster=auto -o ControlPersist=60s -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no"
"$TOOLS/bin/ansible-galaxy" collection build --force --output-path "$work" deploy/ansible >/dev/null
"$TOOLS/bin/ansible-galaxy" collection install --force -p "$work/collections" "$work"/engine-fleet-*.tar.gz >/dev/null

now() { date +%s.%N; }
# The same command locally, for the baseline (median of 5).
local_wall=$(
  for i in 1 2 3 4 5; do
    d=$work/local$i; mkdir -p "$d/t"
    s=$(now)
    ENGINE_HOME=$d/home ENGINE_PROFILE_PATH=$work/profiles "$work/engine" benchmark suite/quick --save fleet \
      --identifier local --target-dir "$d/t" --progress json --yes --runs 1 >/dev/null 2>&1
    echo "$(now) - $s" | bc
  done | sort -n | sed -n 3p
)
printf 'local run of the same command: %.2f s\n' "$local_wall"
# Ansible's own fixed cost: start-up and one local task.
printf -- '- hosts: localhost\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug: {msg: hi}\n' >"$work/noop.yml"
s=$(now); "$TOOLS/bin/ansible-playbook" -i localhost, "$work/noop.yml" >/dev/null 2>&1
printf 'ansible-playbook start-up and one local task: %.2f s\n' "$(echo "$(now) - $s" | bc)"

start_host() { # name addr dir
  local d=$3 port
  mkdir -p "$d"
  ssh-keygen -q -t ed25519 -N '' -f "$d/host_key"
  cp "$work/id.pub" "$d/authorized_keys"
  port=$(python3 -c 'import socket,sys; s=socket.socket(); s.bind((sys.argv[1],0)); print(s.getsockname()[1])' "$2")
  cat >"$d/sshd_config" <<EOF
Port $port
ListenAddress $2
HostKey $d/host_key
PidFile $d/sshd.pid
AuthorizedKeysFile $d/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
Subsystem sftp internal-sftp
MaxStartups 200
LogLevel ERROR
EOF
  /usr/sbin/sshd -D -e -f "$d/sshd_config" 2>/dev/null &
  pids+=($!)
  echo "$1 ansible_host=$2 ansible_port=$port ansible_user=root ansible_ssh_private_key_file=$work/id" \
    "ansible_python_interpreter=/usr/bin/python3 ansible_remote_tmp=$d/.ansible-tmp" \
    "ansible_async_dir=$d/.ansible-async engine_remote_dir=$d/engine" \
    "engine_environment='{\"ENGINE_MACHINE_LOCK\":\"$d/machine.lock\"}'" >>"$work/hosts$N.ini"
}

for N in "${COUNTS[@]}"; do
  echo "[bench]" >"$work/hosts$N.ini"
  for i in $(seq 1 "$N"); do start_host "host$i" "127.0.0.$((100 + i))" "$work/n$N/host$i"; done
  sleep 1
  vars=$(printf '{"engine_ref":"suite/quick","engine_binary":"%s","engine_profile_dirs":["%s"],"engine_runs":1,"engine_poll_interval":1,"engine_fetch_dir":"%s"}' \
    "$work/engine" "$work/profiles" "$work/fetch$N")
  for pass in fresh again; do
    s=$(now)
    "$TOOLS/bin/ansible-playbook" -f "$((N + 5))" -i "$work/hosts$N.ini" engine.fleet.benchmark -e "$vars" \
      >"$work/play-$N-$pass.log" 2>&1 || { echo "playbook failed ($N hosts, $pass):"; tail -30 "$work/play-$N-$pass.log"; exit 1; }
    wall=$(echo "$(now) - $s" | bc)
    echo "$N $pass $wall" >>"$work/walls"
    python3 - "$N" "$pass" "$wall" "$local_wall" "$work/fetch$N/home/results/fleet/result.json" <<'PY'
import json, sys
n, kind, wall, local, merged = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
ids = len(json.load(open(merged))["systems"])
assert ids == n, f"merged {ids} identifiers, expected {n}"
over = wall - local
print(f"{n:3d} hosts, {kind:5s}: playbook {wall:6.1f} s; overhead over the local run {over:6.1f} s "
      f"(hosts in parallel), {over / n:5.2f} s per host; merged {ids} identifiers")
PY
  done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  pids=()
done
# What one more host adds (slope between the smallest and largest count).
python3 - "$work/walls" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
for kind in ("fresh", "again"):
    pts = sorted((int(n), float(w)) for n, k, w in rows if k == kind)
    if len(pts) >= 2 and pts[-1][0] > pts[0][0]:
        (n0, w0), (n1, w1) = pts[0], pts[-1]
        print(f"each host beyond the first {n0} adds {(w1 - w0) / (n1 - n0):.2f} s ({kind})")
PY
